"""``python -m reproduce validate`` (reproduce/validate.py): every strategy measured and
emulated, the ratio and its verdict, the oversubscribed label, a negative control."""
from __future__ import annotations

import argparse
import csv
import math
import os

import pytest

from engine.perfmodel import FREE, MachineProfile
from reproduce import validate as V

SLOW = MachineProfile("slow", 10e-3, 1e6, "test: 10 ms a message step, 1 MB/s")
PARTITION = "network partition"  # one barrier per pattern: the collective-bound strategy


@pytest.fixture(scope="module")
def rows():
    return V.validate(workers=2, quick=True, repeats=1, busy=0)


def test_a_row_per_strategy_at_P2_with_both_times_and_their_ratio(rows):
    at2 = [r for r in rows if r["P"] == 2]
    assert [r["strategy"] for r in at2] == list(V.strategies())
    for r in at2:
        assert math.isfinite(r["measured_s"]) and r["measured_s"] > 0
        assert math.isfinite(r["emulated_s"]) and r["emulated_s"] > 0
        assert r["emulated_over_measured"] == pytest.approx(r["emulated_s"] / r["measured_s"])
        assert r["condition"] == ("measured" if V.cores() >= 2 else "oversubscribed")
        assert r["busy_cores"] == 0
        assert r["profile"] == "here" and r["verdict"]
    assert {r["P"] for r in rows} == {1, 2}  # P = 1: the serial reference of each


def test_markdown_has_every_row(rows):
    lines = V.markdown(rows).splitlines()
    assert len(lines) == 2 + len(rows)
    for r, line in zip(rows, lines[2:]):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[:5] == [r["strategy"], r["paper"], r["instance"], str(r["P"]), r["condition"]]
        assert cells[7] == f"{r['emulated_over_measured']:.2g}" and cells[-1] == r["verdict"]


def test_csv_round_trip(rows, tmp_path):
    V.write_csv(rows, tmp_path / "v.csv")
    with open(tmp_path / "v.csv", newline="") as f:
        back = list(csv.DictReader(f))
    assert [b["strategy"] for b in back] == [r["strategy"] for r in rows]
    assert [float(b["emulated_over_measured"]) for b in back] == pytest.approx(
        [r["emulated_over_measured"] for r in rows], rel=1e-5)


def test_verdict_against_the_tolerance():
    assert V.verdict(1.19, 0.0, "measured") == "ok"
    assert V.verdict(0.5, 0.0, "measured") == "optimistic"
    assert V.verdict(1.5, 0.3, "measured") == "pessimistic, noisy"
    assert "not scaling" in V.verdict(1.0, 0.0, "oversubscribed")
    assert V.verdict(1.0, 0.0, "shared") == "shared (ok): other work held cores"


def test_more_workers_than_free_cores_are_shared(monkeypatch):
    assert [V.condition(P, 4, 1) for P in (1, 3, 4, 5)] == [
        "measured", "measured", "shared", "oversubscribed"]
    monkeypatch.setattr("os.getloadavg", lambda: (1.4, 1.0, 1.0))
    assert V.busy_cores() == 1


def test_latency_costs_emulated_time_and_moves_the_ratio_off_1():
    """Negative control: under a zero-cost profile every strategy's emulated time is at most
    its time under α = 10 ms, and the collective-bound strategy's ratio is far from 1."""
    for case in V.cases(quick=True):
        assert case.run("emulated", 2, FREE)[0] <= case.run("emulated", 2, SLOW)[0], case.strategy
    r = [r for r in V.validate(workers=2, quick=True, repeats=1, profile=SLOW, only=[PARTITION],
                               busy=0) if r["P"] == 2][0]
    assert r["emulated_over_measured"] > 5 and "pessimistic" in r["verdict"]


