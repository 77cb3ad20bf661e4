"""The one run loop every paper goes through (docs/engine.md).

A paper package describes itself with a :class:`Paper`: its setups, how to make
its tasks, how to run one task, and which module writes its report.
:func:`run_paper` does the rest, the same way for every paper:

1. ``prepare``: the paper's checks and up-front measurements (machine
   profiles), before any task runs or any file is written;
2. the task list, run by :func:`reproduce.runner.execute`: cached by
   configuration, source hash, data identity (:attr:`Paper.data_identity`) and,
   for timings, the conditions they were taken under, so an interrupted run
   resumes and a cached time is reused only where it still holds; tasks that
   need several MPI ranks on sub-communicators;
3. progress on stderr (rank 0);
4. the run's metadata (:func:`reproduce.report.run_metadata` plus the keys
   below), then the paper's ``report.write``, into a staging folder that
   :func:`reproduce.store.write_generation` moves into place with a manifest
   written last: one results generation, or the previous one untouched.

Adding a paper: a package ``reproduce/<name>/`` with ``setup.py``, ``tasks.py`` and
``report.py``, whose ``__init__`` defines ``PAPER = Paper.of(setup, tasks)``, and its
entry in :mod:`reproduce.papers` (or, kept elsewhere, ``reproduce.papers.register``):
docs/adding_a_paper.md.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from reproduce import result_schema, runner
from reproduce.runner import code_hash, execute
from reproduce.store import NULL_MEANS, RunCache, new_invocation_id, remove_stale, write_generation


class UsageError(Exception):
    """A request that cannot run as asked (the CLI exits 2 with its one line)."""


def _runs(setup) -> int:
    return setup.runs


def _cores() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class Paper:
    """What one paper supplies to :func:`run_paper`; everything else is shared."""

    name: str
    setups: dict  # {"default": Setup, "quick": Setup, "full": Setup}
    quick_shrunk: list  # what --quick shrinks, one phrase each (said in the report)
    make_tasks: Callable  # (run: Run) -> list[Task]
    run_task: Callable  # (task, comm, run: Run) -> JSON-able dict; None on MPI ranks other than 0
    report: str  # module whose write(run, results, meta) writes the files and returns the summary
    code: tuple  # sources besides engine/ and datasets/ that a task's result depends on
    prepare: Callable | None = None  # (run) -> None: checks and measurements before any task
    cache_ignores: tuple = ("runs",)  # Setup fields that only add tasks: not in the cache key
    seeds: Callable = _runs  # (setup) -> n: the run uses seeds seed .. seed + n - 1
    default_workers: Callable = _cores  # () -> workers when --workers is not given
    # (run) -> JSON-able identity of the data the tasks read, in every cache key; None:
    # generated data (generated_data)
    data_identity: Callable | None = None
    # (run, results) -> {index: Task}: runs to do again in place of results[index], decided
    # from the results of the first pass (e.g. a failed-run cap set by the converged runs)
    extend: Callable | None = None
    # (task) -> the pydantic model of its result (reproduce/result_schema.py), or None:
    # cached results are checked against it before use
    result_model: Callable | None = None
    # (parser) -> None: adds the paper's own options to `python -m reproduce` (reproduce/cli.py)
    options: Callable | None = None
    # (args, runs: bool) -> None: checks (and applies) those options before any work, runs:
    # whether this invocation runs the paper; a UsageError refuses the invocation
    check_options: Callable | None = None
    # {name: () -> MachineProfile}: the paper's own machines, which --profile NAME may name
    # (reproduce/profiles.py)
    machines: dict = field(default_factory=dict)
    # {name: builder(quick) -> reproduce.validate.Case}: the paper's strategies on small
    # instances, which `python -m reproduce validate` holds against the emulator
    strategies: dict = field(default_factory=dict)
    # {name: (cell(workload, *, backend, workers, comm) -> (deviation, status), {net: why it
    # cannot apply})}: the paper's model-parallel configurations in the equivalence matrix
    matrix_cells: dict = field(default_factory=dict)
    # the package's hosts.py, where many-core hosts ran the paper: SOURCES and MEASURED
    # ({host: ...}) and extract(rows) (reproduce/manycore_data.py gathers them); None: none
    hosts: object = None
    # {machine name: (colour, *aliases found in plot labels)}: the colours of the paper's own
    # machines in every figure (reproduce/plotstyle.py); never reused for another machine
    colors: dict = field(default_factory=dict)

    @classmethod
    def of(cls, setup, tasks, *, code: tuple = (), **kw) -> Paper:
        """The paper of a package from its two modules, by their attributes: ``setup``
        (NAME, DEFAULT, QUICK, FULL, QUICK_SHRUNK) and ``tasks`` (make_tasks, run_task,
        and prepare, seeds, default_workers where it defines them). The report is the
        package's ``report`` module; the cache hashes both modules and ``code``."""
        package = setup.__name__.rpartition(".")[0]
        hooks = {k: getattr(tasks, k) for k in ("prepare", "seeds", "default_workers", "extend", "result_model")
                 if hasattr(tasks, k)}
        return cls(name=setup.NAME,
                   setups={"default": setup.DEFAULT, "quick": setup.QUICK, "full": setup.FULL},
                   quick_shrunk=setup.QUICK_SHRUNK, make_tasks=tasks.make_tasks,
                   run_task=tasks.run_task, report=f"{package}.report",
                   code=tuple(m.__name__.replace(".", "/") for m in (setup, tasks)) + tuple(code),
                   **hooks, **kw)


