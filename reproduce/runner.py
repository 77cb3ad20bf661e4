"""Run a paper's list of tasks once each: cached, with progress, on any backend.

A task is one training run of one configuration. Finished tasks are cached by
their configuration plus a hash of the source code they ran and the identity of
their data, so an interrupted reproduction resumes where it stopped and a code
or data change invalidates the cache. A time depends on where and how it was
taken, so a measured task's key also holds its *conditions*: backend, MPI world
size, the invocation's workers and the machine (:func:`machine_identity`); an
emulated task's, the machine (its compute is timed here, one worker at a time).
The 1-minute load at a task's start is recorded with it, not keyed. A task that
raised (a stalled or lost worker) is never cached.

Under MPI every rank calls :func:`execute` with the same task list. Tasks that
need several ranks run first, each on a sub-communicator of the first
``workers`` ranks; then the other ranks are released and rank 0 runs the
single-process tasks (serial and emulated) alone, so idle ranks polling MPI do
not steal its cores.

``jobs`` > 1 (local backend only): every measured task still runs alone, one after
another; then the emulated tasks run ``jobs`` at a time, each in a forked process
with one BLAS thread (:func:`_pool`). An emulated task times one worker's compute at
a time; beside ``jobs`` − 1 other such tasks that compute shares the machine's memory
and caches and is timed slower (tools/jobs_effect.py measures by how much), which the
profiles' contention factors, taken against compute timed alone, would count again.
It is a condition of the timing, so it is in the emulated task's key
(:func:`task_conditions`); the command line's default is 1.

A task that records no time (``Task.timed`` False: a training run whose result is what the
model learnt, e.g. its accuracies) has no timing to spoil. Whatever its kind, it runs last,
in the same kind of pool, one per usable core (:func:`usable_cores`), under any ``jobs``
(local backend only; under MPI rank 0 runs it alone). Its key holds the machine alone (the
last bits of a result may differ between CPUs) and ``timed: False``.
"""
from __future__ import annotations

import hashlib
import os
import platform
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from reproduce.store import RunCache

_ROOT = Path(__file__).resolve().parent.parent


