"""Network partition (McCann & Kalman 1994, §2.1), shared memory, loop only.

The hidden units h of the derivative loop (the ∂Φ/∂w_ih of eq. 4) are split over
workers; worker k computes the columns h of its block for every pattern and
synchronises once per pattern (the paper's loop sits inside the loop over
patterns, whose sequential part runs between two parallel loops). Uneven splits
follow §3.1: "allocated as evenly as possible ... one of the leftovers was given
to each of the first" workers.

As in Figs 2–3 only the loop is timed: the forward pass and the output-side
derivatives are computed first (sequentially), the workers are forked after it
and read those activations from the parent's memory. Sequences are presented
one after another, one pattern at a time, so there is one synchronisation per
pattern, as in the paper (no vectorisation over sequences here: that is the
sequence partition's business).
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from engine.nets import elman as E
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


def block_seconds(net: E.Elman, preps: list, k: int, *, repeats: int = 3) -> float:
    """Seconds of the §2.1 loop for a block of k hidden units, alone (best of ``repeats``)."""
    if k == 0:
        return 0.0
    best = np.inf
    for _ in range(repeats):
        t = perf_counter()
        loop(net, preps, 0, k)
        best = min(best, perf_counter() - t)
    return best


def run_partitioned(net: E.Elman, preps: list, workers: int, *, repeats: int = 3):
    """Run the loop on ``workers`` local processes, one barrier per pattern.

    Returns (∂Φ/∂Wz (nz, H) assembled from the blocks, loop seconds): the loop time
    is the slowest worker's, between a barrier before and after, best of ``repeats``.
    """
    from engine.comm.local import run_local

    blocks = split_even(net.n_hidden, workers)

    def fn(comm):
        h0, h1 = blocks[comm.rank]
        ts = []
        for _ in range(repeats):
            comm.barrier()
            t = perf_counter()
            g = loop(net, preps, h0, h1, sync=comm.barrier)
            ts.append(perf_counter() - t)
        return g, ts

    res = run_local(fn, workers)
    grad = np.concatenate([r[0] for r in res], axis=1)
    per_rep = np.max(np.array([r[1] for r in res]), axis=0)  # slowest worker per repeat
    return grad, float(per_rep.min())
