"""``python -m reproduce validate``: the emulator held against measured runs, strategy by strategy.

Every strategy of the engine runs twice on a small instance at P = 1..N workers
(N: the cores here, ``--workers N`` to change):

- **measured**: the local backend, P forked processes, one BLAS thread each;
- **emulated**: the emulated backend under a machine profile (``here``, measured
  at start-up with :func:`engine.perfmodel.measure_here`, or the one ``--profile``
  gives), P workers in this process, each worker's compute timed alone and scaled
  by the profile, every collective charged by it (engine/comm/emulated.py).

Both runs are the same SPMD code with the same seed, so they do the same work.
The time compared is the same quantity on both backends: the slowest worker's
timed region, max over workers of Σ over rounds (compute + communication) of its
clock (:class:`engine.timing.WorkerClock`). For an emulated run that is
:attr:`engine.timing.RunRecord.time_s`; for a measured one it is the wall clock
between the start of training and the worker's last round, less the work a
strategy marks untimed (evaluation, stopping checks), which the emulated time
leaves out too. (:attr:`RunRecord.wall_s` includes that work; it is kept in the
CSV as ``measured_wall_s``.) Each time is the median of ``repeats`` runs, the
measured and the emulated run interleaved so that load on a shared machine hits
both alike; the measured spread (min–max) is printed beside it.

Verdict: ``ok`` when emulated / measured lies within ±20 % of 1 (:data:`TOLERANCE`),
``optimistic`` below (the emulator predicts a faster run than the machine gives),
``pessimistic`` above; ``noisy`` is added when the measured repeats spread by more
than the tolerance (max/min − 1), so the ratio is not to be trusted either way.
P = 1 is the serial reference of every strategy (one worker, no collectives):
its ratio checks the compute timing and the profile's speed ratio alone.

With more workers than cores here (``--workers`` above the core count) the
measured rows are labelled ``oversubscribed`` in their condition: processes then
share cores, a spin barrier waits for descheduled peers, and such a row is a
measurement of oversubscription, never of scaling; its verdict says so. On a
machine shared with other work, a row with more workers than *free* cores (the
cores less the 1-minute load average at the start, rounded: :func:`busy_cores`)
is labelled ``shared``: its workers competed with that work for cores, so it is
no clean measurement of scaling either (the label is conservative: load this
command left behind counts too).

The comparison means what it says when the profile describes this machine
(``here``, or a profile calibrated on it); under another machine's profile the
emulated column is that machine's prediction and the ratio includes its speed
ratio (printed in the header).

``--jobs N`` (N > 1) asks whether emulated timings hold when emulated runs share the
machine, as ``python -m reproduce PAPER --jobs N`` runs its emulated tasks: after the
interleaved runs above, every emulated run is repeated ``repeats`` times more, N at a time,
each in a process of its own pinned to a core with one BLAS thread
(:func:`reproduce.runner.execute`, the same pool). Its median goes in ``emulated_jobs_s``
beside the one timed alone, against the same measured runs, with its own verdict
(``verdict_jobs``). The numerics are the same either way; only the timing condition differs.

This command exits 0 whenever it ran, whatever the verdicts: they are
information. On a host with many cores the table is the emulator's acceptance
test, read by a person; on a 2-core machine it checks P = 2 only. It exits 1 on
a failure (a worker that raised, an unwritable output folder).

Written to ``<out>/validate.csv`` and ``<out>/validate.md`` (default
``results/local/validate/``, git-ignored; the committed ones: ``--out results/validate``).
"""
from __future__ import annotations

import csv
import io
import math
import os
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np

from engine.perfmodel import MachineProfile
from reproduce.store import LOCAL

TOLERANCE = 0.20  # |emulated / measured − 1| ≤ this: ok
COLUMNS = ["strategy", "paper", "instance", "P", "condition", "busy_cores", "repeats", "measured_s",
           "measured_min_s", "measured_max_s", "measured_wall_s", "emulated_s", "emulated_min_s",
           "emulated_max_s", "emulated_over_measured", "verdict", "measured_speedup",
           "emulated_speedup", "profile"]
JOBS_COLUMNS = ["jobs", "emulated_jobs_s", "emulated_jobs_min_s", "emulated_jobs_max_s",
                "emulated_jobs_over_measured", "verdict_jobs"]  # with --jobs N > 1


def cores() -> int:
    """Cores this process may run on (the smaller of the machine's count and its affinity)."""
    n = os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        n = min(n, len(os.sched_getaffinity(0)))
    return max(1, n)


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def busy_cores() -> int:
    """Cores other work keeps busy now: the 1-minute load average, rounded (0 if unknown)."""
    load = _load()
    return int(round(load)) if math.isfinite(load) else 0


