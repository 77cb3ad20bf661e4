"""Local worker processes that talk through shared memory.

Synchronisation is a spin on per-rank generation counters, one 64-byte cache
line each: on this machine ``multiprocessing.Barrier`` costs about 230 µs a
wait, a spin on shared flags about 1.5 µs. Each collective writes into one of
two alternating slot sets; a rank can only come back to a slot set after the
next collective's barrier, which every peer reaches only after it has read
this one, so one barrier per collective is enough.

The spin relies on stores becoming visible in program order (x86-64 TSO). On
other architectures the local backend falls back to a ``multiprocess.Barrier``
whose lock gives the needed fences.

Faults: the parent waits on every child's pipe and process sentinel. When a
child raises or dies, it sets the shared abort word, terminates the others
(whose spins also poll the abort word) and raises :class:`WorkerError` with
the child's message: a run fails fast, it never hangs.
"""
from __future__ import annotations

import os
import platform
import time
import traceback

import multiprocess as mp
import numpy as np
from multiprocess.connection import wait

from engine.comm.base import Communicator, WorkerError

_LINE = 8  # int64 words per cache line
_SPIN_CHECK = 1024  # spins between abort checks / yields
_TSO = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


class CommAborted(RuntimeError):
    pass


def _words(raw):
    """int64 view of a ctypes byte array (ctypes reports '<b', which cast() refuses)."""
    return memoryview(raw).cast("B").cast("q")


class LocalComm(Communicator):
    kind = "local"

    def __init__(self, rank: int, size: int, ctrl, data, max_elems: int, mp_barrier=None):
        super().__init__()
        self.rank, self.size = rank, size
        self._ctrl = _words(ctrl)  # generation word per rank, abort word last
        self._me = rank * _LINE
        self._peers = [r * _LINE for r in range(size) if r != rank]
        self._abort = size * _LINE
        self._gen = 0
        self._max = max_elems
        slots = np.frombuffer(data, dtype=np.float64)
        self._slots = slots.reshape(2, size, max_elems)  # (phase, rank, elems)
        self._phase = 0
        self._cache: dict = {}
        self._mp_barrier = mp_barrier

    # -- synchronisation ------------------------------------------------------
    def _barrier(self) -> None:
        if self._mp_barrier is not None:
            self._mp_barrier.wait()
            return
        ctrl = self._ctrl
        g = self._gen = self._gen + 1
        ctrl[self._me] = g
        for p in self._peers:
            spins = 0
            while ctrl[p] < g:
                spins += 1
                if spins > _SPIN_CHECK:
                    # Waiting long (≈100 µs): a peer is descheduled or slow. Yield the
                    # core on every further check so an oversubscribed peer can run.
                    os.sched_yield()
                    if ctrl[self._abort]:
                        raise CommAborted("a peer failed; aborting")

    def _views(self, n: int):
        """(my row, all rows) of the current slot set for n elements; flips the phase."""
        key = (self._phase, n)
        v = self._cache.get(key)
        if v is None:
            if n > self._max:
                raise ValueError(f"message of {n} elements exceeds the local slot of {self._max}")
            rows = self._slots[self._phase, :, :n]  # (size, n)
            v = self._cache[key] = (rows[self.rank], rows, list(rows))
        self._phase ^= 1
        return v

    # -- collectives ----------------------------------------------------------
    def _max_words(self) -> int:
        return self._max

    def _allgather(self, sendbuf, recvbuf):
        mine, rows, _ = self._views(sendbuf.size)
        np.copyto(mine, sendbuf.reshape(-1))
        self._barrier()
        if recvbuf is None:
            recvbuf = np.empty((self.size,) + np.shape(sendbuf))
        np.copyto(recvbuf.reshape(rows.shape), rows)
        return recvbuf

    def _allreduce(self, sendbuf, out):
        mine, rows, each = self._views(sendbuf.size)
        np.copyto(mine, sendbuf.reshape(-1))
        self._barrier()
        if out is None:
            out = np.empty(np.shape(sendbuf))
        o = out.reshape(-1)
        if self.size == 1:
            np.copyto(o, each[0])
        else:  # summed in rank order, so every rank gets identical bits
            np.add(each[0], each[1], out=o)
            for r in range(2, self.size):
                o += each[r]
        return out

    def _broadcast(self, buf, root):
        _, rows, each = self._views(buf.size)
        if self.rank == root:
            np.copyto(each[root], buf.reshape(-1))
        self._barrier()
        if self.rank != root:
            np.copyto(buf.reshape(-1), each[root])
        return buf


