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

Serial training is the same strategy with one worker.

**What a configuration adds** (:class:`Hooks`): its own order of steps, data feed,
extra values combined with each step, stopping rule, evaluation after each epoch
and result entries, through the one loop of :func:`dp_worker`.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import numpy as np

from engine.data import Patterns, SeqData, Sequences
from engine.optim import SGD, Adadelta, ConjugateGradient
from engine.parallel import driver
from engine.schedule import epoch_batches, longest_first

SPLITS = ("random", "shares", "buckets", "longest_first")
COMBINES = ("gradients", "updates", "params")
OPTIMIZERS = ("sgd", "adadelta", "cg")


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


# ---- what a configuration adds --------------------------------------------------------------
class Hooks:
    """What a configuration adds to the data-parallel loop, without a second copy of it.

    The defaults add nothing. :func:`dp_worker` works on its own shallow copy (the
    workers of the emulated backend share the keyword arguments), so per-worker
    state is made in :meth:`start`; it looks up once, before its loop, which
    methods a subclass overrides, so a hook that is not overridden costs nothing
    per step. Example: Färber 1997's pattern-parallel bunch training
    (:class:`engine.strategies.pattern_bunch.QuicknetFeed`).
    """

    extra = 0  # values appended to each worker's step message and combined with it
    nbytes = None  # bytes of the step's round as the paper's machine moves them (None: as moved)

    def start(self, comm, rep) -> None:
        """Set-up before the clock starts."""

    def steps(self, comm, rep, epoch: int):
        """The epoch's steps [(this worker's items, pad length)] instead of the split's;
        may end rounds of its own between steps (e.g. the data sent before them)."""
        raise NotImplementedError

    def grad(self, comm, rep, idx, pad_len, out) -> float:
        """Σ loss over ``idx`` and Σ gradient into ``rep.g``, instead of ``rep.net``'s
        (e.g. through a data feed); ``out`` (extra,): this step's extra values."""
        raise NotImplementedError

    def after_step(self, comm, rep, extras) -> bool:
        """After the optimizer step; ``extras`` (extra,): the combined extra values.
        True stops training (the epoch's :meth:`end_epoch` still runs)."""
        return False

    def end_epoch(self, comm, rep, epoch: int) -> bool:
        """After every epoch (1, 2, ...), inside ``comm.clock.untimed()``; True stops."""
        return False

    def result(self, comm, rep) -> dict:
        """Merged into (and over) the worker's result dict."""
        return {}


def _overrides(hooks: Hooks, name: str) -> bool:
    return getattr(type(hooks), name) is not getattr(Hooks, name)


# ---- one worker -----------------------------------------------------------------------------
class _Replica:
    def __init__(self, net, data, cfg: DataParallel, extra: int = 0):
        self.net, self.data, self.cfg = net, data, cfg
        n = net.n_params
        # (n_params + 2 + extra,): gradient or params, loss, count, extra values
        self.buf = np.empty(n + 2 + extra)
        self.extra, self.extras = extra, self.buf[n + 2:]  # (extra,) view
        # (n_params,) gradient sum of this worker's items; combining gradients, it is born
        # in the message (no copy per step)
        self.g = self.buf[:n] if cfg.combine == "gradients" else np.empty(n)
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
        rep.buf[n], rep.buf[n + 1] = loss, len(idx)  # rep.g is rep.buf[:n]
        comm.allreduce(rep.buf, out=rep.buf)
        rep.step(rep.buf[:n], rep.buf[n + 1])
        return float(rep.buf[n])
    count = max(len(idx), 1) * (comm.size if cfg.reduce == "mean" else 1)
    rep.opt.direction(rep.g, count, out=rep.buf[:n])
    rep.buf[n], rep.buf[n + 1] = loss, len(idx)
    comm.allgather(rep.buf, recv)  # (P, n_params + 2 + extra)
    rep.opt.apply(rep.net.params, recv[:, :n].sum(axis=0))  # rank order
    if rep.extra:
        recv[:, n + 2:].sum(axis=0, out=rep.extras)
    return float(recv[:, n].sum())


