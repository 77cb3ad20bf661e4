#!/usr/bin/env python3
"""What ``--jobs`` does to emulated timings: the same emulated tasks of a paper run one at
a time and ``--jobs`` at a time, alternating, ``--rounds`` times; per task the ratio of
its time N at a time over one at a time.

    python tools/jobs_effect.py paper3 --match nodes=8 --jobs 2 --rounds 3

An emulated task times its workers' compute; ``--jobs`` > 1 times it beside other such
tasks (reproduce.runner.execute). The numerics are the same either way (each task's
result is checked equal outside its timings), so the ratio is the condition's effect
alone. Two figures per task: the task's wall time, and where the result holds one, the
emulated compute the report uses (paper3: ``sum_max_compute_s``, the sum over rounds of
the slowest node's compute). Medians over rounds; the spread of the one-at-a-time
rounds is printed too, as the noise floor.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reproduce.harness import Run  # noqa: E402
from reproduce.papers import load  # noqa: E402
from reproduce.runner import execute  # noqa: E402

TIMINGS = ("sum_max_compute_s",)  # result fields that are emulated compute times


def timed(fn):
    def run(task, comm):
        t0 = time.perf_counter()
        res = fn(task, comm)
        return {**res, "_wall_s": time.perf_counter() - t0}
    return run


def numerics(res: dict) -> dict:
    return {k: v for k, v in res.items() if k not in TIMINGS and not k.endswith("_s") and k != "load"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paper")
    ap.add_argument("--match", action="append", default=[],
                    help="key=value an emulated task's params must hold (repeatable)")
    ap.add_argument("--runs", type=int, default=None, help="the setup's runs (seeds) to take")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    paper = load(args.paper)
    setup = paper.setups["default"]
    if args.runs is not None:
        from dataclasses import replace

        setup = replace(setup, runs=args.runs)
    run = Run(paper, setup, "default", 2, "local", 1, Path("/nonexistent"))
    if paper.prepare is not None:
        paper.prepare(run)
    want = dict(m.split("=", 1) for m in args.match)
    tasks = [t for t in paper.make_tasks(run) if t.kind == "emulated"
             and all(str(t.params.get(k)) == v for k, v in want.items())]
    print(f"{args.paper}: {len(tasks)} emulated tasks ({', '.join(args.match) or 'all'}), "
          f"{args.rounds} rounds of jobs=1 then jobs={args.jobs}")
    fn = timed(lambda t, c: paper.run_task(t, c, run))
    got = {1: [], args.jobs: []}
    for r in range(args.rounds):
        for j in (1, args.jobs):
            t0 = time.perf_counter()
            res = execute(tasks, fn, cache=None, extra={}, jobs=j)
            got[j].append([x for _, x in res])
            print(f"  round {r + 1}, jobs={j}: {time.perf_counter() - t0:.1f} s", flush=True)
    base = got[1][0]
    for j in got:
        for rnd in got[j]:
            assert [numerics(x) for x in rnd] == [numerics(x) for x in base], "numerics differ"
    print("numerics: every task's result equal in every round, outside its timings")
    fields = ["_wall_s"] + [f for f in TIMINGS if f in base[0]]
    for f in fields:
        ratios, noise = [], []
        for i, t in enumerate(tasks):
            one = [rnd[i][f] for rnd in got[1]]
            many = [rnd[i][f] for rnd in got[args.jobs]]
            ratios.append(statistics.median(many) / statistics.median(one))
            noise.append(max(one) / min(one))
        print(f"{f}: median over tasks of (median jobs={args.jobs}) / (median jobs=1) = "
              f"{statistics.median(ratios):.3f} (tasks' range {min(ratios):.3f}–{max(ratios):.3f}); "
              f"one-at-a-time rounds' max/min per task: median {statistics.median(noise):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
