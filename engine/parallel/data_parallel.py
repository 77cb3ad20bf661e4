"""The data-parallel family: every worker holds a replica of any network (DESIGN.md).

One worker function, :func:`dp_worker`, parametrised by :class:`DataParallel`:

**How the data is split** (``split``), over the items of the data (patterns of
:class:`engine.data.Patterns`, sequences of :class:`engine.data.Sequences` and
:class:`engine.data.SeqData`):

- ``random``: each worker draws its local epoch of ``batch`` items with its own
  stream (Dahl et al. 2008, §4: pattern-parallel training's random local epochs);
- ``shares``: each epoch the shared data-order stream permutes the items, cut
  into bunches of ``batch``; worker p takes the p-th contiguous share of each
  bunch (Färber 1997, §2.2);
- ``buckets``: each epoch :func:`engine.schedule.epoch_batches` cuts the items into
  bucketed batches of ``batch`` (shortest bucket first, Khomenko et al. 2016,
  §III); worker p takes every P-th sequence of a batch, padded to the bucket bound;
- ``longest_first``: the whole sequences are dealt to the workers once, longest
  first (McCann & Kalman 1994, §2.2); every step covers the whole set.

**What is combined** (``combine``) and **how often** (``every``):

- ``gradients`` every step: the gradient sums (and losses and counts) are
  allreduced and every replica takes the same optimizer step: P workers compute
  what one does with the whole bunch;
- ``updates`` every step: each worker turns its own gradient into an SGD update,
  the updates are allgathered and summed (``reduce="sum"``, the paper's PPT) or
  averaged (``"mean"``); momentum then applies to the combined update;
- ``params`` every epoch: each worker trains its own portion of a shared
  permutation (split as above within the portion), then the parameters are
  averaged with eq. (3) of Khomenko et al., V(e) = v̄(e) − β·V(e−1).

**Which optimizer**: ``sgd`` (with momentum; the step divides the summed gradient
by the count when ``reduce="mean"``, not when ``"sum"``, Quicknet's bunch mode),
``adadelta``, or ``cg`` (conjugate gradients on the full-batch gradient, so only
with ``gradients``, every step, ``longest_first`` or a whole-set ``shares``).

**Who runs CG** (``master``): every replica (each Φ and ∇Φ an allreduce, one
round per CG iteration), or rank 0 alone, which broadcasts [kind, weights]
before each evaluation while the other ranks serve (McCann & Kalman 1994, §2.2:
one shared weight copy, published by the barrier that starts an epoch; one
round per evaluation). With ``longest_first``, gradient and loss-only
evaluations may take separate worker counts (``grad_workers``, ``loss_workers``:
§3.2's 17 and 6 processors), and a worker's share may be evaluated in batches of
``chunk`` items (§2.2's vectorised chunks). ``probe`` orders evaluations at the
initial weights instead of training: a timing run.

Serial training is the same strategy with one worker.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from engine.data import Patterns, SeqData, Sequences
from engine.nets import elman
from engine.optim import SGD, Adadelta, ConjugateGradient
from engine.parallel import driver
from engine.schedule import epoch_batches, longest_first

SPLITS = ("random", "shares", "buckets", "longest_first")
COMBINES = ("gradients", "updates", "params")
OPTIMIZERS = ("sgd", "adadelta", "cg")
_STOP, _GRAD, _LOSS = 0.0, 1.0, 2.0  # CG evaluation kinds, as the master broadcasts them
EVALUATIONS = {"grad": _GRAD, "loss": _LOSS}


@dataclass(frozen=True)
class DataParallel:
    split: str = "shares"
    combine: str = "gradients"
    reduce: str = "mean"  # sum | mean: of the combined gradients/updates, and the SGD count
    optimizer: str = "sgd"
    batch: int = 8  # items per bunch (shares, buckets) or per local epoch (random)
    epochs: int = 1  # passes; for ``random``, rounds = epochs·⌈n / (P·batch)⌉
    lr: float = 0.1
    momentum: float = 0.0
    beta: float = 0.0  # eq. (3) of Khomenko et al. 2016 (params only)
    n_buckets: int = 3
    cg_iterations: int = 3
    cg_options: tuple = ()  # ((name, value), ...): keywords of engine.optim.ConjugateGradient
    master: bool = False  # CG: rank 0 runs it and broadcasts [kind, weights] per evaluation
    grad_workers: int = 0  # CG: ranks that evaluate Φ and ∇Φ, longest-first over them (0: all)
    loss_workers: int = 0  # CG: ranks that evaluate Φ alone (the line search; 0: all)
    chunk: int = 0  # CG: items per batch of a worker's share (0: the share is one batch)
    probe: tuple = ()  # CG timing run: evaluations ("grad" | "loss") at the initial weights

    @property
    def every(self) -> str:
        return "epoch" if self.combine == "params" else "step"

    def problem(self, data) -> str | None:
        """Why this configuration cannot apply to ``data``, or None."""
        if self.split not in SPLITS or self.combine not in COMBINES or self.optimizer not in OPTIMIZERS:
            return f"unknown split/combine/optimizer {self.split}/{self.combine}/{self.optimizer}"
        if self.reduce not in ("sum", "mean"):
            return f"reduce must be sum or mean, got {self.reduce!r}"
        if self.split == "buckets" and isinstance(data, Patterns):
            return "buckets group sequences of similar length; these are independent patterns"
        if self.optimizer == "cg":
            if self.combine != "gradients" or self.split not in ("longest_first", "shares"):
                return "CG needs the full-batch gradient: combine gradients of a whole-set split"
            if self.split == "shares" and self.batch < n_items(data):
                return "CG needs the full-batch gradient: a bunch must hold the whole set"
        if self.optimizer != "cg" and (self.master or self.grad_workers or self.loss_workers
                                       or self.chunk or self.probe or self.cg_options):
            return "master, grad/loss workers, chunk, probe and cg_options are options of CG"
        if (self.grad_workers or self.loss_workers) and self.split != "longest_first":
            return "separate grad/loss worker counts deal the items longest-first"
        if any(k not in EVALUATIONS for k in self.probe):
            return f"probe evaluations are {tuple(EVALUATIONS)}, got {self.probe}"
        if self.combine == "updates" and self.optimizer != "sgd":
            return "combining updates is defined for SGD updates (−η·g/count)"
        return None


class _Portion:
    """A worker's portion of the items, indexed 0..len−1, for :func:`local_steps`."""

    def __init__(self, data, portion):
        self.data, self.portion = data, portion
        self.n_patterns = len(portion)
        self.lengths = None if isinstance(data, Patterns) else data.lengths[portion]


