"""The machine probe's measurements (issue 12), run by :func:`measure`.

Origin: ``../shared/machines/xeon16/measure_collectives_and_contention.py``, the
script that measured the 16-core "xeon16" host. Its kernels ("gemv": 2048×2048
float64 matrix–vector, memory-bound; "gemm": 256×256 product, compute-bound;
"small": a parity-sized layer, cache-resident), sizes, repetition counts, method
(slowest rank, best of 5 batches; a fixed kernel timed while P workers run it at
once, one BLAS thread each) and JSON keys (``nproc``, ``coll[P]["op:n"]`` in µs,
``work[kind][P] = [median, max]`` in s) are kept, so the numbers compare with
xeon16's. Added there by ``benchmarks/machines/probe.py`` (now its CLI):
``broadcast:n`` in ``coll[P]``; ``jitter[kind][P]`` (:func:`jitter_summary` of
per-step times, every worker stepping together with a barrier between steps);
``alone[kind]`` (:func:`alone`); ``method`` and ``meta`` (:func:`meta`).
"""
from __future__ import annotations

import datetime
import math
import os
import platform
import socket
import subprocess
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

from engine.comm.base import InProcessComm

SIZES = [1_000, 8_016, 100_000]  # float64 elements per collective, as xeon16
REPS = 2000  # as xeon16
WORK = (("gemv", 200), ("gemm", 200), ("small", 20000))  # (kind, calls), as xeon16
JITTER = (("small", 10, 2000), ("gemm", 1, 500))  # (kind, kernel calls per step, steps)
MAX_ELEMS = 1 << 17  # local backend slot size, as xeon16
FLOPS = {"gemv": 2 * 2048 * 2048, "gemm": 2 * 256 ** 3, "small": 2 * 100 * 9 * 32}


def _kernel(kind, rank):
    """One call of the reference kernel ``kind``, data seeded by ``rank`` (xeon16's work())."""
    rng = np.random.default_rng(rank)
    if kind == "gemv":  # memory-bound: 2048x2048 f64 matrix-vector (32 MiB per worker)
        A = rng.standard_normal((2048, 2048)); v = rng.standard_normal(2048)
        return lambda: A @ v
    if kind == "gemm":  # compute-bound
        A = rng.standard_normal((256, 256)); B = rng.standard_normal((256, 256))
        return lambda: A @ B
    W = rng.standard_normal((100, 9)); X = rng.standard_normal((9, 32))  # parity-sized layer
    return lambda: np.tanh(W @ X).sum()