@dataclass
class Run:
    """One invocation of one paper, as its tasks and its report see it."""

    paper: Paper
    setup: object
    mode: str  # default | quick | full
    workers: int
    backend: str  # local | mpi
    seed: int
    out: Path
    comm: object = None  # the MPI communicator, or None
    profile: object = None  # --profile: the MachineProfile behind the emulated rows; None: measure `here`
    jobs: int = 1  # emulated tasks at a time (runner.execute); measured ones always run alone
    context: dict = field(default_factory=dict)  # set by prepare; "profiles" go into the metadata
    meta: dict = field(default_factory=dict)  # paper-specific metadata, set by prepare
    # {name: MachineProfile} an earlier run measured on this machine, when this invocation only
    # rebuilds its files from that run's task cache (tools/rebuild_from_cache.py): see measured
    recorded: dict = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return 0 if self.comm is None else self.comm.rank

    def measured(self, names: tuple, measure) -> list:
        """The profiles ``names`` a paper's prepare measures on this machine: ``measure()`` (a
        list, in the order of ``names``), or the ones the run that computed the cached results
        recorded, where it recorded all of them (:attr:`recorded`), so that a rebuild composes
        the emulated rows with the machine as it was when their compute was timed, not with
        the load at rebuild time."""
        if names and all(n in self.recorded for n in names):
            return [self.recorded[n] for n in names]
        return list(measure())

    @property
    def quick_shrunk(self) -> list | None:
        return self.paper.quick_shrunk if self.mode == "quick" else None


def generated_data(run) -> str:
    """Data made by code in datasets/ (in the code hash) from the setup (in the key):
    nothing more identifies it."""
    return "generated"


def data_identity(paper: Paper, run) -> object:
    """The identity of the data ``paper``'s tasks read, in every task's cache key: its
    :attr:`Paper.data_identity`, else :func:`generated_data`."""
    return (paper.data_identity or generated_data)(run)


_ROOT = Path(__file__).resolve().parent.parent  # the checkout (runner.code_hash's root)


