"""benchmarks/targets.py target 7 on a worked example: a paper's time is its summary's wall
time plus the recorded seconds of the tasks it took from the cache (which cost that
invocation nothing). Negative control: a cached entry without recorded seconds leaves the
sum unknown, never the smaller wall time alone."""
from __future__ import annotations

import json
import math

from benchmarks.targets import Report, target_reproduce_all


def _write(root, walls, cached):
    for i, (wall, came) in enumerate(zip(walls, cached)):
        d = root / f"paper{i}"
        d.mkdir(parents=True)
        meta = {"wall_s": wall, "date_utc": "2026-11-24T00:00:00Z", "code": {"commit": "abc1234"},
                "conditions": {"machine": {"cpu": "test"}, "jobs": 1}, "tasks": 10,
                "tasks_from_cache": sum(c["tasks"] for c in came), "cached_from": came,
                "task_seconds": {"measured": wall}}
        (d / "summary.json").write_text(json.dumps({"meta": meta}))


def _total(rep):
    *papers, (target, measured, goal, verdict) = rep.rows
    assert target.startswith("7 reproduce all") and len(papers) == 5
    return float(measured.split()[0]), verdict


def _papers(rep):
    """{paper: (minutes, verdict)} of the per-paper rows, each against its budget."""
    return {t.split()[1].rstrip(","): (float(m.split()[0]), v) for t, m, g, v in rep.rows[:-1]}


def test_cached_tasks_count_with_their_recorded_seconds(tmp_path, capsys):
    came = [{"invocation": "a", "date_utc": "x", "load_1min": 0.1, "tasks": 4, "seconds": 600.0},
            {"invocation": "b", "date_utc": "y", "load_1min": 0.2, "tasks": 2, "seconds": 297.0}]
    _write(tmp_path, [60.0, 120.0, 180.0, 3.0, 0.0], [[], [], [], came, []])
    rep = Report()
    target_reproduce_all(rep, results=str(tmp_path))
    minutes, verdict = _total(rep)
    assert minutes == (60 + 120 + 180 + 3 + 600 + 297) / 60 == 21.0  # the wall alone: 6.05
    assert verdict == "PASS (stretch met)"
    # each paper against its budget (reproduce/papers.py): paper3's 900 s is over its 10 min
    per = _papers(rep)
    assert per["paper3"] == (15.0, "FAIL") and per["paper2"] == (3.0, "PASS") and per["paper0"][1] == "PASS"
    assert "6 of 10 tasks from the cache: wall 3 s + their recorded 897 s" in capsys.readouterr().out


def test_a_cached_task_without_seconds_leaves_the_time_unknown(tmp_path):
    came = [{"invocation": "a", "date_utc": "x", "load_1min": "unknown", "tasks": 4, "seconds": None}]
    _write(tmp_path, [60.0, 120.0, 180.0, 3.0, 0.0], [[], [], [], came, []])
    rep = Report()
    target_reproduce_all(rep, results=str(tmp_path))
    minutes, verdict = _total(rep)
    assert math.isnan(minutes) and verdict == "FAIL"


def test_asv_track_adds_up_the_same_minutes(tmp_path, monkeypatch):
    import benchmarks.bench_papers as bp
    from benchmarks.bench_runtime import track_reproduce_all_minutes

    came = [{"invocation": "a", "date_utc": "x", "load_1min": 0.1, "tasks": 4, "seconds": 600.0}]
    _write(tmp_path, [60.0, 120.0, 180.0, 3.0, 0.0], [[], [], [], came, []])
    monkeypatch.setattr(bp, "RESULTS_ROOT", tmp_path)
    monkeypatch.delenv("ASV_COMMIT", raising=False)
    assert track_reproduce_all_minutes() == (60 + 120 + 180 + 3 + 600) / 60
    (tmp_path / "paper4" / "summary.json").unlink()  # control: a paper without its run
    assert math.isnan(track_reproduce_all_minutes())


def test_a_report_rebuilt_wholly_from_a_runs_cache_takes_that_runs_wall_time():
    from benchmarks.bench_runtime import run_seconds

    came = [{"invocation": "a", "tasks": 10, "seconds": 900.0}]  # tasks overlapping: their sum > wall
    run = {"wall_s": 600.0, "tasks": 10, "tasks_from_cache": 0, "cached_from": []}
    rebuilt = {"wall_s": 0.3, "tasks": 10, "tasks_from_cache": 10, "cached_from": came, "origin": run}
    assert run_seconds(rebuilt) == 600.0
    # controls: a partial rebuild, or none from an origin, adds the cached seconds to its wall
    assert run_seconds({**rebuilt, "tasks_from_cache": 6}) == 900.3
    assert run_seconds({k: v for k, v in rebuilt.items() if k != "origin"}) == 900.3
