"""Per-round, per-worker timing and the RunRecord every strategy returns."""
from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter

import numpy as np


class RoundLog:
    """Growable per-round log of one worker: compute s, communication s, bytes sent."""

    def __init__(self, capacity: int = 1024):
        self._buf = np.zeros((capacity, 3))  # (rounds, [compute, comm, bytes])
        self.n = 0

    def add(self, compute: float, comm: float, nbytes: float) -> None:
        if self.n == len(self._buf):
            self._buf = np.concatenate([self._buf, np.zeros_like(self._buf)])
        self._buf[self.n] = (compute, comm, nbytes)
        self.n += 1

    @property
    def array(self) -> np.ndarray:
        return self._buf[: self.n]


@dataclass
class RunRecord:
    """What every strategy reports (DESIGN.md, "Strategies").

    ``compute_s`` and ``comm_s`` are (rounds, workers); ``bytes_sent`` is
    (rounds, workers). For an emulated run ``comm_s`` comes from the
    communication model of ``profile`` and ``kind`` is "emulated".
    """

    strategy: str
    workers: int
    kind: str  # measured | emulated
    converged: bool
    rounds: int
    epochs: float  # pattern presentations summed over workers / training-set size
    final_mse: float
    loss_curve: np.ndarray  # (rounds,) error estimate the stopping rule saw
    compute_s: np.ndarray  # (rounds, workers)
    comm_s: np.ndarray  # (rounds, workers)
    bytes_sent: np.ndarray  # (rounds, workers)
    wall_s: float = float("nan")  # measured wall clock of the training loop
    profile: str = ""  # machine profile behind emulated communication
    params: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

    @property
    def time_s(self) -> float:
        """Time to train: wall clock if measured; else Σ_rounds (max_p compute + comm)."""
        if self.kind == "measured":
            return self.wall_s
        return float(self.compute_s.max(axis=1).sum() + self.comm_s.max(axis=1).sum())

    @property
    def comm_share(self) -> float:
        """Share of the time spent communicating (mean over workers for measured runs)."""
        if self.kind == "measured":
            return float(self.comm_s.sum(axis=0).mean() / self.wall_s) if self.wall_s > 0 else 0.0
        t = self.time_s
        return float(self.comm_s.max(axis=1).sum() / t) if t > 0 else 0.0

    def summary(self) -> dict:
        return {
            "strategy": self.strategy, "workers": self.workers, "kind": self.kind,
            "converged": bool(self.converged), "rounds": int(self.rounds),
            "epochs": float(self.epochs), "final_mse": float(self.final_mse),
            "time_s": self.time_s, "comm_share": self.comm_share,
            "compute_s_total": float(self.compute_s.sum()),
            "comm_s_total": float(self.comm_s.sum()),
            "bytes_sent_total": float(self.bytes_sent.sum()),
            "wall_s": float(self.wall_s), "profile": self.profile, **self.extra,
        }


class Stopwatch:
    """``lap()`` returns seconds since the previous lap (perf_counter)."""

    __slots__ = ("t",)

    def __init__(self):
        self.t = perf_counter()

    def lap(self) -> float:
        t = perf_counter()
        d, self.t = t - self.t, t
        return d
