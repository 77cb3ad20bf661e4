"""The data-parallel family: every worker holds a replica of any network (docs/engine.md).

One worker function, :func:`dp_worker`, parametrised by :class:`DataParallel`:

**How the data is split** (``split``), over the items of the data (patterns of
:class:`engine.data.Patterns`, sequences of :class:`engine.data.Sequences` and
:class:`engine.data.SeqData`):

- ``random``: each worker draws its local epoch of ``batch`` items with its own
  stream (pattern-parallel training's random local epochs):
  without replacement when batch < n, the whole set in order when batch = n, with
  replacement when batch > n; ``rounds`` local epochs per epoch (drawn lazily);
- ``shares``: each epoch the shared data-order stream permutes the items, cut
  into bunches of ``batch``; worker p takes the p-th contiguous share of each
  bunch;
- ``buckets``: each epoch :func:`engine.schedule.epoch_batches` cuts the items into
  bucketed batches of ``batch`` (shortest bucket first); worker p takes every P-th
  sequence of a batch, padded to the bucket bound; its options are :class:`Buckets`
  (with ``bounds_from="all"`` the bounds, and so the padded shapes, are fixed before
  the data is split);
- ``longest_first``: the whole sequences are dealt to the workers once, longest
  first (:func:`engine.schedule.longest_first`); every step covers the whole set.

**What is combined** (``combine``) and **how often** (``every``):

- ``gradients`` every step: the gradient sums (and losses and counts) are
  allreduced and every replica takes the same optimizer step: P workers compute
  what one does with the whole bunch;
- ``updates`` every step: each worker turns its own gradient into an SGD update,
  the updates are allgathered and summed (``reduce="sum"``, pattern-parallel training) or
  averaged (``"mean"``); momentum then applies to the combined update;
- ``params`` every epoch: each worker trains its own portion of a shared
  permutation (split as above within the portion), then the parameters are
  averaged with a decay of the previous average, V(e) = v̄(e) − β·V(e−1).

With ``beta`` ≠ 0 the per-step combines apply the same decay at each epoch end,
V(e) = v(e) − β·V(e−1), to the replica every worker shares (a gradient-allreduce
counterpart of the parameter averaging). ``round_every`` says what one round (one
row of the log) of a per-step combine is: each ``step``, or the whole ``epoch``
(its steps' summed losses then make one value of the curve: a run timed per epoch).

**Which optimizer** (``optimizer``, a rule with its own parameters): :class:`SGDRule`
(with momentum; the step divides the summed gradient by the count when
``reduce="mean"``, not when ``"sum"``, a bunch mode that adds them),
:class:`AdadeltaRule`, or :class:`engine.parallel.cg.CGRule` (conjugate gradients on
the full-batch gradient, so only with ``gradients``, every step, ``longest_first`` or
a whole-set ``shares``; replicated or run by a master).

Serial training is the same strategy with one worker.

**What a configuration adds** (:class:`Hooks`): a stopping rule, its own loss and
gradient (a data feed, an error estimate), extra values that travel with each
step's message, an evaluation after each epoch: components that the one loop
of :func:`dp_worker` calls, never a second copy of it.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import numpy as np

from engine.data import Patterns
from engine.optim import SGD, Adadelta
from engine.parallel import driver
from engine.parallel.cg import EVALUATIONS, CGRule, run_cg
from engine.parallel.items import _Portion, lengths, n_items, share, take  # noqa: F401 (re-exported)
from engine.schedule import BUCKETINGS, epoch_batches, longest_first

SPLITS = ("random", "shares", "buckets", "longest_first")
COMBINES = ("gradients", "updates", "params")


@dataclass(frozen=True)
class SGDRule:
    """SGD with momentum (:class:`engine.optim.SGD`); the step divides the summed gradient by
    the count when ``reduce="mean"``, not when ``"sum"``."""
    lr: float = 0.1
    momentum: float = 0.0

    def make(self, n_params: int) -> SGD:
        return SGD(n_params, lr=self.lr, momentum=self.momentum)


@dataclass(frozen=True)
class AdadeltaRule:
    """ADADELTA (:class:`engine.optim.Adadelta`), ρ and ε Lasagne's defaults."""
    lr: float = 1.0
    rho: float = 0.95
    eps: float = 1e-6

    def make(self, n_params: int) -> Adadelta:
        return Adadelta(n_params, lr=self.lr, rho=self.rho, eps=self.eps)