# ---- the items of any container ----------------------------------------------------------
def lengths(data) -> np.ndarray:
    """Steps per item: a pattern is one step."""
    return np.ones(data.n_patterns, dtype=np.int64) if isinstance(data, Patterns) else data.lengths


def n_items(data) -> int:
    return data.n_patterns if isinstance(data, (Patterns, _Portion)) else len(data.lengths)


def take(data, idx, pad_len: int | None = None):
    """The batch of items ``idx`` (padded to ``pad_len`` steps for sequences)."""
    if isinstance(data, Patterns):
        return data.take(idx)
    if isinstance(data, Sequences):
        return data.batch(idx, length=pad_len)
    if isinstance(data, SeqData):
        return data.batch(idx, pad_len)
    raise TypeError(f"no items in {type(data).__name__}")


def batches(data, idx, chunk: int = 0) -> list:
    """The items ``idx`` as batches: one (``chunk`` 0) or batches of at most ``chunk``
    items; sequences sorted longest first (:meth:`Sequences.batches`), so padding
    stays small (McCann & Kalman 1994, §2.2, vectorised chunks of sequences)."""
    if len(idx) == 0:
        return []
    if not chunk:
        return [take(data, idx)]
    if isinstance(data, Sequences):
        return data.batches(idx, chunk=chunk)
    return [take(data, idx[k:k + chunk]) for k in range(0, len(idx), chunk)]


def loss_only(net, batches: list, scratch: np.ndarray) -> float:
    """Σ loss over ``batches`` without the gradient (a line-search evaluation): the Elman
    net's forward passes and loss (:func:`engine.nets.elman.phi`, §2.2's forward epoch);
    a net without a loss-only pass computes each gradient into ``scratch`` (n_params,)."""
    if isinstance(net, elman.Elman):
        return elman.phi(net, batches, loss=net.loss)
    total = 0.0
    for b in batches:  # a plain running sum, as phi's (Python's sum() compensates)
        total += net.loss_and_grad(b, scratch)
    return total


