"""Named machine profiles for ``--profile NAME|PATH`` (issue 12).

- ``here``: :func:`engine.perfmodel.measure_here` (2 local processes, at start-up);
- the machines the papers define, as MachineProfile objects with their sources: each
  paper's ``Paper.machines`` (:func:`paper_machines`);
- calibrated profiles shipped in ``engine/profiles/<name>.json`` (:data:`SHIPPED`: which
  probe each was built from, by :func:`build`), or a path to a profile JSON; these pass
  through :func:`engine.calibration.with_compute_ratio`, so compute measured here is
  scaled to that machine.

``python -m reproduce.profiles`` rebuilds the shipped JSON files from their probes.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from engine.calibration import profile_from_probe, with_compute_ratio
from engine.perfmodel import MachineProfile, measure_here

ROOT = Path(__file__).resolve().parents[1]  # the project root
PROFILES_DIR = ROOT / "engine" / "profiles"
SHARED = ROOT.parent / "shared"

SHIPPED = {
    "xeon16": dict(
        probe=SHARED / "machines" / "xeon16" / "collectives_and_contention.json",
        description=("16-core host 'xeon16': 16 vCPUs, 'Intel(R) Xeon(R) Processor' (model not "
                     "exposed), 1 thread per core, 128 GiB, a Firecracker VM with no other user jobs; "
                     "Python 3.12.3, numpy 2.5.2, Open MPI 4.1.6, mpi4py 4.1.2; collectives on the "
                     "project's local shared-memory backend"),
        date="2026-11-23",
        source=("../shared/machines/xeon16/collectives_and_contention.json (README.md there), "
                "measured 2026-11-23 on the 16-core host 'xeon16' with the project at commit ca20bd6 "
                "by measure_collectives_and_contention.py in that folder: coll = µs per allreduce / "
                "allgather / barrier of n = 1,000, 8,016, 100,000 float64 (engine.comm.local, slowest "
                "rank, best of 5 batches) at P = 2, 4, 8, 16; work = [median, max] s of one worker's "
                "200 gemv / 200 gemm / 20,000 small calls while P workers run it at once, 1 BLAS "
                "thread; single runs, no jitter or broadcast measured. Built from these "
                "microbenchmarks only: nothing is fitted to the paper runs in that folder")),
    "xeon207x16": dict(
        probe=ROOT / "results" / "machines" / "xeon207x16" / "probe_local.json",
        description=("16-core device host 'xeon207x16': 16 vCPUs 'Intel(R) Xeon(R) Processor' "
                     "family 6 model 207 stepping 2, 1 thread per core, 1 socket, 1 NUMA node, L2 "
                     "32 MiB, L3 300 MiB, KVM (Firecracker), 125.9 GiB; Python 3.12.3, numpy 2.5.2 "
                     "(OpenBLAS 0.3.34, 1 thread); collectives on the local shared-memory backend"),
        date="2026-11-23",
        source=("results/machines/xeon207x16/probe_local.json (README.md there), measured "
                "2026-11-23 05:12 UTC on a lent 16-core device machine, idle, with the project at "
                "commit 119c890, by `benchmarks/machines/probe.py --backend local --workers "
                "2,4,8,16 --raw` (xeon16's method plus broadcast, per-step jitter and the kernels "
                "alone); single run. Microbenchmarks only")),
    "dev2": dict(
        probe=ROOT / "results" / "machines" / "dev2" / "probe_local.json",
        description=("2-core development machine 'dev2': 2 vCPUs 'Intel(R) Xeon(R) Processor', "
                     "KVM (Firecracker), 23.5 GiB, shared with other sessions' jobs (1-minute load "
                     "1.4 before the run); Python 3.11.7, numpy 2.4.6 (OpenBLAS 0.3.31, 1 thread); "
                     "collectives on the local shared-memory backend"),
        date="2026-11-23",
        source=("results/machines/dev2/probe_local.json (README.md there), measured 2026-11-23 "
                "05:20 UTC with the project at commit 119c890 by `benchmarks/machines/probe.py "
                "--backend local --workers 2 --raw`; P = 2 only, so every P > 2 is extrapolated; "
                "single run on a loaded machine. Microbenchmarks only")),
}


def paper_machines() -> dict:
    """{name: () -> MachineProfile}: the machines the papers define (each paper's
    ``Paper.machines``), for every paper of :data:`reproduce.papers.PAPERS`."""
    from reproduce import papers

    out = {}
    for entry in papers.PAPERS:
        out.update(papers.load(entry["name"]).machines)
    return out


def names() -> tuple:
    """Every name ``--profile`` takes (a path to a profile JSON besides)."""
    return ("here", *paper_machines(), *SHIPPED)


def build(name: str, probe_path=None) -> MachineProfile:
    """The shipped profile ``name`` rebuilt from its probe (:data:`SHIPPED`)."""
    s = SHIPPED[name]
    probe = json.loads(Path(probe_path or s["probe"]).read_text())
    return profile_from_probe(probe, name=name, description=s["description"], source=s["source"],
                              date=s["date"])


def resolve(spec: str, *, here_kernels: dict | None = None) -> MachineProfile:
    """The profile behind ``--profile spec``: "here", a paper machine, a shipped name, or a
    path to a profile JSON. Shipped and path profiles get this machine's compute ratio
    (``here_kernels``: the reference kernels' seconds here; measured when None)."""
    if spec == "here":
        return measure_here()
    machines = paper_machines()
    if spec in machines:
        return machines[spec]()
    path = PROFILES_DIR / f"{spec}.json" if spec in SHIPPED else Path(spec)
    if spec in SHIPPED or (path.suffix == ".json" and path.is_file()):
        return with_compute_ratio(MachineProfile.load(path), here_kernels)
    raise ValueError(f"unknown machine profile {spec!r}: choose one of {', '.join(names())}, "
                     "or give the path of a profile JSON (python -m reproduce calibrate writes one)")


def main(argv=None) -> int:
    """Rebuild engine/profiles/<name>.json for the names given (default: every shipped one)."""
    for name in (argv if argv is not None else sys.argv[1:]) or list(SHIPPED):
        out = PROFILES_DIR / f"{name}.json"
        out.write_text(build(name).to_json())
        print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