@dataclass(frozen=True)
class Buckets:
    """``split="buckets"``: the options of :func:`engine.schedule.epoch_batches` (``method``
    its bucketing); the bounds come from the items being batched (``bounds_from="items"``:
    a worker's portion under ``params``) or once from the whole data set (``"all"``)."""
    n: int = 3
    method: str = "optimal"  # optimal | quantile | equal_width | megabatch | random
    order: str = "short_first"  # the batch order, or "random"
    shuffle_within: bool = True
    pad_to: str = "bucket"  # or "batch"
    bounds_from: str = "items"  # or "all"


@dataclass(frozen=True)
class DataParallel:
    """One data-parallel configuration (the module docstring); :meth:`problem` says why it
    cannot apply to some data (:func:`train_data_parallel` checks it before a run). Variants
    are values of these fields, e.g. :data:`LOCAL_EPOCHS`."""
    split: str = "shares"
    combine: str = "gradients"
    reduce: str = "mean"  # sum | mean: of the combined gradients/updates, and the SGD count
    optimizer: SGDRule | AdadeltaRule | CGRule = SGDRule()
    batch: int = 8  # items per bunch (shares, buckets) or per local epoch (random)
    epochs: int = 1  # passes; for ``random``, rounds = epochs·⌈n / (P·batch)⌉
    rounds: int = 0  # random: local epochs per epoch (0: ⌈n / (P·batch)⌉)
    beta: float = 0.0  # β of V(e) = v̄(e) − β·V(e−1) (per-step combines: at epoch end if ≠ 0)
    round_every: str = "step"  # one round per step, or per "epoch" (per-step combines)
    buckets: Buckets = Buckets()

    @property
    def every(self) -> str:
        return "epoch" if self.combine == "params" else "step"

    @property
    def cg(self) -> CGRule | None:
        return self.optimizer if isinstance(self.optimizer, CGRule) else None

    def problem(self, data) -> str | None:
        """Why this configuration cannot apply to ``data``, or None."""
        b, cg = self.buckets, self.cg
        if self.split not in SPLITS or self.combine not in COMBINES:
            return f"unknown split/combine {self.split}/{self.combine}"
        if not isinstance(self.optimizer, (SGDRule, AdadeltaRule, CGRule)):
            return f"optimizer must be an SGDRule, AdadeltaRule or CGRule, got {self.optimizer!r}"
        if self.reduce not in ("sum", "mean"):
            return f"reduce must be sum or mean, got {self.reduce!r}"
        if b.bounds_from not in ("items", "all") or self.round_every not in ("step", "epoch"):
            return (f"bounds_from must be items or all, round_every step or epoch: "
                    f"{b.bounds_from}, {self.round_every}")
        if b.method not in BUCKETINGS and b.method not in ("random", "megabatch"):
            return f"unknown bucketing {b.method!r}"
        if self.split == "buckets" and isinstance(data, Patterns):
            return "buckets group sequences of similar length; these are independent patterns"
        if cg is not None:
            if self.combine != "gradients" or self.split not in ("longest_first", "shares"):
                return "CG needs the full-batch gradient: combine gradients of a whole-set split"
            if self.split == "shares" and self.batch < n_items(data):
                return "CG needs the full-batch gradient: a bunch must hold the whole set"
            if (cg.grad_workers or cg.loss_workers) and self.split != "longest_first":
                return "separate grad/loss worker counts deal the items longest-first"
            if any(k not in EVALUATIONS for k in cg.probe):
                return f"probe evaluations are {tuple(EVALUATIONS)}, got {cg.probe}"
        if self.combine == "updates" and not isinstance(self.optimizer, SGDRule):
            return "combining updates is defined for SGD updates (−η·g/count)"
        return None


# the variants as presets: replace(PRESET, batch=..., optimizer=...) for a configuration
BUNCHES = DataParallel(split="shares", combine="gradients")  # gradients allreduced per bunch
LOCAL_EPOCHS = DataParallel(split="random", combine="updates", reduce="sum")  # summed updates
AVERAGING = DataParallel(split="shares", combine="params")  # model averaging per epoch
BUCKETED = DataParallel(split="buckets", combine="gradients", optimizer=AdadeltaRule())
CG_LONGEST_FIRST = DataParallel(split="longest_first", combine="gradients", optimizer=CGRule())


