"""`python -m reproduce compare OLD NEW`: what moved between two generations of results.

OLD and NEW are each a results folder (holding ``<paper>/claims.csv``) or a git commit
(its committed ``results/``). For every paper in both, the claims are matched by id; the
output names the claims whose verdict differs and gives every claim's interval before and
after, and it counts what the stability target watches (no flip; at most 1 claim in 10 moves):

- a *flip*: a claim that went between ``reproduced`` and ``not-reproduced``;
- a *move*: a claim that went to or from ``inconclusive``.

Each side's commit, date and load (from its summary.json) head its paper's section, so the
text can be committed as it is (results/stability.md).
"""
from __future__ import annotations

import io
import json
import math
import subprocess
from pathlib import Path

import pandas as pd

from reproduce import claims as C

JUDGED = ("reproduced", "not-reproduced")


class CompareError(ValueError):
    """A side that is neither a results folder nor a commit with results (one line)."""


def _git(root: Path, *args) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          timeout=30, check=True).stdout


def load(spec: str, papers: list[str], *, root: Path | None = None) -> dict:
    """paper → (claims frame, run metadata) for ``spec`` (a folder, else a commit)."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[1]
    folder = Path(spec)
    out = {}
    if folder.is_dir():
        for n in papers:
            if (folder / n / "claims.csv").exists():
                try:
                    meta = json.loads((folder / n / "summary.json").read_text()).get("meta", {})
                except (OSError, ValueError):
                    meta = {}
                out[n] = (C.read(folder / n), meta)
        if not out:
            raise CompareError(f"{spec}: no <paper>/claims.csv under this folder")
        return out
    try:
        commit = _git(root, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}").strip()
    except (OSError, subprocess.SubprocessError):
        raise CompareError(f"{spec}: neither a folder nor a commit of this repository") from None
    for n in papers:
        try:
            text = _git(root, "show", f"{commit}:results/{n}/claims.csv")
        except subprocess.SubprocessError:
            continue
        try:
            meta = json.loads(_git(root, "show", f"{commit}:results/{n}/summary.json")).get("meta", {})
        except (subprocess.SubprocessError, ValueError):
            meta = {}
        df = pd.read_csv(io.StringIO(text), keep_default_na=True)
        if list(df.columns) != C.COLUMNS:
            raise CompareError(f"{spec}:results/{n}/claims.csv: columns are not the claims format")
        out[n] = (df, meta)
    if not out:
        raise CompareError(f"{spec}: commit {commit[:7]} has no results/<paper>/claims.csv")
    return out


def _iv(r) -> str:
    return C.ours_text(r)


def _side(meta: dict) -> str:
    """Commit, date, load and wall time of the run that computed the task results: the
    metadata's ``origin`` where the files were rebuilt from a task cache (then said so)."""
    o = meta.get("origin")
    if o:
        return _side({k: v for k, v in o.items() if k != "origin"}) + (
            f"; files rebuilt from its task cache at commit "
            f"{((meta.get('code') or {}).get('commit') or '–')[:7]}, {meta.get('date_utc', '–')}")
    code = meta.get("code") or {}
    commit = (code.get("commit") or "–")[:7] + (" (dirty)" if code.get("dirty") else "")
    load = meta.get("loadavg_start") or meta.get("loadavg_end") or "–"
    wall = meta.get("wall_s")
    return (f"commit {commit}, {meta.get('date_utc', '–')}, load {load}"
            + (f", {wall:,.0f} s" if isinstance(wall, (int, float)) and math.isfinite(wall) else ""))


def compare(old: dict, new: dict) -> dict:
    """{"papers": {paper: [{claim, old, new, old_interval, new_interval, flip, move}]},
    "n", "flips", "moves", "added", "removed"} for the claims of the papers on both sides."""
    res = {"papers": {}, "n": 0, "flips": 0, "moves": 0, "added": [], "removed": []}
    for paper in [p for p in new if p in old]:
        o = old[paper][0].set_index("claim")
        nw = new[paper][0].set_index("claim")
        res["removed"] += [f"{paper}/{c}" for c in o.index if c not in nw.index]
        res["added"] += [f"{paper}/{c}" for c in nw.index if c not in o.index]
        rows = []
        for c in [c for c in nw.index if c in o.index]:
            a, b = o.loc[c], nw.loc[c]
            flip = {a["verdict"], b["verdict"]} == set(JUDGED)
            move = (a["verdict"] != b["verdict"]) and "inconclusive" in (a["verdict"], b["verdict"])
            rows.append({"claim": c, "old": a["verdict"], "new": b["verdict"],
                         "old_interval": _iv(a),
                         "new_interval": _iv(b), "flip": flip, "move": move})
        res["papers"][paper] = rows
        res["n"] += len(rows)
        res["flips"] += sum(r["flip"] for r in rows)
        res["moves"] += sum(r["move"] for r in rows)
    return res


def markdown(old_spec: str, new_spec: str, old: dict, new: dict) -> list[str]:
    """The comparison as markdown (what `compare` prints, and results/stability.md holds)."""
    r = compare(old, new)
    n = r["n"]
    L = [f"# Stability: {new_spec} against {old_spec}", "",
         "Written by `python -m reproduce compare OLD NEW` (reproduce/compare.py). A *flip* is a "
         "claim that went between `reproduced` and `not-reproduced`; a *move* one that went to or "
         "from `inconclusive`. Target: no flip, and at most 1 claim in 10 moved.", "",
         f"**{n} claims compared: {r['flips']} flipped, {r['moves']} moved "
         f"({r['moves'] / n:.0%} of them)**." if n else "**No claim on both sides.**", ""]
    if r["added"] or r["removed"]:
        L += [f"Only in NEW: {', '.join(r['added']) or 'none'}. Only in OLD: "
              f"{', '.join(r['removed']) or 'none'}.", ""]
    for paper, rows in r["papers"].items():
        L += [f"## {paper}", "", f"- OLD: {_side(old[paper][1])}", f"- NEW: {_side(new[paper][1])}", "",
              "| claim | OLD verdict | NEW verdict | OLD ours [interval] | NEW ours [interval] | |",
              "|---|---|---|---|---|---|"]
        for x in rows:
            mark = "**flip**" if x["flip"] else ("moved" if x["move"] else ("changed" if x["old"] != x["new"] else ""))
            L.append(f"| {x['claim']} | {x['old']} | {x['new']} | {x['old_interval']} | "
                     f"{x['new_interval']} | {mark} |")
        L.append("")
    return L


def main(old_spec: str, new_spec: str, papers: list[str], *, as_json: bool = False) -> tuple[str, dict]:
    old, new = load(old_spec, papers), load(new_spec, papers)
    if as_json:
        return json.dumps(compare(old, new), indent=1, default=str), compare(old, new)
    return "\n".join(markdown(old_spec, new_spec, old, new)), compare(old, new)
