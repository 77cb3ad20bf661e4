"""Our node-parallel implementation's time model (not the paper's): the slowest worker's
operations · t_a plus one recursive-doubling allgather per exchanged layer
(engine/strategies/node.py sends one message per layer; §6 charges a broadcast per node).
Used by report.py (the modeled Tables 2–3 rows) and why.py (the width's part of the gap);
its t_startup and t_data come from :func:`calibrate_exchange` (tasks.py)."""
from __future__ import annotations

import math
from time import perf_counter

import numpy as np

from engine.perfmodel import MachineProfile
from engine.schedule import LinearDistribution


def blocked_time(sizes, P: int, passes: str, *, t_a: float, t_startup: float, t_data: float):
    """Our implementation's model: slowest worker's operations · t_a + one allgather per
    exchanged layer (forward: L of them; backward: L more)."""
    d = [LinearDistribution(int(n), P) for n in sizes]
    L = len(sizes) - 1
    I = [x.max_count for x in d]
    ops = sum((sizes[l - 1] + 1) * I[l] for l in range(1, L + 1))
    nx = L
    if passes == "forward_backward":
        ops += sum(sizes[l + 1] * I[l] for l in range(1, L)) + I[L]
        nx += L
    comm = sum(blocked_exchange_time(P, I[l], t_startup=t_startup, t_data=t_data)
               for l in range(1, L + 1)) * (nx // L)
    return t_a * ops + comm


def blocked_exchange_time(P: int, values: int, *, t_startup: float, t_data: float) -> float:
    """One exchange of engine/strategies/node.py: an allgather of ``values`` float64
    per rank, by recursive doubling: ⌈log2 P⌉·t_startup + (P−1)·values·t_data.
    (The model of this allgather, not of a node-by-node broadcast.)
    """
    if P <= 1:
        return 0.0
    return math.ceil(math.log2(P)) * t_startup + (P - 1) * values * t_data


def node_profile(t_startup: float, t_data: float, *, name: str, source: str) -> MachineProfile:
    """The calibrated exchange model as a MachineProfile for emulated node-parallel runs:
    α = t_startup, β = 8 bytes / t_data, so allgather_time is blocked_exchange_time."""
    return MachineProfile(name, t_startup, 8.0 / t_data if t_data > 0 else math.inf, source=source)


def _allgather_times(comm, sizes, reps: int) -> list[float]:
    """Per size: the fastest of ``reps`` single allgathers, each timed on its own.

    On a machine shared with other jobs most calls can wait for a descheduled
    peer (here: ~2 µs when both ranks hold a core, ~50 µs when they share one),
    so the best call is the estimate of the unloaded machine."""
    out = []
    for m in sizes:
        x = np.zeros(m)  # (m,)
        recv = np.empty((comm.size, m))  # (P, m)
        for _ in range(max(5, reps // 10)):
            comm.allgather(x, recv)
        per = np.empty(reps)  # (reps,)
        comm.barrier()
        for i in range(reps):
            t = perf_counter()
            comm.allgather(x, recv)
            per[i] = perf_counter() - t
        out.append(float(per.min()))
    return out


def calibrate_exchange(comm, *, sizes=(1, 16, 256, 4096, 32768), reps: int = 400) -> dict:
    """t_startup and t_data of one communicator from timed allgathers (run on every rank).

    Fits T(m) = ⌈log2 P⌉·t_startup + (P−1)·m·t_data (the recursive-doubling model
    of :func:`blocked_exchange_time`) by least squares over message sizes m
    (float64 per rank); with P = 2, T(m) = t_startup + m·t_data. Returns the fit,
    the raw times (fastest single call per size) and the size of the communicator.
    """
    t = np.asarray(_allgather_times(comm, sizes, reps))
    m = np.asarray(sizes, dtype=float)
    P = comm.size
    steps = math.ceil(math.log2(P)) if P > 1 else 1
    A = np.stack([np.full_like(m, steps), (max(P, 2) - 1) * m], axis=1)
    w = 1.0 / np.maximum(t, 1e-12)  # relative errors: small messages count as much as large
    (ts, td), *_ = np.linalg.lstsq(A * w[:, None], t * w, rcond=None)
    return {"t_startup": float(max(ts, 0.0)), "t_data": float(max(td, 0.0)), "P": P,
            "sizes": list(map(int, sizes)), "seconds": t.tolist(), "reps": reps}
