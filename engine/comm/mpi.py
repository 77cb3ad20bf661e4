"""MPI communicator over mpi4py (ranks may live on other machines).

Imported lazily: mpi4py is only needed for ``--backend mpi``.
"""
from __future__ import annotations

import numpy as np

from engine.comm.base import Communicator


class MPIComm(Communicator):
    kind = "mpi"

    def __init__(self, comm=None):
        super().__init__()
        from mpi4py import MPI

        self._MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()

    def split(self, n: int) -> "MPIComm | None":
        """Sub-communicator of ranks 0..n-1 (None on the others)."""
        color = 0 if self.rank < n else self._MPI.UNDEFINED
        sub = self.comm.Split(color, self.rank)
        return MPIComm(sub) if sub != self._MPI.COMM_NULL else None

    def _allgather(self, sendbuf, recvbuf):
        x = np.ascontiguousarray(sendbuf, dtype=np.float64)
        if recvbuf is None:
            recvbuf = np.empty((self.size,) + x.shape)
        self.comm.Allgather(x, recvbuf)
        return recvbuf

    def _allreduce(self, sendbuf, out):
        x = np.ascontiguousarray(sendbuf, dtype=np.float64)
        if out is None:
            out = np.empty_like(x)
        if np.shares_memory(x, out) and x.__array_interface__["data"][0] != out.__array_interface__["data"][0]:
            x = x.copy()  # partial overlap: keep the input before MPI writes over it
        elif np.shares_memory(x, out):  # same buffer; MPI forbids aliasing: reduce in place
            self.comm.Allreduce(self._MPI.IN_PLACE, out, op=self._MPI.SUM)
            return out
        self.comm.Allreduce(x, out, op=self._MPI.SUM)
        return out

    def _broadcast(self, buf, root):
        self.comm.Bcast(buf, root=root)
        return buf

    def _barrier(self):
        self.comm.Barrier()

    def gather_objects(self, obj, root=0):
        with self.clock.untimed():
            return self.comm.gather(obj, root=root)

    def abort(self, code: int = 1) -> None:
        self.comm.Abort(code)
