"""Training-sequence partition (McCann & Kalman 1994, §2.2), shared memory.

Whole sequences are assigned to workers with :func:`engine.schedule.longest_first`
(the zeroing of the context at each sequence start makes sequences independent,
§1). Rank 0 runs the conjugate gradient trainer and, for every Φ it wants,
broadcasts the weights and the kind of epoch to every worker (on the paper's
shared-memory machine one copy of the weights, published by a barrier):

* a derivative epoch: each of the first ``workers_deriv`` ranks computes Φ and
  ∂Φ/∂Y over its sequences (its own activations and ∂a/∂Y, §2.2), and the
  per-worker sums are reduced;
* a forward (line-search) epoch: each of the first ``workers_fwd`` ranks
  computes Φ over its sequences of the forward partition, and the sums are
  reduced.

Derivative and forward epochs take separate worker counts, as the paper's
17 and 6 processors (§3.2). Ranks beyond a count sit that epoch out. The worker
(:func:`cg_worker`) runs unchanged on every backend of
:func:`engine.parallel.driver.run`, the emulated one included.
"""
from __future__ import annotations

import copy

import numpy as np

from engine.nets import elman as E
from engine.optim import ConjugateGradient
from engine.parallel import driver
from engine.schedule import longest_first
from engine.perfmodel import FREE

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


def cg_worker(comm, *, net: E.Elman, data: E.Sequences, x0: np.ndarray, workers_deriv: int,
              workers_fwd: int, iterations: int = 0, chunk: int = 16, method: str = "forward",
              cg: dict | None = None, epochs=None) -> dict:
    """SPMD body of conjugate-gradient training with the sequence partition (§2.2).

    Rank 0 runs the CG trainer; for every Φ it wants it broadcasts the kind of epoch
    and the weights (the paper's shared weight copy, published by the barrier that
    starts the epoch); every rank replaces its replica's weights, runs its part of
    the epoch and the sums are allreduced. One round per epoch, ended after the
    reduction; a round of rank 0 also holds its CG arithmetic since the last epoch.
    With ``epochs`` (a sequence of ``_DERIV`` / ``_FWD``) rank 0 orders those
    epochs at ``x0`` instead of training: a timing run.
    """
    if max(workers_deriv, workers_fwd) > comm.size:
        raise ValueError(f"need {max(workers_deriv, workers_fwd)} ranks, have {comm.size}")
    net = copy.deepcopy(net)  # this worker's replica
    w = Worker(net, data, rank=comm.rank, workers_deriv=workers_deriv, workers_fwd=workers_fwd,
               chunk=chunk, method=method)
    n = net.n_params
    msg = np.empty(n + 1)  # (1 + n_params,): the kind of epoch, then the weights
    send, recv = np.empty(n + 1), np.empty(n + 1)  # (1 + n_params,): Φ, then ∂Φ/∂Y
    one, one_r = np.empty(1), np.empty(1)
    kinds = []

    def run(kind: float):
        if kind == _DERIV:
            p, g = w.derivative_epoch()
            send[0], send[1:] = p, g
            comm.allreduce(send, out=recv)
            out = recv[0], recv[1:]
        else:
            one[0] = w.forward_epoch()
            comm.allreduce(one, out=one_r)
            out = one_r[0]
        comm.clock.end_round()
        kinds.append(kind)
        return out

    comm.start_clock()
    if comm.rank != 0:  # serve epochs until told to stop
        while True:
            comm.broadcast(msg, root=0)
            if msg[0] == _STOP:
                return {"kinds": np.array(kinds)}
            np.copyto(net.params, msg[1:])
            run(msg[0])

    def order(kind, x):
        msg[0], msg[1:] = kind, x
        comm.broadcast(msg, root=0)
        np.copyto(net.params, x)
        return run(kind)

    def phi_grad(x):
        p, g = order(_DERIV, x)
        return float(p), g.copy()

    def phi(x):
        return float(order(_FWD, x))

    x = np.array(x0, dtype=float)
    out = {}
    if epochs is not None:
        for kind in epochs:
            order(kind, x)
    else:
        opt = ConjugateGradient(n, **(cg or {}))
        out = {"history": opt.minimize(x, phi, phi_grad, iterations=iterations),
               "restarts": opt.restarts}
    msg[0] = _STOP
    comm.broadcast(msg, root=0)
    return {**out, "params": x, "kinds": np.array(kinds)}


