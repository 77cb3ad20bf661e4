"""Comparison rows, report files and the cross-paper index (docs/engine.md).

One long-format table serves every paper: ``results/<paper>/comparison.csv``
with :data:`COLUMNS`. ``verdict`` is ``close`` when ours is within
``tolerance`` (relative) of the paper's value, ``differs`` otherwise, and
``no-paper-value`` where the paper gives none. Two more verdicts are set by rule
(:func:`rules`: shared ones and each paper's own), never by hand per row: ``by-construction`` where ours cannot differ
from the paper's (an identity, a value we took from the paper), ``not-comparable``
where it cannot agree (an absolute time on this machine against the paper's). Both are
counted apart from close and differs everywhere (:func:`fidelity`).

A row's verdict is a point against a band: detail, not an answer. The answers are the
papers' claims (reproduce/claims.py), judged on intervals; the index (:func:`build_index`),
what `report` prints (:func:`screen_lines`) and the README's block (:func:`readme_claims`)
open with them.
"""
from __future__ import annotations

import json
import math
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from reproduce.spread import ci_note
from reproduce.store import atomic_write, dumps

COLUMNS = ["paper", "table", "quantity", "condition", "unit", "reported", "ours", "ours_low",
           "ours_high", "kind", "runs", "ratio", "verdict", "note"]
KINDS = ("measured", "emulated", "modeled", "reported")
VERDICTS = ("close", "differs", "by-construction", "not-comparable", "no-paper-value")
# Fixed key order of the ``condition`` column; other keys follow alphabetically.
CONDITION_ORDER = ["nodes", "workers", "local_epoch", "bunch", "hidden", "layers", "width", "Q",
                   "backend", "profile", "combine", "init"]
DEFAULT_TOLERANCE = 0.10


def condition(**kv) -> str:
    keys = [k for k in CONDITION_ORDER if k in kv] + sorted(k for k in kv if k not in CONDITION_ORDER)
    return ";".join(f"{k}={kv[k]}" for k in keys if kv[k] is not None)


def verdict(reported, ours, tolerance: float = DEFAULT_TOLERANCE) -> tuple[float, str]:
    if reported is None or (isinstance(reported, float) and math.isnan(reported)):
        return float("nan"), "no-paper-value"
    if ours is None or (isinstance(ours, float) and math.isnan(ours)) or reported == 0:
        return float("nan"), "differs"
    r = ours / reported
    return r, ("close" if abs(r - 1) <= tolerance else "differs")


def parse_condition(cond: str) -> dict:
    """``"nodes=2;profile=here"`` → ``{"nodes": "2", "profile": "here"}`` (values stay strings)."""
    return dict(kv.split("=", 1) for kv in str(cond or "").split(";") if "=" in kv)


def _workers(c: dict) -> str | None:
    return c.get("nodes", c.get("workers"))


SPEEDUPS = ("speedup", "aggregate_speedup", "relative_performance", "overall_speedup")

# The rules every paper shares that set a verdict other than close/differs; a paper adds
# its own (``RULES`` in its report module), tried between the first and the last of these,
# first match wins. Each: (verdict, name, test on the row's fields, reason appended to the
# row's note). The test sees paper, table, quantity, c (the condition as a dict), unit,
# kind, reported.
RULES_FIRST = [
    ("by-construction", "P = 1 identity",
     lambda r: (r.quantity in SPEEDUPS and _workers(r.c) == "1" and r.kind == "modeled"
                and r.reported == 1),
     "a modeled speedup at P = 1 is the model's serial time over itself, 1 by definition, "
     "as is the paper's"),
]
RULES_LAST = [
    ("not-comparable", "absolute time",
     lambda r: r.unit == "s" and r.kind in ("measured", "emulated"),
     "an absolute time with compute as measured on this 2026 machine (every profile here "
     "leaves compute unscaled) against the paper's 1994–2008 hardware"),
    ("not-comparable", "absolute rate",
     lambda r: r.unit in ("MCUPS", "MCPS") and r.kind in ("measured", "emulated"),
     "an absolute rate of this 2026 machine against the paper's 1997 boards"),
]