class Hooks:
    """What a configuration adds to the data-parallel loop, without a second copy of it.

    :func:`dp_worker` calls these on its own shallow copy of the object (one per
    worker: the emulated backend runs every worker in one process), so
    :meth:`start` may keep per-worker state on ``self``. It looks up once, before
    its loop, which methods a subclass overrides: a hook left out costs nothing
    per step. ``extra`` values of each worker's step message follow its loss and
    count, or, with ``loss_count = False`` (``updates`` only), follow the update
    directly: the message is then the update and the extras alone (e.g. an error
    estimate piggybacks as the last element), and the curve
    is the hook's to report (:meth:`result`). Under ``params`` the extras of an
    epoch's local steps are summed and travel after the loss. ``cg`` runs call
    :meth:`start`, :meth:`end_epoch` and :meth:`result` only.
    """

    extra = 0  # values appended to each worker's step message and combined with it
    loss_count = True  # whether a step message carries the summed loss and item count
    nbytes = None  # bytes of a step's round as a modelled machine moves them (None: as sent)

    def start(self, comm, rep) -> None:
        """Set-up before the clock starts."""

    def steps(self, comm, rep, epoch: int):
        """Epoch ``epoch``'s steps (0, 1, ...) [(this worker's items, pad length)] in place
        of the split's (per-step combines); may end rounds of its own between steps
        (e.g. the data sent before them)."""
        raise NotImplementedError

    def grad(self, comm, rep, idx, pad_len, out) -> float:
        """Σ loss over the items ``idx``, Σ gradient into ``rep.g``; this step's extra
        values into ``out`` (extra,). The default is the replica's own gradient."""
        return rep.grad(idx, pad_len)

    def after_step(self, comm, rep, extras) -> bool:
        """After the combined step is applied (inside the round): ``extras`` are the
        combined extra values, (P, extra) in rank order for ``updates`` (allgathered),
        (extra,) summed for ``gradients``. True stops training (after this epoch's
        :meth:`end_epoch`)."""
        return False

    def end_epoch(self, comm, rep, epoch: int) -> bool:
        """After epoch ``epoch`` (0, 1, ...), inside ``comm.clock.untimed()``. True stops."""
        return False

    def result(self, comm, rep) -> dict:
        """Merged into the worker's result dict (after the loop)."""
        return {}


def _overrides(hooks, name: str) -> bool:
    return hooks is not None and getattr(type(hooks), name) is not getattr(Hooks, name)


# ---- the steps of an epoch --------------------------------------------------------------
def random_steps(n: int, m: int, rounds: int, rng):
    """``rounds`` local epochs of m of the n items, drawn lazily from ``rng``: m < n
    without replacement, m > n with replacement, m = n every item in order (no
    draw)."""
    every = np.arange(n)  # (n,)
    for _ in range(rounds):
        if m < n:
            yield rng.choice(n, m, replace=False), None  # (m,)
        else:
            yield (rng.integers(0, n, m) if m > n else every), None


def bucket_bounds(cfg: DataParallel, data):
    """The bucket bounds computed once from all of ``data`` (``bounds_from="all"``), else
    None (epoch_batches computes them from the items it batches)."""
    b = cfg.buckets
    if cfg.split != "buckets" or b.bounds_from != "all" or b.method not in BUCKETINGS:
        return None
    return BUCKETINGS[b.method](data.lengths, b.n)


def local_steps(cfg: DataParallel, data, *, P: int, rank: int, order_rng, own_rng, lpt=None,
                bounds=None):
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
    b = cfg.buckets
    bts = epoch_batches(data.lengths, cfg.batch, order_rng, method=b.method, n_buckets=b.n,
                        bounds=bounds, order=b.order, shuffle_within=b.shuffle_within,
                        pad_to=b.pad_to)
    return [(bt.idx[rank::P], bt.pad_len) for bt in bts]