def code_of(paper: Paper) -> str:
    """The code hash in every task's key: engine/, datasets/ and ``paper.code``
    (:func:`reproduce.runner.code_hash`). A module of ``paper.code`` outside the checkout (a
    paper registered from elsewhere: reproduce.papers.register) is found by import and its
    source added under its module path; for code inside it the hash is code_hash's."""
    inside = [c for c in paper.code if (_ROOT / c).is_dir() or (_ROOT / f"{c}.py").is_file()]
    h = code_hash("engine", "datasets", *inside)
    away = [c for c in paper.code if c not in inside]
    if not away:
        return h
    sha = hashlib.sha1(h.encode())
    for c in away:
        spec = importlib.util.find_spec(c.replace("/", "."))
        if spec is None or spec.origin is None:
            raise FileNotFoundError(f"{c}: neither in {_ROOT} nor an importable module")
        src, pkg = Path(spec.origin), spec.submodule_search_locations is not None
        for f in sorted(src.parent.rglob("*.py")) if pkg else [src]:
            sha.update((f"{c}/{f.relative_to(src.parent).as_posix()}" if pkg else f"{c}.py").encode())
            sha.update(f.read_bytes())
    return sha.hexdigest()[:16]


def extend(paper: Paper, run, results: list | None, execute_more) -> int:
    """The second pass: the tasks ``paper.extend`` asks for (decided on rank 0 and sent to
    every rank, since a measured task may need them all) run through ``execute_more(tasks,
    label)``, and each result replaces the one it redoes in ``results`` (rank 0). Returns how
    many tasks were redone."""
    if paper.extend is None:
        return 0
    redo = paper.extend(run, results) if run.rank == 0 else None
    if run.comm is not None:
        redo = run.comm.comm.bcast(redo, root=0)
    if not redo:
        return 0
    more = execute_more(list(redo.values()), f"{paper.name}: tasks redone in a second pass")
    if results is not None:
        for i, pair in zip(redo, more):
            results[i] = pair
    return len(redo)


MAX_TASKS = 200_000  # each task is a training or timing run: more cannot finish
WORKER_BYTES = 30 << 20  # one local worker process with numpy loaded (~30 MiB resident, measured)


def _available_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_size(paper: Paper, run) -> None:
    """Refuse, before any work, a run that cannot fit (issue 33): more local worker
    processes than the memory available holds (~30 MiB each), or more tasks than
    :data:`MAX_TASKS` (counted from the paper's tasks at 1 and 2 runs, linear in runs)."""
    if run.comm is None and run.workers > 1:
        need, avail = run.workers * WORKER_BYTES, _available_bytes()
        if avail is not None and need > avail:
            raise UsageError(f"--workers {run.workers:,}: as many local processes need about "
                             f"{need / 2**30:,.0f} GiB (~30 MiB each), and {avail / 2**30:,.1f} GiB "
                             "is available")
    runs = getattr(run.setup, "runs", None)
    if isinstance(runs, int) and runs > 2:
        n1, n2 = (len(paper.make_tasks(replace(run, setup=replace(run.setup, runs=r)))) for r in (1, 2))
        n = n1 + (n2 - n1) * (runs - 1)
        if n > MAX_TASKS:
            raise UsageError(f"--runs {runs:,}: about {n:,} tasks, each a training or timing run "
                             f"(at most {MAX_TASKS:,})")


def conditions(run) -> dict:
    """What a measured time depends on besides its configuration (runner.task_conditions)."""
    return {"backend": run.backend, "world_size": 1 if run.comm is None else run.comm.size,
            "workers": run.workers, "machine": runner.machine_identity(), "jobs": run.jobs}


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]  # the machine is shared: how busy it was


