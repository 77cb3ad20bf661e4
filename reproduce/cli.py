"""``python -m reproduce {list,report,matrix,calibrate,validate,all,paper0..paper4}``.

Usage errors exit 2 with one line on stderr; failures (a worker that raised or
died, an unwritable results folder found late) exit 1, also with one line.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from reproduce.harness import UsageError, run_paper
from reproduce.papers import BY_NAME, PAPERS, load


def _int_at_least(lo: int):
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            v = None
        if v is None or v < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {s!r}")
        return v
    return parse


positive_int, nonneg_int = _int_at_least(1), _int_at_least(0)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not the usage block
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parser() -> argparse.ArgumentParser:
    names = ", ".join(p["name"] for p in PAPERS)
    ap = _Parser(
        prog="python -m reproduce",
        description="Reproduce published experiments on parallel neural-network training.",
        epilog=f"targets: list, report, matrix, calibrate, validate, all, {names}")
    ap.add_argument("target", help=f"list | report | matrix | calibrate | validate | all | {names}")
    ap.add_argument("--workers", type=positive_int, default=None,
                    help="workers for measured runs (default: cores here, or the MPI world size)")
    ap.add_argument("--backend", choices=("local", "mpi"), default="local",
                    help="local processes with shared memory, or MPI ranks (run under mpiexec)")
    ap.add_argument("--runs", type=positive_int, default=None, help="runs per configuration")
    ap.add_argument("--seed", type=nonneg_int, default=1, help="base seed; run i uses seed + i")
    ap.add_argument("--out", type=Path, default=None,
                    help="results folder (default results/, or results/quick/ with --quick)")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="shrunk settings, under a minute")
    size.add_argument("--full", action="store_true", help="the paper's setup plus every extra check")
    ap.add_argument("--profile", default=None, metavar="NAME|PATH",
                    help="machine profile behind every emulated row: here (measured at start-up, the "
                         "default), a shipped or paper machine (see engine/profiles/), or a JSON "
                         "written by `calibrate`")
    ap.add_argument("--name", default=None, help="calibrate: the profile's name (default: this host's)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    ap.add_argument("--nettalk-file", type=Path, default=None,
                    help="paper0: the NETtalk dictionary (nettalk.data, or its folder with nettalk.list); "
                         "sets NETTALK_DATA")
    return ap


def _list() -> int:
    for p in PAPERS:
        status = "implemented" if p["module"] else "not implemented yet"
        print(f"{p['name']}  {p['authors']} {p['year']}: {p['title']}\n"
              f"        workload: {p['workload']}; strategies: {p['strategies']}  [{status}]")
    return 0


def _report(out: Path) -> int:
    from reproduce.report import build_index
    from reproduce.store import atomic_write, check_writable

    check_writable(out)
    atomic_write(out / "index.md", build_index(out, PAPERS))
    print(f"wrote {out / 'index.md'}")
    return 0


def _matrix(args, comm) -> int:
    """Every strategy × network × backend cell against serial (reproduce/matrix.py)."""
    from reproduce import matrix

    if comm is not None:
        backends = [("mpi", comm.size)]
    else:
        backends = [("inprocess", 1), ("local", args.workers or 2), ("emulated", 3)]
    rows = matrix.run_matrix(backends, comm=comm)
    if comm is not None and comm.rank != 0:
        return 0
    out = (args.out or Path("results")) / "matrix.csv"
    matrix.write_csv(rows, out)
    print(matrix.markdown(rows))
    print(f"wrote {out}")
    return 1 if any(r["status"] == "FAIL" for r in rows) else 0


def _run_paper(name: str, args, comm) -> dict | None:
    from reproduce.progress import Progress
    from reproduce.store import check_writable

    paper = load(name)
    mode = "quick" if args.quick else "full" if args.full else "default"
    setup = paper.setups[mode]
    if args.runs is not None:
        from dataclasses import replace

        setup = replace(setup, runs=args.runs)
    out_root = args.out or Path("results/quick" if args.quick else "results")
    out = out_root / name
    rank = 0 if comm is None else comm.rank
    problem = None
    if rank == 0:
        try:
            check_writable(out)
        except OSError as e:
            problem = str(e)
    if comm is not None:
        problem = comm.comm.bcast(problem, root=0)
    if problem:
        raise UsageError(problem)
    workers = args.workers if comm is None else comm.size
    if comm is None and args.workers is None:
        workers = paper.default_workers()
    return run_paper(paper, setup=setup, mode=mode, workers=workers, backend=args.backend,
                     seed=args.seed, out=out, comm=comm, profile=args.profile,
                     progress_factory=None if args.no_progress else (lambda n, lab: Progress(n, lab)))


def _profile(spec):
    """The MachineProfile ``--profile`` names, or None (the papers measure ``here``)."""
    if spec is None or spec == "here":  # the default: each paper measures it (on rank 0)
        return None
    from reproduce.profiles import resolve

    try:
        return resolve(spec)
    except (ValueError, OSError) as e:
        raise UsageError(f"--profile {spec}: {e}") from None


def _mpi_comm(args):
    try:
        from engine.comm.mpi import MPIComm

        comm = MPIComm()
    except ImportError:
        raise UsageError("--backend mpi needs mpi4py: pip install mpi4py mpich") from None
    if args.workers is not None and args.workers != comm.size:
        raise UsageError(f"--workers {args.workers} disagrees with the MPI world size {comm.size} "
                         f"(mpiexec -n {comm.size}); pass --workers {comm.size} or leave it out")
    return comm


def main(argv=None) -> int:
    ap = parser()
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:  # argparse already printed its one-line error
        return int(e.code or 0)
    comm = None
    if args.nettalk_file is not None:
        os.environ["NETTALK_DATA"] = str(args.nettalk_file)
    try:
        t = args.target
        if t == "list":
            return _list()
        if t == "report":
            return _report(args.out or Path("results"))
        if t == "matrix":
            return _matrix(args, _mpi_comm(args) if args.backend == "mpi" else None)
        if t == "calibrate":
            from reproduce import calibrate

            return calibrate.main(args, _mpi_comm(args) if args.backend == "mpi" else None)
        args.profile = _profile(args.profile)
        if t == "validate":
            from reproduce import validate

            return validate.main(args)
        if t != "all" and t not in BY_NAME:
            raise UsageError(f"unknown paper {t!r}; choose one of: list, report, matrix, calibrate, "
                             "validate, all, "
                             + ", ".join(BY_NAME))
        if t != "all" and BY_NAME[t]["module"] is None:
            raise UsageError(f"{t} is not implemented yet; `python -m reproduce list` shows which are")
        if args.backend == "mpi":
            comm = _mpi_comm(args)
        names = [p["name"] for p in PAPERS if p["module"]] if t == "all" else [t]
        summaries = {}
        for name in names:
            s = _run_paper(name, args, comm)
            if s is not None:
                summaries[name] = s
        if comm is None or comm.rank == 0:
            if args.json:
                json.dump(summaries if t == "all" else summaries[t], sys.stdout, indent=2, default=str)
                sys.stdout.write("\n")
            else:
                out_root = args.out or Path("results/quick" if args.quick else "results")
                for name in names:
                    print(f"{name}: wrote {out_root / name}/ (comparison.csv, summary.json, "
                          f"report.md, plots)")
        return 0
    except UsageError as e:
        _say(f"error: {e}", comm)
        return 2
    except KeyboardInterrupt:
        _say("interrupted; finished runs are cached and a rerun resumes from them", comm)
        return 130
    except Exception as e:  # noqa: BLE001 - one line, never a traceback wall
        _say(f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", comm)
        if comm is not None and comm.size > 1:
            sys.stderr.flush()
            comm.abort(1)
        return 1


def _say(msg: str, comm) -> None:
    if comm is None or comm.rank == 0 or os.environ.get("REPRODUCE_ALL_RANKS_SAY"):
        print(msg, file=sys.stderr)