def rules(paper: str) -> list:
    """The rules a row of ``paper`` is tried against, in order: :data:`RULES_FIRST`, the
    paper's own (``RULES`` of its report module, through the paper list), :data:`RULES_LAST`."""
    import importlib

    from reproduce.papers import BY_NAME

    mod = (BY_NAME.get(paper) or {}).get("module")
    own = getattr(importlib.import_module(f"{mod}.report"), "RULES", []) if mod else []
    return [*RULES_FIRST, *own, *RULES_LAST]


def rule_verdict(paper: str, table: str, quantity: str, cond: str, unit: str, *, kind: str,
                 reported) -> tuple[str, str] | None:
    """The (verdict, reason) of the first rule of :func:`rules` that matches a row with a
    paper value, else None (the row keeps close/differs). Why a rule and not a flag per
    row: the same kind of row gets the same verdict wherever it appears, and a reader sees
    every exception of a paper in one table."""
    if reported is None or (isinstance(reported, float) and math.isnan(reported)):
        return None
    from types import SimpleNamespace

    r = SimpleNamespace(paper=paper, table=table, quantity=quantity, c=parse_condition(cond),
                        unit=unit, kind=kind, reported=reported)
    for v, _name, test, reason in rules(paper):
        if test(r):
            return v, reason
    return None


def row(paper: str, table: str, quantity: str, cond: str, unit: str, *, reported=None, ours=None,
        low=None, high=None, kind: str, runs: int = 1, note: str = "",
        tolerance: float = DEFAULT_TOLERANCE) -> dict:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    ratio, v = verdict(reported, ours, tolerance)
    ruled = rule_verdict(paper, table, quantity, cond, unit, kind=kind, reported=reported)
    if ruled is not None:
        v = ruled[0]
        note = f"{note}; {v}: {ruled[1]}" if note else f"{v}: {ruled[1]}"
    return {"paper": paper, "table": table, "quantity": quantity, "condition": cond, "unit": unit,
            "reported": reported, "ours": ours, "ours_low": low, "ours_high": high, "kind": kind,
            "runs": runs, "ratio": ratio, "verdict": v, "note": note}


def spread_row(paper: str, table: str, quantity: str, cond: str, unit: str, values, *, kind: str,
               note: str = "", drop_missing: bool = False, **kw) -> dict:
    """A :func:`row` of repeated values: their median in ``ours``, min–max in
    ``ours_low/high``, ``runs`` their count and, from 3 finite values on, the percentile
    bootstrap interval of the median in the note (issue 13 item 6; reproduce/spread.py,
    seeded by the row's own label so that a rebuild gives the same interval).
    ``drop_missing``: leave None and NaN out first (a run that has no value for this
    quantity); otherwise one NaN makes the median NaN and the interval is left out."""
    vals = list(values)
    if drop_missing:
        vals = [x for x in vals if x is not None and not math.isnan(x)]
    v = np.asarray(vals, dtype=float)
    med, lo, hi = ((float(np.median(v)), float(v.min()), float(v.max())) if v.size
                   else (math.nan, math.nan, math.nan))
    ci = ci_note(v, label=f"{paper} {table} {quantity} {cond}") if np.all(np.isfinite(v)) else ""
    note = f"{note}; {ci}" if note and ci else (note or ci)
    return row(paper, table, quantity, cond, unit, ours=med, low=lo, high=hi, kind=kind,
               runs=kw.pop("runs", int(v.size)), note=note, **kw)


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


RESULTS_DIR = "results"  # the committed results: rewriting them is not a change of code


