"""Pattern Parallel Training (Dahl, McAvinney & Newhall 2008, §4).

Every worker holds a full replica. Each round ("epoch" in the paper's §4):

1. it draws its local epoch of ``local_epoch`` patterns at random from the
   full training set (its own stream, derived from the seed and its rank);
2. it computes its weight update u_p = −η · Σ_local ∂E_p/∂w / count;
3. the updates and each worker's error estimate are exchanged with one
   allgather (the estimate piggybacks as the last element);
4. every worker applies Σ_p u_p with momentum, Δw(t) = Σ_p u_p + α Δw(t−1),
   so all replicas stay identical (§4.1, last paragraph);
5. the estimates are averaged; when the mean falls below the threshold the
   MSE on the full set is verified (§4.1).

Each worker's estimate is the mean squared error over the last k·n/p
patterns it processed (§4.1). A run that reaches ``max_epochs`` fails.

PPT is a configuration of the data-parallel family
(:mod:`engine.parallel.data_parallel`): split ``random``, combine ``updates``,
SGD with momentum (:func:`data_parallel`); what is the paper's own is the §4.1
stopping rule, :class:`ErrorEstimateStop`, a :class:`Hooks` component.

``combine`` sets the divisor ``count`` of step 2:

- ``"sum"`` (default, the paper's): count = local_epoch. Each worker's update
  is the batch update of its own local epoch (FANN's batch step divides by
  the number of patterns it saw) and the updates are summed, so one round
  moves P times as far as one batch step over the same patterns.
- ``"mean"``: count = P · local_epoch, which makes a round exactly one batch
  step over the union of the workers' patterns.
"""
from __future__ import annotations

import math
import os
import signal
from dataclasses import asdict, dataclass, replace
from functools import partial

import numpy as np

from engine.data import Patterns
from engine.losses import get_loss, mean_squared_error, per_pattern_squared_error
from engine.nets.mlp import MLP
from engine.parallel import driver
from engine.parallel.data_parallel import (LOCAL_EPOCHS, DataParallel, Hooks, SGDRule, dp_worker,
                                           message_size)
from engine.timing import RunRecord


@dataclass(frozen=True)
class PPTConfig:
    local_epoch: int
    lr: float = 0.1  # §5: "learning rate was set to ten percent"
    momentum: float = 0.3  # §5: "momentum factor was set to thirty percent"
    k: float = 2.0  # §4.1: error history of k·n/p patterns, "k between 1 and 10"
    threshold: float = 0.01  # stop when the full-set MSE is below this
    max_epochs: float = 1e5  # cap, in epochs = pattern presentations / n
    combine: str = "sum"

    def __post_init__(self):
        if isinstance(self.local_epoch, bool) or not isinstance(self.local_epoch, (int, np.integer)) or self.local_epoch < 1:
            raise ValueError(f"local_epoch must be an integer >= 1, got {self.local_epoch!r}")
        if self.combine not in ("sum", "mean"):
            raise ValueError(f"combine must be 'sum' or 'mean', got {self.combine!r}")
        if self.k <= 0 or self.max_epochs <= 0:
            raise ValueError("k and max_epochs must be > 0")

    def max_rounds(self, n: int, workers: int) -> int:
        return max(1, math.ceil(self.max_epochs * n / (workers * self.local_epoch)))


SAMPLING_KEY = 1  # a worker's sampling stream is driver.stream(seed, 1, rank)


def worker_seeds(seed: int, rank: int):
    """(init stream shared by all workers, this rank's sampling stream)."""
    return driver.stream(seed, 0), driver.stream(seed, SAMPLING_KEY, rank)


def data_parallel(cfg: PPTConfig, n: int, workers: int) -> DataParallel:
    """PPT as a data-parallel configuration: every round each worker draws its local
    epoch (split ``random``), turns its gradient into −η·g/count and the updates are
    allgathered and summed (``reduce="sum"``, count = local_epoch) or averaged
    (``"mean"``, count = P·local_epoch); momentum applies to the sum (§4, §4.1).
    One epoch of ``max_rounds`` rounds: the stopping rule ends it early."""
    return replace(LOCAL_EPOCHS, reduce=cfg.combine, optimizer=SGDRule(cfg.lr, cfg.momentum),
                   batch=int(cfg.local_epoch), epochs=1, rounds=cfg.max_rounds(n, workers))


def _mlp(sizes, activation, init_scale, rng) -> MLP:
    """The replica, initialised from the shared stream (identical on every worker)."""
    net = MLP(sizes, activation)
    net.init_uniform(rng, scale=init_scale)
    return net


