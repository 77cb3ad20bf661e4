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


# ---- paper2: allreduce model (emulated data-parallel LSTM training) ----


def allreduce_time(profile: MachineProfile, P: int, nbytes: int) -> float:
    """Allreduce of ``nbytes`` per rank, Rabenseifner's reduce-scatter + allgather:
    T = 2⌈log2 P⌉·α + 2·(P − 1)/P · nbytes/β (the reduction arithmetic is left out)
    (Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005, §4.4). Zero for one worker.
    """
    if P <= 1:
        return 0.0
    return (2 * math.ceil(math.log2(P)) * profile.latency_s
            + 2 * (P - 1) / P * nbytes / profile.bandwidth_Bps)