def condition(P: int, ncores: int, busy: int) -> str:
    """``measured`` | ``shared`` (more workers than free cores) | ``oversubscribed`` (more
    workers than cores)."""
    return "oversubscribed" if P > ncores else "shared" if P > ncores - busy else "measured"


# ---- what one run gives ---------------------------------------------------------------------
def slowest(per_round_worker: np.ndarray) -> float:
    """max over workers of Σ over rounds of (rounds, workers) seconds."""
    x = np.asarray(per_round_worker, dtype=float)
    return float(x.sum(axis=0).max()) if x.size else 0.0


def count(k: int, what: str) -> str:
    """``k`` and ``what``, plural where k ≠ 1 (an instance's description)."""
    return f"{k} {what}{'s' if k != 1 else ''}"


def from_record(rec) -> tuple[float, float]:
    """(timed seconds, wall seconds) of a RunRecord."""
    return slowest(rec.compute_s + rec.comm_s), float(rec.wall_s)


def from_log(log: np.ndarray, wall: float) -> tuple[float, float]:
    """(timed seconds, wall seconds) of a (rounds, workers, [compute, comm, bytes]) log."""
    return slowest(log[:, :, 0] + log[:, :, 1]), float(wall)


@dataclass(frozen=True)
class Case:
    """One strategy on one small instance: ``run(backend, P, profile)`` -> (timed s, wall s),
    e.g. :func:`from_record` of the run's RunRecord. ``strategy`` is its name in
    :func:`strategies` (set by :func:`cases`)."""

    paper: str
    instance: str
    run: Callable[[str, int, MachineProfile | None], tuple[float, float]]
    max_P: int | None = None  # the most workers the instance can be split over (None: any)
    strategy: str = ""


# ---- the strategies, each on a small instance: the papers register them ---------------------
# {name: builder(quick) -> Case}; empty: every registered paper's (``Paper.strategies``, each
# package's strategies.py), in the order of the paper list. A test may set it.
STRATEGIES: dict = {}


def strategies() -> dict:
    """The strategies ``validate`` runs, by name: :data:`STRATEGIES` where set, else those
    of every paper in reproduce/papers.py, in its order."""
    if STRATEGIES:
        return STRATEGIES
    from reproduce import papers

    out = {}
    for entry in papers.PAPERS:
        out.update(papers.load(entry["name"]).strategies)
    return out


def cases(quick: bool = False, only=None) -> list[Case]:
    """The cases of :func:`strategies` (``only``: those names), built for ``quick`` or not."""
    table = strategies()
    names = list(table) if only is None else list(only)
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; choose from {list(table)}")
    return [replace(table[n](quick), strategy=n) for n in names]


# ---- running and judging -----------------------------------------------------------------------
def spread(lo: float, hi: float) -> float:
    """How far the measured repeats spread: max / min − 1 (inf when the fastest took 0 s)."""
    return hi / lo - 1 if lo > 0 else float("inf")


def verdict(ratio: float, spread: float, condition: str) -> str:
    """``ok`` | ``optimistic`` | ``pessimistic`` against :data:`TOLERANCE`, ``noisy`` added when
    the measured spread exceeds it; oversubscribed and shared rows say so."""
    if not math.isfinite(ratio):
        return "failed"
    v = "ok" if abs(ratio - 1) <= TOLERANCE else "optimistic" if ratio < 1 else "pessimistic"
    if spread > TOLERANCE:
        v += ", noisy"
    if condition == "oversubscribed":
        v = f"oversubscribed ({v}): not scaling"
    elif condition == "shared":
        v = f"shared ({v}): other work held cores"
    return v


def _profile_or_here(profile):
    if profile is not None:
        return profile
    from engine.perfmodel import measure_here

    return measure_here()


def pooled_emulated(runs: list[tuple[Case, int]], profile: MachineProfile, repeats: int,
                    jobs: int) -> dict:
    """{(strategy, P): [emulated timed seconds] * repeats} of every (case, P) in ``runs``,
    run ``jobs`` at a time in the pool that ``--jobs`` gives a paper's emulated tasks
    (:func:`reproduce.runner.execute`: forked processes, each pinned to a core, one BLAS
    thread), in the order of ``runs``, repeat by repeat."""
    from reproduce.runner import Task, execute

    by_name = {c.strategy: c for c, _ in runs}
    tasks = [Task(c.strategy, "emulated", 1, {"P": P, "repeat": k})
             for k in range(repeats) for c, P in runs]
    done = execute(tasks, lambda t, _comm: {"s": by_name[t.name].run("emulated", t.params["P"], profile)[0]},
                   cache=None, extra={}, jobs=jobs)
    out: dict = {}
    for t, res in done:
        out.setdefault((t.name, t.params["P"]), []).append(res["s"])
    return out


