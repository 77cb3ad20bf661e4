"""``python -m reproduce {list,report,matrix,calibrate,validate,all,PAPER}`` (the papers: reproduce/papers.py).

Usage errors exit 2 with one line on stderr; failures (a worker that raised or
died, an unwritable results folder found late, a results folder that ``report``
finds inconsistent) exit 1, also with one line. docs/bad_inputs.md lists every
refusal with its code and line; tests/faults/test_bad_inputs.py runs each one.

Under a launcher (mpiexec, srun) only the launcher's rank 0 prints a refusal: in a
mismatched launch every process believes it is rank 0 of a world of one, and the
launcher's own environment is the only thing that still tells them apart.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from reproduce.harness import Run, UsageError, check_size, run_paper
from reproduce.papers import BY_NAME, LISTED, PAPERS, load


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


def nonempty_path(s: str) -> Path:
    """A path that is not empty: Path("") is ".", and writing results into the current
    directory by accident is worse than refusing."""
    if not s.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return Path(s)


def stall_timeout(s: str) -> float | None:
    """Seconds > 0, or 0 / none for no deadline (None)."""
    if s.strip().lower() in ("0", "none"):
        return None
    try:
        v = float(s)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be seconds > 0, or 0 or none to disable, got {s!r}")
    return v


# The variables a launcher sets in every process it starts, and whose launcher they are
# (size variable, rank variable, family). Checked in this order.
LAUNCHERS = (
    ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "Open MPI's mpiexec"),
    ("PMI_SIZE", "PMI_RANK", "a PMI launcher (the mpiexec of MPICH or Intel MPI, or srun)"),
    ("MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK", "MVAPICH's launcher"),
)


@dataclass(frozen=True)
class Launch:
    """What a launcher's environment says about this process: ``var``'s value is ``size``."""
    var: str
    size: int
    rank: int | None
    family: str


def launch(environ=None) -> Launch | None:
    """The launch this process's environment describes, None when no launcher started it.
    Read from the environment, not from MPI: a launcher from another MPI library than
    mpi4py's is exactly the case where MPI itself sees a world of one."""
    env = os.environ if environ is None else environ

    def number(var):
        try:
            return int(env[var])
        except (KeyError, ValueError):
            return None

    for size_var, rank_var, family in LAUNCHERS:
        size = number(size_var)
        if size is None:
            continue
        # the rank from the same family, else from any (a stray variable of another family
        # must not make every rank print)
        rank = next((r for r in [number(rank_var)] + [number(v) for _, v, _ in LAUNCHERS]
                     if r is not None), None)
        return Launch(size_var, size, rank, family)
    return None


