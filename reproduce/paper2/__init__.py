"""paper2 — Khomenko, Shyshkov, Radyvonenko & Bokhan (2016), *Accelerating Recurrent
Neural Network Training using Sequence Bucketing and Multi-GPU Data Parallelization*:
LSTM + CTC on online handwriting, optimal sequence bucketing, data-parallel model
averaging.

``setup.py``: the paper's setup and reported numbers as data; ``tasks.py``: the
training runs, epoch timings and padded-cell layouts; ``bucketed.py``: bucketed LSTM+CTC
training as a configuration of the engine's data-parallel family; ``timing_k.py``: Fig. 4's epoch
times at other mini-batch sizes (timing only, cached under their own code hash);
``report.py`` and ``text.py``: tables, plots and report.md. ``python -m reproduce
paper2`` runs it through :func:`reproduce.harness.run_paper`.
"""
from dataclasses import replace

from reproduce.harness import Paper
from reproduce.paper2 import setup, strategies, tasks, timing_k

PAPER = replace(Paper.of(setup, tasks, code=("reproduce/paper2/bucketed",), strategies=strategies.STRATEGIES),
                make_tasks=timing_k.make_tasks, run_task=timing_k.run_task)
