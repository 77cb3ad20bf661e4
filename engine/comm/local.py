"""Local worker processes that talk through shared memory.

Synchronisation is a spin on per-rank generation counters, one 64-byte cache
line each: on this machine ``multiprocessing.Barrier`` costs about 230 µs a
wait, a spin on shared flags about 1.5 µs. Each collective writes into one of
two alternating slot sets (a row per rank plus a result row); a rank can only
come back to a slot set after the next collective's first barrier, which every
peer reaches only after it has read this one, so a collective needs no barrier
at its end.

Allreduce has two algorithms (``allreduce=``), both summing in rank order,
x0 + x1 + ... + x(P-1) left to right, so every rank gets the same bits as the
serial reference's loop:

- ``flat``: one barrier, then every rank sums all P rows: P·n reads a rank,
  which is what made the P = 16 allreduce of 1e5 float64 3.3× slower than Open
  MPI's on a 16-core host (results/machines/xeon207x16/);
- ``rsag``: reduce-scatter then allgather through shared memory. Rank r sums
  only its 1/P column block of the P rows into the result row, a second barrier,
  then every rank copies the whole result row: about 3n reads and writes a rank
  whatever P, for one more barrier;
- ``cma`` (P = 2; ``rsag`` beyond): each rank reads half of the peer's send
  buffer straight from its memory (:mod:`engine.comm.cma`), adds its own half and
  publishes the sum; after a second barrier it copies the peer's half of the sum:
  no copy into a shared slot first;
- ``auto`` (the default) takes ``cma`` at P = 2 from ``_CMA_MIN`` elements where
  the kernel allows it, ``rsag`` from P = 3 for messages of
  ``_RSAG_MIN`` elements or more, and from P = ``_RSAG_ANY_P`` for any size;
  ``flat`` otherwise. The thresholds come from the interleaved before/after
  runs on the 16-core host (results/machines/xeon207x16/issue14/): at P = 2
  ``rsag`` never beat ``flat``, and at P = 4 on 1,000 elements it took 2×
  ``flat``'s time.

Allgather (``allgather=``): ``copy`` moves each message twice, into the
sender's slot and out to every receiver; ``cma`` once, each receiver reading
the sender's own buffer with ``process_vm_readv`` (:mod:`engine.comm.cma`),
then a second barrier so no sender reuses its buffer while it is read;
``auto`` takes ``cma`` only at P = 2, from ``_CMA_MIN`` elements, where the
kernel allows it: on the 16-core host, from P = 4 the concurrent reads of one
buffer made ``cma`` up to 2× slower than ``copy`` (the kernel pins the
sender's pages for every reader).

Broadcast keeps its one barrier and two copies: read through cma at P = 2 it
was slower on the 16-core host (16.1 against 8.5 µs for 8,016 elements).

Workers are bound one to a core (``bind=``) where there are cores enough, as
Open MPI binds its ranks at np <= 2. The evidence for it is thin: in one run on
the 16-core host, unbound local workers took a 2-node pattern-parallel run 1.2× longer
than Open MPI's bound ranks, but in the next run unbound was faster than bound
(0.71 against 0.86 s, both beating Open MPI's 0.95 s; results/machines/
xeon207x16/issue14/). The collectives were measured bound (run4 there); their
small-message latencies equal the unbound "before" columns of the same run.

A column block is summed by P - 1 adds into the result row, or, when it is
small (Python's per-call cost dominates), by one ``np.add.accumulate`` over
the rank axis (its last row is the sum): accumulate is sequential by definition, whereas
``np.add.reduce`` may sum pairwise when it iterates the rank axis innermost
(seen at n = 1 from P = 9), which would change the bits.

The spin relies on stores becoming visible in program order (x86-64 TSO). On
other architectures the local backend falls back to a ``multiprocess.Barrier``
whose lock gives the needed fences.

Faults: the parent waits on every child's pipe and process sentinel. When a
child raises or dies, it sets the shared abort word, terminates the others
(whose spins also poll the abort word), kills what is still there (a stopped
process ignores SIGTERM) and raises :class:`WorkerError` with the child's
message: a run fails fast, it never hangs.

- A stall: a spin that has waited longer than
  :func:`engine.comm.base.stall_timeout` for a peer raises, naming the peer and
  the collective; the parent also polls its children's state and ends a run
  whose worker has been stopped (SIGSTOP) that long.
- The parent dies (SIGKILL, or SIGTERM without the handler of
  :func:`engine.comm.base.install_termination_handler`): on Linux each child
  asked the kernel to SIGKILL it when its parent goes (prctl PR_SET_PDEATHSIG);
  elsewhere, and for the fork-to-prctl race, the spin's slow path checks the
  parent pid. A child closes every pipe end it inherited but its own write
  end, so a result sent to a dead parent fails (EPIPE) instead of blocking
  forever on a pipe whose only other reader is a sibling.

Each of these checks sits on the slow path of the spin (after ``_SPIN_CHECK``
spins), so a collective that completes quickly pays nothing for them.
"""
from __future__ import annotations

