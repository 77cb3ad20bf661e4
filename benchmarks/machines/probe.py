"""Machine probe: collective latency vs P, compute contention, per-step jitter and
the reference kernels' speed alone, on the local shared-memory backend or on MPI.

Origin: ``../shared/machines/xeon16/measure_collectives_and_contention.py`` (the
script that produced ``collectives_and_contention.json`` on the 16-core "xeon16"
host). Its kernels, sizes, repetition counts, method (slowest rank, best of 5
batches; fixed kernel timed while P workers run it at once, one BLAS thread each)
and JSON keys (``nproc``, ``coll[P]["op:n"]`` in µs, ``work[kind][P] = [median,
max]`` in s) are kept identical here, so the numbers compare with xeon16's. Added:

- ``broadcast:n`` beside allreduce / allgather / barrier in ``coll[P]`` (root 0);
- ``--backend mpi``: the same measurement functions on mpi4py's COMM_WORLD wrapped
  by the project's :class:`engine.comm.mpi.MPIComm`; one invocation per P, e.g.
  ``mpirun --allow-run-as-root -n 8 python benchmarks/machines/probe.py --backend mpi``;
  rank 0 writes the JSON (the world size is the one P measured);
- ``jitter[kind][P]``: per-step times of the ``small`` and ``gemm`` kernels, every
  worker stepping together with a barrier between steps (the barrier is not in
  the step time). Pooled over workers and steps: p50, p90, p99, max; and
  ``mean_of_max``, the mean over steps of the slowest worker's step, i.e. the
  expected slowest-of-P per synchronisation (``mean_of_max / mean`` is what a
  synchronisation per step costs over the average worker);
- ``alone[kind]``: the reference kernels on one worker (P = 1, in-process), as
  seconds per call and GFLOP/s (GB/s for the memory-bound gemv), so compute
  measured on one machine can be scaled to another (local backend only);
- ``meta``: host, CPU model, cores, memory, date, Python / numpy / BLAS / mpi4py /
  MPI library versions, load average before and after.

Run it from the project root (it imports ``engine``)::

    python benchmarks/machines/probe.py --backend local --workers 2,4,8,16 --out probe_local.json
    mpirun --allow-run-as-root -n 16 python benchmarks/machines/probe.py --backend mpi --out probe_mpi_16.json

Single runs: one host, one moment. Read the load averages in ``meta``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.getcwd())  # run from the project root
from engine.comm.base import InProcessComm  # noqa: E402

SIZES = [1_000, 8_016, 100_000]  # float64 elements, as xeon16
REPS = 2000  # as xeon16
WORK = (("gemv", 200), ("gemm", 200), ("small", 20000))  # (kind, n_iter), as xeon16
JITTER = (("small", 10, 2000), ("gemm", 1, 500))  # (kind, kernel calls per step, steps)
MAX_ELEMS = 1 << 17  # local slot size, as xeon16


# ---- the measurement functions (coll and work as in xeon16's script) ----------------
def coll(comm, sizes, reps):
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
    with threadpool_limits(1):
        rng = np.random.default_rng(comm.rank)
        if kind == "gemv":  # memory-bound: 2048x2048 f64 matrix-vector (32 MiB per worker)
            A = rng.standard_normal((2048, 2048)); v = rng.standard_normal(2048)
            f = lambda: A @ v
        elif kind == "gemm":  # compute-bound
            A = rng.standard_normal((256, 256)); B = rng.standard_normal((256, 256))
            f = lambda: A @ B
        else:  # parity-sized MLP batch (small, cache resident)
            W = rng.standard_normal((100, 9)); X = rng.standard_normal((9, 32))
            f = lambda: np.tanh(W @ X).sum()
        for _ in range(3): f()
        comm.barrier(); t = time.perf_counter()
        for _ in range(n_iter): f()
        return time.perf_counter() - t


def _kernel(kind, rank):
    """The same three kernels as :func:`work`, for the jitter steps."""
    rng = np.random.default_rng(rank)
    if kind == "gemv":
        A = rng.standard_normal((2048, 2048)); v = rng.standard_normal(2048)
        return lambda: A @ v
    if kind == "gemm":
        A = rng.standard_normal((256, 256)); B = rng.standard_normal((256, 256))
        return lambda: A @ B
    W = rng.standard_normal((100, 9)); X = rng.standard_normal((9, 32))
    return lambda: np.tanh(W @ X).sum()


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


# ---- summaries ---------------------------------------------------------------------------
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


def alone(n_rep=5):
    """Reference kernels on one worker: seconds per call (best of n_rep timings of
    xeon16's work() iteration counts), GFLOP/s, and GB/s for the memory-bound gemv."""
    flops = {"gemv": 2 * 2048 * 2048, "gemm": 2 * 256 ** 3, "small": 2 * 100 * 9 * 32}
    out = {}
    for kind, n in WORK:
        t = min(work(InProcessComm(), kind, n) for _ in range(n_rep)) / n
        out[kind] = {"s_per_call": t, "gflops": flops[kind] / t / 1e9}
        if kind == "gemv":
            out[kind]["gbytes_per_s"] = 2048 * 2048 * 8 / t / 1e9  # the matrix read once a call
    return out


# ---- meta ----------------------------------------------------------------------------------
def _lscpu():
    try:
        txt = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except Exception:  # noqa: BLE001
        return {}
    d = {}
    for line in txt.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            d[k.strip()] = v.strip()
    keep = ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket", "Socket(s)",
            "NUMA node(s)", "L2 cache", "L3 cache", "Vendor ID", "Hypervisor vendor")
    return {k: d[k] for k in keep if k in d}