def validate(*, workers: int, profile: MachineProfile | None = None, quick: bool = False,
             repeats: int = 3, only=None, busy: int | None = None, jobs: int = 1,
             Ps=None, progress: Callable[[str], None] | None = None) -> list[dict]:
    """Rows of the validation table: every strategy (:func:`cases`; ``only``: those named)
    at P = 1..``workers`` (``Ps``: those P only, each ≤ ``workers``), measured on the local
    backend and emulated under ``profile`` (None: ``here``, measured now). ``repeats`` runs
    of each (median); ``quick``: smaller instances; ``busy``: cores other work holds (None:
    :func:`busy_cores` now), for the ``shared`` label; ``jobs`` > 1: every emulated run again,
    ``jobs`` at a time (:func:`pooled_emulated`; the module docstring); ``progress`` gets a
    line per row."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    Ps = list(range(1, workers + 1)) if Ps is None else sorted(set(Ps))
    if not Ps or Ps[0] < 1 or Ps[-1] > workers:
        raise ValueError(f"Ps must lie in 1..{workers}, got {Ps}")
    busy = busy_cores() if busy is None else busy
    prof = _profile_or_here(profile)
    ncores = cores()
    rows = []
    ran = []  # (case, P) with a measured row, for the pooled pass
    for case in cases(quick, only):
        base = {}
        for P in Ps:
            cond = condition(P, ncores, busy)
            row = {"strategy": case.strategy, "paper": case.paper, "instance": case.instance,
                   "P": P, "condition": cond, "busy_cores": busy, "repeats": repeats,
                   "profile": prof.name}
            if case.max_P is not None and P > case.max_P:
                nan = float("nan")
                rows.append({**row, **{k: nan for k in COLUMNS if k.endswith(("_s", "speedup"))},
                             "emulated_over_measured": nan,
                             "verdict": f"n/a: the instance splits over at most {case.max_P}"})
                continue
            meas, walls, emus = [], [], []
            for _ in range(repeats):  # interleaved: load on a shared machine hits both alike
                t, w = case.run("local", P, None)
                meas.append(t)
                walls.append(w)
                # Untimed first: the local run forked its workers from this process, whose
                # pages then take a copy-on-write fault at their next write (about 860, up to
                # 30 ms on the 2-core VM: results/machines/dev2/issue32/validate_jobs2/).
                case.run("emulated", P, prof)
                emus.append(case.run("emulated", P, prof)[0])
            m, e = float(np.median(meas)), float(np.median(emus))
            ratio = e / m if m > 0 else float("nan")
            if P == 1:
                base = {"m": m, "e": e}
            ran.append((case, P))
            rows.append({
                **row, "measured_s": m, "measured_min_s": min(meas), "measured_max_s": max(meas),
                "measured_wall_s": float(np.median(walls)), "emulated_s": e,
                "emulated_min_s": min(emus), "emulated_max_s": max(emus),
                "emulated_over_measured": ratio,
                "verdict": verdict(ratio, spread(min(meas), max(meas)), cond),
                "measured_speedup": base["m"] / m if base and m > 0 else float("nan"),
                "emulated_speedup": base["e"] / e if base and e > 0 else float("nan")})
            if progress:
                progress(f"{case.strategy} P={P}: measured {m:.3g} s, emulated {e:.3g} s")
    if jobs > 1:
        if progress:
            progress(f"the emulated runs again, {jobs} at a time")
        pooled = pooled_emulated(ran, prof, repeats, jobs)
        for r in rows:
            got = pooled.get((r["strategy"], r["P"]))
            if not got:
                continue
            ej, m = float(np.median(got)), r["measured_s"]
            ratio = ej / m if m > 0 else float("nan")
            r.update({"jobs": jobs, "emulated_jobs_s": ej, "emulated_jobs_min_s": min(got),
                      "emulated_jobs_max_s": max(got), "emulated_jobs_over_measured": ratio,
                      "verdict_jobs": verdict(ratio, spread(r["measured_min_s"], r["measured_max_s"]),
                                              r["condition"])})
    return rows


# ---- output ------------------------------------------------------------------------------------
def _g(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}g}" if math.isfinite(x) else "—"


def markdown(rows: list[dict]) -> str:
    """The table: one line per strategy and P."""
    jobs = max((r.get("jobs", 1) for r in rows), default=1)
    head = ["strategy", "paper", "instance", "P", "condition", "measured s (median, min–max)",
            "emulated s", "emulated / measured", "speedup measured / emulated", "verdict"]
    if jobs > 1:
        head += [f"emulated s, {jobs} at a time (min–max)", f"emulated / measured, {jobs} at a time",
                 f"verdict, {jobs} at a time"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            r["strategy"], r["paper"], r["instance"], str(r["P"]), r["condition"],
            f"{_g(r['measured_s'])} ({_g(r['measured_min_s'])}–{_g(r['measured_max_s'])})",
            _g(r["emulated_s"]), _g(r["emulated_over_measured"], 2),
            f"{_g(r['measured_speedup'], 2)} / {_g(r['emulated_speedup'], 2)}",
            r["verdict"]]
        if jobs > 1:
            cells += ([f"{_g(r['emulated_jobs_s'])} ({_g(r['emulated_jobs_min_s'])}–"
                       f"{_g(r['emulated_jobs_max_s'])})", _g(r["emulated_jobs_over_measured"], 2),
                       r["verdict_jobs"]] if "jobs" in r else ["—"] * 3)
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_csv(rows: list[dict], path: Path) -> None:
    from reproduce.store import atomic_write

    cols = COLUMNS + (JOBS_COLUMNS if any("jobs" in r for r in rows) else [])
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()
                    if k in cols})
    atomic_write(Path(path), buf.getvalue())


def _describe(prof: MachineProfile) -> str:
    """The numbers behind a profile's emulated times, in a few words."""
    if prof.calibrated:
        Ps = sorted({P for t in prof.coll.values() for P in t})
        return (f"collectives measured at P = {', '.join(map(str, Ps))}; contention of "
                f"{', '.join(sorted(prof.contention)) or 'no kernel'}; compute ratio "
                f"{prof.compute_ratio:.3g}")
    return f"α = {prof.latency_s * 1e6:.3g} µs, β = {prof.bandwidth_Bps / 1e9:.3g} GB/s"


