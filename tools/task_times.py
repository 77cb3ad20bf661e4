#!/usr/bin/env python3
"""Where a `reproduce` run spent its time, per paper and task name.

    python tools/task_times.py results

Read from the task cache entries' ``recorded.date_utc`` stamps (1-s resolution): tasks run
one after another, so a task's time is its stamp minus the previous one (the first: minus
the run's start, summary.json's date_utc less its wall_s). Entries a rebuild migrated
(stamp "unknown") are skipped. Used for issue 14's `reproduce all` breakdown
(results/machines/dev2/issue14/).
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
        es.append((dt.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ"), key))
    es.sort()
    if not es:
        continue
    summ = json.load(open(os.path.join(p, "summary.json")))["meta"]
    start = dt.datetime.strptime(summ["date_utc"], "%Y-%m-%dT%H:%M:%SZ") - dt.timedelta(seconds=summ["wall_s"])
    acc = collections.Counter(); cnt = collections.Counter(); prev = start
    for t, k in es:
        acc[k] += (t - prev).total_seconds(); cnt[k] += 1; prev = t
    print(f"{os.path.basename(p)}: wall {summ['wall_s']:.0f} s, {len(es)} tasks")
    for k, s in acc.most_common():
        print(f"   {k:40s} {cnt[k]:4d} tasks {s:8.0f} s")
