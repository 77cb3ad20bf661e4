"""Analytic communication models and machine profiles for emulated runs.

An emulated run (more workers than cores) measures every worker's compute and
adds communication time from a model with named machine parameters: a
per-message latency α (``latency_s``) and a bandwidth β (``bandwidth_Bps``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from time import perf_counter

import numpy as np


@dataclass(frozen=True)
class MachineProfile:
    name: str
    latency_s: float  # α: time of one message step
    bandwidth_Bps: float  # β: bytes per second of one link
    source: str  # where α and β come from
    fitted: bool = False  # True when α or β were fitted to a paper's own numbers

    def allgather_time(self, P: int, nbytes: int) -> float:
        """Allgather of ``nbytes`` per rank by recursive doubling:
        T = ⌈log2 P⌉·α + (P − 1)·nbytes/β  (Thakur, Rabenseifner & Gropp,
        "Optimization of collective communication operations in MPICH",
        IJHPCA 19(1), 2005, §4.1). Zero for one worker.
        """
        if P <= 1:
            return 0.0
        return math.ceil(math.log2(P)) * self.latency_s + (P - 1) * nbytes / self.bandwidth_Bps

    def as_dict(self) -> dict:
        return asdict(self)


def _pingpong(comm, small: int, large: int, reps: int):
    out = {}
    for n in (small, large):
        x = np.zeros(n)
        recv = np.empty((comm.size, n))
        for _ in range(max(10, reps // 10)):
            comm.allgather(x, recv)
        comm.barrier()
        t = perf_counter()
        for _ in range(reps):
            comm.allgather(x, recv)
        out[n] = (perf_counter() - t) / reps
    return out


def measure_here(*, small: int = 8, large: int = 1 << 16, reps: int = 2000) -> MachineProfile:
    """Profile ``here``: allgather between 2 local processes through shared memory.

    With P = 2 the model reads T(s) = α + s/β, so α is the time of a small
    allgather and β follows from the extra time of a large one.
    """
    from engine.comm.local import run_local

    t = run_local(_pingpong, 2, small, large, reps, max_elems=large)[0]
    alpha = t[small]
    beta = (large - small) * 8 / max(t[large] - t[small], 1e-12)
    return MachineProfile(
        "here", alpha, beta,
        source=(f"measured at start-up: mean of {reps} shared-memory allgathers "
                f"between 2 local processes, {small} and {large} float64 per rank"))


def fit_latency(comm_s_per_round, *, P: int, nbytes: int, bandwidth_Bps: float) -> float:
    """Least-squares α for allgather times observed at one P and message size,
    with β fixed: α = mean(T_obs − (P−1)·s/β) / ⌈log2 P⌉.
    """
    obs = np.asarray(comm_s_per_round, dtype=float)
    return float(np.mean(obs - (P - 1) * nbytes / bandwidth_Bps) / math.ceil(math.log2(P)))


# ---- paper0: shared-memory synchronisation (McCann & Kalman 1994) ------------------------
def barrier_time_linear(profile: MachineProfile, P: int) -> float:
    """One barrier of P workers: (P − 1)·α. The local backend's barrier has each rank
    spin on the flags of its P − 1 peers (engine/comm/local.py), one cache-line
    transfer each; α is the profile's small-message time between 2 processes.
    Zero for one worker."""
    return 0.0 if P <= 1 else (P - 1) * profile.latency_s


def shared_sum_time(profile: MachineProfile, P: int, nbytes: int) -> float:
    """Summing P per-worker vectors of ``nbytes`` in shared memory (paper0 §3.2, "an
    additional portion of code to sum these duplicated variables"): one barrier plus
    (P − 1) vectors read at the profile's bandwidth β. Zero for one worker."""
    return 0.0 if P <= 1 else barrier_time_linear(profile, P) + (P - 1) * nbytes / profile.bandwidth_Bps


def _barrier_times(comm, bursts, reps, pause):
    from time import perf_counter as pc
    from time import sleep

    ts = np.empty((bursts, reps))
    for b in range(bursts):
        for _ in range(50):
            comm.barrier()
        for i in range(reps):
            t = pc()
            comm.barrier()
            ts[b, i] = pc() - t
        sleep(pause)
        comm.barrier()
    return ts


def measure_barrier_here(base: MachineProfile, *, bursts: int = 10, reps: int = 500,
                         pause: float = 0.1) -> list[MachineProfile]:
    """Profiles ``here-best`` and ``here-median`` for barrier-bound emulations.

    ``bursts`` bursts of ``reps`` single barriers between 2 local processes, each
    timed on its own, ``pause`` s apart. α of ``here-best`` is the median of the
    best burst (the cost when both processes hold a core: on a loaded machine a
    spin barrier otherwise waits for a descheduled peer); α of ``here-median`` is
    the median over all barriers (what a loaded machine gives). β from ``base``.
    """
    import os

    from engine.comm.local import run_local

    ts = run_local(_barrier_times, 2, bursts, reps, pause)
    t = np.maximum(ts[0], ts[1])  # (bursts, reps): a barrier is done when both ranks are through
    per_burst = np.median(t, axis=1)
    desc = (f"{bursts} bursts of {reps} single barriers between 2 local processes, {pause} s apart, "
            f"1-min load {os.getloadavg()[0]:.1f}: burst medians {per_burst.min() * 1e6:.2f}–"
            f"{per_burst.max() * 1e6:.2f} µs, overall median {np.median(t) * 1e6:.2f} µs; "
            f"β: {base.name} ({base.source})")
    return [MachineProfile("here-best", float(per_burst.min()), base.bandwidth_Bps,
                           source="α: median of the best burst of " + desc),
            MachineProfile("here-median", float(np.median(t)), base.bandwidth_Bps,
                           source="α: median of all barriers of " + desc)]