import ctypes
import os
import platform
import signal
import sys
import time
import traceback

import multiprocess as mp
import numpy as np
from multiprocess.connection import wait

from engine.comm.cma import available as cma_available, read_into
from engine.comm.base import (Communicator, WorkerError, on_termination, reset_signals_in_child,
                              stall_message, stall_timeout)

_LINE = 8  # int64 words per cache line
_SPIN_CHECK = 1024  # spins before a wait yields the core and checks the abort word
_SPIN_OVERSUBSCRIBED = 8  # the same with more workers than free cores: a spin steals a peer's core
_RSAG_MIN = 4096  # elements from which auto allreduce uses rsag at P >= 3
_RSAG_ANY_P = 12  # workers from which auto allreduce uses rsag whatever the size
_LOOP_MIN_BLOCK = 512  # elements of a reduce-scatter block from which P adds beat one accumulate
_CMA_MIN = 1 << 15  # elements from which auto allgather reads the peer's buffer (P = 2 only)
ALLREDUCE = ("auto", "flat", "rsag", "cma")
ALLGATHER = ("auto", "copy", "cma")
# A rank's cache line in the control array: its generation word, then what a cma
# allgather publishes (the send buffer's address and size), then its pid.
_GEN, _ADDR, _NBYTES, _PID = 0, 1, 2, 3
_CLOCK_EVERY = 64  # yields between checks of the clock and the parent (each a syscall)
_TSO = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_ORPHANED_EXIT = 70  # a child whose parent died exits with this code (nobody reads it)


class CommAborted(RuntimeError):
    pass


class CommStalled(RuntimeError):
    """A peer made no progress within the stall timeout; the message is the run's one line."""


def _words(raw):
    """int64 view of a ctypes byte array (ctypes reports '<b', which cast() refuses)."""
    return memoryview(raw).cast("B").cast("q")


