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
"""
import collections
import datetime as dt
import glob
import json
import os
import sys

root = sys.argv[1]
for p in sorted(glob.glob(os.path.join(root, "paper*"))):
    es = []
    for f in glob.glob(os.path.join(p, ".cache", "*.json")):
        d = json.load(open(f))
        t = d["recorded"].get("date_utc")
        if not t or t == "unknown":
            continue
        c = d["config"]
        key = c.get("name", "?") + ":" + str(c.get("kind", ""))
        es.append((dt.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ"), key, d["recorded"].get("seconds")))
    es.sort()
    if not es:
        continue
    summ = json.load(open(os.path.join(p, "summary.json")))["meta"]
    start = dt.datetime.strptime(summ["date_utc"], "%Y-%m-%dT%H:%M:%SZ") - dt.timedelta(seconds=summ["wall_s"])
    acc = collections.Counter(); cnt = collections.Counter(); kinds = collections.Counter(); prev = start
    for t, k, s in es:
        s = (t - prev).total_seconds() if s is None else s
        acc[k] += s; cnt[k] += 1; kinds[k.rpartition(":")[2]] += s; prev = t
    jobs = (summ.get("conditions") or {}).get("jobs", 1)
    print(f"{os.path.basename(p)}: wall {summ['wall_s']:.0f} s, {len(es)} tasks, emulated tasks {jobs} at a time; "
          "task time summed by kind: " + ", ".join(f"{k} {s:.0f} s" for k, s in sorted(kinds.items())))
    for k, s in acc.most_common():
        print(f"   {k:40s} {cnt[k]:4d} tasks {s:8.0f} s")
