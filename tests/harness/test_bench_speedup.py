"""benchmarks.bench_speedup.split: a PPT run's wall time as the slowest worker's compute
summed over rounds, that worker's communication, and the rest, on a worked example.
Negative control: another worker's compute gives other figures."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from benchmarks.bench_speedup import split


def test_split_takes_each_rounds_slowest_worker():
    rec = SimpleNamespace(wall_s=10.0,
                          compute_s=np.array([[1.0, 3.0], [4.0, 2.0], [0.5, 0.5]]),  # (rounds, P)
                          comm_s=np.array([[0.7, 0.1], [0.2, 0.9], [0.3, 0.4]]))
    s = split(rec)
    # slowest: worker 1, worker 0, worker 0 (a tie takes the first)
    assert s == {"compute_s": 3.0 + 4.0 + 0.5, "comm_s": 0.1 + 0.2 + 0.3,
                 "other_s": 10.0 - 7.5 - 0.6}
    fastest = float(rec.compute_s.min(axis=1).sum())  # the control
    assert fastest != s["compute_s"]
