"""The driver: the one place that knows the backends (docs/engine.md).

A strategy is written once, as the code one worker runs:
``worker(comm, **kw) -> dict``. :func:`run` runs it unchanged on

- ``inprocess``: one worker, this process (the serial reference path);
- ``local``: forked processes over shared memory (:mod:`engine.comm.local`);
- ``mpi``: the ranks of an mpi4py communicator (:mod:`engine.comm.mpi`);
- ``emulated``: P workers in this process, one at a time, each worker's compute
  timed between its collectives and every collective charged by a machine
  profile (:mod:`engine.comm.emulated`).

The worker marks its rounds on ``comm.clock`` (:class:`engine.timing.WorkerClock`);
the driver adds each worker's log and wall time to its result, and
:func:`record` assembles the :class:`engine.timing.RunRecord` of any strategy.
Per-worker and shared random streams come from :func:`stream`.

Faults end a run on every backend, never hang it: a worker that raises, dies
or waits in one collective longer than :func:`engine.comm.base.stall_timeout`
(a stopped or deadlocked peer) fails it with :class:`engine.comm.base.WorkerError`
(MPI: one line and MPI_Abort); with
:func:`engine.comm.base.install_termination_handler`, SIGTERM ends it with exit
143 and no worker left behind.
"""
from __future__ import annotations

import numpy as np

from engine.comm.base import InProcessComm
from engine.comm.replay import trace_of
from engine.timing import RunRecord

BACKENDS = ("inprocess", "local", "mpi", "emulated")


def stream(seed: int, *key: int) -> np.random.Generator:
    """The random stream ``key`` of run ``seed``: ``SeedSequence(seed, spawn_key=key)``.

    Streams shared by all workers take a key without the rank (every worker
    draws the same numbers: the initial weights, the data order); a worker's own
    stream ends with its rank. Keys in use: (0,) initial weights and (1, rank)
    sampling of pattern-parallel training; (0,), (1,), (2, rank) of bucketed
    training; (2,) data order and (3,) initial weights of bunch training.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _instrumented(comm, worker, kw: dict) -> dict:
    res = dict(worker(comm, **kw))
    res["log"] = comm.clock.log.array.copy()  # (rounds, [compute s, comm s, bytes])
    res["wall"] = comm.clock.wall()
    trace = comm.trace()
    if trace is not None:  # emulated: what a profile prices (engine/comm/replay.py)
        res["comm_trace"] = trace
    return res


def run(worker, *, workers: int, backend: str, comm=None, profile=None, kernel: str = "small",
        max_elems: int = 1 << 16, timeout: float | None = None, **kw) -> list[dict] | None:
    """Run ``worker(comm, **kw)`` on ``workers`` workers of ``backend``.

    Returns the workers' result dicts in rank order, each with ``log`` (rounds, 3)
    and ``wall`` added (and, emulated, ``comm_trace``: its part of the run's trace); None on MPI
    ranks other than 0. ``comm`` is the MPI
    communicator (exactly ``workers`` ranks), ``profile`` the machine profile
    of an emulated run and ``kernel`` the profile's reference kernel that stands for
    the workload (:func:`engine.comm.emulated.run_emulated`), ``max_elems`` the largest message of a local run in
    float64 elements, ``timeout`` a deadline for the whole run (the stall timeout,
    set once per process, bounds each wait inside it).
    """
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    args = (worker, kw)
    if backend == "inprocess":
        if workers != 1:
            raise ValueError("the inprocess backend runs exactly 1 worker")
        return [_instrumented(InProcessComm(), *args)]
    if backend == "local":
        from engine.comm.local import run_local

        return run_local(_instrumented, int(workers), *args, max_elems=max_elems, timeout=timeout)
    if backend == "mpi":
        if comm is None or comm.size != workers:
            raise ValueError(f"mpi backend needs a communicator of {workers} ranks")
        return comm.gather_objects(_instrumented(comm, *args))
    if backend == "emulated":
        from engine.comm.emulated import run_emulated

        return run_emulated(_instrumented, int(workers), *args, profile=profile, timeout=timeout,
                            kernel=kernel)
    raise ValueError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")


def kind_of(backend: str) -> str:
    """``emulated`` for the emulated backend, else ``measured``."""
    return "emulated" if backend == "emulated" else "measured"


def record(results: list[dict], *, strategy: str, backend: str, profile=None, converged: bool,
           epochs: float, final_mse: float, loss_curve, params=None, extra: dict | None = None
           ) -> RunRecord:
    """The RunRecord of any strategy from its workers' results (with ``log`` and ``wall``)."""
    lens = {len(r["log"]) for r in results}
    if len(lens) != 1:
        raise RuntimeError(f"workers logged different numbers of rounds: {sorted(lens)}")
    logs = np.stack([r["log"] for r in results], axis=1)  # (rounds, P, 3)
    kind = kind_of(backend)
    traced = all("comm_trace" in r for r in results)
    return RunRecord(
        strategy=strategy, workers=len(results), kind=kind, converged=bool(converged),
        rounds=logs.shape[0], epochs=float(epochs), final_mse=float(final_mse),
        loss_curve=np.asarray(loss_curve), compute_s=logs[:, :, 0], comm_s=logs[:, :, 1],
        bytes_sent=logs[:, :, 2],
        wall_s=max(r["wall"] for r in results) if kind == "measured" else float("nan"),
        profile=getattr(profile, "name", "") if kind == "emulated" else "", params=params,
        extra=extra or {}, trace=trace_of([r["comm_trace"] for r in results]) if traced else None)
