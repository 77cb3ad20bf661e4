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
from dataclasses import asdict, dataclass

import numpy as np

from engine.parallel import driver
from engine.losses import get_loss, mean_squared_error, per_pattern_squared_error
from engine.nets.mlp import MLP
from engine.optim import SGD
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


def worker_seeds(seed: int, rank: int):
    """(init stream shared by all workers, this rank's sampling stream)."""
    return driver.stream(seed, 0), driver.stream(seed, 1, rank)


class PPTWorker:
    """One worker's replica, sampling stream, error history and message buffer."""

    def __init__(self, sizes, activation, X, T, *, rank: int, size: int, cfg: PPTConfig,
                 seed: int, loss: str = "mse", init_scale: float = 1.0, trace: bool = False):
        self.X, self.T, self.cfg = X, T, cfg
        self.n = X.shape[0]
        self.rank, self.size = rank, size
        self.net = MLP(sizes, activation)
        init_rng, self.rng = worker_seeds(seed, rank)
        self.net.init_uniform(init_rng, scale=init_scale)  # identical on every worker
        self.loss = get_loss(loss)
        self.opt = SGD(self.net.n_params, lr=cfg.lr, momentum=cfg.momentum)
        self.m = int(cfg.local_epoch)
        self.count = self.m if cfg.combine == "sum" else self.m * size
        self.ws = self.net.workspace(self.m)
        self.g = np.empty(self.net.n_params)  # (n_params,) gradient sum
        self.dy = np.empty((self.m, T.shape[1]))  # (m, n_out)
        self.msg = np.empty(self.net.n_params + 1)  # (n_params + 1,): update, then estimate
        self.update = np.empty(self.net.n_params)
        self.hist = np.zeros(max(1, math.ceil(cfg.k * self.n / size)))  # (k·n/p,) ring
        self.hist_pos = self.hist_len = 0
        self.trace = [] if trace else None
        self.estimate = float("inf")
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

    def local_round(self) -> np.ndarray:
        """Steps 1–2: sample, forward, backward; fill and return the message."""
        if self.m < self.n:
            idx = self.rng.choice(self.n, self.m, replace=False)  # (m,)
        else:
            idx = self.rng.integers(0, self.n, self.m) if self.m > self.n else np.arange(self.n)
        if self.trace is not None:
            self.trace.append(idx)
        x, t = self.X[idx], self.T[idx]  # (m, n_in), (m, n_out)
        y, cache = self.net.forward(x, ws=self.ws)
        self._remember(per_pattern_squared_error(y, t))
        self.net.backward(self.loss.grad(y, t, out=self.dy), cache, out=self.g)
        self.opt.direction(self.g, self.count, out=self.msg[:-1])
        self.msg[-1] = self.hist[: self.hist_len].mean()
        return self.msg

    def apply(self, gathered: np.ndarray) -> bool:
        """Steps 4–5 on the (P, n_params + 1) allgather result; True when training is done."""
        np.sum(gathered[:, :-1], axis=0, out=self.update)
        self.opt.apply(self.net.params, self.update)
        self.estimate = float(gathered[:, -1].mean())
        if self.estimate < self.cfg.threshold:
            y, _ = self.net.forward(self.X)
            self.final_mse = mean_squared_error(y, self.T)
            return self.final_mse < self.cfg.threshold
        return False

    def full_mse(self) -> float:
        y, _ = self.net.forward(self.X)
        return mean_squared_error(y, self.T)


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


def ppt_worker(comm, *, sizes, activation, X, T, cfg: PPTConfig, seed: int,
               trace: bool = False, init_scale: float = 1.0) -> dict:
    """SPMD body: the same code on every rank of any communicator; one round per allgather."""
    P = comm.size
    w = PPTWorker(sizes, activation, X, T, rank=comm.rank, size=P, cfg=cfg, seed=seed,
                  init_scale=init_scale, trace=trace)
    fault = _injected_fault(comm.rank)
    recv = np.empty((P, w.msg.size))  # (P, n_params + 1)
    curve = []
    done = False
    comm.start_clock()
    for r in range(cfg.max_rounds(w.n, P)):
        if fault is not None:
            _fire(fault, r)
        w.local_round()
        comm.allgather(w.msg, recv)
        done = w.apply(recv)
        comm.clock.end_round()
        curve.append(w.estimate)
        if done:
            break
    return {"converged": done, "curve": np.asarray(curve),
            "final_mse": w.final_mse if done else w.full_mse(),
            "params": w.net.params.copy() if comm.rank == 0 else None,
            "trace": w.trace}


def train_pattern_parallel(X, T, *, sizes, activation: str, cfg: PPTConfig, seed: int,
                           workers: int, backend: str = "local", comm=None, profile=None,
                           init_scale: float = 1.0, trace: bool = False) -> RunRecord | None:
    """Run PPT on ``workers`` workers of any backend of :func:`engine.parallel.driver.run`
    (``mpi``: ``comm`` has exactly ``workers`` ranks and the record comes back on rank 0,
    None elsewhere; ``emulated``: communication charged by ``profile``)."""
    res = driver.run(ppt_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=MLP(sizes).n_params + 1, sizes=sizes, activation=activation,
                     X=X, T=T, cfg=cfg, seed=seed, trace=trace, init_scale=init_scale)
    if res is None:
        return None
    r0, m = res[0], cfg.local_epoch
    return driver.record(
        res, strategy="pattern", backend=backend, profile=profile, converged=r0["converged"],
        epochs=len(r0["log"]) * len(res) * m / X.shape[0], final_mse=r0["final_mse"],
        loss_curve=r0["curve"], params=r0["params"],
        extra={"local_epoch": m, **{f"cfg_{k}": v for k, v in asdict(cfg).items()},
               "traces": [r["trace"] for r in res] if r0["trace"] is not None else None})
