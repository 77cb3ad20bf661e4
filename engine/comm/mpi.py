"""MPI communicator over mpi4py (ranks may live on other machines).

Imported lazily: mpi4py is only needed for ``--backend mpi``.

A stall watchdog guards every collective: an MPI collective cannot be
interrupted, so a rank whose peer is stopped (SIGSTOP) or deadlocked would wait
in it forever, spinning. Each collective arms the watchdog (two attribute
writes and a clock read: nothing next to a collective's microseconds); a daemon
thread per process wakes a few times per stall timeout and, when the armed
collective has run longer than :func:`engine.comm.base.stall_timeout`, prints
one line naming the rank and the collective and calls MPI_Abort(1), which ends
every rank of the job (the launcher kills the stopped one too). mpi4py releases
the GIL inside blocking calls, so the thread runs while the main thread waits.
The waiting rank cannot tell which peer is stuck, so the line names the rank
that gave up.

SIGTERM (with :func:`engine.comm.base.install_termination_handler`) aborts the
job with code 143 at once: a rank that only exited would leave its peers in a
collective, and MPI_Finalize would wait for them.

Before either abort, the rank waits (at most a second) until the launcher has read
what it wrote to stderr: MPI_Abort reaches the launcher over PMI and the stderr
line over a separate pipe, and a launcher that handles the abort first kills the
job with the line that says why still unread (mpich's hydra lost it about one run
in thirty on a loaded 2-core machine, and in 3 of 5 runs with its proxy held stopped).
"""
from __future__ import annotations

import array
import os
import stat
import sys
import threading
import time

import numpy as np

from engine.comm.base import TERMINATED_EXIT, Communicator, on_termination, stall_timeout


class _Watchdog:
    """The per-process watchdog: which collective is armed since when, and its thread.

    Arming is two attribute writes and a clock read (``op`` last, so the thread
    never pairs an op with an older start); the thread, started with the first
    communicator, reads the stall timeout itself, so it may change at any time.
    """

    def __init__(self):
        self.op: str | None = None
        self.since = 0.0
        self.who = ""
        self.world = None  # the mpi4py COMM_WORLD to abort
        self.fired = False
        self.thread: threading.Thread | None = None

    def start(self, who: str, world) -> None:
        if self.thread is None:
            self.who, self.world = who, world
            self.thread = threading.Thread(target=self._watch, name="mpi-stall-watchdog",
                                           daemon=True)
            self.thread.start()

    def _watch(self) -> None:
        while True:
            limit = stall_timeout()
            time.sleep(1.0 if limit is None else min(1.0, max(0.05, limit / 4)))
            op, since = self.op, self.since
            if op is None or limit is None or time.monotonic() - since <= limit:
                continue
            if self.op is not op or self.since != since:  # it returned meanwhile
                continue
            self.fired = True
            try:
                print(f"error: {self.who} waited more than {limit:g} s in {op}: a peer is stopped, "
                      "dead or deadlocked (MPI collectives cannot be interrupted); aborting the job",
                      file=sys.stderr, flush=True)
            finally:
                _let_launcher_read_stderr()
                self.world.Abort(1)


_watchdog = _Watchdog()


def _let_launcher_read_stderr(limit: float = 1.0) -> None:
    """Wait until stderr's pipe or socket holds no unread bytes, or ``limit`` s.

    FIONREAD on the writing end of a pipe counts the bytes its reader has not read
    yet. Anything else (a file, a terminal) is returned from at once: nothing
    forwards it, so nothing can be lost.
    """
    try:
        import fcntl
        import termios

        sys.stderr.flush()
        fd = sys.stderr.fileno()
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return
        unread = array.array("i", [0])
        deadline = time.monotonic() + limit
        while True:
            fcntl.ioctl(fd, termios.FIONREAD, unread, True)
            if unread[0] <= 0 or time.monotonic() >= deadline:
                return
            time.sleep(0.005)
    except (OSError, ValueError, AttributeError, ImportError):  # a dying rank does what it can
        return


_monotonic = time.monotonic


def _arm(op: str) -> None:
    w = _watchdog
    w.since = _monotonic()
    w.op = op


_abort_hook: list = []


def _abort_on_sigterm() -> None:
    """SIGTERM hook (:func:`engine.comm.base.on_termination`): end the whole job at
    once. A rank that merely exited would leave its peers inside a collective
    until the launcher noticed, and MPI_Finalize at exit would wait for them."""
    if _abort_hook:
        _let_launcher_read_stderr()
        _abort_hook[0].Abort(TERMINATED_EXIT)


class MPIComm(Communicator):
    kind = "mpi"

    def __init__(self, comm=None):
        super().__init__()
        from mpi4py import MPI

        self._MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        world = MPI.COMM_WORLD
        if not _abort_hook:
            _abort_hook.append(world)
            on_termination(_abort_on_sigterm)
        # Named by its rank in COMM_WORLD, which the launcher's output uses too.
        _watchdog.start(f"rank {world.Get_rank()} of {world.Get_size()}", world)

    def wait_for_peers(self, poll_s: float = 0.05) -> None:
        """A rank that has finished its share waits here for the others, in Python (a
        non-blocking barrier tested every ``poll_s``), not in MPI_Finalize at exit: inside
        finalize no Python code runs, so a SIGTERM found no handler, and the launcher
        ended the job with no line. Here the handler runs: one line, exit 143. Not armed
        for the stall watchdog: a peer may rightly take minutes (writing reports)."""
        req = self.comm.Ibarrier()
        while not req.Test():
            time.sleep(poll_s)

    def split(self, n: int) -> "MPIComm | None":
        """Sub-communicator of ranks 0..n-1 (None on the others)."""
        color = 0 if self.rank < n else self._MPI.UNDEFINED
        _arm("split")
        try:
            sub = self.comm.Split(color, self.rank)
        finally:
            _watchdog.op = None
        return MPIComm(sub) if sub != self._MPI.COMM_NULL else None

    def _allgather(self, sendbuf, recvbuf):
        x = np.ascontiguousarray(sendbuf, dtype=np.float64)
        if recvbuf is None:
            recvbuf = np.empty((self.size,) + x.shape)
        _arm("allgather")
        try:
            self.comm.Allgather(x, recvbuf)
        finally:
            _watchdog.op = None
        return recvbuf

    def _allreduce(self, sendbuf, out):
        x = np.ascontiguousarray(sendbuf, dtype=np.float64)
        if out is None:
            out = np.empty_like(x)
        inplace = False
        if np.shares_memory(x, out):
            if x.__array_interface__["data"][0] != out.__array_interface__["data"][0]:
                x = x.copy()  # partial overlap: keep the input before MPI writes over it
            else:  # same buffer; MPI forbids aliasing: reduce in place
                inplace = True
        _arm("allreduce")
        try:
            self.comm.Allreduce(self._MPI.IN_PLACE if inplace else x, out, op=self._MPI.SUM)
        finally:
            _watchdog.op = None
        return out

    def _broadcast(self, buf, root):
        _arm("broadcast")
        try:
            self.comm.Bcast(buf, root=root)
        finally:
            _watchdog.op = None
        return buf

    def _barrier(self):
        _arm("barrier")
        try:
            self.comm.Barrier()
        finally:
            _watchdog.op = None

    def gather_objects(self, obj, root=0):
        with self.clock.untimed():
            _arm("gather")
            try:
                return self.comm.gather(obj, root=root)
            finally:
                _watchdog.op = None

    def abort(self, code: int = 1) -> None:
        self.comm.Abort(code)