def test_more_workers_than_cores_are_labelled_oversubscribed(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert V.cores() == 1
    rows = V.validate(workers=2, quick=True, repeats=1, profile=FREE, only=[PARTITION], busy=0)
    assert [(r["P"], r["condition"]) for r in rows] == [(1, "measured"), (2, "oversubscribed")]
    assert "not scaling" in rows[1]["verdict"]
    assert "| oversubscribed |" in V.markdown(rows)


def _args(tmp_path, **kw):
    return argparse.Namespace(**{"workers": 2, "profile": FREE, "quick": True, "out": tmp_path,
                                 **kw})


def test_main_prints_and_writes_the_table(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(V, "STRATEGIES", {PARTITION: V.strategies()[PARTITION]})
    assert V.main(_args(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "| network partition |" in out and "profile: `none`" in out
    assert (tmp_path / "validate.csv").exists()
    assert "| network partition |" in (tmp_path / "validate.md").read_text()


def test_main_exits_1_on_a_failure(monkeypatch, tmp_path, capsys):
    def broken(quick):
        def run(backend, P, profile):
            raise RuntimeError("boom")
        return V.Case("-", "-", run)

    monkeypatch.setattr(V, "STRATEGIES", {"broken": broken})
    assert V.main(_args(tmp_path)) == 1
    assert "boom" in capsys.readouterr().err


def test_workers_beyond_what_an_instance_splits_over_are_not_run(monkeypatch):
    def tiny(quick):
        def run(backend, P, profile):
            assert P <= 1, "run beyond max_P"
            return 0.01, 0.01
        return V.Case("-", "-", run, max_P=1)

    monkeypatch.setattr(V, "STRATEGIES", {"tiny": tiny})
    rows = V.validate(workers=2, quick=True, repeats=1, profile=FREE, busy=0)
    assert rows[1]["verdict"].startswith("n/a") and math.isnan(rows[1]["emulated_s"])
    assert "| n/a: the instance splits over at most 1 |" in V.markdown(rows)


def _fake(name: str, scale: float):
    """A strategy whose times say where they were taken: measured ``scale``·P; emulated
    ``scale``·P·10 in this process, ``scale``·P·100 in any other (a ``--jobs`` pool child)."""
    parent = os.getpid()

    def run(backend, P, profile):
        if backend == "local":
            return scale * P, scale * P
        return scale * P * (10 if os.getpid() == parent else 100), 0.0

    return lambda quick: V.Case("paperX", f"{name} instance", run)


def test_jobs_runs_every_emulated_run_again_in_the_pool_beside_the_one_alone(monkeypatch):
    monkeypatch.setattr(V, "STRATEGIES", {"a": _fake("a", 1.0), "b": _fake("b", 3.0)})
    rows = V.validate(workers=2, repeats=2, busy=0, jobs=2, profile=FREE)
    assert [(r["strategy"], r["P"]) for r in rows] == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    for r in rows:
        scale = {"a": 1.0, "b": 3.0}[r["strategy"]] * r["P"]
        assert r["emulated_s"] == 10 * scale  # alone: in this process
        assert r["emulated_jobs_s"] == r["emulated_jobs_min_s"] == r["emulated_jobs_max_s"] == 100 * scale
        assert r["emulated_jobs_over_measured"] == pytest.approx(100) and r["jobs"] == 2
        assert "pessimistic" in r["verdict_jobs"]
    head = V.markdown(rows).splitlines()[0]
    assert "emulated / measured, 2 at a time" in head
    # negative control: without --jobs no run leaves this process and no column is added
    plain = V.validate(workers=2, repeats=2, busy=0, profile=FREE)
    assert all("emulated_jobs_s" not in r for r in plain)
    assert "at a time" not in V.markdown(plain)


def test_validate_takes_a_subset_of_P(monkeypatch):
    monkeypatch.setattr(V, "STRATEGIES", {"a": _fake("a", 1.0)})
    assert [r["P"] for r in V.validate(workers=4, Ps=[1, 4], repeats=1, busy=0, profile=FREE)] == [1, 4]
    with pytest.raises(ValueError):
        V.validate(workers=2, Ps=[4], repeats=1, busy=0, profile=FREE)


def test_each_timed_emulated_run_follows_an_untimed_one_after_the_local_run(monkeypatch):
    """The fork of a local run leaves this process's pages to fault at their next write, so
    the emulated run right after it is not timed: the calls go local, emulated (dropped),
    emulated (timed), and the row's emulated time is the timed calls' only."""
    calls = []

    def fake(quick):
        def run(backend, P, profile):
            calls.append(backend)
            # the emulated run right after a local one is slow (as after a fork), later ones not
            slow = backend == "emulated" and calls[-2:-1] == ["local"]
            return (1.0, 1.0) if backend == "local" else (9.0 if slow else 0.5, 0.0)
        return V.Case("-", "-", run)

    monkeypatch.setattr(V, "STRATEGIES", {"fake": fake})
    rows = V.validate(workers=1, quick=True, repeats=3, profile=FREE, busy=0)
    assert calls == ["local", "emulated", "emulated"] * 3
    assert rows[0]["emulated_s"] == rows[0]["emulated_max_s"] == 0.5
    # control: the same fake timed on the first call after the local run reads slow
    calls.clear()
    assert [fake(True).run(b, 1, FREE)[0] for b in ("local", "emulated")] == [1.0, 9.0]
