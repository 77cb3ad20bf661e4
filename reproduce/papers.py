"""The five papers: who, what, and which package reproduces each (None: not yet).

Each package defines ``PAPER`` (a :class:`reproduce.harness.Paper`); adding a paper
means one package and one entry here, or, for a package kept elsewhere, one call to
:func:`register` (docs/adding_a_paper.md). ``budget_min``: the minutes its default run may take on
2 cores, its share of the speed issue's 45-minute target for ``reproduce all`` (issue 32),
split by what each paper's grid needs; `paperN --help` states it and benchmarks/targets.py
checks the committed runs against it."""
from __future__ import annotations

import importlib
import re

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
KEYS = ("name", "authors", "year", "title", "workload", "strategies", "module", "budget_min")
LISTED = frozenset(BY_NAME)  # the papers above, which unregister leaves alone
COMMANDS = ("list", "report", "compare", "matrix", "calibrate", "validate", "all")  # cli.py's targets


def load(name: str):
    """The :class:`~reproduce.harness.Paper` of paper ``name``."""
    return importlib.import_module(BY_NAME[name]["module"]).PAPER


def register(entry: dict) -> dict:
    """Add a paper to :data:`PAPERS` for this process, without editing this file: every
    command (a run, ``list``, ``report``, ``all``) then sees it as it sees the five.
    ``entry`` has exactly the keys of :data:`KEYS`; ``module`` is an importable package whose
    ``PAPER`` is named ``name`` and whose ``report`` module has ``write``. Refused
    (ValueError, the list left as it was): a key missing or unknown, a name taken (a paper
    or a command) or not a folder name, a package that does not load. Returns the entry."""
    missing, unknown = [k for k in KEYS if k not in entry], sorted(set(entry) - set(KEYS))
    if missing or unknown:
        why = "; ".join([f"missing {', '.join(missing)}"] * bool(missing)
                        + [f"unknown {', '.join(unknown)}"] * bool(unknown))
        raise ValueError(f"paper entry: {why} (its keys: {', '.join(KEYS)})")
    name = entry["name"]
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"paper name {name!r}: lower-case letters, digits and _ (it names a folder)")
    if name in BY_NAME or name in COMMANDS:
        raise ValueError(f"paper {name!r} is already registered" if name in BY_NAME
                         else f"paper {name!r}: the name of a command")
    try:
        paper = importlib.import_module(entry["module"]).PAPER
        importlib.import_module(paper.report).write  # noqa: B018 - checked now, not after the tasks
    except (ImportError, AttributeError) as e:
        raise ValueError(f"paper {name!r}: {entry['module']} does not load as a paper: {e}") from e
    if paper.name != name:
        raise ValueError(f"paper {name!r}: {entry['module']}.PAPER is named {paper.name!r}")
    PAPERS.append(dict(entry))
    BY_NAME[name] = PAPERS[-1]
    return PAPERS[-1]


def unregister(name: str) -> None:
    """Take back what :func:`register` added (a test's clean-up); the papers listed above stay."""
    if name in LISTED or name not in BY_NAME:
        raise KeyError(f"{name!r} was not registered")
    PAPERS.remove(BY_NAME.pop(name))
