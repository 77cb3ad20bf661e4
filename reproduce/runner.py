"""Run a paper's list of tasks once each: cached, with progress, on any backend.

A task is one training run of one configuration. Finished tasks are cached by
their configuration plus a hash of the source code they ran, so an interrupted
reproduction resumes where it stopped and a code change invalidates the cache.

Under MPI every rank calls :func:`execute` with the same task list. Tasks that
need several ranks run first, each on a sub-communicator of the first
``workers`` ranks; then the other ranks are released and rank 0 runs the
single-process tasks (serial and emulated) alone, so idle ranks polling MPI do
not steal its cores.
"""
from __future__ import annotations

import hashlib
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
            comm=None) -> list[tuple[Task, dict]] | None:
    """Run ``fn(task, comm)`` for every task not in the cache; return (task, result) pairs.

    ``fn`` gets a communicator of ``task.workers`` ranks under MPI for
    multi-rank measured tasks, else None. Returns None on ranks other than 0.
    """
    rank = 0 if comm is None else comm.rank
    multi = [t for t in tasks if comm is not None and t.kind == "measured" and t.workers > 1]
    single = [t for t in tasks if t not in multi]
    done: dict[int, dict] = {}
    subs: dict[int, object] = {}

    def cached(t):
        return cache.get(t.config(extra)) if cache is not None and rank == 0 else None

    for t in multi:
        hit = cached(t)
        hit = comm.comm.bcast(hit, root=0)
        if hit is None:
            if t.workers not in subs:
                subs[t.workers] = comm.split(t.workers)
            sub = subs[t.workers]
            res = fn(t, sub) if sub is not None else None
            if rank == 0:
                cache is not None and cache.put(t.config(extra), res)
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
            hit = fn(t, None)
            cache is not None and cache.put(t.config(extra), hit)
        done[id(t)] = hit
        progress and progress.step(t.label())
    return [(t, done[id(t)]) for t in tasks]