# ---- one worker -----------------------------------------------------------------------------
class _Replica:
    def __init__(self, net, data, cfg: DataParallel, hooks: Hooks | None = None):
        self.net, self.data, self.cfg = net, data, cfg
        n = net.n_params
        self.loss_count = hooks is None or hooks.loss_count
        k = n + 2 * self.loss_count  # where the extra values start
        extra = 0 if hooks is None else hooks.extra
        self.buf = np.empty(max(n + 2, k + extra))  # gradient or params, [loss, count], extras
        self.msg = self.buf[:k + extra]  # a step's message
        self.extras = self.buf[k:k + extra]  # (extra,) this worker's extra values
        # (n_params,) gradient sum of this worker's items; combining gradients it is born
        # in the message (no copy per step)
        self.g = self.buf[:n] if cfg.combine == "gradients" else np.empty(n)
        self.u = np.empty(n)  # (n_params,) combined update
        self.opt = None if cfg.cg is not None else cfg.optimizer.make(n)

    def grad(self, idx, pad_len) -> float:
        """Σ loss over the items ``idx``; Σ gradient into ``self.g`` (zeros if none)."""
        if len(idx) == 0:
            self.g[:] = 0.0
            return 0.0
        return self.net.loss_and_grad(take(self.data, idx, pad_len), self.g)

    def step(self, g: np.ndarray, count: float) -> None:
        c = max(int(count), 1) if self.cfg.reduce == "mean" else 1
        self.opt.step(self.net.params, g, c)


def _sync_step(comm, rep: _Replica, idx, pad_len, recv, grad) -> float:
    """One step of ``gradients`` or ``updates``; returns the summed loss over workers
    (this worker's loss when the message carries none). ``grad``: the replica's or
    the hooks' (which also writes the extra values)."""
    cfg, n, msg = rep.cfg, rep.net.n_params, rep.msg
    loss = grad(idx, pad_len)
    if cfg.combine == "gradients":
        msg[n], msg[n + 1] = loss, len(idx)  # msg[:n] is rep.g
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


