"""Allreduce latency of 1e3, 1e5 and 1e6 float64 per communicator backend.

- inprocess: InProcessComm (size 1), timed by asv itself;
- local: 2 forked workers through shared memory (run_local); asv cannot time
  inside child processes, so each worker times ``reps`` allreduces with
  perf_counter (best of 5 batches) and the track_* reports µs per operation
  (the slower rank);
- mpi: ``mpiexec -n 2 python bench_comm.py --mpi-allreduce`` over mpi4py, the
  same measurement; skipped when mpi4py or mpiexec is missing.

- collectives (allreduce, allgather, barrier, broadcast of 1e3, 8,016 and 1e5
  float64; the probe's :func:`engine.calibration.probe.coll`) at P local workers
  with the algorithms of before issue 14 (``flat`` allreduce, ``copy`` allgather,
  unbound) and the current ``auto`` ones, and at P MPI ranks: ``track_*`` µs and
  local/MPI ratios at P = 2. ``targets.py`` target 6 takes P = 2..16 where there
  are the cores.

This file is also the MPI helper script: see the ``__main__`` block. On a host
whose ``mpiexec`` needs options (Open MPI as root), set ``BENCH_MPIEXEC``, e.g.
``BENCH_MPIEXEC="mpirun --allow-run-as-root"``.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from time import perf_counter

import numpy as np

SIZES = [1_000, 100_000, 1_000_000]


def reps_for(n: int) -> int:
    """About 0.05–0.1 s of allreduces per batch on this machine."""
    return max(20, 20_000_000 // n)


def allreduce_seconds(comm, sizes=SIZES, *, batches: int = 5) -> dict:
    """SPMD body: {n: best-of-batches mean seconds per allreduce of n float64}."""
    out = {}
    for n in sizes:
        x = np.full(n, float(comm.rank + 1))  # (n,)
        o = np.empty(n)  # (n,)
        reps = reps_for(n)
        for _ in range(max(10, reps // 10)):
            comm.allreduce(x, o)
        if not np.all(o == comm.size * (comm.size + 1) / 2):
            raise AssertionError("allreduce returned a wrong sum")
        best = float("inf")
        for _ in range(batches):
            comm.barrier()
            t = perf_counter()
            for _ in range(reps):
                comm.allreduce(x, o)
            best = min(best, (perf_counter() - t) / reps)
        out[n] = best
    comm.barrier()
    return out


def local_allreduce_us(sizes=SIZES, *, workers: int = 2) -> dict:
    """{n: µs per allreduce} between ``workers`` local processes (slowest rank)."""
    from engine.comm.local import run_local

    res = run_local(allreduce_seconds, workers, list(sizes), max_elems=max(sizes))
    return {n: max(r[n] for r in res) * 1e6 for n in sizes}


COLL_SIZES = [1_000, 8_016, 100_000]  # the probe's (xeon16's) sizes
BEFORE = {"allreduce": "flat", "allgather": "copy", "bind": False}  # the local backend before issue 14


def local_coll_us(P: int, *, sizes=COLL_SIZES, **algorithms) -> dict:
    """{"op:n": µs} for every collective of the probe at P local workers (slowest rank,
    best of 5 batches); ``algorithms``: ``allreduce=``, ``allgather=``, ``bind=`` of run_local."""
    from engine.calibration.probe import REPS, coll
    from engine.comm.local import run_local

    res = run_local(coll, P, list(sizes), REPS, max_elems=max(sizes), **algorithms)
    return {k: max(r[k] for r in res) * 1e6 for k in res[0]}


def mpi_coll_us(P: int, *, sizes=COLL_SIZES, timeout: float = 300) -> dict:
    """The same at P MPI ranks; raises NotImplementedError when MPI is unavailable."""
    return _mpi_json(P, "--mpi-coll", sizes, timeout)


def _mpi_json(P: int, flag: str, sizes, timeout: float) -> dict:
    try:
        import mpi4py  # noqa: F401
    except ImportError as e:
        raise NotImplementedError(f"mpi4py is not installed: {e}") from None
    launcher = shlex.split(os.environ.get("BENCH_MPIEXEC", "")) or [find_mpiexec()]
    if launcher[0] is None:
        raise NotImplementedError("no mpiexec on PATH or beside the interpreter")
    cmd = [*launcher, "-n", str(P), sys.executable, os.path.abspath(__file__), flag, *map(str, sizes)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        raise NotImplementedError(f"mpiexec failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
    return json.loads(lines[-1])


def find_mpiexec() -> str | None:
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")  # the mpich wheel's
    if os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec")


def mpi_allreduce_us(sizes=SIZES, *, workers: int = 2, timeout: float = 300) -> dict:
    """{n: µs per allreduce} over MPI; raises NotImplementedError when MPI is unavailable."""
    return {int(k): v for k, v in _mpi_json(workers, "--mpi-allreduce", sizes, timeout).items()}


class AllreduceInProcess:
    params = [SIZES]
    param_names = ["n"]

    def setup(self, n):
        from engine.comm.base import InProcessComm

        self.comm = InProcessComm()
        self.x = np.ones(n)
        self.o = np.empty(n)

    def time_allreduce(self, n):
        self.comm.allreduce(self.x, self.o)

    def track_allreduce_us(self, n):
        return allreduce_seconds(self.comm, [n])[n] * 1e6

    track_allreduce_us.unit = "µs"


class AllreduceLocal:
    """2 local worker processes through shared memory."""

    params = [SIZES]
    param_names = ["n"]
    timeout = 300

    def setup_cache(self):
        return local_allreduce_us(SIZES)

    def track_allreduce_us(self, cache, n):
        return cache[n]

    track_allreduce_us.unit = "µs"


class AllreduceMPI:
    """2 MPI ranks (mpi4py + mpiexec), skipped where MPI is unavailable."""

    params = [SIZES]
    param_names = ["n"]
    timeout = 300

    def setup_cache(self):
        try:
            return mpi_allreduce_us(SIZES)
        except NotImplementedError as e:
            return {"skip": str(e)}

    def setup(self, cache, n):
        if "skip" in cache:
            raise NotImplementedError(cache["skip"])

    def track_allreduce_us(self, cache, n):
        return cache[n]

    track_allreduce_us.unit = "µs"


class Collectives:
    """Every collective at P = 2: local before issue 14, local now (auto), MPI; µs, and
    the ratio local now / MPI (below 1: the local backend is faster)."""

    params = [[f"{op}:{n}" for op in ("allreduce", "allgather", "barrier", "broadcast")
               for n in COLL_SIZES if op != "barrier" or n == COLL_SIZES[0]]]
    param_names = ["collective"]
    timeout = 600

    def setup_cache(self):
        out = {"before": local_coll_us(2, **BEFORE), "local": local_coll_us(2)}
        try:
            out["mpi"] = mpi_coll_us(2)
        except NotImplementedError as e:
            out["mpi"] = {"skip": str(e)}
        return out

    def track_local_us(self, cache, key):
        return cache["local"][key]

    def track_before_over_local(self, cache, key):
        return cache["before"][key] / cache["local"][key]

    def track_local_over_mpi(self, cache, key):
        if "skip" in cache["mpi"]:
            raise NotImplementedError(cache["mpi"]["skip"])
        return cache["local"][key] / cache["mpi"][key]

    track_local_us.unit = "µs"
    track_before_over_local.unit = "ratio"
    track_local_over_mpi.unit = "ratio"


def _mpi_main(flag: str, argv) -> None:
    from engine.calibration.probe import REPS, coll
    from engine.comm.mpi import MPIComm

    comm = MPIComm()
    sizes = [int(a) for a in argv] or (SIZES if flag == "--mpi-allreduce" else COLL_SIZES)
    t = allreduce_seconds(comm, sizes) if flag == "--mpi-allreduce" else coll(comm, sizes, REPS)
    worst = comm.gather_objects(t)
    if comm.rank == 0:
        print(json.dumps({n: max(w[n] for w in worst) * 1e6 for n in t}), flush=True)


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] in ("--mpi-allreduce", "--mpi-coll"):
    _mpi_main(sys.argv[1], sys.argv[2:])