def _version() -> str:
    """The installed distribution's version (pyproject.toml), or "unknown" outside an install."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("parallel-nn-repro")
    except PackageNotFoundError:
        return "unknown"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not the usage block
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parser(papers=()) -> argparse.ArgumentParser:
    """The command line: the shared options, and those of each of ``papers`` (its
    :attr:`~reproduce.harness.Paper.options`)."""
    names = ", ".join(p["name"] for p in PAPERS)
    ap = _Parser(
        prog="python -m reproduce",
        description="Reproduce published experiments on parallel neural-network training.",
        epilog=f"targets: list, report, compare, matrix, calibrate, validate, all, {names}")
    ap.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    ap.add_argument("target", help=f"list | report | compare | matrix | calibrate | validate | all | {names}")
    ap.add_argument("sides", nargs="*", metavar="OLD NEW",
                    help="compare only: two results folders or two commits")
    ap.add_argument("--workers", type=positive_int, default=None,
                    help="workers for measured runs (default: cores here, or the MPI world size)")
    ap.add_argument("--backend", choices=("local", "mpi"), default="local",
                    help="local processes with shared memory, or MPI ranks (run under mpiexec)")
    ap.add_argument("--runs", type=positive_int, default=None, help="runs per configuration")
    ap.add_argument("--seed", type=nonneg_int, default=1, help="base seed; run i uses seed + i")
    ap.add_argument("--out", type=nonempty_path, default=None,
                    help="results folder (default results/, or results/quick/ with --quick)")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="shrunk settings, under a minute")
    size.add_argument("--full", action="store_true", help="the paper's setup plus every extra check")
    ap.add_argument("--profile", default=None, metavar="NAME|PATH",
                    help="machine profile behind every emulated row: here (measured at start-up, the "
                         "default), a shipped or paper machine (see engine/profiles/), or a JSON "
                         "written by `calibrate`")
    ap.add_argument("--name", default=None, help="calibrate: the profile's name (default: this host's)")
    ap.add_argument("--json", action="store_true", help="print the summary (report: the claims; "
                    "compare: the changes) as JSON on stdout")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    for paper in papers:
        if paper.options is not None:
            paper.options(ap)
    ap.add_argument("--jobs", type=positive_int, default=None,
                    help="emulated tasks run this many at a time, each on a core of its own, up to the "
                         "cores here (local backend only); measured tasks always run alone. Default 1: "
                         "beside each other, emulated compute is timed slower (docs/cli.md, --jobs)")
    ap.add_argument("--stall-timeout", type=stall_timeout, default=_DEFAULT, metavar="S",
                    help="end the run (exit 1, naming the worker) when one collective waits more than "
                         "S seconds; 0 or none: wait forever (default: the engine's, generous)")
    return ap


_DEFAULT = object()  # --stall-timeout not given: leave the engine's default alone


def _list() -> int:
    for p in PAPERS:
        status = "implemented" if p["module"] else "not implemented yet"
        print(f"{p['name']}  {p['authors']} {p['year']}: {p['title']}\n"
              f"        workload: {p['workload']}; strategies: {p['strategies']}  [{status}]")
    return 0


def paper_help(name: str, results: Path = Path("results")) -> str:
    """`python -m reproduce paperN --help`: the paper, its grid (each setting at the default,
    --quick and --full), what the committed default run took and what a run writes."""
    from dataclasses import fields

    from reproduce.papers import load

    p, paper = BY_NAME[name], load(name)
    d, q, f = (paper.setups[k] for k in ("default", "quick", "full"))

    def cell(v):
        return ", ".join(map(str, v)) if isinstance(v, (tuple, list)) else str(v)

    rows = [(x.name, cell(getattr(d, x.name)), cell(getattr(q, x.name)), cell(getattr(f, x.name)))
            for x in fields(d)]
    w = [max(len(r[i]) for r in rows + [("setting", "default", "--quick", "--full")]) for i in range(4)]
    grid = ["  " + "  ".join(c.ljust(w[i]) for i, c in enumerate(("setting", "default", "--quick", "--full")))]
    grid += ["  " + "  ".join(c.ljust(w[i]) for i, c in enumerate(r)) for r in rows]
    took = "no committed default run here"
    sj = results / name / "summary.json"
    if sj.exists():
        import json

        meta = json.loads(sj.read_text())["meta"]
        o = meta.get("origin") or meta
        earlier = o.get("cached_from") or []  # a run resumed from earlier invocations: add their task time
        if "wall_s" in o:
            s = o["wall_s"] + sum(e.get("seconds") or 0 for e in earlier)
            over = (f" over {len(earlier) + 1} invocations (the last one's wall time and the earlier ones' "
                    "task time)" if earlier else "")
            took = (f"{s / 60:.0f} min ({s:,.0f} s){over} on {o.get('cpu_count', '?')} cores, "
                    f"{str(o.get('date_utc', '?'))[:10]}, seeds {meta.get('seeds', '?')} "
                    f"({sj.as_posix()}); a --quick run's time is not recorded")
    return "\n".join([
        f"{name}: {p['authors']} {p['year']}, {p['title']}",
        f"workload: {p['workload']}; strategies: {p['strategies']}", "",
        f"usage: python -m reproduce {name} [--quick | --full] [--runs N] [--seed S] [--workers N] "
        "[--out DIR] [...]", "",
        "grid (" + p["module"].replace(".", "/") + "/setup.py):", *grid, "",
        "--quick shrinks: " + "; ".join(paper.quick_shrunk), "",
        f"time: the committed default took {took}",
        f"budget: {p['budget_min']} min on 2 cores" + (" (its share of the 45-minute target for all five, "
        "issue 32; benchmarks/targets.py checks the committed run against it)" if name in LISTED else ""), "",
        f"writes: results/{name}/ (--quick: results/quick/{name}/; --out DIR: DIR/{name}/): claims.csv, "
        "comparison.csv, summary.json, report.md, plots, and the task cache .cache/ a rerun resumes from",
        "every option: python -m reproduce --help"])


def _report(out: Path | None, as_json: bool = False) -> int:
    """index.md from every paper's files under ``out`` (default results/). A folder that
    fails :func:`reproduce.report.check_paper` is a failure (exit 1) and index.md is left
    as it was. Without --out, a note says where quick runs' results are (they go to
    results/quick/, which the default does not index: committed full results and quick
    ones never mix in one index)."""
    from reproduce.report import ResultsError, build_index, indexed, screen_lines
    from reproduce.store import atomic_write, check_writable

    defaulted = out is None
    out = Path("results") if out is None else out
    if out.exists():
        try:
            check_writable(out)
        except OSError as e:
            raise UsageError(str(e)) from None
    if not out.is_dir() or not indexed(out, PAPERS):  # an index of nothing is no index (issue 33)
        raise UsageError(f"{out}: no results here (no <paper>/comparison.csv); run a paper first, "
                         f"e.g. python -m reproduce {PAPERS[0]['name']} --quick")
    try:
        text = build_index(out, PAPERS)
    except ResultsError as e:
        print(f"error: {e}; {out / 'index.md'} left as it was", file=sys.stderr)
        return 1
    atomic_write(out / "index.md", text)
    if as_json:
        from reproduce.report import claims_of
        from reproduce.store import dumps

        cf = claims_of(out, indexed(out, PAPERS))
        sys.stdout.write(dumps({n: df.to_dict(orient="records") for n, df in cf.items()}))
        return 0
    print("\n".join(screen_lines(out, PAPERS)))
    print(f"wrote {out / 'index.md'}")
    quick = Path("results/quick")
    if defaulted and (names := indexed(quick, PAPERS)):
        print(f"note: {quick}/ holds quick runs ({', '.join(names)}), not in this index; "
              f"`python -m reproduce report --out {quick}` indexes them")
    return 0


def _compare(args) -> int:
    """Claims whose verdict moved between two generations (reproduce/compare.py); --out FILE
    also writes the text there (e.g. results/stability.md)."""
    from reproduce import compare

    if len(args.sides) != 2:
        raise UsageError("compare takes two arguments: OLD NEW (results folders or commits)")
    try:
        text, _ = compare.main(*args.sides, [p["name"] for p in PAPERS], as_json=args.json)
    except (compare.CompareError, ValueError) as e:
        raise UsageError(str(e).splitlines()[0]) from None
    if args.out is not None:
        from reproduce.store import atomic_write, check_writable

        check_writable(Path(args.out).parent)
        atomic_write(Path(args.out), text + "\n")
    print(text)
    return 0


def _matrix(args, comm) -> int:
    """Every strategy × network × backend cell against serial (reproduce/matrix.py)."""
    from reproduce import matrix
    from reproduce.store import LOCAL, check_writable

    out = (args.out or LOCAL) / "matrix.csv"  # the committed one: --out results
    try:
        check_writable(out.parent)  # before the work, not after it (issue 33)
    except OSError as e:
        raise UsageError(str(e)) from None
    if comm is not None:
        backends = [("mpi", comm.size)]
    else:
        backends = [("inprocess", 1), ("local", args.workers or 2), ("emulated", 3)]
    rows = matrix.run_matrix(backends, comm=comm)
    if comm is not None and comm.rank != 0:
        return 0
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
    workers = args.workers if comm is None else comm.size
    if comm is None and args.workers is None:
        workers = paper.default_workers()
    check_size(paper, Run(paper, setup, mode, workers, args.backend, args.seed, out, comm,
                          args.profile))  # before anything is written (issue 33)
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
    return run_paper(paper, setup=setup, mode=mode, workers=workers, backend=args.backend,
                     seed=args.seed, out=out, comm=comm, profile=args.profile, jobs=args.jobs,
                     progress_factory=None if args.no_progress else (lambda n, lab: Progress(n, lab)))


_TERM_MESSAGE = "terminated (SIGTERM): finished runs are cached and a rerun resumes from them"


def _profile(spec):
    """The MachineProfile ``--profile`` names, or None (the papers measure ``here``)."""
    if spec is None or spec == "here":  # the default: each paper measures it (on rank 0)
        return None
    from reproduce.profiles import resolve

    try:
        return resolve(spec)
    except (ValueError, OSError) as e:  # MachineProfile.load names the file: said once
        msg = str(e).removeprefix(f"{spec}: ")
        raise UsageError(f"--profile {spec}: {msg}") from None


def _jobs(jobs: int | None, backend: str) -> int:
    """--jobs, checked: emulated compute is timed one task per core, so never more tasks
    than the cores this process may use, and under MPI rank 0 runs its tasks alone.
    Default 1: each emulated task timed alone, as the committed results were made (beside
    another task its compute was timed up to 1.36× slower here, and 15 at a time 1.16–1.25×
    slower on a 16-core host: docs/cli.md, ``--jobs``). ``validate --jobs N`` measures it."""
    from reproduce.runner import usable_cores

    if jobs is None:
        return 1
    cores = usable_cores()
    if backend == "mpi" and jobs > 1:
        raise UsageError(f"--jobs {jobs} needs --backend local: under MPI rank 0 runs the "
                         "emulated tasks one at a time")
    if jobs > cores:
        raise UsageError(f"--jobs {jobs} is more than the {cores} cores this process may use: "
                         "emulated compute would be timed on shared cores")
    return jobs


def _mpi_comm(args):
    """The MPI world, after checking that a launcher started it and agrees with it.

    Outside mpiexec, or under an mpiexec of another MPI library than mpi4py's, every process
    is a world of one: it would run a whole job of its own into the shared results folder
    and exit 0. Every rank checks; only the launcher's rank 0 prints (:func:`_say`)."""
    import warnings

    try:
        with warnings.catch_warnings():  # mpi4py's own multi-line hint: the check below says it
            warnings.filterwarnings("ignore", message="suspicious MPI execution environment")
            from mpi4py import MPI  # noqa: F401 - initialises MPI here, under the filter
        from engine.comm.mpi import MPIComm

        comm = MPIComm()
    except ImportError:
        raise UsageError("--backend mpi needs mpi4py: pip install mpi4py mpich") from None
    la = launch()
    if la is None and comm.size == 1:
        raise UsageError("--backend mpi needs a launcher: run it as mpiexec -n N python -m reproduce "
                         "... --backend mpi (here no launcher started this process, so MPI has 1 rank)")
    if la is not None and la.size != comm.size:
        lib = " ".join(MPI.Get_library_version().strip().splitlines()[0].split())
        own = Path(sys.executable).parent / "mpiexec"
        hint = f"use {own}" if own.exists() else f"use the mpiexec of {lib.split(',')[0]}"
        raise UsageError(f"MPI world size mismatch: {la.family} started {la.size} processes "
                         f"({la.var}={la.size}) but mpi4py, linked to {lib}, sees a world of "
                         f"{comm.size}: the launcher belongs to another MPI library; {hint}")
    if args.workers is not None and args.workers != comm.size:
        raise UsageError(f"--workers {args.workers} disagrees with the MPI world size {comm.size} "
                         f"(mpiexec -n {comm.size}); pass --workers {comm.size} or leave it out")
    from engine.comm.base import install_termination_handler

    # SIGTERM on a rank aborts the whole job (exit 143); only rank 0 says so
    install_termination_handler(_TERM_MESSAGE, say=comm.rank == 0)
    return comm


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    if first in BY_NAME and BY_NAME[first]["module"] and {"-h", "--help"} & set(argv):
        print(paper_help(first))
        return 0
    papers = _implemented() if _beyond_shared(argv) else []
    ap = parser(papers)
    try:
        args = ap.parse_args(argv)
        if not papers and args.target not in USES:  # a paper or all: every paper's options too
            papers = _implemented()
            ap = parser(papers)
            args = ap.parse_args(argv)
    except SystemExit as e:  # argparse already printed its one-line error
        return int(e.code or 0)
    comm = None
    try:
        t = args.target
        if t == "list":
            _check_applies(args, ap)
            return _list()
        _check_launch(t, args.backend)
        _check_applies(args, ap)
        _check_paper_options(args, papers)
        if args.stall_timeout is not _DEFAULT:
            _set_stall_timeout(args.stall_timeout)
        if args.sides and t != "compare":
            raise UsageError(f"unexpected arguments {' '.join(args.sides)!r}: only compare takes two")
        if t == "report":
            return _report(args.out, args.json)
        if t == "compare":
            return _compare(args)
        if t == "matrix":
            comm = _mpi_comm(args) if args.backend == "mpi" else None
            return _released(_matrix(args, comm), comm)
        if t == "calibrate":
            from reproduce import calibrate

            try:
                calibrate.check_out(args)  # before the work, not after it (issue 33)
            except OSError as e:
                raise UsageError(str(e)) from None
            comm = _mpi_comm(args) if args.backend == "mpi" else None
            return _released(calibrate.main(args, comm), comm)
        args.profile = _profile(args.profile)
        if t == "validate":
            from reproduce import validate

            args.jobs = _jobs(args.jobs, "local")
            return validate.main(args)
        if t != "all" and t not in BY_NAME:
            raise UsageError(f"unknown paper {t!r}; choose one of: list, report, matrix, calibrate, "
                             "validate, all, "
                             + ", ".join(BY_NAME))
        if t != "all" and BY_NAME[t]["module"] is None:
            raise UsageError(f"{t} is not implemented yet; `python -m reproduce list` shows which are")
        args.jobs = _jobs(args.jobs, args.backend)
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
                from reproduce.store import dumps  # strict JSON: NaN and ±inf as null

                sys.stdout.write(dumps(summaries if t == "all" else summaries[t]))
            else:
                out_root = args.out or Path("results/quick" if args.quick else "results")
                for name in names:
                    print(f"{name}: wrote {out_root / name}/ (comparison.csv, summary.json, "
                          f"report.md, plots)")
                if t == "all":  # the same table as `report` prints, over what was just written
                    from reproduce.report import screen_lines

                    print("\n".join(screen_lines(out_root, [p for p in PAPERS if p["name"] in names])))
        return _released(0, comm)
    except UsageError as e:
        _say(f"error: {e}", comm)
        return 2
    except KeyboardInterrupt:
        import signal

        # a second Ctrl-C while the line is printed used to give a 50-line traceback
        # (issue 33): ignored until the line is out
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        _say("interrupted; finished runs are cached and a rerun resumes from them", comm)
        signal.signal(signal.SIGINT, previous)
        if comm is not None and comm.size > 1:  # a peer may wait in a collective: MPI_Finalize
            sys.stderr.flush()                  # would wait for it forever
            comm.abort(130)
        return 130
    except Exception as e:  # noqa: BLE001 - one line, never a traceback wall
        hint = " (a file-size limit: ulimit -f)" if getattr(e, "errno", None) == 27 else ""  # EFBIG
        _say(f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}{hint}", comm)
        if comm is not None and comm.size > 1:
            sys.stderr.flush()
            comm.abort(1)
        return 1