def code_version(root: Path | None = None) -> dict:
    """The commit the code ran from and whether tracked files outside ``results/`` differed
    from it (None outside a git checkout), so a committed result names the code that
    produced it. ``results/`` is left out of the check: `reproduce all` rewrites
    the first paper's results before the next paper's summary is made, and that is no change
    of code."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[1]

    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()

    try:
        return {"commit": git("rev-parse", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--untracked-files=no", "--", ".",
                                  f":(exclude){RESULTS_DIR}"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def run_metadata(**extra) -> dict:
    def v(pkg):
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return None

    import os

    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": sys.version.split()[0], "platform": platform.platform(),
        "machine": platform.machine(), "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "code": code_version(),
        # The machine is shared: the 1/5/15-minute load average when the run ended.
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "versions": {p: v(p) for p in ("numpy", "scipy", "pandas", "seaborn", "multiprocess",
                                        "mpi4py", "parallel-nn-repro")},
        **extra,
    }


def jobs_line(meta: dict) -> list[str]:
    """A report's note, under its Run line, when the emulated tasks ran several at a time
    (``--jobs``, :func:`reproduce.runner.execute`): a condition of their compute timings; when
    the tasks that record no time shared the cores (``meta["untimed_jobs"]``); and how long
    the tasks computed by this run took, summed."""
    jobs = (meta.get("conditions") or {}).get("jobs", 1)
    ts = meta.get("task_seconds") or {}
    took = ", ".join(f"{kind} {s:,.0f} s" for kind, s in sorted(ts.items()))
    took = (f" Time the tasks computed by this invocation took, summed over tasks: {took} (the "
            "wall time is shorter where tasks overlapped)." if took else "")
    shared = meta.get("untimed_jobs", 1)
    out = []
    if shared > 1:  # the tasks that record no time shared the cores (reproduce/runner.py)
        out += [f"The tasks that record no time (training whose results are what the model learnt) "
                f"ran {shared} at a time, each in a process of its own with one BLAS thread, after "
                "every timed task; no time in these results comes from them." + ("" if jobs > 1 else took),
                ""]
    if jobs <= 1 or ("emulated" not in ts and not meta.get("tasks_from_cache")):
        return out  # one at a time, or no emulated task to speak of (a paper may have none)
    return out + [f"Emulated tasks ran {jobs} at a time, each in a process of its own with one BLAS "
                  "thread (`--jobs`): their compute was timed beside the others, which makes it slower "
                  "than alone (docs/cli.md, `--jobs`); measured tasks ran alone." + took, ""]


def origin_line(meta: dict) -> list[str]:
    """A report's note, under its Run line, when the files were rebuilt from an earlier
    run's task cache: which run computed the task results (``meta["origin"]``)."""
    o = meta.get("origin")
    if not o:
        return []
    code = o.get("code") or {}
    load = o.get("loadavg_start") or o.get("loadavg_1min_during_tasks") or "–"
    earlier = o.get("cached_from") or []  # the run itself resumed from earlier invocations' tasks
    resumed = (f" That run resumed from {len(earlier)} earlier invocation{'s' * (len(earlier) != 1)} at the "
               "same code (" + "; ".join(f"{s.get('date_utc', '–')}: {s.get('tasks', '–')} tasks, "
                                         f"{s.get('seconds', float('nan')):,.0f} s of tasks, load "
                                         f"{s.get('load_1min', '–')} as its first task began" for s in earlier)
               + f"), and computed {(o.get('tasks') or 0) - (o.get('tasks_from_cache') or 0)} itself."
               if earlier else "")
    return [f"> **Rebuilt from the task cache** ({meta.get('tasks_from_cache')} of {meta.get('tasks')} "
            f"tasks). The task results (every measured and emulated time, every trained model) "
            f"were computed by the run of {o.get('date_utc', '–')} with the project at "
            f"`{(code.get('commit') or '–')[:7]}`, wall time {o.get('wall_s', float('nan')):.0f} s, "
            f"load average {load} at its start; the profiles it measured at start-up are reused.{resumed} "
            f"This invocation ({meta.get('date_utc')}, project at "
            f"`{((meta.get('code') or {}).get('commit') or '–')[:7]}`) only recomposed the tables "
            "and text with the code as it stands (tools/rebuild_from_cache.py)."
            + (f" {o['note']}" if o.get("note") else ""), ""]


