"""Training-sequence partition (McCann & Kalman 1994, §2.2), shared memory: a
configuration of the data-parallel family (:mod:`engine.parallel.data_parallel`).

Whole sequences are assigned to workers with :func:`engine.schedule.longest_first`
(the zeroing of the context at each sequence start makes sequences independent,
§1). Rank 0 runs the conjugate gradient trainer and, for every Φ it wants,
broadcasts the weights and the kind of epoch to every worker (``master``: on the
paper's shared-memory machine one copy of the weights, published by a barrier):

* a derivative epoch: each of the first ``workers_deriv`` ranks computes Φ and
  ∂Φ/∂Y over its sequences (its own activations and ∂a/∂Y, §2.2), and the
  per-worker sums are reduced;
* a forward (line-search) epoch: each of the first ``workers_fwd`` ranks
  computes Φ over its sequences of the forward partition, and the sums are
  reduced.

Derivative and forward epochs take separate worker counts, as the paper's
17 and 6 processors (§3.2). Ranks beyond a count sit that epoch out. A worker's
sequences are evaluated in chunks (``chunk``); the derivative ``method`` and the
loss (Kalman & Kwasny's) are the Elman net's. The worker is
:func:`engine.parallel.data_parallel.dp_worker`, on every backend of
:func:`engine.parallel.driver.run`, the emulated one included.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.nets import elman as E
from engine.parallel import driver
from engine.parallel.data_parallel import (CG_LONGEST_FIRST, EVALUATIONS, CGRule, DataParallel,
                                           dp_worker)
from engine.schedule import longest_first
from engine.perfmodel import FREE

_DERIV, _FWD = EVALUATIONS["grad"], EVALUATIONS["loss"]  # the kinds of epoch in ``kinds``
LOSS = "kalman_kwasny"  # Φ of §1 (Kalman & Kwasny's error function)


def partition(data: E.Sequences, n_workers: int) -> list[np.ndarray]:
    """Sequence ids of each worker under the longest-first rule (§2.2)."""
    a = longest_first(data.lengths, n_workers)
    return [np.flatnonzero(a == r) for r in range(n_workers)]


def configuration(*, workers_deriv: int, workers_fwd: int, iterations: int = 0, chunk: int = 16,
                  cg: dict | None = None, probe: tuple = ()) -> DataParallel:
    """§2.2 as a data-parallel configuration: longest-first shares of whole sequences,
    CG run by rank 0 (``master``), separate derivative and forward worker counts."""
    return replace(CG_LONGEST_FIRST, optimizer=CGRule(
        iterations=iterations, options=tuple((cg or {}).items()), master=True,
        grad_workers=workers_deriv, loss_workers=workers_fwd, chunk=chunk, probe=tuple(probe)))


class _Replica:
    """``make_net`` of :func:`dp_worker`: the Elman net at weights x0 with the derivative
    ``method`` and §1's loss (a class, not a closure, so local processes can pickle it)."""

    def __init__(self, net: E.Elman, x0: np.ndarray, method: str):
        self.net, self.x0, self.method = net, np.asarray(x0, dtype=float), method

    def __call__(self, _rng) -> E.Elman:  # the weights are x0, not drawn
        net = self.net.copy()
        net.params[:] = self.x0
        net.method, net.loss = self.method, LOSS  # what loss_and_grad uses (checked there)
        return net


def _run(net: E.Elman, data: E.Sequences, x0, method: str, cfg: DataParallel, *, backend: str,
         comm=None, profile=None):
    """:func:`dp_worker` under ``cfg`` on max(worker counts) workers (seed unused: no draws)."""
    why = cfg.problem(data)
    if why:
        raise ValueError(why)
    return driver.run(dp_worker, workers=max(cfg.cg.grad_workers, cfg.cg.loss_workers), backend=backend,
                      comm=comm, profile=profile, max_elems=net.n_params + 1,
                      make_net=_Replica(net, x0, method), data=data, cfg=cfg, seed=0)


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
    the final Φ). CG runs up to ``iterations`` and stops early at a stall
    (:meth:`engine.optim.ConjugateGradient.minimize`; the history says ``useful`` and
    ``stopped``), which leaves the result what all ``iterations`` would give.
    """
    cfg = configuration(workers_deriv=workers_deriv, workers_fwd=workers_fwd, iterations=iterations,
                        chunk=chunk, cg=cg)
    res = _run(E.Elman(**sizes), data, x0, method, cfg, backend=backend, comm=comm, profile=profile)
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
    """Each worker's compute seconds for one epoch (best of ``repeats``): :func:`dp_worker`
    on ``n_workers`` emulated workers ordering ``repeats`` derivative (or forward) epochs
    at ``net``'s weights; each worker's compute is timed alone between its collectives.

    A report can compose its emulated epoch time from these, T(P) = max_w c_w +
    2·(P − 1)·α + (P − 1)·bytes/β (shared-memory barriers and sum), for several machine
    profiles from one measurement; :func:`train_cg` with ``backend="emulated"`` charges
    the broadcast and allreduce of one profile instead."""
    cfg = configuration(workers_deriv=n_workers, workers_fwd=n_workers, chunk=chunk,
                        probe=("grad" if deriv else "loss",) * repeats)
    res = _run(net, data, net.params, method, cfg, backend="emulated", profile=FREE)
    return np.array([r["log"][:, 0].min() for r in res])
