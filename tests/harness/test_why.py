"""reproduce/why.py, the shared half of the issue "The why behind every verdict": factors
whose geometric means multiply to the figure's, with intervals that share their resamples
(a worked example and a negative control), and an emulated time taken apart into pieces
that sum to the emulator's own total, on an α/β and on a calibrated profile."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from engine.perfmodel import MachineProfile
from reproduce import why as W

PROFILES = sorted((Path(__file__).parents[2] / "engine" / "profiles").glob("*.json"))


def test_factor_means_multiply_to_the_figures_mean():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 2, 7), rng.uniform(0.5, 2, 7)
    recs = [(x, y, x * y) for x, y in zip(a, b)]
    iv = W.factor_intervals(recs, ("a", "b", "ab"), label="test why")
    assert iv["a"][0] * iv["b"][0] == pytest.approx(iv["ab"][0], rel=1e-12)
    assert iv["ab"][0] == pytest.approx(math.exp(np.mean(np.log(a * b))), rel=1e-12)
    for lo_est_hi in iv.values():
        assert lo_est_hi[1] <= lo_est_hi[0] <= lo_est_hi[2]
    # the same label draws the same resamples: a factor equal to the figure gets its interval
    same = W.factor_intervals([(r[2], r[2]) for r in recs], ("x", "y"), label="test why")
    assert same["x"] == same["y"]
    # negative control: records that do not multiply give means that do not either
    bad = W.factor_intervals([(x, y, x * y * 1.1) for x, y in zip(a, b)], ("a", "b", "ab"), label="test why")
    assert bad["a"][0] * bad["b"][0] != pytest.approx(bad["ab"][0], rel=1e-3)


def test_one_record_gives_no_interval():
    iv = W.factor_intervals([(2.0, 3.0)], ("x", "y"), label="t")
    assert iv["x"][0] == 2.0 and math.isnan(iv["x"][1]) and W.ci(*iv["x"]) == "2"
    assert W.ci(math.nan) == "–" and W.ci(1.5, 1.0, 2.0, ".2f") == "1.50 [1.00, 2.00]"


@pytest.mark.parametrize("path", PROFILES + [None], ids=lambda p: p.stem if p else "alpha-beta")
def test_emulated_parts_sum_to_the_emulators_total(path):
    prof = MachineProfile.load(path) if path else MachineProfile("ab", 5e-6, 1e9, source="test")
    coll = [("allreduce", 8_016, 100), ("barrier", 0, 200), ("allreduce", 64, 3)]
    for P in (2, 6, 16, 40):
        c, comm = prof.emulate(P, 1.5, coll)
        parts = W.emulated_parts(prof, P, 1.5, coll)
        assert sum(parts.values()) == pytest.approx(c + comm, rel=1e-12)
        assert parts["compute"] == pytest.approx(c, rel=1e-15) and set(parts) == {
            "compute", "straggler_wait", "allreduce", "barrier"}
        # negative control: without the collectives only compute and the wait remain
        assert sum(W.emulated_parts(prof, P, 1.5).values()) == pytest.approx(sum(prof.emulate(P, 1.5)), rel=1e-12)
        assert sum(W.emulated_parts(prof, P, 1.5).values()) < sum(parts.values())


@pytest.mark.parametrize("name", ["paper0", "paper1", "paper2", "paper3", "paper4"])
def test_every_committed_claim_not_reproduced_or_inconclusive_gives_its_why(name):
    import pandas as pd

    df = pd.read_csv(Path(__file__).parents[2] / "results" / name / "claims.csv")
    open_ = df[df.verdict.isin(["not-reproduced", "inconclusive"])]
    missing = [r.claim for r in open_.itertuples() if not W.cites(str(r.reason))]
    assert not missing, f"{name}: reasons that neither cite a why nor say unexplained: {missing}"
    # negative control: a reason with neither is caught
    assert not W.cites("row x/y: 0.5 against the paper's 1.0")
    assert W.cites("…; why (section Why): 2× fewer cells") and W.cites("the rest is unexplained")


def test_what_each_study_cost_is_its_tasks_seconds_summed():
    """cost_rows/cost_line on a worked example: two ablations beside the main study, one task
    whose seconds were never recorded (left out and said), and the sentence's shares."""
    import pandas as pd

    from reproduce.runner import Task

    def t(study):
        return Task("x", "measured", 1, {"study": study})
    results = [(t("main"), {"_seconds": 60.0}), (t("main"), {"_seconds": 120.0}),
               (t("a"), {"_seconds": 30.0}), (t("b"), {"_seconds": 30.0}), (t("b"), {"_seconds": None})]
    rows = W.cost_rows("toy", results, lambda task: task.params["study"])
    got = {r["condition"]: (r["ours"], r["runs"]) for r in rows}
    assert got == {"study=main": (180.0, 2), "study=a": (30.0, 1), "study=b": (30.0, 2),
                   "study=ablations": (60.0, 3)}
    assert all(r["table"] == W.TABLE and r["quantity"] == W.COST and r["kind"] == "measured" for r in rows)
    assert "1 not recorded" in next(r["note"] for r in rows if r["condition"] == "study=b")
    line = " ".join(W.cost_line(pd.DataFrame(rows)))
    # 60 s of 240 s: the ablations' 3 tasks are a quarter of the run's task time
    assert "Their 3 tasks took 1.0 min of task time, 25% of the 4.0 min the tasks behind these results took" in line
    assert "(the paper's setup: 2 tasks, 3.0 min)" in line
    # negative controls: one ablation alone has no "ablations" total; no ablation, no sentence
    one = W.cost_rows("toy", results[:3], lambda task: task.params["study"])
    assert [r["condition"] for r in one] == ["study=main", "study=a"]
    assert "Their 1 task took 0.5 min" in " ".join(W.cost_line(pd.DataFrame(one)))
    assert W.cost_line(pd.DataFrame(W.cost_rows("toy", results[:2], lambda task: "main"))) == []


def test_a_result_carries_the_seconds_its_task_took(tmp_path):
    """reproduce.runner.execute gives every result its task's ``_seconds``, computed or
    cached, and the cache never stores it as part of the result."""
    import json

    from reproduce.runner import Task, execute
    from reproduce.store import RunCache

    tasks = [Task("sleep", "measured", 1, {"s": 0.05})]

    def fn(task, comm):
        import time
        time.sleep(task.params["s"])
        return {"v": 1.0}
    first = execute(tasks, fn, cache=RunCache(tmp_path), extra={})
    assert first[0][1]["_seconds"] >= 0.05 and "_cached_from" not in first[0][1]
    stored = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert stored["result"] == {"v": 1.0} and stored["recorded"]["seconds"] == first[0][1]["_seconds"]
    again = execute(tasks, lambda task, comm: pytest.fail("recomputed"), cache=RunCache(tmp_path), extra={})
    assert again[0][1]["_seconds"] == stored["recorded"]["seconds"] and again[0][1]["v"] == 1.0
