"""Communicators: in-process (size 1), local processes with shared memory, MPI."""
from engine.comm.base import Communicator, InProcessComm, WorkerError
from engine.comm.local import LocalComm, run_local

__all__ = ["Communicator", "InProcessComm", "LocalComm", "WorkerError", "run_local"]
