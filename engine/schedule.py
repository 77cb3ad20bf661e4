"""Static schedules of independent jobs onto workers."""
from __future__ import annotations

import heapq

import numpy as np


# ---- paper0: McCann & Kalman (1994), §2.2 -----------------------------------------
def longest_first(lengths, n_workers: int) -> np.ndarray:
    """Assign each sequence to a worker: longest first, each to the least-loaded worker.

    McCann & Kalman (1994), §2.2: "sort the sequences in order of non-increasing
    length. Then, assign each sequence s_i in turn to the least loaded processor,
    starting with the longest sequence, and adjust the load of that processor
    upwards by len(i)" (Graham's LPT rule). Ties in length keep the input order;
    ties in load go to the lowest worker index. Returns ``a`` with
    ``0 <= a[i] < n_workers``, the worker of sequence i. Its makespan (eq. 5)
    is at most (R+1)/R·OPT + max_i len(i) (the FFDH bound the paper quotes).
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be one-dimensional, got shape {lengths.shape}")
    if int(n_workers) != n_workers or n_workers < 1:
        raise ValueError(f"n_workers must be an integer >= 1, got {n_workers!r}")
    if len(lengths) and lengths.min() < 0:
        raise ValueError("lengths must be >= 0")
    order = np.argsort(-lengths, kind="stable")  # non-increasing, stable
    heap = [(0, r) for r in range(int(n_workers))]  # (load, worker)
    a = np.empty(len(lengths), dtype=np.int64)
    for i in order:
        load, r = heapq.heappop(heap)
        a[i] = r
        heapq.heappush(heap, (load + lengths[i], r))
    return a


def makespan(lengths, assignment, n_workers: int) -> float:
    """Eq. 5 of McCann & Kalman (1994): max over workers of the summed lengths."""
    loads = np.bincount(np.asarray(assignment), weights=np.asarray(lengths, dtype=float),
                        minlength=n_workers)
    return float(loads.max()) if len(loads) else 0.0