def dp_worker(comm, *, make_net, data, cfg: DataParallel, seed: int, hooks: Hooks | None = None,
              init_key: tuple = (0,), own_key: int = 2) -> dict:
    """SPMD body of every data-parallel strategy: the same code on any communicator.

    ``make_net(rng)`` builds the network and initialises it from ``rng``, the
    stream ``init_key`` shared by all workers (so every replica starts equal); each worker
    draws its own items (``random``) from ``driver.stream(seed, own_key, rank)``. A
    configuration that keeps streams of its own names their keys. ``hooks``: what
    the configuration adds (:class:`Hooks`; this worker works on a copy of it).
    Under CG the result adds ``kinds`` (every evaluation's kind, 1 gradient, 2 loss
    alone) and, where CG ran (every rank, or rank 0 under ``master``), its
    ``history`` and ``restarts``.
    """
    P, r = comm.size, comm.rank
    net = make_net(driver.stream(seed, *init_key))
    order_rng, own_rng = driver.stream(seed, 1), driver.stream(seed, own_key, r)
    if hooks is not None:
        if not hooks.loss_count and cfg.combine != "updates":
            raise ValueError("only combined updates can leave the loss and count out")
        hooks = copy.copy(hooks)
    rep = _Replica(net, data, cfg, hooks)
    lpt = longest_first(lengths(data), P) if cfg.split == "longest_first" else None
    if cfg.cg is not None:
        return _fit_cg(comm, rep, hooks, lambda: local_steps(
            cfg, data, P=P, rank=r, order_rng=order_rng, own_rng=own_rng, lpt=lpt)[0][0])
    n, extra = net.n_params, rep.extras.size
    recv = np.empty((P, rep.msg.size))  # (P, message)
    k = rep.msg.size - extra  # where the extras start (recv[:, -0:] would be everything)
    combined = recv[:, k:] if cfg.combine == "updates" else rep.extras  # the extras, combined
    bounds = bucket_bounds(cfg, data)
    V_prev = net.params.copy()  # V(e−1) of the decay
    curve = []
    # which hooks act, decided once: one left out costs nothing per step
    own_steps, end_epoch = _overrides(hooks, "steps"), _overrides(hooks, "end_epoch")
    after = hooks.after_step if _overrides(hooks, "after_step") else None
    nbytes = None
    # (extra,) a step's extra values: in the message for the per-step combines; summed
    # over the epoch's local steps into ``ex`` under params
    out = rep.extras if cfg.combine != "params" else np.zeros(extra)
    out[:] = 0.0
    ex = np.zeros(extra)  # (extra,)
    grad = rep.grad
    if _overrides(hooks, "grad"):
        grad = lambda idx, pad_len: hooks.grad(comm, rep, idx, pad_len, out)  # noqa: E731
    if hooks is not None:
        hooks.start(comm, rep)
    comm.start_clock()
    stop = False
    for e in range(cfg.epochs):
        if cfg.combine != "params":
            steps = (hooks.steps(comm, rep, e) if own_steps else
                     local_steps(cfg, data, P=P, rank=r, order_rng=order_rng, own_rng=own_rng,
                                 lpt=lpt, bounds=bounds))
            tot = 0.0
            for idx, pad_len in steps:
                loss = _sync_step(comm, rep, idx, pad_len, recv, grad)
                stop = after is not None and after(comm, rep, combined)
                if cfg.round_every == "step":
                    curve.append(loss)
                    if hooks is not None:
                        nbytes = hooks.nbytes
                    comm.clock.end_round(nbytes=nbytes)
                else:  # one round per epoch: the losses summed in step order
                    tot += loss
                if stop:
                    break
            if cfg.beta != 0.0:  # the decay on the shared replica
                np.subtract(net.params, cfg.beta * V_prev, out=net.params)
                V_prev[:] = net.params
            if cfg.round_every == "epoch":
                curve.append(tot)
                comm.clock.end_round()
        else:
            portion = order_rng.permutation(n_items(data))[r::P]  # one portion per worker
            loss = 0.0
            ex[:] = 0.0
            for idx, pad_len in local_steps(cfg, _Portion(data, portion), P=1, rank=0,
                                            order_rng=own_rng, own_rng=own_rng, lpt=None,
                                            bounds=bounds):
                loss += grad(portion[idx], pad_len)
                rep.step(rep.g, len(idx))
                if extra:
                    ex += out
            m = n + 1 + extra  # params, loss, the hooks' extra values
            rep.buf[:n], rep.buf[n], rep.buf[n + 1:m] = net.params, loss, ex
            comm.allreduce(rep.buf[:m], out=rep.buf[:m])
            np.subtract(rep.buf[:n] / P, cfg.beta * V_prev, out=net.params)  # V(e) = v̄(e) − β·V(e−1)
            V_prev[:] = net.params
            curve.append(float(rep.buf[n]))
            comm.clock.end_round()
        if end_epoch:
            with comm.clock.untimed():
                stop = bool(hooks.end_epoch(comm, rep, e)) or stop
        if stop:
            break
    res = {"curve": np.asarray(curve), "params": net.params.copy()}
    if hooks is not None:
        res.update(hooks.result(comm, rep))
    return res


def _fit_cg(comm, rep: _Replica, hooks: Hooks | None, items) -> dict:
    """The CG loop beside :func:`dp_worker`'s step loop (as scikit-learn's ``_fit_lbfgs``
    beside ``_fit_stochastic``): each epoch one CG run (:func:`engine.parallel.cg.run_cg`)
    on this worker's items, ``items()`` (drawn inside the timed region, as the step loop
    draws its steps); the hooks' :meth:`Hooks.start`, :meth:`Hooks.end_epoch` and
    :meth:`Hooks.result` only."""
    cfg, net = rep.cfg, rep.net
    if hooks is not None:
        hooks.start(comm, rep)
    comm.start_clock()
    curve, info = [], {}
    for e in range(cfg.epochs):
        c, info = run_cg(comm, rep, items())
        curve += c
        if _overrides(hooks, "end_epoch"):
            with comm.clock.untimed():
                if hooks.end_epoch(comm, rep, e):
                    break
    res = {"curve": np.asarray(curve), "params": net.params.copy(), **info}
    if hooks is not None:
        res.update(hooks.result(comm, rep))
    return res


def message_size(n_params: int, hooks: Hooks | None = None) -> int:
    """Values in a step message: the payload, [loss, count], the hooks' extras."""
    return n_params + 2 if hooks is None else max(n_params + 2, n_params + 2 * hooks.loss_count
                                                  + hooks.extra)


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