def write_tables(out: Path, rows: list[dict], meta: dict) -> pd.DataFrame:
    """comparison.csv and summary.json, each written atomically."""
    df = frame(rows)
    atomic_write(out / "comparison.csv", df.to_csv(index=False, float_format="%.6g"))
    atomic_write(out / "summary.json", dumps({"meta": meta, "rows": df.to_dict(orient="records")}))
    return df


def not_a_program(module: str) -> int:
    """What ``python -m reproduce.paperN.report ...`` gets: one line, exit 2, whatever the
    arguments (issue 33: it used to import, do nothing and exit 0)."""
    import sys

    paper = module.split(".")[1] if module.count(".") >= 2 else "paperN"
    print(f"error: {module} is not a command: python -m reproduce {paper} writes its report "
          "(tools/rebuild_from_cache.py rebuilds it from a run's task cache)", file=sys.stderr)
    return 2


def fmt(x, digits: int = 3) -> str:
    """A number for a report: "–" for None or NaN, an integer (numpy's too) or an integral
    float below 1e7 with thousands separators, else ``digits`` significant digits (fixed
    from 1e−3 to 1e4, e-notation outside). Numpy integers used to fall through to the float
    branches (np.int64(3) printed "3.00", 123456 as "1.23e+05") and a numpy float32 NaN
    raised (tests/harness/test_report_fmt.py)."""
    if x is None or (isinstance(x, (float, np.floating)) and math.isnan(x)):
        return "–"
    if isinstance(x, str):
        return x
    if isinstance(x, (int, np.integer)) or (isinstance(x, (float, np.floating))
                                            and float(x).is_integer() and abs(x) < 1e7):
        return f"{int(x):,}"
    ax = abs(x)
    if ax >= 1e4 or ax < 1e-3:
        return f"{x:.{digits}g}"
    return f"{x:.{digits}g}" if ax < 1 else f"{x:,.{max(digits - int(math.log10(ax)) - 1, 0)}f}"


def markdown_table(df: pd.DataFrame, columns: list[str] | None = None) -> str:
    columns = columns or list(df.columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(fmt(r[c]) if not isinstance(r[c], str) else r[c]
                                      for c in columns) + " |")
    return "\n".join(lines)


def comparison_markdown(df: pd.DataFrame) -> str:
    """Every row: reported beside ours with spread, ratio, kind and verdict."""
    d = df.copy()
    d["ours (min–max)"] = [
        fmt(o) + (f" ({fmt(lo)}–{fmt(hi)})" if lo is not None and not pd.isna(lo) else "")
        for o, lo, hi in zip(d["ours"], d["ours_low"], d["ours_high"])]
    return markdown_table(d, ["table", "quantity", "condition", "unit", "reported",
                              "ours (min–max)", "ratio", "kind", "runs", "verdict", "note"])


def fidelity(df: pd.DataFrame) -> dict:
    """Rows per verdict; close and differs never include by-construction or not-comparable."""
    c = df["verdict"].value_counts()
    return {k: int(c.get(k, 0)) for k in VERDICTS}


QUICK_MARK = "**QUICK RUN**"


def quick_banner(shrunk: list[str]) -> list[str]:
    """A report.md's first lines after its title when the run was ``--quick``: the same
    mark the index and the command-line table use, and what was shrunk (issue 13 item 7)."""
    if not shrunk:
        return []
    return [f"> {QUICK_MARK}: shrunk settings (`--quick`), not the paper's setup; no number "
            "here is a reproduction. Shrunk: " + "; ".join(shrunk) + ".", ""]


HEADLINE_MARK = "**Headline.** "  # a report's one-line headline under its claims


CLAIM_COUNT_COLUMNS = ["claims", "reproduced", "not-reproduced", "inconclusive", "by-construction",
                       "not-comparable"]


