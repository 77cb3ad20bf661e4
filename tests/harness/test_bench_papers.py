"""benchmarks/bench_papers.py: each track reads its named row and returns ours / reported.

A fake results tree gives each track a row with known numbers, so the test
fails if a track reads the wrong row, the wrong column, or divides the wrong
way; removing the row or the file must give NaN (asv records it as missing)
rather than an exception. The last test runs the tracks on the committed
results, which must carry every tracked row.
"""
from __future__ import annotations

import csv
import math
import subprocess

import pytest

import benchmarks.bench_papers as bp

HEADER = ["paper", "table", "quantity", "condition", "unit", "reported", "ours", "ours_low",
          "ours_high", "kind", "runs", "ratio", "verdict", "note"]

# (track, param or None, paper, table, quantity, condition)
TRACKED = [
    (bp.track_paper0_overall_speedup, None, "paper0", "sec3.2", "overall_speedup",
     "workers=17/6;profile=here-median"),
    (bp.track_paper1_relative_performance, 3, "paper1", "table1", "relative_performance",
     "nodes=3;bunch=48;hidden=1000;source=emulated (here)"),
    (bp.track_paper1_relative_performance_measured, 2, "paper1", "table1", "relative_performance",
     "nodes=2;bunch=48;hidden=1000;source=measured"),
    (bp.track_paper2_speedup_q3_vs_random, None, "paper2", "fig4", "speedup_vs_random",
     "bunch=4;Q=3;method=optimal"),
    (bp.track_paper2_speedup_q3_vs_eq1, None, "paper2", "fig4", "speedup_vs_eq1_baseline",
     "bunch=4;Q=3;method=optimal"),
    (bp.track_paper3_speedup_8_nodes, None, "paper3", "table1", "speedup",
     "nodes=8;local_epoch=32;profile=here"),
    (bp.track_paper3_speedup_8_nodes_gige2008, None, "paper3", "table1", "speedup",
     "nodes=8;local_epoch=128;profile=gige2008"),
    (bp.track_paper4_speedup_16, "forward", "paper4", "table2", "speedup",
     "nodes=16;layers=7;width=2048;profile=local-calibrated"),
    (bp.track_paper4_speedup_16, "forward_backward", "paper4", "table3", "speedup",
     "nodes=16;layers=7;width=2048;profile=local-calibrated"),
]


def _call(track, param):
    return track() if param is None else track(param)


def _write(root, paper, rows):
    d = root / paper
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "comparison.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=HEADER)
        w.writeheader()
        for r in rows:
            w.writerow({**dict.fromkeys(HEADER, ""), "paper": paper, **r})


@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    monkeypatch.delenv("ASV_COMMIT", raising=False)
    monkeypatch.setattr(bp, "RESULTS_ROOT", tmp_path)
    return tmp_path


@pytest.mark.parametrize("track,param,paper,table,quantity,condition", TRACKED)
def test_track_returns_ours_over_reported_of_its_row(fake_root, track, param, paper, table,
                                                      quantity, condition):
    decoy = {"table": table, "quantity": quantity, "condition": condition + ";other=1",
             "reported": "1", "ours": "100"}  # a near-miss condition must not be read
    row = {"table": table, "quantity": quantity, "condition": condition,
           "reported": "8", "ours": "6", "ratio": "99"}  # ratio column deliberately wrong
    _write(fake_root, paper, [decoy, row])
    assert _call(track, param) == pytest.approx(0.75)


@pytest.mark.parametrize("track,param,paper,table,quantity,condition", TRACKED)
def test_track_is_nan_without_its_row_or_file(fake_root, track, param, paper, table,
                                              quantity, condition):
    assert math.isnan(_call(track, param))  # no file at all
    _write(fake_root, paper, [{"table": table, "quantity": quantity, "condition": condition + "x",
                               "reported": "8", "ours": "6"}])
    assert math.isnan(_call(track, param))  # file, but not the row


def test_unusable_rows_give_nan(fake_root):
    cond = "workers=17/6;profile=here-median"
    base = {"table": "sec3.2", "quantity": "overall_speedup", "condition": cond}
    _write(fake_root, "paper0", [{**base, "reported": "", "ours": "3"}])
    assert math.isnan(bp.track_paper0_overall_speedup())  # no paper value
    _write(fake_root, "paper0", [{**base, "reported": "0", "ours": "3"}])
    assert math.isnan(bp.track_paper0_overall_speedup())
    _write(fake_root, "paper0", [{**base, "reported": "2", "ours": "3"},
                                 {**base, "reported": "2", "ours": "5"}])
    assert math.isnan(bp.track_paper0_overall_speedup())  # ambiguous: two rows


def test_asv_commit_reads_that_commits_results(monkeypatch, tmp_path):
    # With ASV_COMMIT set, the working tree (here an empty fake root) is not read.
    monkeypatch.setattr(bp, "RESULTS_ROOT", tmp_path)
    head = subprocess.run(["git", "-C", str(bp.REPO_ROOT), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    monkeypatch.setenv("ASV_COMMIT", head)
    assert math.isfinite(bp.track_paper0_overall_speedup())
    monkeypatch.setenv("ASV_COMMIT", "0" * 40)  # no such commit
    assert math.isnan(bp.track_paper0_overall_speedup())


@pytest.mark.parametrize("track,param", list(dict.fromkeys((t, p) for t, p, *_ in TRACKED))
                         + [(bp.track_paper1_relative_performance, n) for n in (1, 2, 4)]
                         + [(bp.track_paper1_relative_performance_measured, 1)])
def test_committed_results_give_finite_positive_ratios(monkeypatch, track, param):
    monkeypatch.delenv("ASV_COMMIT", raising=False)
    v = _call(track, param)
    assert math.isfinite(v) and v > 0


def test_every_track_has_unit_and_docstring():
    tracks = [getattr(bp, n) for n in dir(bp) if n.startswith("track_")]
    assert len(tracks) == 8
    for t in tracks:
        assert t.unit == "ratio" and t.__doc__ and "row" in t.__doc__


def test_paper3_track_follows_the_best_local_epoch_the_run_picked(fake_root):
    """The run picks the best local epoch by time (32 at one commit, 64 at the next): the
    track reads whichever one row there is, and NaN when two local epochs are there."""
    base = {"table": "table1", "quantity": "speedup", "reported": "10.6"}
    for le in (32, 64):
        _write(fake_root, "paper3", [{**base, "condition": f"nodes=8;local_epoch={le};profile=here",
                                      "ours": "5.3"}])
        assert bp.track_paper3_speedup_8_nodes() == pytest.approx(0.5)
    _write(fake_root, "paper3", [{**base, "condition": f"nodes=8;local_epoch={le};profile=here",
                                  "ours": "5.3"} for le in (32, 64)])
    assert math.isnan(bp.track_paper3_speedup_8_nodes())  # the control: ambiguous
