"""paper3's failed-run cap (issue 32): a run fails when it has not converged by
cap_factor × its configuration's median epochs over seeds, within [first_cap, max_epochs].
Worked examples of the rule, which runs the second pass redoes, and on a tiny run that a
redone run is the run a single pass at its cap gives (training is deterministic), with the
control that a factor of 1 redoes nothing and leaves those runs failed."""
import json
import math
from dataclasses import replace

import pytest

from engine.perfmodel import MachineProfile
from reproduce.harness import run_paper
from reproduce.paper3 import PAPER
from reproduce.paper3.setup import DEFAULT, QUICK
from reproduce.paper3.tasks import extend, failed_run_cap, first_cap, run_task
from reproduce.runner import Task

S = replace(DEFAULT, first_cap=1_000, cap_factor=10, max_epochs=50_000)


def _r(epochs, converged=True, cap=1_000):
    return {"epochs": float(epochs), "converged": converged, "max_epochs": float(cap)}


def test_the_cap_is_the_factor_times_the_median_within_its_bounds():
    assert failed_run_cap(S, [_r(300), _r(400), _r(500)]) == 4_000  # 10 × 400
    assert failed_run_cap(S, [_r(30), _r(40), _r(50)]) == 1_000  # never below first_cap
    assert failed_run_cap(S, [_r(3_000), _r(9_000), _r(9_000)]) == 50_000  # never above max_epochs
    # a failed run counts as never: 4 runs, 2 failed -> the median is (500 + inf) / 2
    assert failed_run_cap(S, [_r(300), _r(500), _r(1_000, False), _r(1_000, False)]) == 50_000
    assert failed_run_cap(S, [_r(300), _r(500), _r(600), _r(1_000, False)]) == 5_500  # 10 × 550
    # control: the factor moves it
    assert failed_run_cap(replace(S, cap_factor=3), [_r(300), _r(400), _r(500)]) == 1_200


def test_first_cap_never_exceeds_the_ceiling():
    assert first_cap(S) == 1_000
    assert first_cap(QUICK) == QUICK.max_epochs == 20_000  # --quick: one pass


class _Run:
    def __init__(self, setup):
        self.setup, self.backend = setup, "local"


def _task(name, nodes, seed, m=None):
    p = {"nodes": nodes, "run": seed - 1, "seed": seed} | ({"local_epoch": m} if m else {})
    return Task(name, "emulated" if name == "pattern" else "measured", 1, p)


def test_only_unconverged_runs_below_their_configurations_cap_are_redone():
    results = [(_task("serial", 1, 1), _r(300)), (_task("serial", 1, 2), _r(1_000, False)),
               (_task("serial", 1, 3), _r(400)),
               # another configuration: its median is 40 -> cap 1,000 = the first cap: nothing
               (_task("pattern", 8, 1, 32), _r(40)), (_task("pattern", 8, 2, 32), _r(1_000, False)),
               (_task("pattern", 8, 3, 32), _r(30))]
    redo = extend(_Run(S), results)
    assert list(redo) == [1]
    assert redo[1].params == {"nodes": 1, "run": 1, "seed": 2, "max_epochs": 4_000.0}
    # control: a run that already ran to its cap is not redone
    results[1] = (redo[1], _r(4_000, False, cap=4_000))
    assert extend(_Run(S), results) == {}


TINY = replace(QUICK, bits=3, hidden=6, nodes=(1, 2), local_epochs=(4,), runs=6, max_epochs=3_000,
               first_cap=1_200, cap_factor=10, ablation_runs=0)
TEST = MachineProfile("test", 2e-6, 5e9, source="a test profile")


def _cache(out):
    return [json.loads(p.read_text()) for p in (out / ".cache").glob("*.json")]


@pytest.mark.parametrize("factor", [10, 1])
def test_a_redone_run_is_the_single_pass_run_at_its_cap(tmp_path, monkeypatch, factor):
    monkeypatch.setattr("reproduce.paper3.tasks.measure_here", lambda: TEST)
    setup = replace(TINY, cap_factor=factor)
    summary = run_paper(PAPER, setup=setup, mode="quick", workers=1, backend="local", seed=1,
                        out=tmp_path / "p3", profile=TEST)
    serial = {(e["config"]["seed"], e["config"].get("max_epochs")): e["result"] for e in _cache(tmp_path / "p3")
              if e["config"]["name"] == "serial"}
    # serial seeds 1 and 2 need ~1,420 epochs, seeds 3–6 ~1,040–1,100: seeds 1 and 2 stop
    # at the first cap of 1,200; the median is (1,088 + 1,100) / 2, so 10 × it is over 3,000
    assert not serial[(1, None)]["converged"] and not serial[(2, None)]["converged"]
    if factor == 1:  # control: the cap is the first cap, nothing is redone, both stay failed
        assert summary["meta"]["tasks_redone"] == 0
        assert not any(k[1] for k in serial)
        return
    assert summary["meta"]["tasks_redone"] == 2
    for seed in (1, 2):
        redone = serial[(seed, 3_000.0)]
        once = run_task(_task("serial", 1, seed), None, _Run(replace(setup, first_cap=3_000)))
        assert redone["converged"] and redone["epochs"] == once["epochs"] > 1_200
        assert redone["final_mse"] == once["final_mse"]
    md = (tmp_path / "p3" / "report.md").read_text()
    assert "10 × its configuration's median" in md and "slowest converged run took" in md
    assert not math.isnan(summary["meta"]["wall_s"])


def test_the_report_lists_the_runs_the_cap_stopped_by_seed():
    """A seed that fails everywhere is named once; one that fails in some configurations is
    named with each and the epochs it reached (control: nothing failed, 'none')."""
    import pandas as pd

    from reproduce.paper3.text import capped_runs

    def row(name, nodes, m, seed, ok, epochs):
        return dict(name=name, nodes=nodes, local_epoch=m, seed=seed, study="main", converged=ok,
                    epochs=epochs)

    runs = pd.DataFrame([row("serial", 1, None, 1, True, 900.0), row("serial", 1, None, 2, False, 9000.0),
                         row("pattern", 2, 128, 1, False, 4713.0), row("pattern", 2, 128, 2, False, 4713.0),
                         row("pattern", 2, 32, 1, True, 100.0), row("pattern", 2, 32, 2, False, 20000.0)])
    assert capped_runs(runs) == ("stopped by the cap: seed 1 at 2 nodes, local epoch 128 (4,713 epochs); "
                                 "seed 2 in all 3 configurations")
    assert capped_runs(runs.assign(converged=True)) == "stopped by the cap: none"