def _released(rc: int, comm) -> int:
    """``rc``, once every MPI rank has finished: a rank done with its share waits for the
    others in Python (engine.comm.mpi.MPIComm.wait_for_peers), where SIGTERM still gives
    its line and 143, not in MPI_Finalize, where it gave none."""
    if comm is not None and comm.size > 1:
        comm.wait_for_peers()
    return rc


ONE_PROCESS = ("report", "compare", "validate")  # targets that never use MPI

# The options each target reads (issue 33: an option a target does not read is an error,
# not ignored). A paper, and all, read every option but --name; sides are checked apart.
USES = {
    "list": set(),
    "report": {"out", "json"},
    "compare": {"out", "json"},
    "matrix": {"workers", "backend", "out", "stall_timeout", "no_progress"},
    "calibrate": {"workers", "backend", "out", "quick", "name", "stall_timeout", "no_progress"},
    "validate": {"workers", "profile", "quick", "out", "jobs", "stall_timeout", "no_progress"},
}
NOT_A_PAPERS = {"name", "sides"}


def _check_applies(args, ap: argparse.ArgumentParser) -> None:
    """Every option given is one its target reads (:data:`USES`)."""
    uses = USES.get(args.target)
    for a in ap._actions:
        if not a.option_strings or a.dest in ("help", "version"):
            continue
        if (a.dest in uses) if uses is not None else (a.dest not in NOT_A_PAPERS):
            continue
        v = getattr(args, a.dest)
        if v is a.default or v == a.default:
            continue
        shown = "" if isinstance(v, bool) else f" {v}"
        raise UsageError(f"{a.option_strings[0]}{shown} does not apply to {args.target}")