class LocalComm(Communicator):
    kind = "local"

    def __init__(self, rank: int, size: int, ctrl, data, max_elems: int, mp_barrier=None, *,
                 parent: int | None = None, allreduce: str = "auto", allgather: str = "copy",
                 cma: bool = False):
        super().__init__()
        self._parent = parent  # the pid a worker's parent must keep (None: not checked)
        self.rank, self.size = rank, size
        self._ctrl = _words(ctrl)  # generation word per rank, abort word last
        self._me = rank * _LINE
        self._peers = [r * _LINE for r in range(size) if r != rank]
        self._abort = size * _LINE
        self._gen = 0
        self._max = max_elems
        slots = np.frombuffer(data, dtype=np.float64)
        self._slots = slots.reshape(2, size + 1, max_elems)  # (phase, rank + result row, elems)
        self._phase = 0
        self._cache: dict = {}
        self._mp_barrier = mp_barrier
        _check_algorithms(allreduce, allgather)
        self._algo, self._gather = allreduce, allgather
        # the algorithm each collective ran last (tests observe the choice; every one gives
        # the same bits, so no result tells them apart)
        self.ran = {"allgather": None, "allreduce": None}
        self._cma = cma or "cma" in (allreduce, allgather)  # peers' memory may be read
        self._ctrl[self._me + _PID] = os.getpid()  # read by peers only after a barrier
        # A spin only pays while every worker has a core of its own.
        free = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        self._spin = _SPIN_CHECK if size <= (free or 1) else _SPIN_OVERSUBSCRIBED

    # -- synchronisation ------------------------------------------------------
    def _barrier(self, op: str = "barrier") -> None:
        if self._mp_barrier is not None:
            self._wait_mp_barrier(op)
            return
        ctrl = self._ctrl
        g = self._gen = self._gen + 1
        ctrl[self._me] = g
        since = None  # when this wait turned slow (monotonic s)
        for p in self._peers:
            spins = 0
            while ctrl[p] < g:
                spins += 1
                if spins > self._spin:
                    # Waiting long (≈100 µs): a peer is descheduled or slow. Yield the
                    # core on every further check so an oversubscribed peer can run.
                    os.sched_yield()
                    if ctrl[self._abort]:
                        raise CommAborted("a peer failed; aborting")
                    if not spins % _CLOCK_EVERY:
                        since = self._check_wait(since, p // _LINE, op)

    def _check_wait(self, since: float | None, peer: int, op: str) -> float:
        """The slow path of a wait: exit if orphaned, raise if stalled; returns ``since``."""
        if self._parent is not None and os.getppid() != self._parent:
            os._exit(_ORPHANED_EXIT)  # the parent died: nobody will read a result or an error
        now = time.monotonic()
        if since is None:
            return now
        limit = stall_timeout()
        if limit is not None and now - since > limit:
            raise CommStalled(stall_message(f"worker {peer}", limit, op))
        return since

    def _wait_mp_barrier(self, op: str) -> None:
        """The barrier of architectures without TSO, with the stall timeout as its own."""
        import threading

        try:
            self._mp_barrier.wait(stall_timeout())
        except threading.BrokenBarrierError:
            raise CommStalled(stall_message("a peer", stall_timeout(), op)) from None

    def _views(self, n: int):
        """(my row, all rows, rows as a list, result row) of the current slot set for n
        elements; flips the phase."""
        key = (self._phase, n)
        v = self._cache.get(key)
        if v is None:
            if n > self._max:
                raise ValueError(f"message of {n} elements exceeds the local slot of {self._max}")
            rows = self._slots[self._phase, :self.size, :n]  # (size, n)
            v = self._cache[key] = (rows[self.rank], rows, list(rows), self._slots[self._phase, self.size, :n])
        self._phase ^= 1
        return v

    def _block(self, n: int, phase: int):
        """(lo, hi, scratch, rows' blocks, result block) of this rank's column block of n
        elements in reduce-scatter in slot set ``phase``; scratch is a (size, hi - lo)
        buffer for its rank-order prefix sums."""
        key = ("block", phase, n)
        b = self._cache.get(key)
        if b is None:
            lo, hi = n * self.rank // self.size, n * (self.rank + 1) // self.size
            slots = self._slots[phase]  # (size + 1, max_elems)
            b = self._cache[key] = (lo, hi, np.empty((self.size, hi - lo)),  # (size, block)
                                    [slots[r, lo:hi] for r in range(self.size)], slots[self.size, lo:hi])
        return b

    # -- collectives ----------------------------------------------------------
    def _max_words(self) -> int:
        return self._max

    def _allgather(self, sendbuf, recvbuf):
        if self._gather == "cma" or (self._gather == "auto" and self.size == 2
                                      and sendbuf.size >= _CMA_MIN):
            if self.size > 1:
                self.ran["allgather"] = "cma"
                return self._allgather_cma(sendbuf, recvbuf)
        self.ran["allgather"] = "copy"
        mine, rows, _, _ = self._views(sendbuf.size)
        np.copyto(mine, sendbuf.reshape(-1))
        self._barrier("allgather")
        if recvbuf is None:
            recvbuf = np.empty((self.size,) + np.shape(sendbuf))
        np.copyto(recvbuf.reshape(rows.shape), rows)
        return recvbuf

    def _allgather_cma(self, sendbuf, recvbuf):
        """One copy a message: each rank reads every peer's send buffer, whose address
        the peer published in its control line before the first barrier; the second
        barrier keeps every send buffer unchanged until all have read it."""
        src = np.ascontiguousarray(sendbuf, dtype=np.float64)  # a copy only if sendbuf is strided
        if recvbuf is None:
            recvbuf = np.empty((self.size,) + np.shape(sendbuf))
        dst = recvbuf if recvbuf.flags.c_contiguous else np.empty(recvbuf.shape)
        rows = dst.reshape(self.size, src.size)  # (size, n)
        ctrl, me = self._ctrl, self._me
        ctrl[me + _ADDR], ctrl[me + _NBYTES] = src.ctypes.data, src.nbytes
        self._barrier("allgather")
        for r in range(self.size):
            if r == self.rank:
                np.copyto(rows[r], src.reshape(-1))
                continue
            line = r * _LINE
            if ctrl[line + _NBYTES] != src.nbytes:
                raise ValueError(f"allgather: rank {r} sends {ctrl[line + _NBYTES]} bytes, "
                                 f"rank {self.rank} {src.nbytes}")
            read_into(ctrl[line + _PID], rows[r], ctrl[line + _ADDR], src.nbytes)
        self._barrier("allgather")
        if dst is not recvbuf:
            np.copyto(recvbuf, dst)
        return recvbuf

    def _allreduce_pair(self, sendbuf, out):
        """P = 2, one copy a message: each rank reads its half-block of the peer's send
        buffer (cma), adds its own (x0 + x1: one add, commutative, so the same bits as
        the loop), publishes the sum in the result row and, after a second barrier,
        takes the other half from there. In place is safe: the peer only reads the
        half this rank leaves alone until that barrier."""
        src = np.ascontiguousarray(sendbuf, dtype=np.float64).reshape(-1)
        n = src.size
        _, _, _, result = self._views(n)
        if out is None:
            out = np.empty(np.shape(sendbuf))
        o = out.reshape(-1)
        ctrl, me, peer = self._ctrl, self._me, (1 - self.rank) * _LINE
        ctrl[me + _ADDR], ctrl[me + _NBYTES] = src.ctypes.data, src.nbytes
        self._barrier("allreduce")
        lo, hi = n * self.rank // 2, n * (self.rank + 1) // 2
        plo, phi = n * (1 - self.rank) // 2, n * (2 - self.rank) // 2
        scratch = self._cache.get(("pair", n))
        if scratch is None:
            scratch = self._cache[("pair", n)] = np.empty(hi - lo)  # (n / 2,) the peer's half
        read_into(ctrl[peer + _PID], scratch, ctrl[peer + _ADDR] + lo * 8, (hi - lo) * 8)
        np.add(src[lo:hi], scratch, out=o[lo:hi])
        np.copyto(result[lo:hi], o[lo:hi])
        self._barrier("allreduce")
        np.copyto(o[plo:phi], result[plo:phi])
        return out

    def _allreduce(self, sendbuf, out):
        n = sendbuf.size
        P = self.size
        if P == 2 and (self._algo == "cma" or (self._algo == "auto" and self._cma and n >= _CMA_MIN)):
            self.ran["allreduce"] = "pair"
            return self._allreduce_pair(sendbuf, out)
        mine, rows, each, result = self._views(n)
        np.copyto(mine, sendbuf.reshape(-1))
        self._barrier("allreduce")
        if out is None:
            out = np.empty(np.shape(sendbuf))
        o = out.reshape(-1)
        if P == 1:
            self.ran["allreduce"] = "one"
            np.copyto(o, each[0])
            return out
        algo = self._algo
        if algo in ("auto", "cma"):  # cma is a P = 2 algorithm: rsag stands in beyond
            algo = "rsag" if algo == "cma" or (P > 2 and n >= _RSAG_MIN) or P >= _RSAG_ANY_P else "flat"
        if algo == "flat":  # summed in rank order, so every rank gets identical bits
            self.ran["allreduce"] = "flat"
            np.add(each[0], each[1], out=o)
            for r in range(2, P):
                o += each[r]
            return out
        self.ran["allreduce"] = "rsag"
        # rsag: this rank sums its column block of every row (prefix sums over the rank
        # axis: the last row is x0 + x1 + ... in order) into the shared result row; only
        # this rank touches that block, so no one else reads or writes it meanwhile.
        lo, hi, scratch, each_b, block = self._block(n, self._phase ^ 1)  # _views flipped it
        if hi - lo >= _LOOP_MIN_BLOCK or P == 2:  # P - 1 adds straight into the result row
            np.add(each_b[0], each_b[1], out=block)
            for r in range(2, P):
                block += each_b[r]
        elif hi > lo:  # small blocks: one call, not P (its writes cost less than P calls)
            np.add.accumulate(rows[:, lo:hi], axis=0, out=scratch)
            np.copyto(block, scratch[P - 1])
        self._barrier("allreduce")
        np.copyto(o, result)
        return out

    def _broadcast(self, buf, root):
        _, rows, each, _ = self._views(buf.size)
        if self.rank == root:
            np.copyto(each[root], buf.reshape(-1))
        self._barrier("broadcast")
        if self.rank != root:
            np.copyto(buf.reshape(-1), each[root])
        return buf



def _cpus_for(size: int, bind: bool | None) -> list:
    """The CPU each worker is bound to (None: unbound), one each where there are enough."""
    if bind is None:
        bind = os.environ.get("ENGINE_LOCAL_BIND", "1") != "0"
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not bind or size < 2 or len(cpus) < size:
        return [None] * size
    return cpus[:size]


def _check_algorithms(allreduce: str, allgather: str) -> None:
    if allreduce not in ALLREDUCE:
        raise ValueError(f"allreduce must be one of {ALLREDUCE}, got {allreduce!r}")
    if allgather not in ALLGATHER:
        raise ValueError(f"allgather must be one of {ALLGATHER}, got {allgather!r}")


def _die_with_parent(parent: int) -> None:
    """Ask the kernel to SIGKILL this child when its parent dies (Linux), then close
    the race: a parent that died before the request leaves us with another one."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no libc prctl: the spin's parent check remains
            pass
    if os.getppid() != parent:
        os._exit(_ORPHANED_EXIT)


def _child(rank, size, ctrl, data, max_elems, mp_barrier, conn, inherited, parent, algorithms, cpu,
           fn, args, kwargs):
    _die_with_parent(parent)
    if cpu is not None:
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError:  # a cpuset changed under us: run unbound rather than fail
            pass
    reset_signals_in_child()
    _LIVE.clear()  # the parent's list of workers, copied by the fork: not ours to kill
    for c in inherited:  # read ends of the parent's pipes, this child's own among them
        c.close()
    try:
        try:
            from threadpoolctl import threadpool_limits

            threadpool_limits(1)  # one BLAS thread per worker: workers are the parallelism
            comm = LocalComm(rank, size, ctrl, data, max_elems, mp_barrier, parent=parent,
                             **algorithms)
            result = fn(comm, *args, **kwargs)
            conn.send(("ok", result))
        except CommAborted:
            conn.send(("aborted", None))
        except CommStalled as e:
            conn.send(("error", str(e)))
        except BaseException as e:  # noqa: BLE001 - report anything, then exit
            conn.send(("error", f"worker {rank}: {type(e).__name__}: {e}\n{traceback.format_exc()}"))
    except OSError:  # the parent is gone (EPIPE): nobody to tell
        os._exit(_ORPHANED_EXIT)
    finally:
        conn.close()


_LIVE: list = []  # the worker processes of the run in progress, for the SIGTERM handler


def _kill_live() -> None:
    for p in list(_LIVE):
        try:
            if p.pid is not None:
                os.kill(p.pid, signal.SIGKILL)
        except OSError:
            pass


on_termination(_kill_live)


def _proc_state(pid: int) -> str | None:
    """The state letter of /proc/<pid>/stat ('T': stopped), None where unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:][:1].decode()
    except (OSError, ValueError):
        return None