def _mem_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2 ** 20, 1)
    except OSError:
        pass
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
    return {"hostname": socket.gethostname(), "platform": platform.platform(),
            "lscpu": _lscpu(), "cpu_count": os.cpu_count(),
            "sched_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "mem_gib": _mem_gib(), "backend": backend,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "versions": _versions(mpi_module), "argv": sys.argv,
            "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                    "MKL_NUM_THREADS")}}


# ---- the two drivers ---------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("local", "mpi"), default="local")
    ap.add_argument("--workers", default="2,4,8,16",
                    help="comma-separated P list (local backend; MPI measures the world size)")
    ap.add_argument("--out", default=None, help="JSON path (default $OUT or . / probe_<backend>[_P].json)")
    ap.add_argument("--raw", action="store_true", help="also write the per-step times as <out>.npz")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: coll,work,jitter,alone")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    la0 = os.getloadavg()
    t0 = time.perf_counter()

    if args.backend == "mpi":
        from mpi4py import MPI
        from engine.comm.mpi import MPIComm
        comm = MPIComm()
        Ps = [comm.size]
        rank0 = comm.rank == 0

        def run_P(fn, P, *a):
            r = fn(comm, *a)
            return comm.gather_objects(r, root=0)  # list on rank 0, None elsewhere
        m = meta("mpi", MPI) if rank0 else None
    else:
        from engine.comm.local import run_local
        Ps = [int(p) for p in args.workers.split(",") if p]
        rank0 = True

        def run_P(fn, P, *a):
            if P == 1:
                return [fn(InProcessComm(), *a)]
            return run_local(fn, P, *a, max_elems=MAX_ELEMS)
        m = meta("local")

    res = {"nproc": os.cpu_count(), "coll": {}, "work": {}, "jitter": {}, "alone": None,
           "method": {"origin": "shared/machines/xeon16/measure_collectives_and_contention.py",
                      "coll": "µs per collective of n float64, slowest rank, best of 5 batches "
                              "(batch of max(20, reps // max(1, n // 1000)) calls, 10 warm-up calls)",
                      "sizes": SIZES, "reps": REPS, "work": dict(WORK),
                      "jitter": {k: {"calls_per_step": c, "steps": s} for k, c, s in JITTER},
                      "blas_threads": 1}}
    raw = {}
    say = (lambda *a: print(*a, flush=True)) if rank0 else (lambda *a: None)
    out = args.out or os.path.join(
        os.environ.get("OUT", "."),
        f"probe_{args.backend}" + (f"_{Ps[0]}" if args.backend == "mpi" else "") + ".json")

    def save(complete=False):
        """Written after every measured P, so a run stopped early keeps what it measured."""
        if not rank0:
            return
        m["loadavg_before"] = la0
        m["loadavg_after"] = os.getloadavg()
        m["elapsed_s"] = time.perf_counter() - t0
        m["complete"] = complete
        res["meta"] = m
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        os.replace(out + ".tmp", out)
        if args.raw and raw:
            np.savez_compressed(os.path.splitext(out)[0] + "_steps.npz", **raw)

    if "coll" not in skip:
        for P in Ps:
            r = run_P(coll, P, SIZES, REPS)
            if rank0:
                res["coll"][P] = {k: max(x[k] for x in r) * 1e6 for k in r[0]}  # µs, slowest rank
                say("coll", P, {k: round(v, 2) for k, v in res["coll"][P].items()})
            save()
    if "work" not in skip:
        for kind, n in WORK:
            res["work"][kind] = {}
            for P in ([1] if args.backend == "local" else []) + Ps:
                ts = run_P(work, P, kind, n)
                if rank0:
                    res["work"][kind][P] = [float(np.median(ts)), float(max(ts))]
                    say("work", kind, P, [round(t, 4) for t in res["work"][kind][P]])
                save()
    if "jitter" not in skip:
        for kind, calls, steps in JITTER:
            res["jitter"][kind] = {}
            for P in ([1] if args.backend == "local" else []) + Ps:
                ts = run_P(jitter, P, kind, calls, steps)
                if rank0:
                    res["jitter"][kind][P] = s = jitter_summary(ts)
                    raw[f"{kind}_{P}"] = np.asarray(ts)
                    say("jitter", kind, P, {k: (round(v * 1e6, 1) if "over" not in k else round(v, 3))
                                            for k, v in s.items() if k != "worker_medians"}, "(µs)")
                save()
    if "alone" not in skip and args.backend == "local":
        res["alone"] = alone()
        say("alone", {k: {kk: round(vv, 6) for kk, vv in v.items()} for k, v in res["alone"].items()})

    save(complete=True)
    say("wrote", out, f"in {time.perf_counter() - t0:.1f} s")
    return 0

if __name__ == "__main__":
    sys.exit(main())
