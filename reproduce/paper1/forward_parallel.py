"""Forward pass only (recognition), network- and pattern-parallel (Färber 1997, §3.4, Fig. 5).

The inputs are held by every rank (as a chunk is after §3.2's "sending 10,000
patterns to each node"); the patterns go through in bunches of B.

* **NP**: slave p computes its hidden block and partial output sums
  z_p = f(x·W1[:, p] + b1[p])·W2[p, :] (rank 0 adds b2); the master gathers the
  partials, sums them in rank order and applies the output nonlinearity (§2.1,
  steps 1–3; no error, no update).
* **PP**: rank p runs the whole net on its contiguous share of the bunch; the
  master gathers the shares' outputs.

The outputs equal the serial forward pass :func:`serial_forward` of the same
weights (up to the rank-order summation of the NP partials).
"""
from __future__ import annotations

import math
from time import perf_counter

import numpy as np

from engine.parallel import driver
from reproduce.paper1.bunch import BunchConfig
from reproduce.paper1.network_parallel import NPSlave, _init_net, hidden_blocks
from reproduce.paper1.pattern_bunch import share


def serial_forward(x: np.ndarray, *, sizes, activation: str, seed: int, bunch: int,
                   init_scale: float = 0.1) -> dict:
    """The reference: one MLP's forward pass over x (n, N_i) in bunches of ``bunch``."""
    net = _init_net(sizes, activation, seed, init_scale)
    n = x.shape[0]
    y = np.empty((n, sizes[-1]))  # (n, N_o)
    ws = net.workspace(bunch)
    t0 = perf_counter()
    for k in range(0, n, bunch):
        xb = x[k:k + bunch]
        out, _ = net.forward(xb, ws=ws if xb.shape[0] == bunch else None)
        y[k:k + xb.shape[0]] = out
    return {"y": y, "wall": perf_counter() - t0, "patterns": n}


def np_forward_worker(comm, *, x, sizes, activation: str, seed: int, bunch: int,
                      init_scale: float = 0.1) -> dict:
    """SPMD body of the NP forward pass; rank 0 (master and slave 0) returns the outputs."""
    P, rank = comm.size, comm.rank
    full = _init_net(sizes, activation, seed, init_scale)
    lo, hi = hidden_blocks(sizes[1], P)[rank]
    cfg = BunchConfig(bunch=bunch, lr=1.0)  # lr unused: no update
    slave = NPSlave(full, lo, hi, holds_bias2=(rank == 0), cfg=cfg)
    f_o = full.acts[-1]
    n, N_o = x.shape[0], sizes[2]
    y = np.empty((n, N_o)) if rank == 0 else None  # (n, N_o)
    recv: dict[int, np.ndarray] = {}
    comm.start_clock()
    for k in range(0, n, bunch):
        xb = x[k:k + bunch]
        b = xb.shape[0]
        z, _ = slave.forward(xb)  # (b, N_o) partial output sums
        r = recv.get(b)
        if r is None:
            r = recv[b] = np.empty((P, b, N_o))  # (P, b, N_o)
        comm.allgather(z, r)
        if rank == 0:
            out = y[k:k + b]
            np.copyto(out, r[0])
            for p in range(1, P):  # rank order
                out += r[p]
            f_o.f(out, out)
        comm.clock.end_round()
    return {"y": y, "patterns": n}


def pp_forward_worker(comm, *, x, sizes, activation: str, seed: int, bunch: int,
                      init_scale: float = 0.1) -> dict:
    """SPMD body of the PP forward pass; rank 0 returns the outputs."""
    P, rank = comm.size, comm.rank
    net = _init_net(sizes, activation, seed, init_scale)  # identical on every rank
    n, N_o = x.shape[0], sizes[2]
    m = math.ceil(bunch / P)
    send = np.zeros((m, N_o))  # (m, N_o): this rank's share, padded
    recv = np.empty((P, m, N_o))  # (P, m, N_o)
    y = np.empty((n, N_o)) if rank == 0 else None  # (n, N_o)
    comm.start_clock()
    for k in range(0, n, bunch):
        b = min(bunch, n - k)
        sh = share(b, P, rank)
        if sh.stop > sh.start:
            out, _ = net.forward(x[k + sh.start:k + sh.stop])
            send[:sh.stop - sh.start] = out
        comm.allgather(send, recv)
        if rank == 0:
            for p in range(P):
                s = share(b, P, p)
                y[k + s.start:k + s.stop] = recv[p, :s.stop - s.start]
        comm.clock.end_round()
    return {"y": y, "patterns": n}


def forward_parallel(x: np.ndarray, *, strategy: str, sizes, activation: str, seed: int, bunch: int,
                     workers: int, backend: str = "local", comm=None, init_scale: float = 0.1,
                     profile=None) -> dict | None:
    """NP or PP forward pass on ``workers`` ranks of any backend of
    :func:`engine.parallel.driver.run`: {"y" (n, N_o), "wall" (slowest rank), "patterns",
    "log" (bunches, ranks, 3), "time_s" (the wall, or the emulated slowest worker's
    virtual finish time)} on rank 0 (None on other MPI ranks)."""
    fn = {"NP": np_forward_worker, "PP": pp_forward_worker}[strategy]
    res = driver.run(fn, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=bunch * sizes[2], x=x, sizes=sizes, activation=activation,
                     seed=seed, bunch=bunch, init_scale=init_scale)
    if res is None:
        return None
    log = np.stack([r["log"] for r in res], axis=1)  # (bunches, ranks, 3)
    wall = max(r["wall"] for r in res)
    return {"y": res[0]["y"], "wall": wall, "patterns": res[0]["patterns"], "log": log,
            "time_s": wall if backend != "emulated" else float(log[:, :, :2].sum(axis=(0, 2)).max())}
