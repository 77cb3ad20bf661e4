"""Training-sequence partition (McCann & Kalman 1994, §2.2), shared memory.

Whole sequences are assigned to workers with :func:`engine.schedule.longest_first`
(the zeroing of the context at each sequence start makes sequences independent,
§1). One copy of the weights lives in shared memory; rank 0 runs the conjugate
gradient trainer, writes the weights at which Φ is wanted into that copy and
tells every worker which kind of epoch to run:

* a derivative epoch: each of the first ``workers_deriv`` ranks computes Φ and
  ∂Φ/∂Y over its sequences (its own activations and ∂a/∂Y, §2.2), and the
  per-worker sums are reduced;
* a forward (line-search) epoch: each of the first ``workers_fwd`` ranks
  computes Φ over its sequences of the forward partition, and the sums are
  reduced.

Derivative and forward epochs take separate worker counts, as the paper's
17 and 6 processors (§3.2). Ranks beyond a count sit that epoch out.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from engine.comm.base import InProcessComm
from engine.nets import elman as E
from engine.optim import ConjugateGradient
from engine.schedule import longest_first

_STOP, _DERIV, _FWD = 0.0, 1.0, 2.0


def partition(data: E.Sequences, n_workers: int) -> list[np.ndarray]:
    """Sequence ids of each worker under the longest-first rule (§2.2)."""
    a = longest_first(data.lengths, n_workers)
    return [np.flatnonzero(a == r) for r in range(n_workers)]


class Worker:
    """One rank's share of the sequences and its epoch kernels."""

    def __init__(self, net: E.Elman, data: E.Sequences, *, rank: int, workers_deriv: int,
                 workers_fwd: int, chunk: int = 16, method: str = "forward",
                 loss: str = "kalman_kwasny"):
        self.net, self.method, self.loss = net, method, loss
        self.deriv = (data.batches(partition(data, workers_deriv)[rank], chunk=chunk)
                      if rank < workers_deriv else [])
        self.fwd = (data.batches(partition(data, workers_fwd)[rank], chunk=chunk)
                    if rank < workers_fwd else [])
        self.g = np.zeros(net.n_params)  # (n_params,) local sum of ∂Φ/∂Y

    def derivative_epoch(self) -> tuple[float, np.ndarray]:
        if not self.deriv:
            self.g[:] = 0.0
            return 0.0, self.g
        return E.phi_grad(self.net, self.deriv, method=self.method, loss=self.loss, out=self.g)

    def forward_epoch(self) -> float:
        return E.phi(self.net, self.fwd, loss=self.loss) if self.fwd else 0.0


def train_cg(comm, shared_w: np.ndarray, data: E.Sequences, *, sizes: dict, workers_deriv: int,
             workers_fwd: int, iterations: int, chunk: int = 16, method: str = "forward",
             cg: dict | None = None, x0: np.ndarray | None = None) -> dict | None:
    """Conjugate-gradient training with the sequence partition; run on every rank.

    ``shared_w`` is the one weight vector all ranks read (a shared-memory buffer
    under the local backend). Returns, on rank 0, the CG history, the final
    weights and per-epoch timings (compute s of this rank, reduce s); None elsewhere.
    """
    comm = comm or InProcessComm()
    if max(workers_deriv, workers_fwd) > comm.size:
        raise ValueError(f"need {max(workers_deriv, workers_fwd)} ranks, have {comm.size}")
    net = E.Elman(**sizes, params=shared_w)
    w = Worker(net, data, rank=comm.rank, workers_deriv=workers_deriv, workers_fwd=workers_fwd,
               chunk=chunk, method=method)
    n = net.n_params
    cmd = np.zeros(1)
    send = np.empty(n + 1)
    recv = np.empty(n + 1)
    one, one_r = np.empty(1), np.empty(1)
    log = {"deriv_compute_s": [], "deriv_reduce_s": [], "fwd_compute_s": [], "fwd_reduce_s": []}

    def run(kind: float):
        t0 = perf_counter()
        if kind == _DERIV:
            p, g = w.derivative_epoch()
            send[0], send[1:] = p, g
            t1 = perf_counter()
            comm.allreduce(send, out=recv)
            log["deriv_compute_s"].append(t1 - t0)
            log["deriv_reduce_s"].append(perf_counter() - t1)
            return recv[0], recv[1:]
        one[0] = w.forward_epoch()
        t1 = perf_counter()
        comm.allreduce(one, out=one_r)
        log["fwd_compute_s"].append(t1 - t0)
        log["fwd_reduce_s"].append(perf_counter() - t1)
        return one_r[0]

    if comm.rank != 0:  # serve epochs until told to stop
        while True:
            comm.broadcast(cmd, root=0)  # its barrier also publishes rank 0's weights
            if cmd[0] == _STOP:
                return None
            run(cmd[0])

    def order(kind, x):
        np.copyto(shared_w, x)
        cmd[0] = kind
        comm.broadcast(cmd, root=0)
        return run(kind)

    def phi_grad(x):
        p, g = order(_DERIV, x)
        return float(p), g.copy()

    def phi(x):
        return float(order(_FWD, x))

    x = (np.array(shared_w) if x0 is None else np.array(x0, dtype=float))
    opt = ConjugateGradient(n, **(cg or {}))
    t0 = perf_counter()
    hist = opt.minimize(x, phi, phi_grad, iterations=iterations)
    wall = perf_counter() - t0
    cmd[0] = _STOP
    comm.broadcast(cmd, root=0)
    np.copyto(shared_w, x)
    return {"history": hist, "params": x, "wall_s": wall, "restarts": opt.restarts,
            **{k: np.array(v) for k, v in log.items()}}


def run_local_cg(data: E.Sequences, x0: np.ndarray, *, sizes: dict, workers_deriv: int,
                 workers_fwd: int, iterations: int, **kw) -> dict:
    """:func:`train_cg` on max(workers) local processes sharing one weight vector."""
    import multiprocess as mp

    from engine.comm.local import run_local

    size = max(workers_deriv, workers_fwd)
    if size == 1:
        return train_cg(None, np.array(x0, dtype=float), data, sizes=sizes, workers_deriv=1,
                        workers_fwd=1, iterations=iterations, **kw)
    raw = mp.get_context("fork").RawArray("d", len(x0))
    shared = np.frombuffer(raw, dtype=np.float64)
    shared[:] = x0

    def fn(comm):
        return train_cg(comm, np.frombuffer(raw, dtype=np.float64), data, sizes=sizes,
                        workers_deriv=workers_deriv, workers_fwd=workers_fwd,
                        iterations=iterations, **kw)

    return run_local(fn, size, max_elems=len(x0) + 1)[0]


def worker_seconds(net: E.Elman, data: E.Sequences, n_workers: int, *, deriv: bool,
                   chunk: int = 16, method: str = "forward", repeats: int = 3) -> np.ndarray:
    """Each worker's compute seconds for one epoch, measured one worker at a time in this
    process (best of ``repeats``): the compute part of an emulated sequence partition."""
    out = np.zeros(n_workers)
    for r, ids in enumerate(partition(data, n_workers)):
        b = data.batches(ids, chunk=chunk)
        best = np.inf
        for _ in range(repeats):
            t = perf_counter()
            if deriv:
                E.phi_grad(net, b, method=method)
            else:
                E.phi(net, b)
            best = min(best, perf_counter() - t)
        out[r] = best
    return out
