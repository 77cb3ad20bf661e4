"""The five papers: who, what, and which package reproduces each (None: not yet).

Each package defines ``PAPER`` (a :class:`reproduce.harness.Paper`); adding a paper
means one package and one entry here. ``budget_min``: the minutes its default run may take on
2 cores, its share of the speed issue's 45-minute target for ``reproduce all`` (issue 32),
split by what each paper's grid needs; `paperN --help` states it and benchmarks/targets.py
checks the committed runs against it."""
from __future__ import annotations

import importlib

PAPERS = [
    {"name": "paper0", "authors": "McCann & Kalman", "year": 1994,
     "title": "Strategies for the Parallel Training of Simple Recurrent Neural Networks",
     "workload": "recurrent NETtalk, Elman nets",
     "strategies": "shared-memory network partition and sequence partition, conjugate gradients",
     "module": "reproduce.paper0", "budget_min": 5},
    {"name": "paper1", "authors": "Färber", "year": 1997,
     "title": "Quicknet on MultiSpert: Fast Parallel Neural Network Training",
     "workload": "speech frames, 156:400:56 and 156:1000:56 MLPs",
     "strategies": "network-parallel (pipelined) vs pattern-parallel, bunch mode, performance model",
     "module": "reproduce.paper1", "budget_min": 10},
    {"name": "paper2", "authors": "Khomenko, Shyshkov, Radyvonenko & Bokhan", "year": 2016,
     "title": "Accelerating Recurrent Neural Network Training using Sequence Bucketing and "
              "Multi-GPU Data Parallelization",
     "workload": "handwriting-like sequences, LSTM+CTC",
     "strategies": "optimal bucketing, data-parallel model averaging", "module": "reproduce.paper2", "budget_min": 15},
    {"name": "paper3", "authors": "Dahl, McAvinney & Newhall", "year": 2008,
     "title": "Parallelizing Neural Network Training for Cluster Systems",
     "workload": "8-bit parity", "strategies": "pattern-parallel over MPI Allgather",
     "module": "reproduce.paper3", "budget_min": 10},
    {"name": "paper4", "authors": "Hlynsson & Schmitz", "year": 2016,
     "title": "A Parallel Implementation of the Training of a Backpropagation Multilayer Perceptron",
     "workload": "deep MLP", "strategies": "node-parallel, analytic speedup model",
     "module": "reproduce.paper4", "budget_min": 5},
]
BY_NAME = {p["name"]: p for p in PAPERS}


def load(name: str):
    """The :class:`~reproduce.harness.Paper` of paper ``name``."""
    return importlib.import_module(BY_NAME[name]["module"]).PAPER
