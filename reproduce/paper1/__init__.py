"""paper1 — Färber (1997), *Quicknet on MultiSpert: Fast Parallel Neural Network
Training*: network-parallel (pipelined) and pattern-parallel bunch training of
156:400:56 and 156:1000:56 speech-frame MLPs, and the §2.5 performance model.

``setup.py``: the paper's setup, reported numbers and MultiSpert model constants as
data; ``tasks.py``: measured, emulated and training runs; ``perf.py``: per-step
timings and the §2.5 calibration on this machine; ``report.py`` and ``text.py``:
tables, curves, plots and report.md. ``python -m reproduce paper1`` runs it through
:func:`reproduce.harness.run_paper`.
"""
from reproduce.harness import Paper
from reproduce.paper1 import setup, tasks

PAPER = Paper.of(setup, tasks, code=("reproduce/paper1/perf", "reproduce/paper1/decode", "reproduce/paper1/hmm",
                                     "reproduce/paper1/spert"),
                 cache_ignores=("runs", "fig6_bunches", "fig6_big", "nets", "perf_hidden", "pp_bunches",
                                "one_seed_bunches", "warmup_bunches", "warmup_runs", "same_bunch_nets",
                                "lr_sweep"))
