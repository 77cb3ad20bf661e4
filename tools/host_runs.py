"""Write a many-core host's per-seed figures for paper0 (issue 30) from that run's task cache:

    python tools/host_runs.py RESULTS/paper0 OUT/runs.json --command "..."

The host runs keep their task cache only on the lent machine; the committed folder keeps
comparison.csv (medians and ranges) and this file, which holds what a paired interval needs:
one row per measured network-partition loop and sequence-partition epoch (curve, P, run,
seed, the serial seconds taken in the same task, the parallel seconds and their quotient,
computed as reproduce/paper0/compose.py ``frames`` does), and per seed the single-process
epoch seconds of the ``vectorise`` task and k, the line-search evaluations per CG iteration
of the run's training (reproduce/paper0/claims.py ``k_of``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reproduce.paper0.claims import k_of  # noqa: E402
from reproduce.runner import Task  # noqa: E402

EXTRA = ("paper", "setup", "backend", "code", "data", "conditions")


def load(folder: Path) -> list[tuple[Task, dict]]:
    """(Task, result) pairs of every cache entry under ``folder``/.cache."""
    out = []
    for f in sorted((folder / ".cache").glob("*.json")):
        d = json.loads(f.read_bytes())
        c = d["config"]
        untimed = c.get("timed") is False  # runner.Task.config's mark; a param may hold a count
        params = {k: v for k, v in c.items() if k not in ("name", "kind", *EXTRA) and not (k == "timed" and untimed)}
        out.append((Task(c["name"], c["kind"], c.get("workers", 1), params, timed=not untimed),
                    d["result"]))
    return out


def rows(results) -> list[dict]:
    """Measured speedup rows, one per (curve, P, run), as compose.frames computes them."""
    out = []
    for t, res in results:
        if t.kind != "measured":
            continue
        p = t.params
        if t.name == "netpart":
            out.append({"curve": "fig2" if p["net"] == "radio" else "fig3", "P": p["workers"], "run": p["run"],
                        "seed": p["seed"], "serial_s": res["serial_s"], "parallel_s": res["parallel_s"]})
        elif t.name == "seqpart":
            P = p["workers"]
            for curve, key in (("fig4", "deriv_s"), ("fig5", "fwd_s")):
                out.append({"curve": curve, "P": P, "run": p["run"], "seed": p["seed"],
                            "serial_s": res["1"][key], "parallel_s": res[str(P)][key]})
    for r in out:
        r["speedup"] = r["serial_s"] / r["parallel_s"]
    return sorted(out, key=lambda r: (r["curve"], r["P"], r["run"]))


def single(results, chunk: int) -> list[dict]:
    """Per seed, the one-process seconds of the vectorise task: derivative epoch (at the
    setup's chunk), forward epoch and the §2.1 loop."""
    return sorted(({"run": t.params["run"], "seed": t.params["seed"],
                    "deriv_s": r["forward_deriv_s"][str(chunk)], "fwd_s": r["fwd_s"], "loop_s": r["loop_s"]}
                   for t, r in results if t.name == "vectorise" and t.kind == "measured" and r),
                  key=lambda d: d["run"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="the host run's paper0 results folder (with .cache/)")
    ap.add_argument("out", type=Path)
    ap.add_argument("--command", required=True, help="the command that made the run")
    a = ap.parse_args(argv)
    meta = json.loads((a.folder / "summary.json").read_bytes())["meta"]
    results = load(a.folder)
    doc = {"what": __doc__.split("\n\n")[1].replace("\n", " ").strip(),
           "command": a.command, "date": meta["date_utc"], "code": meta["code"],
           "k": k_of(results), "rows": rows(results), "single": single(results, meta["setup"]["chunk"])}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{a.out}: {len(doc['rows'])} rows, {len(doc['single'])} seeds' single-process figures, k = {doc['k']:.4g}")


if __name__ == "__main__":
    main()
