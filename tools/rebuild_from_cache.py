"""Rebuild a paper's committed results from its task cache after a change of code that
does not alter any task result (report code, a neutral engine change).

    python tools/rebuild_from_cache.py PAPER [PAPER ...] [--results results]

1. Re-key: the cache key holds a hash of engine/, datasets/ and the paper's setup and
   tasks modules (reproduce/harness.py), so any edit there orphans every entry. Each
   entry under another hash is moved to the current one. This asserts that the edit
   left task results alone: check that first (e.g. `--quick` runs before and after,
   compared leaf by leaf), it is not checked here. Entries from before the key held the
   data identity and the conditions (issue 15) are migrated: they get the data identity
   the paper computes now, the conditions of the run the summary records (its backend and
   workers) on this machine, and "unknown" for the load and the invocation. The
   machine is only assumed: the summary's core count must be this machine's. An entry
   that cannot be read is left for the run to discard.
2. Reuse the profiles the original run measured: every profile the committed summary.json
   records is passed to the run (``run_paper(recorded=...)``), and a paper's ``prepare``
   takes them through ``Run.measured`` instead of measuring again, so the emulated rows are
   composed with the machine as it was when their compute was timed, not with whatever
   load there is at rebuild time. A paper whose profile comes from a cached task needs
   nothing.
3. Run the paper through the harness as `python -m reproduce <paper>` does, with the
   original run's metadata as ``origin`` (date, commit, wall time, load; kept through
   later rebuilds), which every report states under its Run line. Tasks not in the
   cache (new ones) are computed; the summary says how many came from the cache.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.perfmodel import MachineProfile  # noqa: E402
from reproduce.harness import Run, conditions, data_identity, run_paper  # noqa: E402
from reproduce.papers import load  # noqa: E402
from reproduce.runner import code_hash, task_conditions  # noqa: E402
from reproduce.store import RunCache, atomic_write, dumps  # noqa: E402

UNKNOWN = "unknown"  # what an entry cached before issue 15 did not record


def rekey(folder: Path, new: str, *, data=None, cond: dict | None = None) -> tuple[set, int]:
    """Move every entry under another code hash to ``new``; give an entry without them the
    ``data`` identity and the ``cond`` conditions (runner.task_conditions by its kind)."""
    olds, n = set(), 0
    for f in sorted(folder.glob("*.json")):
        try:
            d = json.loads(f.read_bytes())
            cfg, result = d["config"], d["result"]
            if "kind" not in cfg:
                raise KeyError("kind")
        except (ValueError, TypeError, KeyError, OSError):
            print(f"warning: {f} is not a readable cache entry; left for the run to discard",
                  file=sys.stderr)
            continue
        new_cfg = {**cfg, "code": new}
        if data is not None and "data" not in cfg:
            new_cfg["data"] = data
        if cond is not None and "conditions" not in cfg:
            new_cfg["conditions"] = task_conditions(cond, cfg["kind"])
        if new_cfg == cfg:
            continue
        olds.add(cfg.get("code"))
        rec = d.get("recorded") or {"invocation": UNKNOWN, "date_utc": UNKNOWN, "load_1min": UNKNOWN,
                                    "machine": (cond or {}).get("machine")}
        target = folder / f"{RunCache.key(new_cfg)}.json"
        if target.exists():
            raise RuntimeError(f"{target} exists: two cached versions of one task")
        atomic_write(target, dumps({"config": new_cfg, "result": result, "recorded": rec}, strict=False))
        f.unlink()
        n += 1
    return olds, n


def migration(paper, out: Path, meta: dict) -> tuple[object, dict, int]:
    """(data identity, conditions, workers) for entries cached before either was keyed: the
    run the summary records (backend, workers), on this machine, with today's data."""
    o = meta.get("origin") or meta
    if o.get("cpu_count", meta.get("cpu_count")) != os.cpu_count():
        raise SystemExit(f"{out}: its cached times were taken on {o.get('cpu_count')} cores, this "
                         f"machine has {os.cpu_count()}: not migrating them as this machine's")
    if meta.get("backend", "local") != "local":
        raise SystemExit(f"{out}: a {meta['backend']} run; only local runs can be rebuilt here")
    workers = meta["workers"]
    run = Run(paper, paper.setups["default"], "default", workers, "local", meta.get("seed", 1), out)
    return data_identity(paper, run), conditions(run), workers


def origin(summary: Path) -> dict:
    """The metadata of the run that computed the cached results (kept through rebuilds)."""
    meta = json.loads(summary.read_text())["meta"]
    if meta.get("origin"):
        return meta["origin"]
    keys = ("date_utc", "code", "wall_s", "loadavg_start", "loadavg_end",
            "loadavg_1min_during_tasks", "tasks", "tasks_from_cache", "platform", "cpu_count", "cached_from")
    return {k: meta[k] for k in keys if k in meta}


def recorded(summary: Path) -> dict:
    """{name: MachineProfile} of the machine profiles the run recorded; other entries of
    ``meta["profiles"]`` (a paper's own models, such as paper1's §2.5 constants) are no machine
    profile and are left out: prepare does not measure them."""
    meta = json.loads(summary.read_text())["meta"]
    out = {}
    for p in meta.get("profiles", []):
        try:
            out[p["name"]] = MachineProfile.from_dict(_unbounded(p))
        except (ValueError, TypeError, KeyError):
            continue
    return out


def _unbounded(p: dict) -> dict:
    """A profile as a strict summary.json holds it: null where a number was ±inf or NaN
    (meta["null_means"]); a profile's such numbers are unbounded bandwidths."""
    return {k: (float("inf") if v is None and k == "bandwidth_Bps" else v) for k, v in p.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("papers", nargs="+")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.add_argument("--note", default=None, help="added to the origin (e.g. which tasks a rebuild "
                    "computed anew, and when)")
    args = ap.parse_args(argv)
    for name in args.papers:
        paper = load(name)
        out = args.results / name
        data, cond, workers = migration(paper, out, json.loads((out / "summary.json").read_text())["meta"])
        olds, n = rekey(out / ".cache", code_hash("engine", "datasets", *paper.code), data=data, cond=cond)
        print(f"{name}: re-keyed {n} entries from {sorted(olds, key=str)}", flush=True)
        o = origin(out / "summary.json")
        if args.note:
            o = {**o, "note": "; ".join(filter(None, (o.get("note"), args.note)))}
        s = run_paper(paper, out=out, origin=o, workers=workers, recorded=recorded(out / "summary.json"))
        m = s["meta"]
        print(f"{name}: {m['tasks_from_cache']} of {m['tasks']} tasks from the cache, "
              f"{m['wall_s']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
