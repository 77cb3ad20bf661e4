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

The measurement functions live in :mod:`engine.calibration.probe` (one copy, shared
with ``python -m reproduce calibrate``); this file is their command line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())  # run from the project root
from engine.calibration.probe import local_runner, measure, mpi_runner  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("local", "mpi"), default="local")
    ap.add_argument("--workers", default="2,4,8,16",
                    help="comma-separated P list (local backend; MPI measures the world size)")
    ap.add_argument("--out", default=None, help="JSON path (default $OUT or . / probe_<backend>[_P].json)")
    ap.add_argument("--raw", action="store_true", help="also write the per-step times as <out>.npz")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: coll,work,jitter,alone")
    ap.add_argument("--quick", action="store_true", help="a tenth of the repetitions, calls and steps")
    ap.add_argument("--allreduce", default="auto", choices=("auto", "flat", "rsag", "cma"),
                    help="local backend's allreduce algorithm (engine/comm/local.py)")
    ap.add_argument("--allgather", default="auto", choices=("auto", "copy", "cma"),
                    help="local backend's allgather algorithm (engine/comm/local.py)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.backend == "mpi":
        from mpi4py import MPI
        from engine.comm.mpi import MPIComm
        comm = MPIComm()
        Ps, run_P, rank0, mpi_module = [comm.size], mpi_runner(comm), comm.rank == 0, MPI
    else:
        Ps, rank0, mpi_module = [int(p) for p in args.workers.split(",") if p], True, None

        def run_P(fn, P, *a):
            return local_runner(fn, P, *a, allreduce=args.allreduce, allgather=args.allgather)
    out = args.out or os.path.join(
        os.environ.get("OUT", "."),
        f"probe_{args.backend}" + (f"_{Ps[0]}" if args.backend == "mpi" else "") + ".json")
    raw = {}

    def save(res):
        """Written after every measurement, so a run stopped early keeps what it measured."""
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        os.replace(out + ".tmp", out)
        if args.raw and raw:
            np.savez_compressed(os.path.splitext(out)[0] + "_steps.npz", **raw)

    measure(run_P, Ps, backend=args.backend, quick=args.quick, single=args.backend == "local",
            skip=set(filter(None, args.skip.split(","))), rank0=rank0, mpi_module=mpi_module,
            say=lambda *a: print(*a, flush=True), on_step=save, raw=raw)
    if rank0:
        print("wrote", out, f"in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
