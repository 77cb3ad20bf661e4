#!/usr/bin/env python3
"""Where a `reproduce` run spent its time, per paper and task name.

    python tools/task_times.py results

A task's time is the ``recorded.seconds`` its cache entry holds (reproduce.runner.execute
times every task it computes). Entries written before that was recorded fall back to the
``recorded.date_utc`` stamps (1-s resolution, right only when tasks ran one after another):
a task's time is its stamp minus the previous one (the first: minus the run's start,
summary.json's date_utc less its wall_s). Entries a rebuild migrated (stamp "unknown") are
skipped. Per paper it also prints the sum of its tasks' times by kind: with ``--jobs`` > 1
emulated tasks overlap, so the sum exceeds what they added to the wall time. Used for
issue 14's `reproduce all` breakdowns (results/machines/dev2/issue14/).

Only the entries of the run that wrote summary.json count: its own invocation and those its
results came from the cache of (``meta.invocation``, ``meta.cached_from``); a cache that also
holds older runs' entries would otherwise add them in. Where a task's result says
``converged``, the runs that did not converge (paper3's runs that reached the epoch cap)
are summed apart, per task name.
"""
import collections
import datetime as dt
import glob
import json
import os
import sys

root = sys.argv[1]
for p in sorted(glob.glob(os.path.join(root, "paper*"))):
    summ = json.load(open(os.path.join(p, "summary.json")))["meta"]
    runs = ({summ["invocation"]} | {c.get("invocation") for c in summ.get("cached_from") or []}
            if summ.get("invocation") else None)  # None: a summary from before invocations
    es, other = [], 0
    for f in glob.glob(os.path.join(p, ".cache", "*.json")):
        d = json.load(open(f))
        t = d["recorded"].get("date_utc")
        if not t or t == "unknown":
            continue
        if runs is not None and d["recorded"].get("invocation") not in runs:
            other += 1
            continue
        c = d["config"]
        key = c.get("name", "?") + ":" + str(c.get("kind", ""))
        failed = d["result"].get("converged") is False
        es.append((dt.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ"), key, d["recorded"].get("seconds"),
                   failed))
    es.sort()
    if not es:
        continue
    start = dt.datetime.strptime(summ["date_utc"], "%Y-%m-%dT%H:%M:%SZ") - dt.timedelta(seconds=summ["wall_s"])
    acc = collections.Counter(); cnt = collections.Counter(); kinds = collections.Counter(); prev = start
    fail_s = collections.Counter(); fail_n = collections.Counter()
    for t, k, s, failed in es:
        s = (t - prev).total_seconds() if s is None else s
        acc[k] += s; cnt[k] += 1; kinds[k.rpartition(":")[2]] += s; prev = t
        if failed:
            fail_s[k] += s; fail_n[k] += 1
    jobs = (summ.get("conditions") or {}).get("jobs", 1)
    print(f"{os.path.basename(p)}: wall {summ['wall_s']:.0f} s, {len(es)} tasks, emulated tasks {jobs} at a time; "
          "task time summed by kind: " + ", ".join(f"{k} {s:.0f} s" for k, s in sorted(kinds.items())))
    if other:
        print(f"   ({other} cache entries of other runs left out)")
    for k, s in acc.most_common():
        note = (f"   of which {fail_n[k]} not converged: {fail_s[k]:.0f} s ({100 * fail_s[k] / s:.0f} %)"
                if fail_n[k] else "")
        print(f"   {k:40s} {cnt[k]:4d} tasks {s:8.0f} s{note}")