def kernels_alone(*, quick: bool = False, n_rep: int | None = None) -> dict:
    """{kind: seconds per call} of the reference kernels on one worker, 1 BLAS thread:
    the best of ``n_rep`` (5; quick 3) timings of xeon16's call counts (quick: a tenth)."""
    n_rep = n_rep or (3 if quick else 5)
    out = {}
    with threadpool_limits(1):
        for kind, n in WORK:
            n = max(1, n // 10) if quick else n
            f = _kernel(kind, 0)
            for _ in range(3):
                f()
            best = math.inf
            for _ in range(n_rep):
                t = time.perf_counter()
                for _ in range(n):
                    f()
                best = min(best, time.perf_counter() - t)
            out[kind] = best / n
    return out


def alone(*, quick: bool = False) -> dict:
    """The probe's ``alone``: :func:`kernels_alone` as seconds per call, GFLOP/s, and for
    the memory-bound gemv GB/s (its 32 MiB matrix read once a call)."""
    out = {}
    for kind, t in kernels_alone(quick=quick).items():
        out[kind] = {"s_per_call": t, "gflops": FLOPS[kind] / t / 1e9}
        if kind == "gemv":
            out[kind]["gbytes_per_s"] = 2048 * 2048 * 8 / t / 1e9
    return out


# ---- the measurement functions, run on every worker (xeon16's coll and work) -------------
def coll(comm, sizes, reps):
    """{"op:n": seconds} per collective of n float64: the best of 5 timed batches of
    max(20, reps // max(1, n // 1000)) calls after 10 warm-up calls (xeon16's method)."""
    out = {}
    for n in sizes:
        x = np.full(n, 1.0); o = np.empty(n); g = np.empty((comm.size, n))
        for name, f in (("allreduce", lambda: comm.allreduce(x, o)), ("allgather", lambda: comm.allgather(x, g)),
                        ("barrier", lambda: comm.barrier()), ("broadcast", lambda: comm.broadcast(o, 0))):
            r = max(20, reps // max(1, n // 1000))
            for _ in range(10): f()
            best = 1e9
            for _ in range(5):
                comm.barrier(); t = time.perf_counter()
                for _ in range(r): f()
                best = min(best, (time.perf_counter() - t) / r)
            out[f"{name}:{n}"] = best
    return out


def work(comm, kind, n_iter):
    """Seconds of ``n_iter`` calls of kernel ``kind`` on this worker, 1 BLAS thread, all
    workers starting together (xeon16's work())."""
    with threadpool_limits(1):
        f = _kernel(kind, comm.rank)
        for _ in range(3): f()
        comm.barrier(); t = time.perf_counter()
        for _ in range(n_iter): f()
        return time.perf_counter() - t


def jitter(comm, kind, calls, steps):
    """This worker's time of each of ``steps`` steps of ``calls`` kernel calls; all
    workers step together, with a barrier (untimed in the step) between steps."""
    with threadpool_limits(1):
        f = _kernel(kind, comm.rank)
        for _ in range(3): f()
        ts = np.empty(steps)
        comm.barrier()
        for s in range(steps):
            t = time.perf_counter()
            for _ in range(calls): f()
            ts[s] = time.perf_counter() - t
            comm.barrier()
        return ts


def jitter_summary(ts):
    """ts: (P, steps) seconds. Pooled quantiles, and the mean over steps of the slowest worker."""
    ts = np.asarray(ts, dtype=float)
    pooled = ts.ravel()
    mean = float(pooled.mean())
    mom = float(ts.max(axis=0).mean())
    return {"p50": float(np.percentile(pooled, 50)), "p90": float(np.percentile(pooled, 90)),
            "p99": float(np.percentile(pooled, 99)), "max": float(pooled.max()), "mean": mean,
            "mean_of_max": mom, "mean_of_max_over_mean": mom / mean,
            "worker_medians": [float(np.median(r)) for r in ts]}


# ---- the machine, in the probe's meta ---------------------------------------------------
def _lscpu():
    try:
        txt = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except Exception:  # noqa: BLE001
        return {}
    d = dict(line.split(":", 1) for line in txt.splitlines() if ":" in line)
    d = {k.strip(): v.strip() for k, v in d.items()}
    keep = ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket", "Socket(s)",
            "NUMA node(s)", "L2 cache", "L3 cache", "Vendor ID", "Hypervisor vendor")
    return {k: d[k] for k in keep if k in d}


def _mem_gib():
    try:
        with open("/proc/meminfo") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
        return round(kb / 2 ** 20, 1)
    except (OSError, StopIteration):
        return None


def _versions(mpi_module=None):
    from importlib import metadata
    v = {"python": platform.python_version(), "numpy": np.__version__}
    for pkg in ("threadpoolctl", "mpi4py", "multiprocess"):
        try:
            v[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            v[pkg] = None
    try:
        from threadpoolctl import threadpool_info
        v["blas"] = [{k: i.get(k) for k in ("internal_api", "version", "num_threads", "threading_layer",
                                             "architecture")} for i in threadpool_info()]
    except Exception:  # noqa: BLE001
        v["blas"] = None
    if mpi_module is not None:
        v["mpi_library"] = mpi_module.Get_library_version().strip()
        v["mpi_standard"] = "%d.%d" % mpi_module.Get_version()
    return v


def meta(backend, mpi_module=None):
    """Host, CPU, cores, memory, date (UTC), versions, argv and BLAS thread variables."""
    return {"hostname": socket.gethostname(), "platform": platform.platform(),
            "lscpu": _lscpu(), "cpu_count": os.cpu_count(),
            "sched_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "mem_gib": _mem_gib(), "backend": backend,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "versions": _versions(mpi_module), "argv": sys.argv,
            "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                    "MKL_NUM_THREADS")}}


# ---- the drivers ---------------------------------------------------------------------------
def local_runner(fn, P, *a, **algorithms):
    """``fn(comm, *a)`` on P local processes (P = 1: in this process); results by rank.
    ``algorithms``: ``allreduce=``, ``allgather=`` of :func:`engine.comm.local.run_local`."""
    if P == 1:
        return [fn(InProcessComm(), *a)]
    from engine.comm.local import run_local

    return run_local(fn, P, *a, max_elems=MAX_ELEMS, **algorithms)


def mpi_runner(comm):
    """``fn(comm, *a)`` on every rank of ``comm`` (P = its size), results gathered to rank 0
    (None elsewhere); P = 1: on rank 0 alone, in-process, while the others go on."""
    def run_P(fn, P, *a):
        if P == 1:
            return [fn(InProcessComm(), *a)] if comm.rank == 0 else None
        return comm.gather_objects(fn(comm, *a), root=0)
    return run_P


def measure(run_P, Ps, *, backend: str = "local", quick: bool = False, single: bool = True,
            skip=(), rank0: bool = True, mpi_module=None, say=None, on_step=None,
            raw: dict | None = None) -> dict | None:
    """The probe dict (module docstring) for worker counts ``Ps``, measured by
    ``run_P(fn, P, *args) -> [result per rank]`` (:func:`local_runner`, :func:`mpi_runner`).

    ``single``: also P = 1 for work and jitter, and ``alone`` (the probe's MPI mode leaves
    them out). ``quick``: a tenth of the repetitions, calls and steps. ``skip``: parts
    left out (coll, work, jitter, alone). ``on_step(res)`` after each measurement (res
    with ``meta`` up to date), ``say(*parts)`` prints progress, ``raw`` receives the
    per-step times. Returns the dict on rank 0 (``rank0``), None on other ranks.
    """
    say = say if (say and rank0) else (lambda *a: None)
    div = 10 if quick else 1
    reps = REPS // div
    works = [(k, max(1, n // div)) for k, n in WORK]
    jitters = [(k, c, max(10, s // div)) for k, c, s in JITTER]
    la0, t0 = os.getloadavg(), time.perf_counter()
    m = meta(backend, mpi_module) if rank0 else None
    res = {"nproc": os.cpu_count(), "coll": {}, "work": {}, "jitter": {}, "alone": None,
           "method": {"origin": "shared/machines/xeon16/measure_collectives_and_contention.py",
                      "coll": "µs per collective of n float64, slowest rank, best of 5 batches "
                              "(batch of max(20, reps // max(1, n // 1000)) calls, 10 warm-up calls)",
                      "sizes": SIZES, "reps": reps, "work": dict(works),
                      "jitter": {k: {"calls_per_step": c, "steps": s} for k, c, s in jitters},
                      "blas_threads": 1, "quick": quick}}
    with_1 = [1] if single else []

    def step(complete=False):
        if rank0:
            m.update(loadavg_before=la0, loadavg_after=os.getloadavg(),
                     elapsed_s=time.perf_counter() - t0, complete=complete)
            res["meta"] = m
            if on_step:
                on_step(res)

    if "coll" not in skip:
        for P in Ps:
            r = run_P(coll, P, SIZES, reps)
            if rank0:
                res["coll"][P] = {k: max(x[k] for x in r) * 1e6 for k in r[0]}  # µs, slowest rank
                say("coll", P, {k: round(v, 2) for k, v in res["coll"][P].items()})
            step()
    if "work" not in skip:
        for kind, n in works:
            res["work"][kind] = {}
            for P in with_1 + list(Ps):
                ts = run_P(work, P, kind, n)
                if rank0:
                    res["work"][kind][P] = [float(np.median(ts)), float(max(ts))]
                    say("work", kind, P, [round(t, 4) for t in res["work"][kind][P]])
                step()
    if "jitter" not in skip:
        for kind, calls, steps in jitters:
            res["jitter"][kind] = {}
            for P in with_1 + list(Ps):
                ts = run_P(jitter, P, kind, calls, steps)
                if rank0:
                    res["jitter"][kind][P] = s = jitter_summary(ts)
                    if raw is not None:
                        raw[f"{kind}_{P}"] = np.asarray(ts)
                    say("jitter", kind, P, {k: (round(v * 1e6, 1) if "over" not in k else round(v, 3))
                                            for k, v in s.items() if k != "worker_medians"}, "(µs)")
                step()
    if "alone" not in skip and single and rank0:
        res["alone"] = alone(quick=quick)
        say("alone", {k: {kk: round(vv, 6) for kk, vv in v.items()} for k, v in res["alone"].items()})
    step(complete=True)
    return res if rank0 else None
