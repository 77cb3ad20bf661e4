"""The communicator interface every backend implements (docs/engine.md).

Every collective goes through this base class, which books its time on the
worker's :class:`engine.timing.WorkerClock`: compute is the time between
collectives, communication the time inside them. A backend implements the
underscored methods; the emulated backend overrides :meth:`_charge` to book a
modelled time instead of the measured one.

Faults shared by every backend live here too: the stall timeout (how long one
wait inside a collective may last before the run is declared stuck: a stopped
or deadlocked worker would otherwise hang it forever, its peers spinning) and
the SIGTERM handler that makes a scheduler's kill end a run like a failure,
with one line, exit 143 and no worker left behind.
"""
from __future__ import annotations

import atexit
import contextlib
import math
import os
import pickle
import signal
import socket
import sys
import threading
import time

import numpy as np

from engine.timing import WorkerClock

DEFAULT_STALL_TIMEOUT = 600.0  # s: far above any real wait in a collective, so only a hang hits it
TERMINATED_EXIT = 143  # 128 + SIGTERM, what a shell reports for a process SIGTERM killed


class WorkerError(RuntimeError):
    """A worker raised, died or stalled; the run is aborted on every rank."""


# -- the stall timeout -------------------------------------------------------------------
_stall: float | None = DEFAULT_STALL_TIMEOUT


def set_stall_timeout(seconds: float | None) -> None:
    """Set the longest a worker may wait inside one collective or barrier; None disables.

    A module-wide setting rather than an argument of every run because forked
    local workers inherit it and MPI ranks each set it from the same command
    line; the strategies between the CLI and the communicator need not pass it on.
    A wait that exceeds it ends the run with :class:`WorkerError` (local and
    emulated backends) or MPI_Abort (MPI backend, whose collectives cannot be
    interrupted). It bounds one wait, not a run: a worker that computes for
    longer than it between two collectives stalls its peers just the same.
    """
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.integer, np.floating)):
            raise TypeError(f"stall timeout must be a number of seconds or None, got {seconds!r}")
        seconds = float(seconds)
        if not math.isfinite(seconds) or seconds <= 0:
            raise ValueError(f"stall timeout must be > 0 seconds, got {seconds!r}")
    global _stall
    _stall = seconds


def stall_timeout() -> float | None:
    """The current stall timeout in seconds (None: disabled); see :func:`set_stall_timeout`."""
    return _stall


def stall_message(who: str, seconds: float, op: str) -> str:
    """The one line every backend uses for a stall, so a user sees the same words everywhere."""
    return f"{who} made no progress for {seconds:g} s in {op} (stopped or deadlocked?)"


# -- SIGTERM --------------------------------------------------------------------------------
_term_hooks: list = []  # callables that stop this process's workers at once
_term = {"installed": False, "fired": False, "message": "terminated (SIGTERM)", "say": True,
         "grace": 5.0}


@contextlib.contextmanager
def last_line():
    """Around the process's last line (an error, or "interrupted"): a SIGTERM that arrives
    while it prints waits until the line is out, and one that arrives then or later ends the
    process as before (exit 143, workers killed) without a line of its own. (Blocking the
    signal would not do: a process-directed signal goes to a thread that does not block it.)"""
    _term["hold"] = True
    try:
        yield
    finally:
        _term.update(hold=False, say=False)
        if _term.pop("held", False):
            _on_sigterm(signal.SIGTERM, None)


def on_termination(hook) -> None:
    """Register ``hook()`` to run when SIGTERM ends this process (the local backend
    registers one that kills its live workers); it must be quick and never raise."""
    if hook not in _term_hooks:
        _term_hooks.append(hook)


def _run_term_hooks() -> None:
    for hook in list(_term_hooks):
        try:
            hook()
        except Exception:  # noqa: BLE001 - a dying process stops what it can
            pass


def _terminate_now(from_thread: bool) -> None:
    first = not _term["fired"]
    _term["fired"] = True
    if first and _term["say"]:
        try:
            print(_term["message"], file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass
    _run_term_hooks()
    if from_thread or not first:  # a second SIGTERM, or the main thread is stuck: no unwinding
        os._exit(TERMINATED_EXIT)


def _exit_at_shutdown() -> None:
    """atexit, registered by the handler (so it runs first): every ``finally`` has
    run; skip the rest of the interpreter's shutdown, which can block (MPI_Finalize
    waits for peers still inside a collective) and would outlive the grace thread."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(TERMINATED_EXIT)


def _on_sigterm(signum, frame):
    if _term.get("hold"):  # the last line is being printed: after it (last_line)
        _term["held"] = True
        return
    _terminate_now(from_thread=False)
    atexit.register(_exit_at_shutdown)
    # Unwind through every ``finally`` (the local backend joins its workers there;
    # result files are written atomically): SystemExit, which no ``except
    # Exception`` turns into an ordinary failure.
    raise SystemExit(TERMINATED_EXIT)


def _watch_wakeup(sock: socket.socket) -> None:
    """Thread: sees SIGTERM arrive even while the main thread is stuck in C (an MPI
    collective never returns to the interpreter, so the Python-level handler
    would never run); if the handler has not ended the process within the grace
    period, end it from here."""
    while True:
        try:
            data = sock.recv(64)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        if signal.SIGTERM in data:
            time.sleep(_term["grace"])
            _terminate_now(from_thread=True)


def install_termination_handler(message: str = "terminated (SIGTERM)", *, say: bool = True,
                                grace: float = 5.0) -> bool:
    """Make SIGTERM end this process like a failure: ``message`` as one line on
    stderr (when ``say``: rank 0 only, under MPI), every local worker killed, exit 143.

    A scheduler's SIGTERM used to kill the main process and leave its workers
    running. Call it once, from the main thread, before the run starts. The
    handler raises SystemExit(143) so ``finally`` blocks still run; if the main
    thread does not get back to the interpreter within ``grace`` seconds (it is
    inside an MPI collective), a helper thread prints the line and exits 143
    itself. A second SIGTERM exits at once. Returns False where it cannot be
    installed (not the main thread).
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    _term.update(message=message, say=say, grace=float(grace))
    if _term["installed"]:
        return True
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        rsock, wsock = socket.socketpair()
        wsock.setblocking(False)
        signal.set_wakeup_fd(wsock.fileno(), warn_on_full_buffer=False)
        _term["wakeup"] = (rsock, wsock)  # kept alive with the process
        threading.Thread(target=_watch_wakeup, args=(rsock,), name="sigterm-watch",
                         daemon=True).start()
    except (OSError, ValueError):  # no wakeup fd here: the Python-level handler alone
        pass
    _term["installed"] = True
    return True


def reset_signals_in_child() -> None:
    """In a forked worker: SIGTERM kills it outright (the default), and the parent's
    wakeup socket is not written to by its signals."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:  # not the main thread
        pass
    _term.update(installed=False, fired=False)


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

    def trace(self) -> dict | None:
        """This worker's part of an emulated run's trace (engine/comm/replay.py); None on the
        backends that measure their collectives."""
        return None

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
