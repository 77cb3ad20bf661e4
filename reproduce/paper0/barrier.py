"""paper0's machine profiles for barrier-bound emulations (McCann & Kalman 1994): the α of
this machine's spin barrier between 2 local processes, at its best and at its median
(engine.perfmodel.barrier_time_linear prices a barrier of P workers with it,
:func:`shared_sum_time` the sum of §3.2)."""
from __future__ import annotations

import numpy as np

from engine.perfmodel import MachineProfile, barrier_time_linear


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


def shared_sum_time(profile: MachineProfile, P: int, nbytes: int) -> float:
    """Summing P per-worker vectors of ``nbytes`` in shared memory (each worker's copy
    of the duplicated variables): one barrier plus (P − 1) vectors read at the
    profile's bandwidth β. Zero for one worker."""
    return 0.0 if P <= 1 else barrier_time_linear(profile, P) + (P - 1) * nbytes / profile.bandwidth_Bps
