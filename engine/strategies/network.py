"""Network partition (McCann & Kalman 1994, §2.1), shared memory, loop only.

The hidden units h of the derivative loop (the ∂Φ/∂w_ih of eq. 4) are split over
workers; worker k computes the columns h of its block for every pattern and
synchronises once per pattern (the paper's loop sits inside the loop over
patterns, whose sequential part runs between two parallel loops). Uneven splits
follow §3.1: "allocated as evenly as possible ... one of the leftovers was given
to each of the first" workers.

As in Figs 2–3 only the loop is timed: the forward pass and the output-side
derivatives are computed first (sequentially), the workers are forked after it
and read those activations from the parent's memory.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from engine.nets import elman as E


def split_even(n: int, parts: int) -> list[tuple[int, int]]:
    """[h0, h1) blocks of n units over ``parts`` workers; the first n % parts get one more.
    Workers beyond n get empty blocks."""
    if parts < 1:
        raise ValueError(f"parts must be >= 1, got {parts}")
    q, r = divmod(n, parts)
    out, h = [], 0
    for k in range(parts):
        m = q + (1 if k < r else 0)
        out.append((h, h + m))
        h += m
    return out


def prepare(net: E.Elman, batch: E.Batch, *, loss: str = "kalman_kwasny"):
    """The sequential part: forward pass and output-side derivatives -> (cache, v, u, g_out)."""
    Y, cache = net.forward(batch.X)
    _, dY = E.loss_and_dy(net, Y, batch, loss)
    g = np.zeros(net.n_params)
    v, u = net.output_grads(cache, dY, g)
    return cache, v, u, g


def block_seconds(net: E.Elman, prep, k: int, *, repeats: int = 3) -> float:
    """Seconds of the §2.1 loop for a block of k hidden units, alone (best of ``repeats``)."""
    if k == 0:
        return 0.0
    cache, v, u, _ = prep
    out = np.empty((net.nz, k))
    best = np.inf
    for _ in range(repeats):
        t = perf_counter()
        net.hidden_block_grad(cache, v, u, 0, k, out=out)
        best = min(best, perf_counter() - t)
    return best


def run_partitioned(net: E.Elman, prep, workers: int, *, repeats: int = 3):
    """Run the loop on ``workers`` local processes, one barrier per pattern step.

    Returns (∂Φ/∂Wz (nz, H) assembled from the blocks, loop seconds): the loop time
    is the slowest worker's, between a barrier before and after, best of ``repeats``.
    """
    from engine.comm.local import run_local

    cache, v, u, _ = prep
    blocks = split_even(net.n_hidden, workers)

    def fn(comm):
        h0, h1 = blocks[comm.rank]
        out = np.empty((net.nz, h1 - h0))
        ts = []
        for _ in range(repeats):
            comm.barrier()
            t = perf_counter()
            net.hidden_block_grad(cache, v, u, h0, h1, out=out, sync=comm.barrier)
            ts.append(perf_counter() - t)
        return out, ts

    res = run_local(fn, workers)
    grad = np.concatenate([r[0] for r in res], axis=1)
    per_rep = np.max(np.array([r[1] for r in res]), axis=0)  # slowest worker per repeat
    return grad, float(per_rep.min())
