"""Per-round, per-worker timing: the clock every communicator keeps, and the RunRecord
every strategy returns."""
from __future__ import annotations

from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from time import perf_counter

import numpy as np

COLLECTIVE, ROUND = -1.0, -2.0  # a trace's markers (WorkerClock.events); a piece is ≥ 0


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


class WorkerClock:
    """One worker's time accounts, kept by its communicator (docs/engine.md).

    Compute is the time between collectives, communication the time inside them;
    a strategy only marks where its rounds end (:meth:`end_round`) and which work
    is not part of training (:meth:`untimed`). The communicator calls
    :meth:`enter` and :meth:`leave` around every collective, so no strategy holds
    a stopwatch and the emulated backend can charge a modelled time instead of
    the measured one (``leave(comm_s=...)``). Nothing is counted before
    :meth:`start`.
    """

    __slots__ = ("log", "t0", "_t", "_compute", "_comm", "_bytes", "_pending", "running", "scale",
                 "events")

    def __init__(self):
        self.log = RoundLog(4096)
        self.t0 = float("nan")
        self._t = None  # perf_counter of the last boundary; None: not counting
        self._compute = self._comm = self._bytes = 0.0
        self._pending = 0.0  # compute no collective has seen yet (it spans end_round)
        self.running = False  # counting: started and not inside untimed() (a plain attribute:
        # every collective reads it on the hot path)
        self.scale = 1.0  # compute booked = measured × scale (an emulated machine's speed
        # and contention, MachineProfile.compute_scale); 1 on every real backend
        self.events = None  # a trace (emulated backend only): an array("d") of the measured compute
        # pieces (s, ≥ 0) and the COLLECTIVE and ROUND markers, in order (engine/comm/replay.py)

    def start(self) -> None:
        """Start counting from now, with an empty log (a communicator may run several
        strategies one after another)."""
        self.log = RoundLog(4096)
        if self.events is not None:
            self.events = array("d")
        self._t = self.t0 = perf_counter()
        self._compute = self._comm = self._bytes = self._pending = 0.0
        self.running = True

    def _book(self) -> None:
        """Book the compute since the last boundary."""
        now = perf_counter()
        raw, self._t = now - self._t, now
        seg = raw * self.scale
        self._compute += seg
        self._pending += seg
        if self.events is not None:
            self.events.append(raw)

    def enter(self) -> float:
        """A collective begins: book the compute since the last boundary; return the compute
        since the previous collective (what an emulated worker's virtual clock advances by)."""
        if not self.running:
            return 0.0
        self._book()
        if self.events is not None:
            self.events.append(COLLECTIVE)
        seg, self._pending = self._pending, 0.0
        return seg

    def leave(self, nbytes: float, comm_s: float | None = None) -> None:
        """A collective ended: book its time (measured unless ``comm_s`` is given) and bytes."""
        if not self.running:
            return
        now = perf_counter()
        self._comm += (now - self._t) if comm_s is None else comm_s
        self._bytes += nbytes
        self._t = now

    def end_round(self, nbytes: float | None = None) -> None:
        """Close a round: one row (compute s, communication s, bytes) of the log.
        ``nbytes`` overrides the bytes the collectives moved (a strategy that counts
        bytes as a modelled machine moves them)."""
        if not self.running:
            raise RuntimeError("end_round() before start() or inside untimed()")
        self._book()
        if self.events is not None:
            self.events.append(ROUND)
        self.log.add(self._compute, self._comm, self._bytes if nbytes is None else nbytes)
        self._compute = self._comm = self._bytes = 0.0

    @contextmanager
    def untimed(self):
        """Work inside is neither compute nor communication (evaluation, checks)."""
        if not self.running:
            yield
            return
        self._book()
        self.running = False
        try:
            yield
        finally:
            self.running = True
            self._t = perf_counter()

    def wall(self) -> float:
        return perf_counter() - self.t0


@dataclass
class RunRecord:
    """What every strategy reports (docs/engine.md).

    ``compute_s`` and ``comm_s`` are (rounds, workers); ``bytes_sent`` is
    (rounds, workers). For an emulated run ``comm_s`` comes from the
    communication model of ``profile`` (plus the wait for the slowest peer) and
    ``kind`` is "emulated". Built from the workers' clocks by
    :func:`engine.parallel.driver.record`.
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
    trace: dict | None = None  # an emulated run's trace, which a profile prices (engine/comm/replay.py)

    @property
    def time_s(self) -> float:
        """Time to train: the measured wall clock; for an emulated run the virtual finish
        time of the slowest worker, max_p Σ_rounds (compute + communication), where an
        emulated worker's communication includes its wait for the slowest peer at every
        collective (engine/comm/emulated.py), as a measured worker's does."""
        if self.kind == "measured":
            return self.wall_s
        return float((self.compute_s + self.comm_s).sum(axis=0).max())

    @property
    def comm_share(self) -> float:
        """Share of the time spent in collectives (waiting included), mean over workers."""
        t = self.time_s
        return float(self.comm_s.sum(axis=0).mean() / t) if t > 0 else 0.0

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