def _child(rank, size, ctrl, data, max_elems, mp_barrier, conn, fn, args, kwargs):
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)  # one BLAS thread per worker: workers are the parallelism
        comm = LocalComm(rank, size, ctrl, data, max_elems, mp_barrier)
        result = fn(comm, *args, **kwargs)
        conn.send(("ok", result))
    except CommAborted:
        conn.send(("aborted", None))
    except BaseException as e:  # noqa: BLE001 - report anything, then exit
        conn.send(("error", f"worker {rank}: {type(e).__name__}: {e}\n{traceback.format_exc()}"))
    finally:
        conn.close()


def run_local(fn, size: int, *args, max_elems: int = 1 << 16, timeout: float | None = None,
              **kwargs) -> list:
    """Run ``fn(comm, *args, **kwargs)`` on ``size`` forked processes; return results by rank.

    Raises :class:`WorkerError` naming the first rank that raised or died, or
    saying the whole run exceeded ``timeout`` seconds (a deadline for the run,
    not per event).
    """
    if size < 1:
        raise ValueError(f"workers must be >= 1, got {size}")
    ctx = mp.get_context("fork")
    ctrl = ctx.RawArray("b", (size + 1) * _LINE * 8)  # (size + abort) cache lines
    data = ctx.RawArray("b", 2 * size * max_elems * 8)  # (2, size, max_elems) float64
    mp_barrier = None if _TSO else ctx.Barrier(size)
    pipes, procs = [], []
    for rank in range(size):
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_child, daemon=True,
                        args=(rank, size, ctrl, data, max_elems, mp_barrier, child, fn, args, kwargs))
        p.start()
        child.close()
        pipes.append(parent)
        procs.append(p)
    results: dict[int, object] = {}
    abort_word = _words(ctrl)
    error = None
    pending = {pipes[r]: r for r in range(size)} | {procs[r].sentinel: r for r in range(size)}
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while len(results) < size and error is None:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait(list(pending), left)
            if not ready:
                error = f"local run timed out after {timeout} s"
                break
            for obj in ready:
                r = pending.pop(obj, None)
                if r is None:  # the pipe and the sentinel of one rank both fired
                    continue
                if obj is pipes[r]:
                    try:
                        status, payload = obj.recv()
                    except EOFError:
                        procs[r].join(1.0)
                        status, payload = "error", f"worker {r} died (exit code {procs[r].exitcode})"
                    if status == "ok":
                        results[r] = payload
                    elif status == "error":
                        error = payload
                    pending.pop(procs[r].sentinel, None)
                elif r not in results:
                    # The process ended; give its pipe a moment to deliver a result.
                    if pipes[r].poll(0.5):
                        try:
                            status, payload = pipes[r].recv()
                        except EOFError:
                            status, payload = "died", None
                        pending.pop(pipes[r], None)
                        if status == "ok":
                            results[r] = payload
                            continue
                        if status == "error":
                            error = payload
                            break
                    procs[r].join(1.0)  # the sentinel can fire before exitcode is set
                    code = procs[r].exitcode
                    error = f"worker {r} died (exit code {code})"
                if error:
                    break
    except BaseException as e:  # KeyboardInterrupt too: never leave spinning children
        error = error or f"local run interrupted: {type(e).__name__}"
        raise
    finally:
        if error is not None:
            abort_word[size * _LINE] = 1
            for p in procs:
                if p.is_alive():
                    p.terminate()
        for p in procs:
            p.join(timeout=5)
        for c in pipes:
            c.close()
    if error is not None:
        raise WorkerError(error.strip().splitlines()[0] if error else "worker failed") from RuntimeError(error)
    return [results[r] for r in range(size)]