def _check_launch(target: str, backend: str) -> None:
    """Refuse a launch that would run independent jobs into one folder: mpiexec -n N (N > 1)
    without --backend mpi, or a one-process target started by a launcher."""
    la = launch()
    if target in ONE_PROCESS:
        if backend == "mpi":
            raise UsageError(f"--backend mpi does not apply to {target}: it runs in one process")
        if la is not None and la.size > 1:
            raise UsageError(f"{target} runs in one process, but a launcher started {la.size} "
                             f"({la.var}={la.size}): run it without mpiexec")
    elif la is not None and la.size > 1 and backend != "mpi":
        raise UsageError(f"a launcher started {la.size} processes ({la.var}={la.size}) but the "
                         "backend is local: each would run its own job into the same folder; add "
                         "--backend mpi (or run without mpiexec)")


def _implemented() -> list:
    """The :class:`~reproduce.harness.Paper` of every implemented paper."""
    return [load(p["name"]) for p in PAPERS if p["module"]]


def _beyond_shared(argv) -> bool:
    """Whether ``argv`` may name an option of a paper's own (or asks for the general help,
    which lists them): an option that is not, spelled out, one of the shared ones. Only
    then, or for a paper or all, are the papers loaded to parse it (a second or two):
    list, report and the other commands start without them."""
    shared = set(parser()._option_string_actions) - {"-h", "--help"}
    return any(a.startswith("-") and a.split("=", 1)[0] not in shared for a in argv)


