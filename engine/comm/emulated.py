"""Emulated backend: P workers in one process, the machine from a profile.

The workers run the same SPMD code as on every other backend, each as a
greenlet (a coroutine with its own stack, switched within this thread, no
kernel context switch in between): the scheduler runs worker 0 up to its next
collective, then worker 1, ..., then completes the collective for all of them.
So each worker's compute is timed alone, on one core, between its
collectives, as a worker with a core of its own would run it. (Threads handing
a baton to each other made 70 µs compute segments about 15 % slower: every
hand-over is a kernel context switch.)

Each worker has a virtual clock (:func:`engine.comm.replay.price`, the one pricing the
live run and a replay share). At a collective, worker p arrives at
vt_p + c_p, c_p its compute since the last collective scaled to the profile's
machine (:meth:`engine.perfmodel.MachineProfile.compute_scale`: speed ratio ×
contention of P workers; 1 for an α/β profile); the collective ends for every
worker at max_p(arrival) + straggler wait
(:meth:`~engine.perfmodel.MachineProfile.sync_wait` of the mean c_p; 0 for an
α/β profile) + cost (:meth:`~engine.perfmodel.MachineProfile.collective_time`).
A worker's booked communication is therefore the modelled cost plus its wait
for the slowest peer, and :attr:`engine.timing.RunRecord.time_s` is the slowest worker's
virtual finish time. Numerically the run is the SPMD run: the data move as on
the local backend (allreduce summed in rank order).

Every run keeps its trace: per worker, the measured compute between its collectives
(and where its rounds end), and per timed collective its operation and bytes
(:meth:`EmulatedComm.trace`); :func:`engine.comm.replay.replay` prices it under any
profile, and under the run's own gives the run's accounts.

A worker that raises ends the run with :class:`WorkerError` naming it; a
worker that returns while its peers wait in a collective is a mismatch, and
so an error too. A worker that runs longer than
:func:`engine.comm.base.stall_timeout` between two collectives fails the run
too, as its peers' wait would on the other backends; since every worker runs
in this one thread, that is noticed when it reaches the collective: a worker
that never does (an endless loop) cannot be interrupted from within, only by a
signal (SIGINT, SIGTERM) to the process. A peer cannot be stopped alone here.
KeyboardInterrupt and SystemExit (the SIGTERM handler's) pass through as they are.
"""
from __future__ import annotations

import traceback
from array import array

import numpy as np
from greenlet import getcurrent, greenlet

from engine.comm.base import Communicator, WorkerError, stall_timeout
from engine.comm.replay import price


class _Group:
    """What the P emulated workers share: the pending collective and the virtual clocks."""

    def __init__(self, size: int, profile, kernel: str = "small"):
        self.size, self.profile, self.kernel = size, profile, kernel
        self.scheduler = getcurrent()
        self.vt = np.zeros(size)  # (P,) virtual time of each worker
        self.arrive = np.zeros(size)  # (P,) virtual arrival time at the pending collective
        self.seg = np.zeros(size)  # (P,) scaled compute since the last collective
        self.op: list = [None] * size  # each worker's pending (op, nbytes, timed, root)
        self.data: list = [None] * size  # each worker's contribution
        self.result = None
        self.charge = np.zeros(size)  # (P,) booked communication of the last collective
        self.ops: list = []  # the trace's timed collectives: (op, nbytes) in order

    def complete(self) -> None:
        """Every worker waits in a collective: compute its result and its cost."""
        kinds = {(o[0], o[2], o[3]) for o in self.op}
        if len(kinds) != 1:
            raise WorkerError(f"collectives do not match across workers: {self.op}")
        op, timed, root = kinds.pop()
        nbytes = max(o[1] for o in self.op)
        if op == "allgather":
            self.result = np.stack([np.asarray(d) for d in self.data])  # (P, *shape)
        elif op == "allreduce":  # rank order, as LocalComm sums: identical bits everywhere
            self.result = np.array(self.data[0], dtype=np.float64)
            for d in self.data[1:]:
                self.result += d
        elif op == "broadcast":
            self.result = np.array(self.data[root])
        elif op == "gather":
            self.result = list(self.data)
        else:
            self.result = None
        if timed:
            self.ops.append((op, nbytes))
            end = price(self.profile, self.kernel, op, nbytes, self.arrive, self.seg)
            self.charge = end - self.arrive
            self.vt[:] = end
        else:
            self.charge[:] = 0.0


