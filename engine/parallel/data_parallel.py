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
  §III); worker p takes every P-th sequence of a batch, padded to the bucket bound.
  Its options are epoch_batches': ``bucketing`` (optimal | quantile | equal_width |
  megabatch | random), ``n_buckets``, ``order``, ``shuffle_within``, ``pad_to``; the
  bounds come from the items being batched (``bounds_from="items"``: a worker's
  portion under ``params``) or once from the whole data set (``"all"``: §III.B step 2
  builds the Q models before the data is split);
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

With ``beta`` ≠ 0 the per-step combines apply the same eq. (3) decay at each
epoch end, V(e) = v(e) − β·V(e−1), to the replica every worker shares (Khomenko
et al.'s gradient-allreduce comparison). ``rounds`` says what one round (one row
of the log) of a per-step combine is: each ``step``, or the whole ``epoch`` (its
steps' summed losses then make one value of the curve; the paper times epochs).

**Which optimizer**: ``sgd`` (with momentum; the step divides the summed gradient
by the count when ``reduce="mean"``, not when ``"sum"``, Quicknet's bunch mode),
``adadelta``, or ``cg`` (conjugate gradients on the full-batch gradient, so only
with ``gradients``, every step, ``longest_first`` or a whole-set ``shares``).

Serial training is the same strategy with one worker.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from engine.data import Patterns, SeqData, Sequences
from engine.optim import SGD, Adadelta, ConjugateGradient
from engine.parallel import driver
from engine.schedule import BUCKETINGS, epoch_batches, longest_first

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
    beta: float = 0.0  # eq. (3) of Khomenko et al. 2016 (per-step combines: at epoch end if ≠ 0)
    n_buckets: int = 3
    cg_iterations: int = 3
    rho: float = 0.95  # ADADELTA's ρ and ε (Lasagne's defaults)
    eps: float = 1e-6
    bucketing: str = "optimal"  # split="buckets": epoch_batches' method
    order: str = "short_first"  # ... its batch order (§IV.A) or "random"
    shuffle_within: bool = True
    pad_to: str = "bucket"  # ... or "batch"
    bounds_from: str = "items"  # ... or "all": the bounds once from the whole data set
    rounds: str = "step"  # one round per step, or per "epoch" (per-step combines)

    @property
    def every(self) -> str:
        return "epoch" if self.combine == "params" else "step"

    def problem(self, data) -> str | None:
        """Why this configuration cannot apply to ``data``, or None."""
        if self.split not in SPLITS or self.combine not in COMBINES or self.optimizer not in OPTIMIZERS:
            return f"unknown split/combine/optimizer {self.split}/{self.combine}/{self.optimizer}"
        if self.reduce not in ("sum", "mean"):
            return f"reduce must be sum or mean, got {self.reduce!r}"
        if self.bounds_from not in ("items", "all") or self.rounds not in ("step", "epoch"):
            return f"bounds_from must be items or all, rounds step or epoch: {self.bounds_from}, {self.rounds}"
        if self.bucketing not in BUCKETINGS and self.bucketing not in ("random", "megabatch"):
            return f"unknown bucketing {self.bucketing!r}"
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


def bucket_bounds(cfg: DataParallel, data):
    """The bucket bounds computed once from all of ``data`` (``bounds_from="all"``), else
    None (epoch_batches computes them from the items it batches)."""
    if cfg.split != "buckets" or cfg.bounds_from != "all" or cfg.bucketing not in BUCKETINGS:
        return None
    return BUCKETINGS[cfg.bucketing](data.lengths, cfg.n_buckets)


def local_steps(cfg: DataParallel, data, *, P: int, rank: int, order_rng, own_rng, lpt=None,
                bounds=None):
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
    bts = epoch_batches(data.lengths, cfg.batch, order_rng, method=cfg.bucketing,
                        n_buckets=cfg.n_buckets, bounds=bounds, order=cfg.order,
                        shuffle_within=cfg.shuffle_within, pad_to=cfg.pad_to)
    return [(bt.idx[rank::P], bt.pad_len) for bt in bts]


# ---- one worker -----------------------------------------------------------------------------
class _Replica:
    def __init__(self, net, data, cfg: DataParallel, extra: int = 0):
        self.net, self.data, self.cfg = net, data, cfg
        n = net.n_params
        self.g = np.empty(n)  # (n_params,) gradient sum of this worker's items
        # (n_params + 2 + extra,): gradient or params, loss, count (gradients, updates), the
        # hooks' extra values (after the loss under params)
        self.buf = np.empty(n + 2 + extra)
        self.opt = (Adadelta(n, lr=cfg.lr, rho=cfg.rho, eps=cfg.eps) if cfg.optimizer == "adadelta"
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


def _sync_step(comm, rep: _Replica, idx, pad_len, recv, grad) -> float:
    """One step of ``gradients`` or ``updates``; returns the summed loss over workers.
    ``grad``: rep.grad or the hooks' override (which writes the extra values)."""
    cfg, n = rep.cfg, rep.net.n_params
    loss = grad(idx, pad_len)
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


class Hooks:
    """What a configuration adds to the data-parallel loop, without a second copy of it.

    The base class adds nothing; dp_worker calls a method only where a subclass
    overrides it (tested once, outside the loops), so unused hooks cost no step time.
    """

    extra = 0  # values appended to each worker's message and combined with it

    def start(self, comm, rep) -> None:
        """Set-up before the clock starts (e.g. an evaluation of the initial model)."""

    def grad(self, comm, rep, idx, pad_len, out) -> float:
        """The local Σ loss (Σ gradient into ``rep.g``) of the items ``idx``; ``out``:
        the (extra,) values of this step (summed over an epoch's local steps under
        ``params``)."""
        return rep.grad(idx, pad_len)

    def end_epoch(self, comm, rep, epoch: int) -> bool:
        """After each epoch's round, inside ``comm.clock.untimed()``; True stops."""
        return False

    def result(self, comm, rep) -> dict:
        """Merged into the worker's result dict."""
        return {}


def _overrides(hooks, name: str) -> bool:
    return hooks is not None and getattr(type(hooks), name) is not getattr(Hooks, name)


def dp_worker(comm, *, make_net, data, cfg: DataParallel, seed: int, hooks: Hooks | None = None) -> dict:
    """SPMD body of every data-parallel strategy: the same code on any communicator.

    ``make_net(rng)`` builds the network and initialises it from ``rng``, the
    stream shared by all workers (so every replica starts equal). ``hooks``: a
    configuration's components (:class:`Hooks`).
    """
    P, r = comm.size, comm.rank
    net = make_net(driver.stream(seed, 0))
    order_rng, own_rng = driver.stream(seed, 1), driver.stream(seed, 2, r)
    extra = hooks.extra if hooks is not None else 0
    rep = _Replica(net, data, cfg, extra)
    n = net.n_params
    recv = np.empty((P, n + 2 + extra))  # (P, n_params + 2 + extra)
    lpt = longest_first(lengths(data), P) if cfg.split == "longest_first" else None
    bounds = bucket_bounds(cfg, data)
    V_prev = net.params.copy()  # V(e−1) of eq. (3)
    curve = []
    # (extra,) a step's extra values: in the message itself for the per-step combines;
    # summed over the epoch's local steps into ``ex`` under params
    out = rep.buf[n + 2:] if cfg.combine != "params" else np.zeros(extra)
    out[:] = 0.0
    ex = np.zeros(extra)  # (extra,)
    grad = rep.grad
    if _overrides(hooks, "grad"):
        grad = lambda idx, pad_len: hooks.grad(comm, rep, idx, pad_len, out)  # noqa: E731
    if _overrides(hooks, "start"):
        hooks.start(comm, rep)
    end_epoch = _overrides(hooks, "end_epoch")
    comm.start_clock()
    for e in range(cfg.epochs):
        if cfg.optimizer == "cg":
            curve += _cg(comm, rep, local_steps(cfg, data, P=P, rank=r, order_rng=order_rng,
                                                own_rng=own_rng, lpt=lpt)[0][0])
        elif cfg.combine != "params":
            steps = local_steps(cfg, data, P=P, rank=r, order_rng=order_rng, own_rng=own_rng,
                                lpt=lpt, bounds=bounds)
            if cfg.rounds == "step":
                for idx, pad_len in steps:
                    curve.append(_sync_step(comm, rep, idx, pad_len, recv, grad))
                    comm.clock.end_round()
            else:  # one round per epoch: the losses summed in step order
                tot = 0.0
                for idx, pad_len in steps:
                    tot += _sync_step(comm, rep, idx, pad_len, recv, grad)
                curve.append(tot)
            if cfg.beta != 0.0:  # eq. (3) on the shared replica
                np.subtract(net.params, cfg.beta * V_prev, out=net.params)
                V_prev[:] = net.params
            if cfg.rounds == "epoch":
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
            np.subtract(rep.buf[:n] / P, cfg.beta * V_prev, out=net.params)  # eq. (3)
            V_prev[:] = net.params
            curve.append(float(rep.buf[n]))
            comm.clock.end_round()
        if end_epoch:
            with comm.clock.untimed():
                if hooks.end_epoch(comm, rep, e):
                    break
    res = {"curve": np.asarray(curve), "params": net.params.copy()}
    if _overrides(hooks, "result"):
        res.update(hooks.result(comm, rep))
    return res


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
