"""The communicator interface every backend implements (DESIGN.md, "Communicators").

Every collective goes through this base class, which books its time on the
worker's :class:`engine.timing.WorkerClock`: compute is the time between
collectives, communication the time inside them. A backend implements the
underscored methods; the emulated backend overrides :meth:`_charge` to book a
modelled time instead of the measured one.
"""
from __future__ import annotations

import pickle

import numpy as np

from engine.timing import WorkerClock


class WorkerError(RuntimeError):
    """A worker raised or died; the run is aborted on every rank."""


class Communicator:
    """rank, size, allgather, allreduce (sum), broadcast, barrier, gather_objects.

    Collectives take and return float64 numpy arrays. ``recvbuf`` /``out``
    may be passed to avoid allocation. A strategy never knows which backend
    it runs on. ``clock`` keeps the worker's time accounts; ``start_clock``
    synchronises the workers and starts it.
    """

    kind = "abstract"
    rank: int
    size: int
    clock: WorkerClock

    def __init__(self):
        self.clock = WorkerClock()

    # -- timed collectives (the public API) -----------------------------------
    def allgather(self, sendbuf: np.ndarray, recvbuf: np.ndarray | None = None) -> np.ndarray:
        """Return (size, *sendbuf.shape): every rank's sendbuf in rank order."""
        if not self.clock.running:
            return self._allgather(sendbuf, recvbuf)
        seg = self.clock.enter()
        out = self._allgather(sendbuf, recvbuf)
        self._charge("allgather", sendbuf.nbytes, seg)
        return out

    def allreduce(self, sendbuf: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Elementwise sum over ranks, summed in rank order (every rank gets identical bits)
        where the backend allows."""
        if not self.clock.running:  # the hot path of an untimed collective: no bookkeeping
            return self._allreduce(sendbuf, out)
        seg = self.clock.enter()
        out = self._allreduce(sendbuf, out)
        self._charge("allreduce", sendbuf.nbytes, seg)
        return out

    def broadcast(self, buf: np.ndarray, root: int = 0) -> np.ndarray:
        """Root's ``buf`` copied into every rank's ``buf`` in place; returns buf."""
        seg = self.clock.enter()
        self._broadcast(buf, root)
        self._charge("broadcast", buf.nbytes if self.rank == root else 0, seg)
        return buf

    def barrier(self) -> None:
        seg = self.clock.enter()
        self._barrier()
        self._charge("barrier", 0, seg)

    def gather_objects(self, obj, root: int = 0) -> list | None:
        """Every rank's picklable ``obj`` in rank order on ``root``, None elsewhere (untimed).
        Generic version over :meth:`allgather`, in float64 words; MPI overrides it."""
        with self.clock.untimed():
            raw = np.frombuffer(pickle.dumps(obj) + b"\0" * 7, dtype=np.uint8)
            n = np.array([float(raw.size // 8)])
            counts = self._allgather(n, None)[:, 0].astype(int)  # (size,) words per rank
            words = np.zeros(counts.max())
            words.view(np.uint8)[: counts[self.rank] * 8] = raw[: counts[self.rank] * 8]
            step = self._max_words()
            got = np.empty((self.size, counts.max()))  # (size, words)
            for s in range(0, counts.max(), step):
                got[:, s:s + step] = self._allgather(words[s:s + step], None)
        if self.rank != root:
            return None
        return [pickle.loads(got[r, :counts[r]].tobytes()) for r in range(self.size)]

    def start_clock(self) -> None:
        """Synchronise (untimed), then start counting: call once set-up is done."""
        self._barrier()
        self.clock.start()

    # -- what a backend implements ---------------------------------------------
    def _charge(self, op: str, nbytes: int, seg: float) -> None:
        self.clock.leave(nbytes)

    def _max_words(self) -> int:
        return 1 << 16

    def _allgather(self, sendbuf, recvbuf):
        raise NotImplementedError

    def _allreduce(self, sendbuf, out):
        raise NotImplementedError

    def _broadcast(self, buf, root):
        raise NotImplementedError

    def _barrier(self):
        raise NotImplementedError


class InProcessComm(Communicator):
    """A communicator of size 1: the serial reference path."""

    kind = "inprocess"

    def __init__(self):
        super().__init__()
        self.rank, self.size = 0, 1

    def _allgather(self, sendbuf, recvbuf):
        if recvbuf is None:
            return np.array(sendbuf)[None]
        recvbuf[0] = sendbuf
        return recvbuf

    def _allreduce(self, sendbuf, out):
        if out is None:
            return np.array(sendbuf)
        np.copyto(out, sendbuf)
        return out

    def _broadcast(self, buf, root):
        return buf

    def _barrier(self):
        pass
