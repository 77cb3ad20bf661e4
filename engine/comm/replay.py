"""One pricing of an emulated run: what its collectives cost on a profile's machine, live or
replayed from the run's trace.

A trace (:meth:`engine.comm.emulated.EmulatedComm.trace`, assembled per run by
:func:`trace_of`) holds the run's size P and reference kernel, its timed collectives in
order as (operation, bytes), run-length compressed where they repeat, and per worker
its events: every measured compute piece (s, ≥ 0) and two markers, a collective and the end
of a round (engine.timing.COLLECTIVE, ROUND). :func:`replay` runs the workers' virtual clocks
over it as the live emulated backend does, with :func:`price` for every collective: under the
run's own profile it gives the run's per-round compute and communication bit for bit
(tests/equivalence/test_replay.py, every strategy of the equivalence matrix); under another it is that
machine's, with the compute measured here.
"""
from __future__ import annotations

from itertools import groupby

import numpy as np

from engine.timing import COLLECTIVE, ROUND


def price(profile, kernel: str, op: str, nbytes: int, arrive: np.ndarray, seg: np.ndarray) -> float:
    """When a collective ends for every worker: the last arrival, plus the expected straggler
    wait after the workers' mean compute ``seg`` (P,), plus the collective's modelled time
    (:meth:`engine.perfmodel.MachineProfile.sync_wait`, ``collective_time``)."""
    P = arrive.size
    return (arrive.max() + profile.sync_wait(P, float(seg.mean()), kernel)
            + profile.collective_time(op, P, nbytes))


def trace_of(parts: list[dict]) -> dict:
    """A run's trace from its workers' parts (in rank order), the collectives run-length
    compressed: ``ops`` is a list of [op, nbytes, count]."""
    first = parts[0]
    ops = [[*key, len(list(run))] for key, run in groupby(tuple(o) for o in first["ops"])]
    return {"P": first["P"], "kernel": first["kernel"], "ops": ops,
            "events": [p["events"] for p in parts]}


def replay(trace: dict, profile) -> tuple[np.ndarray, np.ndarray]:
    """(compute_s, comm_s), each (rounds, P): the run's accounts on ``profile``'s machine,
    as :class:`engine.timing.RunRecord` holds them."""
    P, kernel = trace["P"], trace["kernel"]
    scale = profile.compute_scale(P, kernel)
    events = trace["events"]
    at = [0] * P  # each worker's next event
    compute, comm, pending = [0.0] * P, [0.0] * P, [0.0] * P
    rounds: list[list] = [[] for _ in range(P)]
    vt, arrive, seg = np.zeros(P), np.zeros(P), np.zeros(P)

    def advance(p: int) -> bool:
        """Book worker p's events up to its next collective (True) or its end (False)."""
        ev = events[p]
        while at[p] < len(ev):
            e = float(ev[at[p]])
            at[p] += 1
            if e == COLLECTIVE:
                return True
            if e == ROUND:
                rounds[p].append((compute[p], comm[p]))
                compute[p] = comm[p] = 0.0
            else:
                s = e * scale
                compute[p] += s
                pending[p] += s
        return False

    for op, nbytes, count in trace["ops"]:
        for _ in range(count):
            for p in range(P):
                if not advance(p):
                    raise ValueError(f"worker {p}'s trace ends before collective {op}")
                vt[p] += pending[p]
                arrive[p] = vt[p]
                seg[p] = pending[p]
                pending[p] = 0.0
            end = price(profile, kernel, op, nbytes, arrive, seg)
            charge = end - arrive
            vt[:] = end
            for p in range(P):
                comm[p] += charge[p]
    for p in range(P):
        if advance(p):
            raise ValueError(f"worker {p}'s trace has more collectives than the run's")
    n = {len(r) for r in rounds}
    if len(n) != 1:
        raise ValueError(f"workers' traces close different numbers of rounds: {sorted(n)}")
    acc = np.array(rounds, dtype=np.float64).reshape(P, n.pop(), 2).transpose(1, 0, 2)  # (rounds, P, 2)
    return acc[:, :, 0], acc[:, :, 1]
