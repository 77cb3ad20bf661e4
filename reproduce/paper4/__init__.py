"""paper4 — Hlynsson & Schmitz (2016), *A Parallel Implementation of the Training of a
Backpropagation Multilayer Perceptron*: node-parallel MLP training (§3–4), the analytic
speedup model (§6, Table 1), measured speedups (Tables 2–3) and a typical run (§5).

``setup.py``: the paper's setup and reported numbers as data; ``tasks.py``: the
calibration of the §6 model on this machine, the timed node-parallel passes
(measured up to the cores, emulated beyond) and the §5 run; ``mpi.py``: the MPI
exchange calibration under ``mpiexec``; ``report.py`` and ``text.py``: tables, plots
and report.md. ``python -m reproduce paper4`` runs it through
:func:`reproduce.harness.run_paper`.
"""
from reproduce.harness import Paper
from reproduce.paper4 import hosts, setup, strategies, tasks

# the widest-net ablation's fields only add tasks, whose keys hold the width and timed passes
# blocked.py and model.py hold the calibrations its tasks run (calibrate_exchange, calibrate_t_a)
PAPER = Paper.of(setup, tasks,
                 code=("reproduce/paper4/mpi", "reproduce/paper4/blocked", "reproduce/paper4/model"),
                 cache_ignores=("runs", "wide_width", "wide_passes_timed"),
                 strategies=strategies.STRATEGIES, hosts=hosts)