class ErrorEstimateStop(Hooks):
    """The stopping rule of §4.1 (and the paper's local error bookkeeping).

    Each worker back-propagates its local epoch and keeps the per-pattern
    squared errors of the last ⌈k·n/P⌉ patterns it processed in a ring; their
    mean (the worker's estimate) travels as the one extra value of its update
    message. After the summed update is applied the estimates are averaged
    (the curve); when the average falls below the threshold the MSE over the
    full set is verified, and training stops when that is below it too.
    ``trace`` keeps each round's pattern indices; ``ENGINE_FAULT`` injects
    faults for tests (:func:`_injected_fault`).

    The verification is the paper's and is timed (every worker runs it inside
    the round, §4.1). The full-set MSE of a run that hit ``max_epochs`` is
    only our report: :func:`train_pattern_parallel` computes it after the
    workers return, so a measured run's wall time, like an emulated run's
    time, ends with its last round.
    """

    extra = 1  # the error estimate
    loss_count = False  # the message is the update and the estimate: n_params + 1 values

    def __init__(self, X, T, *, cfg: PPTConfig, loss: str = "mse", trace: bool = False):
        self.X, self.T, self.cfg, self.loss_name, self.tracing = X, T, cfg, loss, trace

    def start(self, comm, rep) -> None:
        n, m = self.X.shape[0], int(self.cfg.local_epoch)
        self.loss = get_loss(self.loss_name)
        self.ws = rep.net.workspace(m)
        self.dy = np.empty((m, self.T.shape[1]))  # (m, n_out)
        self.hist = np.zeros(max(1, math.ceil(self.cfg.k * n / comm.size)))  # (k·n/p,) ring
        self.hist_pos = self.hist_len = 0
        self.trace = [] if self.tracing else None
        self.fault = _injected_fault(comm.rank)
        self.curve = []  # the mean estimate of every round
        self.done = False
        self.final_mse = float("nan")

    def _remember(self, e: np.ndarray) -> None:
        R = self.hist.size
        e = e[-R:]
        i = self.hist_pos
        first = min(R - i, e.size)
        self.hist[i:i + first] = e[:first]
        self.hist[: e.size - first] = e[first:]
        self.hist_pos = (i + e.size) % R
        self.hist_len = min(R, self.hist_len + e.size)

    def grad(self, comm, rep, idx, pad_len, out) -> float:
        """Forward, the errors into the history, backward into ``rep.g``; the estimate
        into ``out``. Returns 0 (the curve is the estimates')."""
        if self.fault is not None:
            _fire(self.fault, len(self.curve))
        if self.trace is not None:
            self.trace.append(idx)
        x, t = self.X[idx], self.T[idx]  # (m, n_in), (m, n_out)
        y, cache = rep.net.forward(x, ws=self.ws)
        self._remember(per_pattern_squared_error(y, t))
        rep.net.backward(self.loss.grad(y, t, out=self.dy), cache, out=rep.g)
        out[0] = np.add.reduce(self.hist[: self.hist_len]) / self.hist_len  # the mean, bit for bit
        return 0.0

    def after_step(self, comm, rep, extras) -> bool:
        """``extras``: (P, 1), every worker's estimate."""
        estimate = float(np.add.reduce(extras[:, 0]) / len(extras))  # the mean, bit for bit
        self.curve.append(estimate)
        if estimate < self.cfg.threshold:
            self.final_mse = self.full_mse(rep.net)
            self.done = self.final_mse < self.cfg.threshold
        return self.done

    def full_mse(self, net) -> float:
        y, _ = net.forward(self.X)
        return mean_squared_error(y, self.T)

    def result(self, comm, rep) -> dict:
        return {"converged": self.done, "curve": np.asarray(self.curve),
                "final_mse": self.final_mse,  # nan unless verified below the threshold
                "params": rep.net.params.copy() if comm.rank == 0 else None,
                "trace": self.trace}


def _injected_fault(rank: int):
    """Fault injection for tests: ENGINE_FAULT="raise:RANK:ROUND" or "kill:RANK:ROUND"."""
    spec = os.environ.get("ENGINE_FAULT")
    if not spec:
        return None
    mode, r, rnd = spec.split(":")
    return (mode, int(rnd)) if int(r) == rank else None


def _fire(fault, round_: int) -> None:
    mode, at = fault
    if round_ == at:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise RuntimeError(f"injected fault at round {at}")


def train_pattern_parallel(X, T, *, sizes, activation: str, cfg: PPTConfig, seed: int,
                           workers: int, backend: str = "local", comm=None, profile=None,
                           init_scale: float = 1.0, trace: bool = False) -> RunRecord | None:
    """Run PPT on ``workers`` workers of any backend of :func:`engine.parallel.driver.run`
    (``mpi``: ``comm`` has exactly ``workers`` ranks and the record comes back on rank 0,
    None elsewhere; ``emulated``: communication charged by ``profile``)."""
    n = X.shape[0]
    hooks = ErrorEstimateStop(X, T, cfg=cfg, trace=trace)
    res = driver.run(dp_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=message_size(MLP(sizes).n_params, hooks),
                     make_net=partial(_mlp, sizes, activation, init_scale),
                     data=Patterns(X, T), cfg=data_parallel(cfg, n, workers), seed=seed,
                     hooks=hooks, own_key=SAMPLING_KEY)
    if res is None:
        return None
    r0, m = res[0], cfg.local_epoch
    final_mse = r0["final_mse"]
    if not r0["converged"]:  # the report of a failed run, untimed (ErrorEstimateStop)
        final_mse = hooks.full_mse(MLP(sizes, activation, params=r0["params"]))
    return driver.record(
        res, strategy="pattern", backend=backend, profile=profile, converged=r0["converged"],
        epochs=len(r0["log"]) * len(res) * m / n, final_mse=final_mse,
        loss_curve=r0["curve"], params=r0["params"],
        extra={"local_epoch": m, **{f"cfg_{k}": v for k, v in asdict(cfg).items()},
               "traces": [r["trace"] for r in res] if r0["trace"] is not None else None})