def _died(p) -> str:
    code = p.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def run_local(fn, size: int, *args, max_elems: int = 1 << 16, timeout: float | None = None,
              allreduce: str = "auto", allgather: str = "auto", bind: bool | None = None,
              **kwargs) -> list:
    """Run ``fn(comm, *args, **kwargs)`` on ``size`` forked processes; return results by rank.

    Raises :class:`WorkerError` naming the first rank that raised, died or
    stalled (:func:`engine.comm.base.stall_timeout`), or saying the whole run
    exceeded ``timeout`` seconds (a deadline for the run, not per event). No
    child outlives the call: those still there at the end are killed. ``allreduce``
    and ``allgather`` pick the algorithms (module docstring); every choice gives the
    same bits. ``allgather="cma"`` raises ValueError where the kernel refuses it.
    ``bind``: worker r runs on the r-th CPU this process may use, where there are at
    least ``size`` of them (None: yes unless the environment sets ENGINE_LOCAL_BIND=0).
    """
    if size < 1:
        raise ValueError(f"workers must be >= 1, got {size}")
    _check_algorithms(allreduce, allgather)
    cma = (allgather != "copy" or allreduce in ("auto", "cma")) and cma_available()
    if not cma:
        for op, algo in (("allreduce", allreduce), ("allgather", allgather)):
            if algo == "cma":
                raise ValueError(f"{op}='cma': process_vm_readv between workers is not allowed here")
        allgather = "copy" if allgather == "auto" else allgather
    algorithms = {"allreduce": allreduce, "allgather": allgather, "cma": cma}
    cpus = _cpus_for(size, bind)
    ctx = mp.get_context("fork")
    ctrl = ctx.RawArray("b", (size + 1) * _LINE * 8)  # (size + abort) cache lines
    data = ctx.RawArray("b", 2 * (size + 1) * max_elems * 8)  # (2, size + 1, max_elems) float64
    mp_barrier = None if _TSO else ctx.Barrier(size)
    me = os.getpid()
    pipes, procs = [], []
    results: dict[int, object] = {}
    try:
        for rank in range(size):
            parent, child = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_child, daemon=True,
                            args=(rank, size, ctrl, data, max_elems, mp_barrier, child,
                                  pipes + [parent], me, algorithms, cpus[rank], fn, args, kwargs))
            _LIVE.append(p)
            p.start()
            child.close()
            pipes.append(parent)
            procs.append(p)
        return _collect(pipes, procs, ctrl, size, timeout, results)
    finally:
        _reap(procs, results)
        for p in procs:
            if p in _LIVE:
                _LIVE.remove(p)
        for c in pipes:
            c.close()


