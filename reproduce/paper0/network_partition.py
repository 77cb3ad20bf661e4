"""Network partition (McCann & Kalman 1994, §2.1), shared memory, loop only.

The hidden units h of the derivative loop (the ∂Φ/∂w_ih of eq. 4) are split over
workers; worker k computes the columns h of its block for every pattern and
synchronises once per pattern (the paper's loop sits inside the loop over
patterns, whose sequential part runs between two parallel loops). Uneven splits
follow §3.1: "allocated as evenly as possible ... one of the leftovers was given
to each of the first" workers.

As in Figs 2–3 only the loop is timed: the forward pass and the output-side
derivatives are computed first (sequentially), and the workers read those
activations (forked local workers from the parent's memory). The loop is one
SPMD worker (:func:`netpart_worker`) that runs on every backend of
:func:`engine.parallel.driver.run`, the emulated one included. Sequences are presented
one after another, one pattern at a time, so there is one synchronisation per
pattern, as in the paper (no vectorisation over sequences here: that is the
sequence partition's business).
"""
from __future__ import annotations

import numpy as np

from engine.nets import elman as E
from engine.parallel import driver
from engine.perfmodel import FREE
from engine.schedule import LinearDistribution


def split_even(n: int, parts: int) -> list[tuple[int, int]]:
    """[h0, h1) blocks of n units over ``parts`` workers; the first n % parts get one more.
    Workers beyond n get empty blocks. This is the linear data distribution of
    :class:`engine.schedule.LinearDistribution` (the paper's 24 units over 7 workers:
    4, 4, 4, 3, 3, 3, 3)."""
    if parts < 1:
        raise ValueError(f"parts must be >= 1, got {parts}")
    dist = LinearDistribution(int(n), int(parts))
    return [(dist.block(p).start, dist.block(p).stop) for p in range(parts)]


def prepare(net: E.Elman, data: E.Sequences, *, loss: str = "kalman_kwasny") -> list:
    """The sequential part, per sequence: forward pass and output-side derivatives ->
    [(cache, v, u, g_out)] in sequence order."""
    out = []
    for i in range(data.n_seq):
        b = data.batch([i])
        Y, cache = net.forward(b.X)
        _, dY = E.loss_and_dy(net, Y, b, loss)
        g = np.zeros(net.n_params)
        v, u = net.output_grads(cache, dY, g)
        out.append((cache, v, u, g))
    return out


def loop(net: E.Elman, preps: list, h0: int, h1: int, *, sync=None) -> np.ndarray:
    """The §2.1 loop over every sequence for hidden units h0..h1 -> ∂Φ/∂w_ih (nz, h1−h0)."""
    total = np.zeros((net.nz, h1 - h0))
    out = np.empty_like(total)
    for cache, v, u, _ in preps:
        total += net.hidden_block_grad(cache, v, u, h0, h1, out=out, sync=sync)
    return total


def netpart_worker(comm, *, net: E.Elman, preps: list, blocks: list, repeats: int = 1) -> dict:
    """SPMD body: worker ``comm.rank`` runs the §2.1 loop for its block of hidden units
    ``repeats`` times, calling ``comm.barrier`` after every pattern step (one
    synchronisation per pattern, §2.1). One round per repeat; the workers start each
    repeat together (an untimed barrier), and the loop's last barrier ends it."""
    h0, h1 = blocks[comm.rank]
    g = None
    comm.start_clock()
    for _ in range(repeats):
        with comm.clock.untimed():
            comm.barrier()
        g = loop(net, preps, h0, h1, sync=comm.barrier)
        comm.clock.end_round()
    return {"grad": g}


def run_partitioned(net: E.Elman, preps: list, workers: int, *, repeats: int = 3,
                    backend: str = "local", profile=None, comm=None):
    """Run the loop on ``workers`` workers of any backend of
    :func:`engine.parallel.driver.run`, one barrier per pattern.

    Returns (∂Φ/∂Wz (nz, H) assembled from the blocks, loop seconds), None on MPI ranks
    other than 0. The loop time of a repeat is the slowest worker's compute plus
    synchronisation between the barrier that starts it and the loop's last barrier;
    the result is the best of ``repeats``. On the emulated backend that is each
    step's slowest worker plus the cost ``profile`` charges for each barrier
    (``barrier_model="linear"``: (P − 1)·α, a shared-memory spin barrier).
    """
    blocks = split_even(net.n_hidden, workers)
    res = driver.run(netpart_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     net=net, preps=preps, blocks=blocks, repeats=repeats)
    if res is None:
        return None
    grad = np.concatenate([r["grad"] for r in res], axis=1)
    per_rep = np.max([r["log"][:, 0] + r["log"][:, 1] for r in res], axis=0)  # slowest worker
    return grad, float(per_rep.min())


def block_seconds(net: E.Elman, preps: list, k: int, *, repeats: int = 3) -> float:
    """Seconds of the §2.1 loop for a block of k hidden units, alone (best of ``repeats``):
    the compute of one worker of :func:`netpart_worker` holding units 0..k, on the
    emulated backend (its barriers are neither timed nor charged).

    A report can compose its emulated loop time from these, T(P) = t(⌈H/P⌉) +
    steps·(P − 1)·α, for several machine profiles from one measurement.
    :func:`run_partitioned` with ``backend="emulated"`` runs the P-worker partition
    itself (each step waits for its slowest worker)."""
    if k == 0:
        return 0.0
    r = driver.run(netpart_worker, workers=1, backend="emulated", profile=FREE,
                   net=net, preps=preps, blocks=[(0, k)], repeats=repeats)[0]
    return float(r["log"][:, 0].min())
