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
"""
from __future__ import annotations

import hashlib
import os
import platform
import socket
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


def task_conditions(conditions: dict, kind: str) -> dict:
    """The part of the run's ``conditions`` a task of ``kind`` is keyed on: all of them
    for a measured task, the machine for an emulated one."""
    return dict(conditions) if kind == "measured" else {"machine": conditions["machine"]}


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

    def config(self, extra: dict) -> dict:
        return {"name": self.name, "kind": self.kind, "workers": self.workers, **self.params, **extra}

    def label(self) -> str:
        p = ",".join(f"{k}={v}" for k, v in self.params.items() if k != "seed")
        return f"{self.name}/{self.kind} {p}"


def execute(tasks: list[Task], fn, *, cache: RunCache | None, extra: dict, progress=None,
            comm=None, conditions: dict | None = None) -> list[tuple[Task, dict]] | None:
    """Run ``fn(task, comm)`` for every task not in the cache; return (task, result) pairs.

    ``fn`` gets a communicator of ``task.workers`` ranks under MPI for
    multi-rank measured tasks, else None. Returns None on ranks other than 0.
    ``extra`` goes into every task's key; ``conditions`` (backend, world_size,
    workers, machine) into each task's as :func:`task_conditions` says. A result
    from the cache carries ``_cached_from`` (:class:`reproduce.store.RunCache`).
    """
    rank = 0 if comm is None else comm.rank
    multi = [t for t in tasks if comm is not None and t.kind == "measured" and t.workers > 1]
    single = [t for t in tasks if t not in multi]
    done: dict[int, dict] = {}
    subs: dict[int, object] = {}

    def key(t):
        c = t.config(extra)
        if conditions is not None:
            c["conditions"] = task_conditions(conditions, t.kind)
        return c

    def cached(t):
        return cache.get(key(t)) if cache is not None and rank == 0 else None

    def load():
        return round(os.getloadavg()[0], 2)

    for t in multi:
        hit = cached(t)
        hit = comm.comm.bcast(hit, root=0)
        if hit is None:
            if t.workers not in subs:
                subs[t.workers] = comm.split(t.workers)
            sub = subs[t.workers]
            load0 = load()
            res = fn(t, sub) if sub is not None else None
            if rank == 0:
                cache is not None and cache.put(key(t), res, load_1min=load0)
                hit = res
        if rank == 0:
            done[id(t)] = hit
            progress and progress.step(t.label())
    if comm is not None:
        comm.comm.bcast(None, root=0)  # release the other ranks
        if rank != 0:
            return None
    for t in single:
        hit = cached(t)
        if hit is None:
            load0 = load()
            hit = fn(t, None)
            cache is not None and cache.put(key(t), hit, load_1min=load0)
        done[id(t)] = hit
        progress and progress.step(t.label())
    return [(t, done[id(t)]) for t in tasks]