def claims_of(results: Path, names: list[str]) -> dict:
    """name → its claims table (reproduce/claims.py) for the papers under ``results`` that have
    one; a claims.csv that does not read raises :class:`ResultsError` naming the file."""
    from reproduce import claims as C

    out = {}
    for n in names:
        f = Path(results) / n / "claims.csv"
        if f.exists():
            try:
                out[n] = C.read(f.parent)
            except (ValueError, UnicodeDecodeError) as e:  # pandas' ParserError, EmptyDataError too
                why = str(e).splitlines()[0] if str(e) else type(e).__name__
                # claims.read names the file; pandas' own errors do not (a binary or empty
                # claims.csv used to give "No columns to parse from file" and no file name)
                raise ResultsError(why if str(f) in why else f"{f}: not a readable CSV ({why})") from None
    return out


def claim_counts_table(claim_frames: dict, papers: list[dict], *, quick=()) -> list[str]:
    """Per paper, its claims counted by verdict (one claim counts once, whatever rows it
    rests on); a paper without a claims table gets dashes."""
    from reproduce import claims as C

    L = ["| paper | " + " | ".join(CLAIM_COUNT_COLUMNS) + " |", "|---" * (len(CLAIM_COUNT_COLUMNS) + 1) + "|"]
    total = dict.fromkeys(CLAIM_COUNT_COLUMNS, 0)
    for p in papers:
        name = p["name"]
        label = f"{name} (QUICK)" if name in quick else name
        if name not in claim_frames:
            L.append(f"| {label} | " + " | ".join("–" for _ in CLAIM_COUNT_COLUMNS) + " |")
            continue
        c = {"claims": len(claim_frames[name]), **C.counts(claim_frames[name])}
        total = {k: total[k] + c[k] for k in CLAIM_COUNT_COLUMNS}
        L.append(f"| {label} | " + " | ".join(str(c[k]) for k in CLAIM_COUNT_COLUMNS) + " |")
    L.append("| **all** | " + " | ".join(str(total[k]) for k in CLAIM_COUNT_COLUMNS) + " |")
    return L


def screen_lines(results: Path, papers: list[dict]) -> list[str]:
    """What `report` and `all` print: every paper's files checked first (:func:`check_paper`),
    then the claims counted per paper and every claim with its interval and verdict. Quick
    runs are marked, with a banner line above."""
    from reproduce import claims as C

    names = indexed(results, papers)
    for n in names:
        check_paper(Path(results) / n)
    cf = claims_of(results, names)
    quick = quick_papers(Path(results), names)
    banner = ([f"{QUICK_MARK} ({', '.join(quick)}): shrunk settings (--quick); no number here is "
               "a reproduction.", ""] if quick else [])
    L = banner + claim_counts_table(cf, papers, quick=quick)
    if cf:
        L += ["", *C.markdown(pd.concat(list(cf.values()), ignore_index=True), with_paper=True)]
    return L


class ResultsError(ValueError):
    """A paper's results folder whose files are not one consistent generation (a truncated
    or foreign comparison.csv, a summary.json from another run); the message names the file."""


NUMERIC = ["reported", "ours", "ours_low", "ours_high", "runs", "ratio"]