def _reap(procs, results: dict, grace: float = 2.0) -> None:
    """Let finished children exit, terminate (and continue, were it stopped) what is
    still running, then kill what survived ``grace`` s."""
    end = time.monotonic() + grace
    for r, p in enumerate(procs):
        if r in results:  # it sent its result and is on its way out
            p.join(max(0.0, end - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.terminate()
            try:  # a stopped child gets its SIGTERM only once continued
                os.kill(p.pid, signal.SIGCONT)
            except OSError:
                pass
    end = time.monotonic() + grace
    for p in procs:
        p.join(max(0.0, end - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(5)


def _collect(pipes, procs, ctrl, size: int, timeout: float | None, results: dict) -> list:
    """The parent's side of :func:`run_local`: fills ``results`` and returns them by
    rank, or raises WorkerError."""
    abort_word = _words(ctrl)
    error = None
    pending = {pipes[r]: r for r in range(size)} | {procs[r].sentinel: r for r in range(size)}
    deadline = None if timeout is None else time.monotonic() + timeout
    stopped: dict[int, float] = {}  # rank -> when the parent first saw it stopped
    try:
        while len(results) < size and error is None:
            now = time.monotonic()
            left = None if deadline is None else max(0.0, deadline - now)
            limit = stall_timeout()
            poll = None if limit is None else min(1.0, max(0.05, limit / 4))
            ready = wait(list(pending), poll if left is None else min(left, poll or left))
            if not ready:
                if deadline is not None and time.monotonic() >= deadline:
                    error = f"local run timed out after {timeout} s"
                    break
                error = _stopped_too_long(procs, results, stopped, limit)
                continue
            for obj in ready:
                r = pending.pop(obj, None)
                if r is None:  # the pipe and the sentinel of one rank both fired
                    continue
                if obj is pipes[r]:
                    try:
                        status, payload = obj.recv()
                    except EOFError:
                        procs[r].join(1.0)
                        status, payload = "error", f"worker {r} died ({_died(procs[r])})"
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
                    error = f"worker {r} died ({_died(procs[r])})"
                if error:
                    break
    except BaseException as e:  # KeyboardInterrupt, SystemExit too: never leave spinning children
        error = error or f"local run interrupted: {type(e).__name__}"
        raise
    finally:
        if error is not None:
            abort_word[size * _LINE] = 1
    if error is not None:
        raise WorkerError(error.strip().splitlines()[0] if error else "worker failed") from RuntimeError(error)
    return [results[r] for r in range(size)]


def _stopped_too_long(procs, results, stopped: dict, limit: float | None) -> str | None:
    """The parent's own stall check: a worker stopped (SIGSTOP) for longer than
    ``limit`` fails the run even where no peer waits for it (P = 1, or all stopped)."""
    if limit is None:
        return None
    now = time.monotonic()
    for r, p in enumerate(procs):
        if r in results or p.pid is None:
            continue
        if _proc_state(p.pid) in ("T", "t"):
            since = stopped.setdefault(r, now)
            if now - since > limit:
                return f"worker {r} made no progress for {limit:g} s: it is stopped (SIGSTOP?)"
        else:
            stopped.pop(r, None)
    return None