def code_hash(*packages: str) -> str:
    """sha1 over the .py sources of the given top-level packages/modules."""
    h = hashlib.sha1()
    for pkg in packages:
        p = _ROOT / pkg
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p.with_suffix(".py")]
        for f in files:
            h.update(str(f.relative_to(_ROOT)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_identity() -> dict:
    """This machine, as far as a timing depends on it: host name, CPU model, core count."""
    return {"host": socket.gethostname(), "cpu": _cpu_model(), "cores": os.cpu_count()}


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def task_conditions(conditions: dict, kind: str, timed: bool = True) -> dict:
    """The part of the run's ``conditions`` a task of ``kind`` is keyed on: for a measured
    task all of them but ``jobs`` (it always runs alone); for an emulated one the machine,
    and ``jobs`` where more than one emulated task ran at a time; for one that records no
    time (``timed`` False) the machine alone."""
    if not timed:
        return {"machine": conditions["machine"]}
    if kind == "measured":
        return {k: v for k, v in conditions.items() if k != "jobs"}
    c = {"machine": conditions["machine"]}
    if conditions.get("jobs", 1) > 1:
        c["jobs"] = conditions["jobs"]
    return c


def invocations(*results: dict, current: str) -> set:
    """The invocations that computed ``results``: a cached one's ``_cached_from``, else
    ``current`` (the run's ``meta["invocation"]``). More than one: e.g. a speedup whose serial
    and parallel times were not taken by the same run, which its note should say."""
    return {(r.get("_cached_from") or {}).get("invocation", current) for r in results}


@dataclass(frozen=True)
class Task:
    name: str  # what to run, interpreted by the paper's run_task
    kind: str  # measured | emulated
    workers: int = 1  # processes or ranks a measured task needs
    params: dict = field(default_factory=dict, hash=False)
    timed: bool = True  # False: its result holds no time (module docstring), so it may share the cores

    def __post_init__(self):
        # config() marks an untimed task with "timed": False among its params: a param of that
        # name (a count of timed passes, say) would overwrite the mark, and the task's key
        # would be a timed task's
        if not self.timed and "timed" in self.params:
            raise ValueError(f"task {self.name}: a task that records no time cannot have a param named 'timed'")

    def config(self, extra: dict) -> dict:
        untimed = {} if self.timed else {"timed": False}
        return {"name": self.name, "kind": self.kind, "workers": self.workers, **untimed, **self.params,
                **extra}

    def label(self) -> str:
        p = ",".join(f"{k}={v}" for k, v in self.params.items() if k != "seed")
        return f"{self.name}/{self.kind} {p}"


def execute(tasks: list[Task], fn, *, cache: RunCache | None, extra: dict, progress=None,
            comm=None, conditions: dict | None = None, jobs: int = 1,
            stats: dict | None = None, check=None, untimed_jobs: int | None = None
            ) -> list[tuple[Task, dict]] | None:
    """Run ``fn(task, comm)`` for every task not in the cache; return (task, result) pairs.

    ``fn`` gets a communicator of ``task.workers`` ranks under MPI for
    multi-rank measured tasks, else None. Returns None on ranks other than 0.
    ``extra`` goes into every task's key; ``conditions`` (backend, world_size,
    workers, machine, jobs) into each task's as :func:`task_conditions` says. A result
    from the cache carries ``_cached_from`` (:class:`reproduce.store.RunCache`); every result
    carries ``_seconds``, the seconds its task took when it was computed (None where a cache
    entry predates that record). ``jobs``: emulated tasks at a time (module docstring; 1 under
    MPI); ``untimed_jobs``: tasks that record no time at a time (default :func:`usable_cores`;
    1 under MPI). ``stats``, when given, gets the seconds the tasks computed here took, summed
    by kind (``task_s``; "untimed" for the tasks that record no time), their count
    (``computed``) and, where such tasks computed here shared the cores, how many ran at a time
    (``untimed_jobs``). ``check(task, result)``: None if a cached result has its task's shape,
    else why not (the entry is set aside, the task recomputed:
    :meth:`reproduce.store.RunCache.get`).
    """
    if comm is not None and jobs != 1:
        raise ValueError("jobs > 1 needs the local backend: rank 0 runs its tasks alone under MPI")
    rank = 0 if comm is None else comm.rank
    multi = [t for t in tasks if comm is not None and t.kind == "measured" and t.workers > 1]
    single = [t for t in tasks if t not in multi]
    done: dict[int, dict] = {}
    subs: dict[int, object] = {}
    stats = {} if stats is None else stats
    stats.setdefault("task_s", {})  # a second pass (harness.extend) adds to the first
    stats.setdefault("computed", 0)

    def key(t):
        c = t.config(extra)
        if conditions is not None:
            c["conditions"] = task_conditions(conditions, t.kind, t.timed)
        return c

    def cached(t):
        if cache is None or rank != 0:
            return None
        return cache.get(key(t), check=None if check is None else (lambda r: check(t, r)))

    def finished(t, res, seconds, load0):
        if rank == 0:
            cache is not None and cache.put(key(t), res, load_1min=load0, seconds=seconds)
            if isinstance(res, dict):
                res["_seconds"] = round(seconds, 3)  # what the task cost, as the cache records it
            kind = t.kind if t.timed else "untimed"  # untimed: shared the cores (module docstring)
            stats["task_s"][kind] = stats["task_s"].get(kind, 0.0) + seconds
            stats["computed"] += 1

    for t in multi:
        hit = cached(t)
        hit = comm.comm.bcast(hit, root=0)
        if hit is None:
            if t.workers not in subs:
                subs[t.workers] = comm.split(t.workers)
            sub = subs[t.workers]
            if rank == 0:
                progress and progress.start(t.label())
            load0, t0 = _load(), time.perf_counter()
            res = fn(t, sub) if sub is not None else None
            finished(t, res, time.perf_counter() - t0, load0)
            hit = res
        if rank == 0:
            done[id(t)] = hit
            progress and progress.step(t.label())
    if comm is not None:
        comm.comm.bcast(None, root=0)  # release the other ranks
        if rank != 0:
            return None
    pooled = {id(t) for t in single if t.kind == "emulated" and t.timed} if jobs > 1 else set()
    free = (usable_cores() if untimed_jobs is None else untimed_jobs) if comm is None else 1
    shared = {id(t) for t in single if not t.timed and t.workers == 1} if free > 1 else set()
    todo, last = [], []
    for t in single:
        hit = cached(t)
        if hit is not None:
            done[id(t)] = hit
            progress and progress.step(t.label())
        elif id(t) in pooled:
            todo.append(t)
        elif id(t) in shared:
            last.append(t)
        else:
            progress and progress.start(t.label())
            load0, t0 = _load(), time.perf_counter()
            hit = fn(t, None)
            finished(t, hit, time.perf_counter() - t0, load0)
            done[id(t)] = hit
            progress and progress.step(t.label())
    if last:
        stats["untimed_jobs"] = free
    for group, k, what in ((todo, jobs, "emulated tasks"), (last, free, "tasks that record no time")):
        if group:
            progress and progress.start(f"{len(group)} {what}, {k} at a time")
        for t, res, seconds, load0 in _pool(group, fn, k):
            finished(t, res, seconds, load0)
            done[id(t)] = res
            progress and progress.step(t.label())
    return [(t, done[id(t)]) for t in tasks]


def _load() -> float:
    return round(os.getloadavg()[0], 2)


# What the pool's children run, set before they fork (they inherit it: the task function
# closes over the paper's run, its data and profiles, which need not be picklable).
_POOL: dict = {}


def _pool_child(parent: int, started, cpus: list) -> None:
    """A pool child: SIGTERM kills it (the parent's handler is not for it), Ctrl-C is the
    parent's to handle, it dies with its parent and runs on a core of its own (as a
    local-backend worker does), and its BLAS runs one thread: the pool's parallelism is
    its processes."""
    from threadpoolctl import threadpool_limits

    from engine.comm.base import reset_signals_in_child
    from engine.comm.local import _die_with_parent

    reset_signals_in_child()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    with started.get_lock():  # the k-th child started takes the k-th core
        k = started.value
        started.value += 1
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpus[k % len(cpus)]})
    _POOL["limits"] = threadpool_limits(1)