def check_paper(folder: Path) -> pd.DataFrame:
    """``folder/comparison.csv`` read and checked, or :class:`ResultsError` naming the file:
    the columns (:data:`COLUMNS`), its row count against its ``summary.json`` (first: a cut
    file is most often cut mid-row), then that numbers parse and kinds and verdicts are known.

    Why: a run killed mid-write, or a file cut short by a full disk, still parses as a
    CSV; an index built from it would quietly show 8 rows of 45. summary.json may hold
    null (or, from older runs, NaN) for missing values: only its row count is read."""
    from reproduce.store import GenerationError, check_generation

    try:  # one generation: every file its MANIFEST.json lists, as written (reproduce/store.py)
        check_generation(Path(folder))
    except GenerationError as e:
        raise ResultsError(str(e)) from None
    f = Path(folder) / "comparison.csv"
    try:
        df = pd.read_csv(f, keep_default_na=True)
    except (ValueError, UnicodeDecodeError) as e:  # pandas' ParserError and EmptyDataError too
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ResultsError(f"{f}: not a readable CSV ({why})") from None
    if list(df.columns) != COLUMNS:
        missing = [c for c in COLUMNS if c not in df.columns]
        extra = [str(c) for c in df.columns if c not in COLUMNS]
        what = "; ".join([f"missing {', '.join(missing)}"] * bool(missing)
                         + [f"unexpected {', '.join(extra)}"] * bool(extra)) or "wrong order"
        raise ResultsError(f"{f}: columns are not the comparison format ({what})")
    s = f.with_name("summary.json")
    try:
        n = len(json.loads(s.read_text())["rows"])
    except FileNotFoundError:
        raise ResultsError(f"{f}: no summary.json beside it (an interrupted write?)") from None
    except (ValueError, KeyError, TypeError) as e:
        raise ResultsError(f"{s}: not a run summary with rows ({type(e).__name__})") from None
    if n != len(df):
        raise ResultsError(f"{f}: {len(df)} rows, but {s.name} lists {n} (truncated, or from "
                           "another run)")
    for c in NUMERIC:
        bad = pd.to_numeric(df[c], errors="coerce").isna() & df[c].notna()
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            raise ResultsError(f"{f}: row {i + 1}: {c} = {df[c].iloc[i]!r} is not a number")
    for c, allowed in (("kind", KINDS), ("verdict", VERDICTS)):
        bad = ~df[c].isin(allowed)
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            raise ResultsError(f"{f}: row {i + 1}: {c} = {df[c].iloc[i]!r} is not one of "
                               f"{', '.join(allowed)}")
    return df


def indexed(results: Path, papers: list[dict]) -> list[str]:
    """The papers with a comparison.csv under ``results`` (what :func:`build_index` shows)."""
    return [p["name"] for p in papers if (Path(results) / p["name"] / "comparison.csv").exists()]


def quick_papers(results: Path, names: list[str]) -> list[str]:
    """Of ``names``, the papers whose summary.json under ``results`` records a ``--quick``
    run (meta ``mode``), for the index's QUICK mark."""
    def mode(name):
        try:
            return json.loads((Path(results) / name / "summary.json").read_text())["meta"].get("mode")
        except (OSError, ValueError, KeyError, TypeError):
            return None

    return [n for n in names if mode(n) == "quick"]


