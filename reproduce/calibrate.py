"""``python -m reproduce calibrate``: measure this machine and write its profile (issue 12).

For P = 2, 4, 8, … below N, and N (:func:`engine.calibration.worker_counts`; N =
``--workers``, default the cores here) the probe (:mod:`engine.calibration.probe`, the
xeon16 script's method) measures barrier, allreduce, allgather and broadcast at
1,000 / 8,016 / 100,000 float64, the reference kernels' slowdown with P workers at once,
per-step jitter, and the kernels alone. Under ``--backend mpi`` the one P is the MPI
world size: run it once per world size (``mpiexec -n P python -m reproduce calibrate
--backend mpi``). ``--quick``: a tenth of the repetitions, and P = 2 only unless
``--workers`` is given. ``--out``: the profile's JSON path, or a folder for
``profile.json`` (default ``results/local/machines/<name>/``, git-ignored); the raw probe goes beside it.
``--name``: the profile's name (default: host name and CPU count).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from engine.calibration import calibrate, default_name, worker_counts
from reproduce.store import LOCAL, atomic_write


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)


def paths(out, name: str, backend: str, P: int) -> tuple[Path, Path]:
    """(profile path, probe path). ``out`` ending in .json is the profile; otherwise a folder
    (default results/local/machines/<name>; a committed one: --out results/machines/<name>) for profile.json (MPI: profile_mpi<P>.json); the
    probe is probe.json (probe_mpi<P>.json) beside profile.json, else <stem>_probe.json."""
    tag = f"_mpi{P}" if backend == "mpi" else ""
    out = Path(out) if out is not None else LOCAL / "machines" / name
    prof = out if out.suffix == ".json" else out / f"profile{tag}.json"
    probe = (prof.with_name(f"probe{tag}.json") if prof.name == f"profile{tag}.json"
             else prof.with_name(f"{prof.stem}_probe.json"))
    return prof, probe


def table(profile) -> str:
    """What was measured, per P: collectives (µs), the kernels' contention and straggler."""
    us = lambda op, P, b: f"{profile.collective_time(op, P, b) * 1e6:.1f}"  # noqa: E731
    kinds = sorted(profile.contention)
    head = ["P", "barrier µs", "allgather 1k µs", "allgather 100k µs", "allreduce 1k µs",
            "broadcast 1k µs"] + [f"contention {k}" for k in kinds] + [f"straggler {k}" for k in kinds]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for P in profile.measured_P("allgather"):
        cells = [str(P), us("barrier", P, 0), us("allgather", P, 8000), us("allgather", P, 800000),
                 us("allreduce", P, 8000), us("broadcast", P, 8000) if "broadcast" in profile.coll else "–"]
        cells += [f"{profile.contention[k].get(P, float('nan')):.2f}" for k in kinds]
        cells += [f"{profile.straggler.get(k, {}).get(P, float('nan')):.2f}" for k in kinds]
        lines.append("| " + " | ".join(cells) + " |")
    k = ", ".join(f"{n} {t * 1e6:.1f} µs" for n, t in profile.kernels.items())
    lines.append(f"α {profile.latency_s * 1e6:.2f} µs, β {profile.bandwidth_Bps / 1e9:.2f} GB/s; "
                 f"alone: {k}")
    return "\n".join(lines)


def check_out(args) -> None:
    """OSError if the folder ``calibrate`` writes its profile and probe to is not writable."""
    from reproduce.store import check_writable

    name = getattr(args, "name", None) or default_name()
    check_writable(paths(args.out, name, args.backend, 2)[0].parent)


def main(args, comm=None) -> int:
    """Run the calibration for the parsed CLI ``args`` (workers, backend, out, quick, and
    name if the parser has it); ``comm``: the MPI communicator under ``--backend mpi``."""
    name = getattr(args, "name", None) or default_name()
    if args.backend == "mpi":
        workers, P = None, comm.size
    else:
        n = args.workers or _cores()
        workers = [2] if (args.quick and args.workers is None) else worker_counts(n)
        P = max(workers)
    prof_path, probe_path = paths(args.out, name, args.backend, P)
    rank0 = comm is None or comm.rank == 0
    if rank0:
        print(f"calibrate: {args.backend} backend, P = "
              f"{P if args.backend == 'mpi' else ', '.join(map(str, workers))}"
              f"{' (quick)' if args.quick else ''} -> {prof_path}", flush=True)
    probe, profile = calibrate(workers=workers, backend=args.backend, quick=args.quick, comm=comm,
                               name=name)
    if not rank0:
        return 0
    atomic_write(probe_path, json.dumps(probe, indent=1) + "\n")
    atomic_write(prof_path, profile.to_json())
    print(table(profile))
    print(f"wrote {prof_path} (profile) and {probe_path} (probe)")
    return 0
