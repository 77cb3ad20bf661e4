"""paper0 — McCann & Kalman (1994), *Strategies for the Parallel Training of Simple
Recurrent Neural Networks*: Elman nets trained by conjugate gradients with
forward-propagated derivatives; network partition (§2.1, Figs 2–3) and
training-sequence partition (§2.2, Figs 4–5) on a shared-memory machine.

``setup.py``: the paper's setup and reported numbers as data; ``tasks.py``: the
timings and training runs; ``report.py`` and ``text.py``: tables, plots and
report.md (``python -m reproduce.paper0.report results/paper0`` rebuilds them from
the cached runs); ``data.py``: its corpus's identity in the cache key and the
``--nettalk-file`` option; ``sequence.py`` and ``network_partition.py``: the two
partitions (§2.2 as a configuration of the engine's data-parallel family, §2.1's loop).
``python -m reproduce paper0`` runs it through
:func:`reproduce.harness.run_paper`.
"""
from reproduce.harness import Paper
from reproduce.paper0 import data, hosts, setup, strategies, tasks

PAPER = Paper.of(setup, tasks, code=("reproduce/paper0/sequence", "reproduce/paper0/network_partition"),
                 cache_ignores=("runs", "train_runs"), data_identity=data.identity,
                 options=data.options, check_options=data.check_options,
                 strategies=strategies.STRATEGIES,
                 matrix_cells=strategies.MATRIX_CELLS, hosts=hosts)