def build_index(results: Path, papers: list[dict]) -> str:
    """results/index.md: the claims of every paper first (one screen: counts per claim, then
    each claim with the paper's value, ours with its interval, kind and host, verdict and
    reason), then per paper its comparison rows. Every paper's files are checked
    (:func:`check_paper`) before any text is made, so a bad one raises ResultsError and the
    caller writes nothing."""
    from reproduce import claims as C

    frames = {name: check_paper(results / name) for name in indexed(results, papers)}
    frames = {k: v.astype({"note": "object"}).fillna({"note": ""}) for k, v in frames.items()}
    cf = claims_of(results, list(frames))
    quick = quick_papers(results, list(frames))
    out = ["# Reproduction results", "",
           "Built by `python -m reproduce report` from each paper's committed "
           "`results/<paper>/claims.csv` and `comparison.csv`; a test checks that this file is what "
           "they give.", ""]
    if quick:
        out += [f"> {QUICK_MARK} ({', '.join(quick)}): shrunk settings (`--quick`), not the "
                "committed results; no number here is a reproduction.", ""]
    out += ["## Claims", "",
            "Each paper's claims, counted once each, judged on an interval, never a point: "
            "`reproduced` (the interval lies inside the band, or on the claimed side), "
            "`not-reproduced` (wholly outside), `inconclusive` (it straddles: the reason says what "
            "would decide it), `by-construction` and `not-comparable` (by rule). Method: "
            + C.METHOD + ". Kinds: measured (timed on the host named), emulated (measured compute, "
            "a machine profile's communication), modeled (a formula).", "",
            *claim_counts_table(cf, papers, quick=quick), ""]
    if cf:
        out += [*C.markdown(pd.concat([cf[n] for n in (p["name"] for p in papers) if n in cf],
                                      ignore_index=True), with_paper=True), ""]
    missing = [n for n in frames if n not in cf]
    if missing:
        out += [f"No claims table yet for {', '.join(missing)}: their committed results predate the "
                "claims and are shown row by row below only.", ""]
    sections = []
    for p in papers:
        if p["name"] not in frames:
            continue
        df = frames[p["name"]]
        fi = fidelity(df)
        sections += [f"## {p['name']}: {p['authors']} {p['year']}, *{p['title']}*"
                     f"{' (**QUICK**)' if p['name'] in quick else ''}", "",
                     f"[report]({p['name']}/report.md). Every comparison row, each judged on its own "
                     f"point with the ±{DEFAULT_TOLERANCE:.0%} rule of reproduce/report.py (the claims "
                     f"above are the verdicts): {fi['close']} close, {fi['differs']} differ, "
                     f"{fi['by-construction']} by construction, {fi['not-comparable']} not "
                     f"comparable, {fi['no-paper-value']} without a paper value.", "",
                     comparison_markdown(df), ""]
    return "\n".join(out + sections)


# ---- the emulator's validation (issue 12): emulated beside measured ------------------
EMULATOR_PARAGRAPH = (
    "**How emulated rows are made.** An emulated run executes every worker's code in "
    "this process and times each worker's compute alone, as a worker with a core of its "
    "own would run it. The machine comes from a named profile "
    "(`engine.perfmodel.MachineProfile`): each worker's compute is multiplied by the "
    "profile's speed ratio (its reference kernels' time there over here) and by its "
    "measured contention factor for P workers running at once; every synchronisation then "
    "waits for the expected slowest of P workers (the measured straggler factor) and costs "
    "the collective's measured time at that P and message size, interpolated between "
    "measured sizes and P, and extrapolated beyond the largest measured P with the "
    "algorithm's log P (latency) and P − 1 (bytes) forms. A profile without those tables "
    "(`here`, measured at start-up between 2 processes, and the papers' machines) prices "
    "collectives from one latency α and one bandwidth β and leaves compute as measured. "
    "An emulated figure is only as good as its agreement with measured runs: the "
    "`emulated_over_measured` rows below give it wherever both exist.")


def emulator_error(pairs) -> float | None:
    """The largest emulator error: per (P, configuration), the median over its runs of
    emulated / measured time; of those, the one furthest from 1 (in either direction).
    Medians, so that one disturbed measured run does not stand for a configuration.
    None without a finite pair."""
    groups: dict = {}
    for p in pairs:
        if p["measured_s"] and math.isfinite(p["emulated_s"]) and math.isfinite(p["measured_s"]):
            groups.setdefault((p["P"], p.get("config")), []).append(p["emulated_s"] / p["measured_s"])
    meds = [float(pd.Series(v).median()) for v in groups.values()]
    return max(meds, key=lambda r: abs(math.log(r))) if meds else None


def validation_rows(paper: str, pairs, *, profile: str, table: str = "emulator") -> list[dict]:
    """One ``emulated_over_measured`` row per P (kind emulated, no paper value): the median
    over the configurations measured at that P of emulated time / measured time, with the
    range; ``pairs`` are dicts with P, config (a short label), emulated_s, measured_s."""
    rows = []
    for P in sorted({p["P"] for p in pairs}):
        at = [p for p in pairs if p["P"] == P and p["measured_s"]]
        rs = sorted(p["emulated_s"] / p["measured_s"] for p in at)
        if not rs:
            continue
        mid = float(pd.Series(rs).median())
        rows.append(row(paper, table, "emulated_over_measured", condition(workers=P, profile=profile),
                        "ratio", ours=mid, low=rs[0], high=rs[-1], kind="emulated", runs=len(rs),
                        note=("emulator error: emulated time / measured time of the same "
                              f"configurations ({', '.join(sorted({p['config'] for p in at}))}); "
                              "1 = the emulator predicts the measured time")))
    return rows