def _pool_task(i: int):
    import dill  # multiprocess's pickler, as before: results are pickled as the local backend's are

    t = _POOL["tasks"][i]
    load0, t0 = _load(), time.perf_counter()
    res = _POOL["fn"](t, None)
    return i, dill.dumps(res), time.perf_counter() - t0, load0


def _pool(tasks: list[Task], fn, jobs: int):
    """Yield (task, result, seconds, load at its start) for ``tasks``, ``jobs`` at a time in
    forked processes, in the order they finish. A task that raised raises here; a pool
    process that ended without a result (killed from outside) raises
    :class:`engine.comm.base.WorkerError`. Either way every pool process is killed
    first; the results yielded before are cached.

    concurrent.futures rather than a ``Pool``: a ``Pool`` replaces a process that was
    killed and waits forever for the task it held.
    """
    if not tasks:
        return
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    import dill

    from engine.comm.base import WorkerError

    _POOL.update(fn=fn, tasks=tasks)
    ctx = mp.get_context("fork")
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    ex = ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=ctx, initializer=_pool_child,
                             initargs=(os.getpid(), ctx.Value("i", 0), cpus))
    procs: dict = {}
    try:
        pending = {ex.submit(_pool_task, i): i for i in range(len(tasks))}
        procs = ex._processes  # forked by submit; read before shutdown forgets them
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                i = pending.pop(f)
                try:
                    _, res, seconds, load0 = f.result()
                except BrokenProcessPool:
                    raise WorkerError(f"a --jobs process ended without its result (killed from "
                                      f"outside?) while {tasks[i].label()} was pending or "
                                      "running") from None
                yield tasks[i], dill.loads(res), seconds, load0
    finally:
        for p in [p for p in dict(procs or {}).values() if p.is_alive()]:
            p.kill()
        # Wait for the executor's manager thread, which reaps the killed processes. Not
        # waiting left it running, so (a) it and this thread both reaped the children, and
        # one could stay listed as alive (CI failed on that), and (b) the next pool forked
        # while it held the executor's locks, and the new children deadlocked on them in a
        # garbage collection. tests/harness/test_runner_jobs.py repeats pools to catch both.
        ex.shutdown(wait=True, cancel_futures=True)
        _POOL.clear()