def train_cg(data: E.Sequences, x0: np.ndarray, *, sizes: dict, workers_deriv: int, workers_fwd: int,
             iterations: int, chunk: int = 16, method: str = "forward", cg: dict | None = None,
             backend: str = "local", comm=None, profile=None) -> dict | None:
    """CG training with the sequence partition on max(workers) workers of any backend of
    :func:`engine.parallel.driver.run` (``mpi``: ``comm`` has exactly that many ranks and
    the result comes back on rank 0, None elsewhere; ``emulated``: each worker's compute
    timed between its collectives, which ``profile`` charges).

    Returns the CG history, the final weights, the restarts, ``wall_s`` (rank 0's wall
    clock) and rank 0's seconds per epoch: ``deriv_compute_s`` / ``fwd_compute_s`` its
    compute (the epoch, plus its CG arithmetic since the previous epoch) and
    ``deriv_reduce_s`` / ``fwd_reduce_s`` its time in the round's collectives (the
    broadcast that starts the epoch and the reduction, waiting included); ``record``
    is the :class:`engine.timing.RunRecord` of every worker's rounds (``final_mse``:
    the final Φ; CG runs its ``iterations``, it has no stopping threshold).
    """
    size = max(workers_deriv, workers_fwd)
    net = E.Elman(**sizes)
    res = driver.run(cg_worker, workers=size, backend=backend, comm=comm, profile=profile,
                     max_elems=net.n_params + 1, net=net, data=data, x0=np.asarray(x0, dtype=float),
                     workers_deriv=workers_deriv, workers_fwd=workers_fwd, iterations=iterations,
                     chunk=chunk, method=method, cg=cg)
    if res is None:
        return None
    r0 = res[0]
    h, log, d = r0["history"], r0["log"], r0["kinds"] == _DERIV
    rec = driver.record(res, strategy="sequence-cg", backend=backend, profile=profile, converged=True,
                        epochs=float(d.sum()), final_mse=h["final_phi"] if iterations else float("nan"),
                        loss_curve=h["phi"], params=r0["params"], extra={"kinds": r0["kinds"]})
    return {"history": h, "params": r0["params"], "wall_s": r0["wall"], "restarts": r0["restarts"],
            "deriv_compute_s": log[d, 0], "deriv_reduce_s": log[d, 1],
            "fwd_compute_s": log[~d, 0], "fwd_reduce_s": log[~d, 1], "record": rec}


def run_local_cg(data: E.Sequences, x0: np.ndarray, *, sizes: dict, workers_deriv: int,
                 workers_fwd: int, iterations: int, **kw) -> dict:
    """:func:`train_cg` on max(workers) local processes (one worker: in this process)."""
    backend = "inprocess" if max(workers_deriv, workers_fwd) == 1 else "local"
    return train_cg(data, x0, sizes=sizes, workers_deriv=workers_deriv, workers_fwd=workers_fwd,
                    iterations=iterations, backend=backend, **kw)


def worker_seconds(net: E.Elman, data: E.Sequences, n_workers: int, *, deriv: bool,
                   chunk: int = 16, method: str = "forward", repeats: int = 3) -> np.ndarray:
    """Each worker's compute seconds for one epoch (best of ``repeats``): :func:`cg_worker`
    on ``n_workers`` emulated workers ordering ``repeats`` derivative (or forward) epochs
    at ``net``'s weights; each worker's compute is timed alone between its collectives.

    paper0's report composes its emulated epoch time from these, T(P) = max_w c_w +
    2·(P − 1)·α + (P − 1)·bytes/β (shared-memory barriers and sum), for several machine
    profiles from one measurement; :func:`train_cg` with ``backend="emulated"`` charges
    the broadcast and allreduce of one profile instead."""
    res = driver.run(cg_worker, workers=n_workers, backend="emulated", profile=FREE,
                     net=net, data=data, x0=net.params.copy(), workers_deriv=n_workers,
                     workers_fwd=n_workers, chunk=chunk, method=method,
                     epochs=[_DERIV if deriv else _FWD] * repeats)
    return np.array([r["log"][:, 0].min() for r in res])
