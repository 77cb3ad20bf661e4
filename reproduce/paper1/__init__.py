"""paper1 — Färber (1997), *Quicknet on MultiSpert: Fast Parallel Neural Network
Training*: network-parallel (pipelined) and pattern-parallel bunch training of
156:400:56 and 156:1000:56 speech-frame MLPs, and the §2.5 performance model.

``setup.py``: the paper's setup, reported numbers and MultiSpert model constants as
data; ``tasks.py``: measured, emulated and training runs; ``perf.py``: per-step
timings and the §2.5 calibration on this machine; ``bunch.py``, ``pattern_bunch.py``,
``network_parallel.py`` and ``forward_parallel.py``: Quicknet's bunch training, its PP
configuration of the engine's data-parallel family, NP's master and slaves, and the
forward-only runs; ``report.py`` and ``text.py``:
tables, curves, plots and report.md. ``python -m reproduce paper1`` runs it through
:func:`reproduce.harness.run_paper`.
"""
from reproduce.harness import Paper
from reproduce.paper1 import setup, strategies, tasks

PAPER = Paper.of(setup, tasks, code=("reproduce/paper1/perf", "reproduce/paper1/decode", "reproduce/paper1/hmm",
                                     "reproduce/paper1/spert", "reproduce/paper1/bunch",
                                     "reproduce/paper1/pattern_bunch", "reproduce/paper1/network_parallel",
                                     "reproduce/paper1/forward_parallel"),
                 cache_ignores=("runs", "fig6_bunches", "fig6_big", "nets", "perf_hidden", "pp_bunches",
                                "one_seed_bunches", "warmup_bunches", "warmup_runs", "same_bunch_nets",
                                "lr_sweep"),
                 machines={"multispert1997": setup.multispert1997_profile},
                 strategies=strategies.STRATEGIES,
                 matrix_cells=strategies.MATRIX_CELLS,
                 # brown: a 1997 accelerator bus, named so in some labels
                 colors={"multispert1997": ("#8c564b", "multispert bus", "multispert")})