def _cg(comm, rep: _Replica, idx) -> list:
    """Conjugate gradients on the full-batch loss; every Φ and ∇Φ is an allreduce."""
    net, n = rep.net, rep.net.n_params
    batch = take(rep.data, idx) if len(idx) else None
    one = np.empty(1)

    def phi(x):
        net.params[:] = x
        one[0] = net.loss_and_grad(batch, rep.g) if batch is not None else 0.0
        return float(comm.allreduce(one)[0])

    def phi_grad(x):
        net.params[:] = x
        loss = rep.grad(idx, None)
        rep.buf[:n], rep.buf[n] = rep.g, loss
        comm.allreduce(rep.buf[:n + 1], out=rep.buf[:n + 1])
        return float(rep.buf[n]), rep.buf[:n].copy()

    curve = []
    cg = ConjugateGradient(n)
    x = net.params.copy()
    cg.minimize(x, phi, phi_grad, iterations=rep.cfg.cg_iterations,
                callback=lambda _x, value: (curve.append(value), comm.clock.end_round()))
    net.params[:] = x
    return curve


def dp_worker(comm, *, make_net, data, cfg: DataParallel, seed: int, hooks: Hooks | None = None,
              init_key: tuple = (0,)) -> dict:
    """SPMD body of every data-parallel strategy: the same code on any communicator.

    ``make_net(rng)`` builds the network and initialises it from ``rng``, the
    stream ``init_key`` shared by all workers (so every replica starts equal; a
    configuration that keeps its paper's stream names its key). ``hooks``: what
    the configuration adds (:class:`Hooks`).
    """
    P, r = comm.size, comm.rank
    hk = copy.copy(hooks) if hooks is not None else _NO_HOOKS  # per-worker state in start()
    net = make_net(driver.stream(seed, *init_key))
    order_rng, own_rng = driver.stream(seed, 1), driver.stream(seed, 2, r)
    rep = _Replica(net, data, cfg, extra=hk.extra)
    n = net.n_params
    recv = np.empty((P, n + 2 + hk.extra))  # (P, n_params + 2 + extra)
    lpt = longest_first(lengths(data), P) if cfg.split == "longest_first" else None
    V_prev = net.params.copy()  # V(e−1) of eq. (3)
    curve = []
    # which hooks act, decided once: an unused one costs nothing per step
    own_steps, end_epoch = _overrides(hk, "steps"), _overrides(hk, "end_epoch")
    after = hk.after_step if _overrides(hk, "after_step") else None
    if _overrides(hk, "grad"):
        rep.grad = lambda idx, pad_len: hk.grad(comm, rep, idx, pad_len, rep.extras)
    hk.start(comm, rep)
    comm.start_clock()
    stop = False
    for epoch in range(1, cfg.epochs + 1):
        if cfg.optimizer == "cg":
            curve += _cg(comm, rep, local_steps(cfg, data, P=P, rank=r, order_rng=order_rng,
                                                own_rng=own_rng, lpt=lpt)[0][0])
        elif cfg.combine != "params":
            steps = (hk.steps(comm, rep, epoch) if own_steps else
                     local_steps(cfg, data, P=P, rank=r, order_rng=order_rng, own_rng=own_rng,
                                 lpt=lpt))
            for idx, pad_len in steps:
                curve.append(_sync_step(comm, rep, idx, pad_len, recv))
                stop = after is not None and after(comm, rep, rep.extras)
                comm.clock.end_round(nbytes=hk.nbytes)
                if stop:
                    break
        else:
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
        if end_epoch:
            with comm.clock.untimed():
                stop = hk.end_epoch(comm, rep, epoch) or stop
        if stop:
            break
    return {"curve": np.asarray(curve), "params": net.params.copy(), **hk.result(comm, rep)}


_NO_HOOKS = Hooks()


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