def share(b: int, P: int, p: int) -> slice:
    """Worker p's contiguous share of a bunch of b items (the first b % P get one more)."""
    q, r = divmod(b, P)
    lo = p * q + min(p, r)
    return slice(lo, lo + q + (p < r))


def local_steps(cfg: DataParallel, data, *, P: int, rank: int, order_rng, own_rng, lpt=None):
    """One epoch of this worker: [(its items, pad length)], one entry per step."""
    n = n_items(data)
    if cfg.split == "random":
        rounds = -(-n // (P * cfg.batch))
        m = min(cfg.batch, n)
        return [(own_rng.choice(n, m, replace=False), None) for _ in range(rounds)]
    if cfg.split == "longest_first":
        return [(np.flatnonzero(lpt == rank), None)]
    if cfg.split == "shares":
        perm = order_rng.permutation(n)
        return [(perm[s:s + cfg.batch][share(len(perm[s:s + cfg.batch]), P, rank)], None)
                for s in range(0, n, cfg.batch)]
    bts = epoch_batches(data.lengths, cfg.batch, order_rng, n_buckets=cfg.n_buckets)
    return [(bt.idx[rank::P], bt.pad_len) for bt in bts]


# ---- one worker -----------------------------------------------------------------------------
class _Replica:
    def __init__(self, net, data, cfg: DataParallel):
        self.net, self.data, self.cfg = net, data, cfg
        n = net.n_params
        self.g = np.empty(n)  # (n_params,) gradient sum of this worker's items
        self.buf = np.empty(n + 2)  # (n_params + 2,): gradient or params, loss, count
        self.opt = (Adadelta(n, lr=cfg.lr) if cfg.optimizer == "adadelta"
                    else SGD(n, lr=cfg.lr, momentum=cfg.momentum))

    def grad(self, idx, pad_len) -> float:
        """Σ loss over the items ``idx``; Σ gradient into ``self.g`` (zeros if none)."""
        if len(idx) == 0:
            self.g[:] = 0.0
            return 0.0
        return self.net.loss_and_grad(take(self.data, idx, pad_len), self.g)

    def step(self, g: np.ndarray, count: float) -> None:
        c = max(int(count), 1) if self.cfg.reduce == "mean" else 1
        self.opt.step(self.net.params, g, c)


def _sync_step(comm, rep: _Replica, idx, pad_len, recv) -> float:
    """One step of ``gradients`` or ``updates``; returns the summed loss over workers."""
    cfg, n = rep.cfg, rep.net.n_params
    loss = rep.grad(idx, pad_len)
    if cfg.combine == "gradients":
        rep.buf[:n], rep.buf[n], rep.buf[n + 1] = rep.g, loss, len(idx)
        comm.allreduce(rep.buf, out=rep.buf)
        rep.step(rep.buf[:n], rep.buf[n + 1])
        return float(rep.buf[n])
    count = max(len(idx), 1) * (comm.size if cfg.reduce == "mean" else 1)
    rep.opt.direction(rep.g, count, out=rep.buf[:n])
    rep.buf[n], rep.buf[n + 1] = loss, len(idx)
    comm.allgather(rep.buf, recv)  # (P, n_params + 2)
    rep.opt.apply(rep.net.params, recv[:, :n].sum(axis=0))  # rank order
    return float(recv[:, n].sum())


class _Evaluations:
    """This worker's part of CG's two evaluations at weights x (McCann & Kalman 1994, §2.2):
    Φ and ∇Φ over its share of the items dealt to ``grad_workers`` ranks (a derivative
    epoch), Φ alone over its share of ``loss_workers`` (a forward epoch); each summed over
    the workers by one allreduce. Under ``master`` or ``probe`` an evaluation ends a round."""

    def __init__(self, comm, rep: _Replica, idx):
        cfg, P, r = rep.cfg, comm.size, comm.rank
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


def _cg(comm, rep: _Replica, idx) -> tuple[list, dict]:
    """Conjugate gradients on the full-batch loss: (Φ per iteration, what CG reports).

    Replicated (every rank runs CG; one round per iteration), or under ``master`` rank 0
    runs it and, before each evaluation, broadcasts [kind, weights] that every rank
    evaluates at; the others serve until told to stop, and the stop carries the final
    weights, so the replicas end equal. ``probe`` evaluates at the initial weights."""
    cfg, net, n = rep.cfg, rep.net, rep.net.n_params
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
        opt = ConjugateGradient(n, **dict(cfg.cg_options))
        info = {"history": opt.minimize(x, lambda w: order(_LOSS, w), lambda w: order(_GRAD, w),
                                        iterations=cfg.cg_iterations, callback=iteration_done),
                "restarts": opt.restarts}
    if cfg.master:
        msg[0], msg[1:] = _STOP, x
        comm.broadcast(msg, root=0)
    net.params[:] = x
    return curve, {**info, "kinds": np.array(ev.kinds)}


def dp_worker(comm, *, make_net, data, cfg: DataParallel, seed: int) -> dict:
    """SPMD body of every data-parallel strategy: the same code on any communicator.

    ``make_net(rng)`` builds the network and initialises it from ``rng``, the
    stream shared by all workers (so every replica starts equal). Under CG the result
    adds ``kinds`` (every evaluation's kind, 1 gradient, 2 loss alone) and, where CG
    ran (every rank, or rank 0 under ``master``), its ``history`` and ``restarts``.
    """
    P, r = comm.size, comm.rank
    net = make_net(driver.stream(seed, 0))
    order_rng, own_rng = driver.stream(seed, 1), driver.stream(seed, 2, r)
    rep = _Replica(net, data, cfg)
    n = net.n_params
    recv = np.empty((P, n + 2))  # (P, n_params + 2)
    lpt = longest_first(lengths(data), P) if cfg.split == "longest_first" else None
    V_prev = net.params.copy()  # V(e−1) of eq. (3)
    curve, cg_info = [], {}
    comm.start_clock()
    for _ in range(cfg.epochs):
        if cfg.optimizer == "cg":
            c, cg_info = _cg(comm, rep, local_steps(cfg, data, P=P, rank=r, order_rng=order_rng,
                                                    own_rng=own_rng, lpt=lpt)[0][0])
            curve += c
            continue
        if cfg.combine != "params":
            for idx, pad_len in local_steps(cfg, data, P=P, rank=r, order_rng=order_rng,
                                            own_rng=own_rng, lpt=lpt):
                curve.append(_sync_step(comm, rep, idx, pad_len, recv))
                comm.clock.end_round()
            continue
        portion = order_rng.permutation(n_items(data))[r::P]  # one portion per worker
        loss = 0.0
        for idx, pad_len in local_steps(cfg, _Portion(data, portion), P=1, rank=0,
                                        order_rng=own_rng, own_rng=own_rng, lpt=None):
            loss += rep.grad(portion[idx], pad_len)
            rep.step(rep.g, len(idx))
        rep.buf[:n], rep.buf[n] = net.params, loss
        comm.allreduce(rep.buf[:n + 1], out=rep.buf[:n + 1])
        np.subtract(rep.buf[:n] / P, cfg.beta * V_prev, out=net.params)  # eq. (3)
        V_prev[:] = net.params
        curve.append(float(rep.buf[n]))
        comm.clock.end_round()
    return {"curve": np.asarray(curve), "params": net.params.copy(), **cg_info}


def train_data_parallel(make_net, data, *, cfg: DataParallel, seed: int, workers: int,
                        backend: str = "inprocess", comm=None, profile=None):
    """Run :func:`dp_worker` on ``workers`` workers of any backend; the RunRecord."""
    why = cfg.problem(data)
    if why:
        raise ValueError(why)
    res = driver.run(dp_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=make_net(driver.stream(seed, 0)).n_params + 2,
                     make_net=make_net, data=data, cfg=cfg, seed=seed)
    if res is None:
        return None
    r0 = res[0]
    return driver.record(res, strategy=f"data-parallel/{cfg.split}/{cfg.combine}", backend=backend,
                         profile=profile, converged=False, epochs=cfg.epochs,
                         final_mse=r0["curve"][-1] if len(r0["curve"]) else float("nan"),
                         loss_curve=r0["curve"], params=r0["params"],
                         extra={f"cfg_{k}": v for k, v in asdict(cfg).items()})