def run_paper(paper: Paper, *, out, setup=None, mode: str = "default", workers: int | None = None,
              backend: str = "local", seed: int = 1, comm=None, progress_factory=None,
              profile=None, origin: dict | None = None, jobs: int = 1,
              recorded: dict | None = None) -> dict | None:
    """Run every task of ``paper`` (cached), then write ``out`` on rank 0.

    ``setup`` defaults to the paper's setup for ``mode``; ``workers`` to the
    paper's default. Returns the summary (what summary.json holds) on rank 0
    and None on other MPI ranks. ``progress_factory(n_tasks, label)`` makes the
    progress bar. ``profile`` (a MachineProfile) replaces the ``here`` profile the
    paper would measure behind its emulated rows. ``origin``: the metadata of the run
    that computed the cached task results, when this invocation only rebuilds the
    files from them (tools/rebuild_from_cache.py); the reports say so. ``jobs``: emulated
    tasks at a time (:func:`reproduce.runner.execute`; 1 under MPI). ``recorded``: the profiles
    the original run measured ({name: MachineProfile}), reused by a rebuild (:meth:`Run.measured`).

    Each result from the cache carries ``_cached_from`` ({invocation, date_utc,
    load_1min} of the run that computed it); a fresh one has none. ``meta["invocation"]``
    names this invocation (and the generation of files it writes), ``meta["cached_from"]``
    the earlier ones the cached results came from.
    """
    t0 = time.perf_counter()
    load0 = _loadavg()
    setup = setup if setup is not None else paper.setups[mode]
    workers = workers if workers is not None else paper.default_workers()
    run = Run(paper, setup, mode, workers, backend, seed, Path(out), comm, profile, jobs=jobs,
              recorded=dict(recorded or {}))
    check_size(paper, run)
    if paper.prepare is not None:
        paper.prepare(run)
    tasks = paper.make_tasks(run)
    invocation = new_invocation_id()
    cond = conditions(run)
    if run.rank == 0 and run.out.is_dir():
        remove_stale(run.out)  # temporaries and staging folders of killed writers
    cache = RunCache(run.out / ".cache", recorded={"invocation": invocation, "machine": cond["machine"]})
    extra = {"paper": paper.name,
             "setup": {k: v for k, v in asdict(setup).items() if k not in paper.cache_ignores},
             "backend": backend, "code": code_of(paper),
             "data": data_identity(paper, run)}
    progress = progress_factory(len(tasks), paper.name) if (progress_factory and run.rank == 0) else None
    stats: dict = {}
    fn = lambda t, c: paper.run_task(t, c, run)  # noqa: E731
    check = None if paper.result_model is None else (
        lambda t, r: result_schema.problem(paper.result_model(t), r))
    results = execute(tasks, fn, cache=cache, extra=extra, progress=progress, comm=comm,
                      conditions=cond, jobs=jobs, stats=stats, check=check)
    redo = extend(paper, run, results, lambda more, label: execute(
        more, fn, cache=cache, extra=extra, comm=comm, conditions=cond, jobs=jobs, stats=stats,
        check=check,
        progress=progress_factory(len(more), label) if (progress_factory and run.rank == 0) else None))
    if results is None:
        return None
    from reproduce.report import run_metadata

    n = paper.seeds(setup)
    meta = {**run_metadata(), "paper": paper.name, "mode": mode, "seed": seed,
            "seeds": f"{seed}..{seed + n - 1}", "workers": workers, "backend": backend,
            "setup": asdict(setup),
            # the hash the task cache is keyed on (engine/, datasets/ and the paper's task code)
            "code_hash": extra["code"]}
    if "profiles" in run.context:
        meta["profiles"] = [p.as_dict() for p in run.context["profiles"]]
    meta |= {"wall_s": time.perf_counter() - t0, "loadavg_start": load0, "tasks": len(tasks) + redo,
             "tasks_redone": redo,
             "tasks_from_cache": cache.hits, "invocation": invocation, "conditions": cond,
             # seconds the tasks computed by this invocation took, by kind (emulated ones timed
             # `jobs` at a time, each slower than alone: their sum overstates one at a time)
             "task_seconds": stats["task_s"],
             # tasks that record no time (runner.Task.timed) computed here, so many at a time
             **({"untimed_jobs": stats["untimed_jobs"]} if "untimed_jobs" in stats else {}),
             "cached_from": sorted(cache.sources.values(), key=lambda s: str(s["date_utc"])),
             "null_means": NULL_MEANS, **run.meta}
    if origin is not None:
        meta["origin"] = origin
    report = importlib.import_module(paper.report)
    return write_generation(run.out, lambda staging: report.write(replace(run, out=staging), results, meta),
                            generation=invocation)
