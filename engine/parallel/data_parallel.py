"""The data-parallel family: every worker holds a replica of any network (DESIGN.md).

One worker function, :func:`dp_worker`, parametrised by :class:`DataParallel`:

**How the data is split** (``split``), over the items of the data (patterns of
:class:`engine.data.Patterns`, sequences of :class:`engine.data.Sequences` and
:class:`engine.data.SeqData`):

- ``random``: each worker draws its local epoch of ``batch`` items with its own
  stream (Dahl et al. 2008, §4: pattern-parallel training's random local epochs):
  without replacement when batch < n, the whole set in order when batch = n, with
  replacement when batch > n; ``rounds`` local epochs per epoch (drawn lazily);
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

**What a paper adds** (:class:`Hooks`): a stopping rule, its own loss and
gradient (a data feed, an error estimate), extra values that travel with each
step's message, an evaluation after each epoch: components that the one loop
of :func:`dp_worker` calls, never a second copy of it.
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
    rounds: int = 0  # random: local epochs per epoch (0: ⌈n / (P·batch)⌉)
    own_key: int = 2  # each worker's own stream is driver.stream(seed, own_key, rank)

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


class Hooks:
    """What a configuration adds to the data-parallel loop, without a second copy of it.

    :func:`dp_worker` calls these on its own shallow copy of the object (one per
    worker: the emulated backend runs every worker in one process), so
    :meth:`start` may keep per-worker state on ``self``. With no hooks the loop
    makes no hook calls at all. ``extra`` values of each worker's step message
    follow its loss and count, or, with ``loss_count = False`` (``updates``
    only), follow the update directly: the message is then the update and the
    extras alone (Dahl et al. 2008, §4.1: the error estimate piggybacks as the
    last element), and the curve is the hook's to report (:meth:`result`).
    :meth:`grad` and :meth:`after_step` belong to the steps of ``gradients`` and
    ``updates``; ``params`` and ``cg`` runs call the other three only.
    """

    extra = 0  # values appended to each worker's step message and combined with it
    loss_count = True  # whether a step message carries the summed loss and item count

    def start(self, comm, rep) -> None:
        """Set-up before the clock starts."""

    def grad(self, comm, rep, idx, pad_len, out) -> float:
        """Σ loss over the items ``idx``, Σ gradient into ``rep.g``; this step's extra
        values into ``out`` (extra,). The default is the replica's own gradient."""
        return rep.grad(idx, pad_len)

    def after_step(self, comm, rep, extras) -> bool:
        """After the combined step is applied (inside the round): ``extras`` are the
        combined extra values, (P, extra) in rank order for ``updates`` (allgathered),
        (extra,) summed for ``gradients``. True stops training."""
        return False

    def end_epoch(self, comm, rep, epoch: int) -> bool:
        """After each epoch, inside ``comm.clock.untimed()``. True stops training."""
        return False

    def result(self, comm, rep) -> dict:
        """Merged into the worker's result dict (after the loop)."""
        return {}


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


def random_steps(n: int, m: int, rounds: int, rng):
    """``rounds`` local epochs of m of the n items, drawn lazily from ``rng`` (Dahl et
    al. 2008, §4): m < n without replacement, m > n with replacement, m = n every
    item in order (no draw)."""
    every = np.arange(n)  # (n,)
    for _ in range(rounds):
        if m < n:
            yield rng.choice(n, m, replace=False), None  # (m,)
        else:
            yield (rng.integers(0, n, m) if m > n else every), None