def _header(prof: MachineProfile, workers: int, quick: bool, repeats: int, load: float,
            busy: int, jobs: int = 1) -> str:
    pooled = ([f"- {jobs} at a time: every emulated run again, {count(repeats, 'run')} each, "
               f"{jobs} at a time in processes pinned to a core each (`--jobs {jobs}`), after "
               "the interleaved runs; the same measured runs are the reference"] if jobs > 1 else [])
    return "\n".join([
        f"# Emulator validation ({'quick' if quick else 'default'} instances)", "",
        f"- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; cores here: "
        f"{cores()}; P = 1..{workers}; 1-min load at start: {load:.2f} ({busy} of {cores()} "
        "cores counted busy)",
        f"- profile: `{prof.name}`: {_describe(prof)} ({prof.source})",
        f"- times: the slowest worker's timed region (compute + collectives), median of "
        f"{count(repeats, 'run')}, measured on local processes and emulated interleaved",
        f"- verdict: ok when emulated / measured is within ±{TOLERANCE:.0%} of 1; optimistic "
        "below (the emulator predicts faster than measured), pessimistic above; noisy when the "
        "measured runs spread by more than that; P = 1 is the serial reference",
        "- rows with more workers than cores are `oversubscribed`, with more than the free cores "
        "`shared`: neither is a clean measurement of scaling", *pooled, "", ""])


def main(args, comm=None) -> int:
    """Run the validation for ``args`` (workers, profile, quick, out), print the table and write
    validate.csv and validate.md under ``args.out`` (default results/local/validate/;
    the committed ones: --out results/validate). 0 when it ran,
    1 on a failure (one line on stderr)."""
    import sys

    from reproduce.store import atomic_write, check_writable

    if comm is not None and comm.size > 1:
        if comm.rank == 0:
            print("error: validate measures on local processes; run it without mpiexec",
                  file=sys.stderr)
        return 1
    out = Path(args.out) if getattr(args, "out", None) else LOCAL / "validate"
    workers = getattr(args, "workers", None) or cores()
    quick = bool(getattr(args, "quick", False))
    repeats = 1 if quick else 3
    jobs = getattr(args, "jobs", None) or 1
    load0, busy, t0 = _load(), busy_cores(), time.perf_counter()
    try:
        check_writable(out)
        prof = _profile_or_here(getattr(args, "profile", None))
        rows = validate(workers=workers, profile=prof, quick=quick, repeats=repeats, busy=busy,
                        jobs=jobs, progress=lambda s: print(s, file=sys.stderr, flush=True))
        text = (_header(prof, workers, quick, repeats, load0, busy, jobs) + markdown(rows)
                + f"\n\nRan in {time.perf_counter() - t0:.0f} s; 1-min load at the end: "
                f"{_load():.2f}.\n")
        write_csv(rows, out / "validate.csv")
        atomic_write(out / "validate.md", text)
    except Exception as e:  # noqa: BLE001 - one line
        print(f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
              file=sys.stderr)
        return 1
    print(text)
    print(f"wrote {out / 'validate.csv'} and {out / 'validate.md'}")
    return 0
