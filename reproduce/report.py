"""Comparison rows, report files and the cross-paper index (DESIGN.md, "Comparison rows").

One long-format table serves every paper: ``results/<paper>/comparison.csv``
with :data:`COLUMNS`. ``verdict`` is ``close`` when ours is within
``tolerance`` (relative) of the paper's value, ``differs`` otherwise, and
``no-paper-value`` where the paper gives none.
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

import pandas as pd

from reproduce.store import atomic_write, dumps

COLUMNS = ["paper", "table", "quantity", "condition", "unit", "reported", "ours", "ours_low",
           "ours_high", "kind", "runs", "ratio", "verdict", "note"]
KINDS = ("measured", "emulated", "modeled", "reported")
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


def row(paper: str, table: str, quantity: str, cond: str, unit: str, *, reported=None, ours=None,
        low=None, high=None, kind: str, runs: int = 1, note: str = "",
        tolerance: float = DEFAULT_TOLERANCE) -> dict:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    ratio, v = verdict(reported, ours, tolerance)
    return {"paper": paper, "table": table, "quantity": quantity, "condition": cond, "unit": unit,
            "reported": reported, "ours": ours, "ours_low": low, "ours_high": high, "kind": kind,
            "runs": runs, "ratio": ratio, "verdict": v, "note": note}


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


def code_version() -> dict:
    """The commit the code ran from and whether tracked files differed from it (None
    outside a git checkout), so a committed result names the code that produced it."""
    root = Path(__file__).resolve().parents[1]

    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()

    try:
        return {"commit": git("rev-parse", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}
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


def origin_line(meta: dict) -> list[str]:
    """A report's note, under its Run line, when the files were rebuilt from an earlier
    run's task cache: which run computed the task results (``meta["origin"]``)."""
    o = meta.get("origin")
    if not o:
        return []
    code = o.get("code") or {}
    load = o.get("loadavg_start") or o.get("loadavg_1min_during_tasks") or "–"
    return [f"> **Rebuilt from the task cache** ({meta.get('tasks_from_cache')} of {meta.get('tasks')} "
            f"tasks). The task results (every measured and emulated time, every trained model) "
            f"were computed by the run of {o.get('date_utc', '–')} with the project at "
            f"`{(code.get('commit') or '–')[:7]}`, wall time {o.get('wall_s', float('nan')):.0f} s, "
            f"load average {load} at its start; the profiles it measured at start-up are reused. "
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


def fmt(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, str):
        return x
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e7):
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
    c = df["verdict"].value_counts()
    return {k: int(c.get(k, 0)) for k in ("close", "differs", "no-paper-value")}


class ResultsError(ValueError):
    """A paper's results folder whose files are not one consistent generation (a truncated
    or foreign comparison.csv, a summary.json from another run); the message names the file."""


NUMERIC = ["reported", "ours", "ours_low", "ours_high", "runs", "ratio"]
VERDICTS = ("close", "differs", "no-paper-value")


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


def build_index(results: Path, papers: list[dict]) -> str:
    """results/index.md from every paper's comparison rows. Every paper's files are checked
    (:func:`check_paper`) before any text is made, so a bad one raises ResultsError and the
    caller writes nothing."""
    out = ["# Reproduction results", "",
           "One section per paper, built by `python -m reproduce report` from each "
           "`results/<paper>/comparison.csv`. Kinds: measured (timed here), emulated "
           "(measured compute + communication model), modeled (formula), reported (the paper).", ""]
    frames = {name: check_paper(results / name) for name in indexed(results, papers)}
    summary = ["| paper | rows | close | differs | no paper value | report |", "|---|---|---|---|---|---|"]
    sections = []
    for p in papers:
        if p["name"] not in frames:
            summary.append(f"| {p['name']} | – | – | – | – | not run |")
            continue
        df = frames[p["name"]].astype({"note": "object"}).fillna({"note": ""})
        fi = fidelity(df)
        summary.append(f"| {p['name']} | {len(df)} | {fi['close']} | {fi['differs']} | "
                       f"{fi['no-paper-value']} | [report]({p['name']}/report.md) |")
        sections += [f"## {p['name']}: {p['authors']} {p['year']}, *{p['title']}*", "",
                     f"Fidelity: {fi['close']} close, {fi['differs']} differ, "
                     f"{fi['no-paper-value']} without a paper value.", "",
                     comparison_markdown(df), ""]
    return "\n".join(out + summary + [""] + sections)


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