class EmulatedComm(Communicator):
    kind = "emulated"

    def __init__(self, rank: int, group: _Group):
        super().__init__()
        self.rank, self.size = rank, group.size
        self.g = group
        # compute → the profile's machine (speed ratio × contention of the reference kernel)
        self.clock.scale = group.profile.compute_scale(group.size, group.kernel)
        self.clock.events = array("d")

    def trace(self) -> dict:
        """This worker's part of the run's trace (engine/comm/replay.py): the machine's size
        and kernel, the timed collectives so far (shared by every worker) and its events."""
        return {"P": self.size, "kernel": self.g.kernel, "ops": self.g.ops,
                "events": np.array(self.clock.events, dtype=np.float64)}

    def _collective(self, op: str, data, nbytes: int, seg: float, root: int = 0):
        """Deposit this worker's part, hand over to the scheduler, return the result."""
        g, r = self.g, self.rank
        timed = self.clock.running
        if timed:
            g.vt[r] += seg
            g.arrive[r] = g.vt[r]
            g.seg[r] = seg
        g.op[r], g.data[r] = (op, nbytes, timed, root), data
        g.scheduler.switch()
        return g.result

    def allgather(self, sendbuf, recvbuf=None):
        seg = self.clock.enter()
        res = self._collective("allgather", sendbuf, sendbuf.nbytes, seg)
        if recvbuf is None:
            recvbuf = np.empty((self.size,) + np.shape(sendbuf))
        np.copyto(recvbuf.reshape(res.shape), res)
        self.clock.leave(sendbuf.nbytes, self.g.charge[self.rank])
        return recvbuf

    def allreduce(self, sendbuf, out=None):
        seg = self.clock.enter()
        res = self._collective("allreduce", sendbuf, sendbuf.nbytes, seg)
        if out is None:
            out = np.empty(np.shape(sendbuf))
        np.copyto(out.reshape(res.shape), res)
        self.clock.leave(sendbuf.nbytes, self.g.charge[self.rank])
        return out

    def broadcast(self, buf, root=0):
        seg = self.clock.enter()
        res = self._collective("broadcast", buf, buf.nbytes, seg, root)
        if self.rank != root:
            np.copyto(buf.reshape(res.shape), res)
        self.clock.leave(buf.nbytes if self.rank == root else 0, self.g.charge[self.rank])
        return buf

    def barrier(self):
        seg = self.clock.enter()
        self._collective("barrier", None, 0, seg)
        self.clock.leave(0, self.g.charge[self.rank])

    def _barrier(self):  # start_clock's synchronisation: untimed
        self._collective("barrier", None, 0, 0.0)

    def gather_objects(self, obj, root=0):
        with self.clock.untimed():
            objs = self._collective("gather", obj, 0, 0.0)
        return objs if self.rank == root else None


def run_emulated(fn, size: int, *args, profile, timeout: float | None = None, kernel: str = "small",
                 **kwargs) -> list:
    """Run ``fn(comm, *args, **kwargs)`` for ``size`` emulated workers; results by rank.

    ``kernel`` names the profile's reference kernel whose contention and straggler
    factors stand for this workload ("small": cache-resident layers; "gemv":
    memory-bound matrix–vector products; "gemm"); α/β profiles ignore it.
    One BLAS thread, as each local worker gets: every worker stands for one core.
    Raises :class:`WorkerError` naming the first worker that raised, on a
    mismatch of collectives, or when the run exceeds ``timeout`` seconds
    (checked at every collective).
    """
    from time import monotonic

    from threadpoolctl import threadpool_limits

    if size < 1:
        raise ValueError(f"workers must be >= 1, got {size}")
    if profile is None:
        raise ValueError("emulated runs need a machine profile")
    group = _Group(size, profile, kernel)
    comms = [EmulatedComm(r, group) for r in range(size)]
    workers = [greenlet(fn) for _ in range(size)]
    results: list = [None] * size
    deadline = None if timeout is None else monotonic() + timeout
    with threadpool_limits(1):
        first = True
        while True:
            limit = stall_timeout()
            for r, w in enumerate(workers):
                t0 = monotonic()
                try:
                    out = w.switch(comms[r], *args, **kwargs) if first else w.switch()
                except (KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as e:  # noqa: BLE001 - name the worker
                    msg = f"worker {r}: {type(e).__name__}: {e}"
                    raise WorkerError(msg) from RuntimeError(traceback.format_exc())
                if limit is not None and not w.dead and monotonic() - t0 > limit:
                    raise WorkerError(f"worker {r} computed {monotonic() - t0:.0f} s before reaching "
                                      f"{group.op[r][0]}, beyond the stall timeout of {limit:g} s "
                                      "(its peers would have given up waiting)")
                if w.dead:
                    results[r] = out
            first = False
            ended = [w.dead for w in workers]
            if all(ended):
                return results
            if any(ended):
                waiting = [r for r in range(size) if not ended[r]]
                raise WorkerError(f"worker {ended.index(True)} returned while workers {waiting} wait "
                                  f"in {group.op[waiting[0]][0]}: the workers' collectives do not match")
            if deadline is not None and monotonic() > deadline:
                raise WorkerError(f"emulated run timed out after {timeout} s")
            group.complete()
