"""paper3 — Dahl, McAvinney & Newhall (2008), *Parallelizing Neural Network Training
for Cluster Systems*: Pattern Parallel Training (PPT) on 8-bit parity.

``setup.py``: the paper's setup and reported numbers as data; ``tasks.py``: the
training runs (serial, PPT measured and emulated); ``ppt.py``: PPT as a configuration
of the engine's data-parallel family with its error-estimate callback; ``report.py`` and ``text.py``:
tables, plots and report.md. ``python -m reproduce paper3`` runs it through
:func:`reproduce.harness.run_paper`.
"""
from reproduce.harness import Paper
from reproduce.paper3 import hosts, setup, strategies, tasks

PAPER = Paper.of(setup, tasks, code=("reproduce/paper3/ppt",),
                 cache_ignores=("nodes", "local_epochs", "runs", "ablation_runs", "lr_scales"),
                 machines={"gige2008": setup.gige2008}, strategies=strategies.STRATEGIES,
                 hosts=hosts, colors={"gige2008": ("#9467bd",)})  # purple: a 2008 Gigabit cluster