def pair_table(pairs, *, unit: str, scale: float = 1.0, profile: str | None = None) -> list[str]:
    """Every measured configuration beside its emulated twin, one line each: P, configuration,
    emulated and measured time (× ``scale``, in ``unit``), their ratio, and the runs where the
    pairs carry them; ``profile`` adds a first column naming the profile."""
    runs = any("runs" in x for x in pairs)
    head = (["profile"] if profile else []) + ["P", "configuration", f"emulated {unit}", f"measured {unit}",
                                               "emulated / measured"] + (["runs"] if runs else [])
    L = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for x in pairs:
        cells = ([profile] if profile else []) + [
            str(x["P"]), x["config"], f"{x['emulated_s'] * scale:.4g}", f"{x['measured_s'] * scale:.4g}",
            f"{x['emulated_s'] / x['measured_s']:.2f}"] + ([str(x.get("runs", "–"))] if runs else [])
        L.append("| " + " | ".join(cells) + " |")
    return L


def validation_footer(pairs) -> list[str]:
    """What the comparison rows of the validation hold, under a report's pair table."""
    return ["", "The rows `emulator,emulated_over_measured` give the median per P (with the range); "
            f"emulated rows beyond P = {max(x['P'] for x in pairs)} carry the largest error in their "
            "note.", ""]


def beyond_measured_note(pairs, *, profile: str) -> str:
    """What an emulated row beyond the measured P says about its validation."""
    worst = emulator_error(pairs)
    if worst is None:
        return f"emulated ({profile}); no measured run to validate it against"
    Pmax = max(p["P"] for p in pairs)
    return (f"emulated ({profile}) beyond the measured P ≤ {Pmax}: the largest emulator error "
            f"at measured P was {worst:.2f}× (emulated / measured time, median over runs of the "
            "configuration furthest from 1)")


def oversubscribed(P: int, cores: int | None = None) -> bool:
    """More workers than cores here: such a measured run is not measured scaling."""
    import os

    return P > (cores or os.cpu_count() or 1)


# ---- the README's claims block -----------------------------------------------------------
README_BEGIN = "<!-- claims:begin (generated by reproduce.report.readme_claims from results/*/claims.csv) -->"
README_END = "<!-- claims:end -->"


def readme_claims(results: Path, papers: list[dict]) -> str:
    """The block README.md shows between :data:`README_BEGIN` and :data:`README_END`: the claims
    counted per paper, then every claim with the paper's value, ours with its interval, n, kind
    and host, and the verdict (the reasons are in results/index.md). A test checks that the
    README holds exactly this, so a verdict it quotes is the committed one."""
    from reproduce import claims as C

    names = indexed(results, papers)
    cf = claims_of(results, names)
    L = [README_BEGIN, "", *claim_counts_table(cf, papers, quick=quick_papers(Path(results), names)), ""]
    if cf:
        df = pd.concat([cf[n] for n in (p["name"] for p in papers) if n in cf], ignore_index=True)
        L += ["| paper | claim | paper's value | ours [95 % interval] | n | kind (host) | verdict |",
              "|---|---|---|---|---|---|---|"]
        for _, r in df.iterrows():
            kind = f"{r['kind']} ({r['host']})" if isinstance(r["host"], str) and r["host"] else r["kind"]
            L.append(f"| {r['paper']} | {r['claim']} | {C._num(r['reported'])} | {C.ours_text(r)} | "
                     f"{C._num(r['n'])} | {kind} | {r['verdict']} |")
        L.append("")
    return "\n".join(L + [README_END])
