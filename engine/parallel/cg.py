"""Conjugate gradients in the data-parallel family (:mod:`engine.parallel.data_parallel`,
``optimizer=CGRule(...)``): every Φ and ∇Φ is a sum over the workers' items.

**Who runs CG** (``master``): every replica (each Φ and ∇Φ an allreduce, one
round per CG iteration), or rank 0 alone, which broadcasts [kind, weights]
before each evaluation while the other ranks serve (one shared weight copy,
published by the barrier that starts an epoch; one round per evaluation). With
``longest_first``, gradient and loss-only evaluations may take separate worker
counts (``grad_workers``, ``loss_workers``), and a worker's share may be
evaluated in batches of ``chunk`` items (vectorised chunks). ``probe`` orders
evaluations at the initial weights instead of training: a timing run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.optim import ConjugateGradient
from engine.parallel.items import batches, lengths
from engine.schedule import longest_first

_STOP, _GRAD, _LOSS = 0.0, 1.0, 2.0  # CG evaluation kinds, as the master broadcasts them
EVALUATIONS = {"grad": _GRAD, "loss": _LOSS}


@dataclass(frozen=True)
class CGRule:
    """The CG optimizer of a data-parallel configuration (the module docstring)."""
    iterations: int = 3
    options: tuple = ()  # ((name, value), ...): keywords of engine.optim.ConjugateGradient
    master: bool = False  # rank 0 runs CG and broadcasts [kind, weights] per evaluation
    grad_workers: int = 0  # ranks that evaluate Φ and ∇Φ, longest-first over them (0: all)
    loss_workers: int = 0  # ranks that evaluate Φ alone (the line search; 0: all)
    chunk: int = 0  # items per batch of a worker's share (0: the share is one batch)
    probe: tuple = ()  # a timing run: evaluations ("grad" | "loss") at the initial weights


def loss_only(net, batches: list, scratch: np.ndarray) -> float:
    """Σ loss over ``batches`` without the gradient (a line-search evaluation): the net's
    forward-only pass where it has one (the Elman net's: a forward epoch), else each
    gradient computed into ``scratch`` (n_params,) and dropped."""
    one = getattr(net, "loss_only", None)
    total = 0.0
    for b in batches:  # a plain running sum, as engine.nets.elman.phi's
        total += one(b) if one is not None else net.loss_and_grad(b, scratch)
    return total


class _Evaluations:
    """This worker's part of CG's two evaluations at weights x:
    Φ and ∇Φ over its share of the items dealt to ``grad_workers`` ranks (a derivative
    epoch), Φ alone over its share of ``loss_workers`` (a forward epoch); each summed over
    the workers by one allreduce. Under ``master`` or ``probe`` an evaluation ends a round."""

    def __init__(self, comm, rep, idx):
        cfg, P, r = rep.cfg.optimizer, comm.size, comm.rank
        if max(cfg.grad_workers, cfg.loss_workers) > P:
            raise ValueError(f"need {max(cfg.grad_workers, cfg.loss_workers)} ranks, have {P}")
        self.comm, self.rep, self.chunk = comm, rep, cfg.chunk
        self.round_each = cfg.master or bool(cfg.probe)  # else one round per CG iteration
        self.grad_b = batches(rep.data, _deal(rep.data, cfg.grad_workers, r) if cfg.grad_workers
                              else idx, cfg.chunk)
        self.loss_b = batches(rep.data, _deal(rep.data, cfg.loss_workers, r) if cfg.loss_workers
                              else idx, cfg.chunk)
        self.tmp = np.empty(rep.net.n_params)  # (n_params,) one batch's gradient
        self.one, self.one_sum = np.empty(1), np.empty(1)  # (1,) Φ of a loss-only evaluation
        self.kinds = []  # the kind of every evaluation, in order

    def __call__(self, kind: float, x: np.ndarray):
        """Φ (``_LOSS``) or (Φ, ∇Φ) (``_GRAD``) over all workers at x."""
        net, n, comm = self.rep.net, self.rep.net.n_params, self.comm
        np.copyto(net.params, x)
        if kind == _GRAD:
            buf = self.rep.buf[:n + 1]  # (n_params + 1,): ∇Φ, then Φ
            buf[n] = self._grad_sum()
            buf[:n] = self.rep.g
            comm.allreduce(buf, out=buf)
            out = float(buf[n]), buf[:n].copy()
        else:
            self.one[0] = loss_only(net, self.loss_b, self.tmp)
            out = float(comm.allreduce(self.one, out=self.one_sum)[0])
        if self.round_each:
            comm.clock.end_round()
        self.kinds.append(kind)
        return out

    def _grad_sum(self) -> float:
        """Σ loss over the grad share; Σ gradient into the replica's ``g`` (zeros if none)."""
        net, g = self.rep.net, self.rep.g
        if len(self.grad_b) == 1 and not self.chunk:
            return net.loss_and_grad(self.grad_b[0], g)
        g[:] = 0.0
        total = 0.0
        for b in self.grad_b:  # in batch order, as engine.nets.elman.phi_grad
            total += net.loss_and_grad(b, self.tmp)
            g += self.tmp
        return total


def _deal(data, workers: int, rank: int) -> np.ndarray:
    """Rank's items when all are dealt longest-first to ranks 0..workers−1 (none beyond)."""
    if rank >= workers:
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(longest_first(lengths(data), workers) == rank)


def run_cg(comm, rep, idx) -> tuple[list, dict]:
    """Conjugate gradients on the full-batch loss: (Φ per iteration, what CG reports).

    Replicated (every rank runs CG; one round per iteration), or under ``master`` rank 0
    runs it and, before each evaluation, broadcasts [kind, weights] that every rank
    evaluates at; the others serve until told to stop, and the stop carries the final
    weights, so the replicas end equal. ``probe`` evaluates at the initial weights."""
    cfg, net, n = rep.cfg.optimizer, rep.net, rep.net.n_params
    with comm.clock.untimed():  # cutting the shares into batches is set-up, not training
        ev = _Evaluations(comm, rep, idx)
    msg = np.empty(n + 1)  # (1 + n_params,): the kind of evaluation, then the weights
    if cfg.master and comm.rank != 0:
        while True:
            comm.broadcast(msg, root=0)
            if msg[0] == _STOP:
                np.copyto(net.params, msg[1:])
                return [], {"kinds": np.array(ev.kinds)}
            ev(msg[0], msg[1:])

    def order(kind, x):
        if cfg.master:
            msg[0], msg[1:] = kind, x
            comm.broadcast(msg, root=0)
        return ev(kind, x)

    curve, info = [], {}

    def iteration_done(_x, value):
        curve.append(value)
        if not ev.round_each:
            comm.clock.end_round()

    x = net.params.copy()
    if cfg.probe:
        for k in cfg.probe:
            order(EVALUATIONS[k], x)
    else:
        opt = ConjugateGradient(n, **dict(cfg.options))
        info = {"history": opt.minimize(x, lambda w: order(_LOSS, w), lambda w: order(_GRAD, w),
                                        iterations=cfg.iterations, callback=iteration_done),
                "restarts": opt.restarts}
    if cfg.master:
        msg[0], msg[1:] = _STOP, x
        comm.broadcast(msg, root=0)
    net.params[:] = x
    return curve, {**info, "kinds": np.array(ev.kinds)}