def local_steps(cfg: DataParallel, data, *, P: int, rank: int, order_rng, own_rng, lpt=None):
    """One epoch of this worker: (its items, pad length) per step; a list, or with
    ``rounds`` set a generator (:func:`random_steps`): a long epoch that a stopping
    rule may end early draws as it goes. (Drawing up front keeps the rng warm: about
    2 µs a step less for 8-100-1 parity, so the default epoch does.)"""
    n = n_items(data)
    if cfg.split == "random":
        steps = random_steps(n, cfg.batch, cfg.rounds or -(-n // (P * cfg.batch)), own_rng)
        return steps if cfg.rounds else list(steps)
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
    def __init__(self, net, data, cfg: DataParallel, hooks: Hooks | None = None):
        self.net, self.data, self.cfg = net, data, cfg
        n = net.n_params
        self.g = np.empty(n)  # (n_params,) gradient sum of this worker's items
        self.u = np.empty(n)  # (n_params,) combined update
        self.loss_count = hooks is None or hooks.loss_count
        k = n + 2 * self.loss_count  # where the extra values start
        extra = 0 if hooks is None else hooks.extra
        self.buf = np.empty(max(n + 2, k + extra))  # gradient or params, [loss, count], extras
        self.msg = self.buf[:k + extra]  # a step's message
        self.extras = self.buf[k:k + extra]  # (extra,) this worker's extra values
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


def _sync_step(comm, rep: _Replica, idx, pad_len, recv, hooks: Hooks | None = None) -> float:
    """One step of ``gradients`` or ``updates``; returns the summed loss over workers
    (this worker's loss when the message carries none)."""
    cfg, n, msg = rep.cfg, rep.net.n_params, rep.msg
    if hooks is None:
        loss = rep.grad(idx, pad_len)
    else:
        loss = hooks.grad(comm, rep, idx, pad_len, rep.extras)
    if cfg.combine == "gradients":
        msg[:n], msg[n], msg[n + 1] = rep.g, loss, len(idx)
        comm.allreduce(msg, out=msg)
        rep.step(msg[:n], msg[n + 1])
        return float(msg[n])
    count = max(len(idx), 1) * (comm.size if cfg.reduce == "mean" else 1)
    rep.opt.direction(rep.g, count, out=msg[:n])
    if rep.loss_count:
        msg[n], msg[n + 1] = loss, len(idx)
    comm.allgather(msg, recv)  # (P, message)
    rep.opt.apply(rep.net.params, np.add.reduce(recv[:, :n], axis=0, out=rep.u))  # rank order
    return float(recv[:, n].sum()) if rep.loss_count else loss


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


def dp_worker(comm, *, make_net, data, cfg: DataParallel, seed: int,
              hooks: Hooks | None = None) -> dict:
    """SPMD body of every data-parallel strategy: the same code on any communicator.

    ``make_net(rng)`` builds the network and initialises it from ``rng``, the
    stream shared by all workers (so every replica starts equal). ``hooks``: what
    the configuration adds (:class:`Hooks`; this worker works on a copy of it).
    """
    P, r = comm.size, comm.rank
    net = make_net(driver.stream(seed, 0))
    order_rng, own_rng = driver.stream(seed, 1), driver.stream(seed, cfg.own_key, r)
    if hooks is not None:
        if not hooks.loss_count and cfg.combine != "updates":
            raise ValueError("only combined updates can leave the loss and count out")
        hooks = copy.copy(hooks)
    rep = _Replica(net, data, cfg, hooks)
    n = net.n_params
    recv = np.empty((P, rep.msg.size))  # (P, message)
    k = rep.msg.size - rep.extras.size
    combined = recv[:, k:] if cfg.combine == "updates" else rep.msg[k:]  # the extras, combined
    lpt = longest_first(lengths(data), P) if cfg.split == "longest_first" else None
    V_prev = net.params.copy()  # V(e−1) of eq. (3)
    curve = []
    stop = False
    if hooks is not None:
        hooks.start(comm, rep)
    comm.start_clock()
    for epoch in range(cfg.epochs):
        if cfg.optimizer == "cg":
            curve += _cg(comm, rep, local_steps(cfg, data, P=P, rank=r, order_rng=order_rng,
                                                own_rng=own_rng, lpt=lpt)[0][0])
        elif cfg.combine != "params":
            for idx, pad_len in local_steps(cfg, data, P=P, rank=r, order_rng=order_rng,
                                            own_rng=own_rng, lpt=lpt):
                curve.append(_sync_step(comm, rep, idx, pad_len, recv, hooks))
                stop = hooks is not None and hooks.after_step(comm, rep, combined)
                comm.clock.end_round()
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
        if stop or hooks is not None and _end_epoch(comm, rep, hooks, epoch):
            break
    res = {"curve": np.asarray(curve), "params": net.params.copy()}
    if hooks is not None:
        res.update(hooks.result(comm, rep))
    return res


def _end_epoch(comm, rep, hooks: Hooks, epoch: int) -> bool:
    with comm.clock.untimed():
        return bool(hooks.end_epoch(comm, rep, epoch))


def message_size(n_params: int, hooks: Hooks | None = None) -> int:
    """Values in a step message: the payload, [loss, count], the hooks' extras."""
    return n_params + 2 if hooks is None else n_params + 2 * hooks.loss_count + hooks.extra


def train_data_parallel(make_net, data, *, cfg: DataParallel, seed: int, workers: int,
                        backend: str = "inprocess", comm=None, profile=None,
                        hooks: Hooks | None = None):
    """Run :func:`dp_worker` on ``workers`` workers of any backend; the RunRecord."""
    why = cfg.problem(data)
    if why:
        raise ValueError(why)
    res = driver.run(dp_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=message_size(make_net(driver.stream(seed, 0)).n_params, hooks),
                     make_net=make_net, data=data, cfg=cfg, seed=seed, hooks=hooks)
    if res is None:
        return None
    r0 = res[0]
    return driver.record(res, strategy=f"data-parallel/{cfg.split}/{cfg.combine}", backend=backend,
                         profile=profile, converged=False, epochs=cfg.epochs,
                         final_mse=r0["curve"][-1] if len(r0["curve"]) else float("nan"),
                         loss_curve=r0["curve"], params=r0["params"],
                         extra={f"cfg_{k}": v for k, v in asdict(cfg).items()})
