"""How long the committed default runs took, so that a slower commit shows in asv's history.

Times nothing: reads each paper's committed ``results/<paper>/summary.json`` (at ASV_COMMIT
when asv sets it, as benchmarks/bench_papers.py reads its CSVs) and adds up what its default
run took. The speed issue's target for all five is 45 minutes on 2 cores; each paper's share
is its ``budget_min`` in reproduce/papers.py, which benchmarks/targets.py checks.
"""
from __future__ import annotations

import json
import math

from benchmarks.bench_papers import _csv_text

PAPERS = ("paper0", "paper1", "paper2", "paper3", "paper4")


def run_seconds(meta: dict) -> float:
    """A committed default run's time from its summary's ``meta``: the invocation's wall time
    plus the recorded seconds of every task it took from the cache (which cost it nothing:
    the earlier invocations in ``cached_from`` computed them); NaN where an entry predates
    that record. A report rebuilt wholly from a run's cache (tools/rebuild_from_cache.py) is that
    run's time, from its ``origin``: a sum of task seconds overstates a run whose tasks
    overlapped (those that record no time share the cores: reproduce/runner.py)."""
    o = meta.get("origin")
    if o and o.get("wall_s") is not None and meta.get("tasks_from_cache") == meta.get("tasks"):
        return run_seconds({k: v for k, v in o.items() if k != "origin"})
    cached = [c.get("seconds") for c in meta.get("cached_from") or []]
    return meta["wall_s"] + (math.nan if any(c is None for c in cached) else sum(cached))


def track_reproduce_all_minutes():
    """Minutes the five papers' committed default runs took, added up (target: 45 on 2 cores)."""
    total = 0.0
    for paper in PAPERS:
        text = _csv_text(paper, "summary.json")
        if text is None:
            return math.nan
        total += run_seconds(json.loads(text)["meta"])
    return total / 60


track_reproduce_all_minutes.unit = "minutes"
