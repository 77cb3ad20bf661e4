"""The communicator interface every backend implements (DESIGN.md, "Communicators")."""
from __future__ import annotations

import numpy as np


class WorkerError(RuntimeError):
    """A worker raised or died; the run is aborted on every rank."""


class Communicator:
    """rank, size, allgather, allreduce (sum), broadcast, barrier.

    Collectives take and return float64 numpy arrays. ``recvbuf`` /``out``
    may be passed to avoid allocation. A strategy never knows which backend
    it runs on.
    """

    kind = "abstract"
    rank: int
    size: int

    def allgather(self, sendbuf: np.ndarray, recvbuf: np.ndarray | None = None) -> np.ndarray:
        """Return (size, *sendbuf.shape): every rank's sendbuf in rank order."""
        raise NotImplementedError

    def allreduce(self, sendbuf: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Elementwise sum over ranks (summed in rank order where the backend allows)."""
        raise NotImplementedError

    def broadcast(self, buf: np.ndarray, root: int = 0) -> np.ndarray:
        """Root's ``buf`` copied into every rank's ``buf`` in place; returns buf."""
        raise NotImplementedError

    def barrier(self) -> None:
        raise NotImplementedError


class InProcessComm(Communicator):
    """A communicator of size 1: the serial reference path."""

    kind = "inprocess"

    def __init__(self):
        self.rank, self.size = 0, 1

    def allgather(self, sendbuf, recvbuf=None):
        if recvbuf is None:
            return np.array(sendbuf)[None]
        recvbuf[0] = sendbuf
        return recvbuf

    def allreduce(self, sendbuf, out=None):
        if out is None:
            return np.array(sendbuf)
        np.copyto(out, sendbuf)
        return out

    def broadcast(self, buf, root=0):
        return buf

    def barrier(self):
        pass