def _check_paper_options(args, papers) -> None:
    """Each paper's own options, checked (and applied) by its
    :attr:`~reproduce.harness.Paper.check_options` before any work, told whether this
    target runs the paper."""
    for paper in papers:
        if paper.check_options is not None:
            paper.check_options(args, args.target in (paper.name, "all"))


def _set_stall_timeout(seconds: float | None) -> None:
    """--stall-timeout: the deadline of every collective wait (engine.comm.base)."""
    from engine.comm.base import set_stall_timeout

    set_stall_timeout(seconds)


def _say(msg: str, comm) -> None:
    """Print on rank 0 only: the communicator's when there is one, else the launcher's."""
    if comm is not None:
        first = comm.rank == 0
    else:
        la = launch()
        first = la is None or la.rank in (None, 0)
    if first or os.environ.get("REPRODUCE_ALL_RANKS_SAY"):
        _one_line(msg)


def _one_line(msg: str) -> None:
    """The process's last line, kept one line under signals: SIGINT is ignored while it
    prints (a Ctrl-C there raised a traceback), and a SIGTERM then waits for the line and
    ends the process with 143 and no line of its own (engine.comm.base.last_line). SIGINT's
    handler is restored after, for callers in-process."""
    import signal
    import threading

    from engine.comm.base import last_line

    if threading.current_thread() is not threading.main_thread():
        print(msg, file=sys.stderr)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with last_line():
            print(msg, file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGINT, previous)
