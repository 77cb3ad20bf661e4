"""paper2's why (reproduce/paper2/why.py, the issue "The why behind every verdict"): worked
examples of its two splits against hand calculations (bucketing's speed-up = padded cells ×
time per cell; a loss ratio at equal time = at equal passes × from the passes made), the
factors multiplying to the figure per record and in their geometric means, negative
controls, the comparison rows, and the reasons the not-reproduced claims take from them."""
from __future__ import annotations

import math

import numpy as np
import pytest

from reproduce import claims as C
from reproduce import report as R
from reproduce.paper2 import claims as P
from reproduce.paper2 import why as W
from test_paper2_claims import SETUP, LENGTHS, epoch_times, results, run  # the test folders are on sys.path (tests/conftest.py)


def test_cells_times_time_per_cell_is_the_speedup_by_hand():
    et = epoch_times({"random:1": 4.0, "optimal:3": 1.0})
    et["optimal:3"]["cells"] = [2000] * 5  # random batches 4000 cells: 2× fewer, so 2× per cell
    for cells, per_cell, speed in W.cell_records(et, "optimal:3"):
        assert (cells, per_cell, speed) == pytest.approx((2.0, 2.0, 4.0), rel=1e-12)
    # negative control: the same cells as random batches leave the whole speed-up to the cells' cost
    et["optimal:3"]["cells"] = [4000] * 5
    assert W.cell_records(et, "optimal:3")[0] == pytest.approx((1.0, 4.0, 4.0), rel=1e-12)


def test_q3_speedup_interval_is_the_claims_draw_for_draw():
    res = full_results()
    et = next(r for t, r in res if t.name == "epoch_times")
    q3 = next(c for c in W.cells(et, {}) if c["config"] == "optimal:3")
    ev = P.evidence(res, setup=SETUP, lengths=LENGTHS, host="test")["abstract-speed"]
    assert q3["speedup"] == (ev.ours, ev.low, ev.high)
    est = {f: q3[f][0] for f in W.CELLS}
    assert est["cells_ratio"] * est["time_per_cell_ratio"] == pytest.approx(est["speedup"], rel=1e-12)


def test_equal_time_split_by_hand():
    a = run(50.0, end=10.0, epochs=4)  # 1 worker: a pass every 2.5 s, loss 100 → 50 over 10 s
    b = run(60.0, end=10.0, epochs=8)  # B: a pass every 1.25 s, loss 100 → 60 over 10 s
    # at t = 5: A made 2 passes, loss 75; B made 4, loss 80; B at A's 2 passes (t = 2.5): 90
    rec = W.equal_time_record(a, b, 5.0)
    assert rec == pytest.approx((90 / 75, 80 / 90, 80 / 75, 2.0), rel=1e-12)
    assert rec[0] * rec[1] == pytest.approx(rec[2], rel=1e-12)
    # negative control: B at A's pace gains nothing from passes; all of it is per pass
    same = W.equal_time_record(a, run(60.0, end=10.0, epochs=4), 5.0)
    assert same[1] == pytest.approx(1.0, rel=1e-12) and same[3] == pytest.approx(1.0, rel=1e-12)
    assert same[0] == pytest.approx(80 / 75, rel=1e-12)
    # past the end of B's run there is no loss to compare
    assert math.isnan(W.loss_at_passes(b, 9)) and math.isnan(W.passes_at(a, 11.0))


def full_results():
    """test_paper2_claims.results() with what a training task also records (tasks.py): the
    validation character error rate and the communication time of every pass."""
    res = results()
    for t, r in res:
        if t.name == "train":
            r["val_cer"] = [0.9 - 0.05 * i for i in range(r["epochs"])]
            r["comm_s"] = [0.01 * (t.params["workers"] > 1)] * r["epochs"]
            r["profile"] = "here" if t.kind == "emulated" else ""
    return res


def test_rows_and_reasons_from_synthetic_results():
    res = full_results()
    w = W.compute(res, setup=SETUP)
    df = R.frame(W.rows(w))
    assert (df.table == "why").all() and not df.duplicated(["quantity", "condition"]).any()
    assert df.reported.isna().all()
    for x in w["fig5"] + w["fig3"]:
        e = {f: x[f][0] for f in W.EQUAL_TIME}
        assert e["loss_ratio_equal_passes"] * e["loss_ratio_more_passes"] == pytest.approx(
            e["loss_ratio_equal_time"], rel=1e-12)
        lo, hi = x["loss_ratio_equal_time"][1:]
        assert x["seeds"] < 2 or lo <= e["loss_ratio_equal_time"] <= hi
    # results(): P workers make P× the passes (their runs have P× the epochs) and end at
    # p2 = 0.9 / p6 = 0.77 of the 1-worker loss: better at equal time
    two = next(x for x in w["fig5"] if x["P"] == 2)
    assert two["passes_ratio"][0] == pytest.approx(1.0, rel=1e-12)  # run(): 4 epochs whatever P
    ev = P.evidence(res, setup=SETUP, lengths=LENGTHS, host="test")
    W.cite(ev, w)
    assert "why (section Why): 2 measured workers end at" in ev["concl-dp"].reason
    assert "why (section Why): 6 emulated workers end at" in ev["fig5a-23pct"].reason
    # negative control: better per pass, so no sentence says averaging is worse per pass
    assert "is worse than one worker's" not in ev["concl-dp"].reason
    md = "\n".join(W.section(w))
    assert md.startswith("## Why") and "| B ÷ A |" in md and "padded cells" in md
    assert "validation character error rate of 0.75–0.75" in md  # every run ends at 0.9 − 3·0.05


def test_worse_per_pass_is_said_only_when_its_whole_interval_is_above_one():
    x = {"P": 2, "kind": "measured", "comm_share": (0.1, 0.05, 0.15), "seeds": 5,
         "loss_ratio_equal_time": (1.2, 1.1, 1.3), "loss_ratio_more_passes": (0.75, 0.7, 0.8),
         "passes_ratio": (1.9, 1.8, 2.0), "loss_ratio_equal_passes": (1.6, 1.4, 1.8)}
    assert "worse than one worker's over the whole interval" in W.fig5_sentence(x)
    x["loss_ratio_equal_passes"] = (1.1, 0.9, 1.3)  # holds 1
    assert "worse" not in W.fig5_sentence(x)


def test_lattice_cells_by_hand():
    from engine.schedule import Batch
    from reproduce.paper2.tasks import lattice_cells

    labels = np.array([1, 3, 2, 0])  # label lengths of sequences 0..3
    batches = [Batch(np.array([0, 1]), 5), Batch(np.array([2, 3]), 2)]
    # 2·5·(2·3 + 1) + 2·2·(2·2 + 1) = 70 + 20
    assert lattice_cells(batches, labels) == 90
    # control: a longer label in the second batch widens every lattice of that batch
    assert lattice_cells(batches, np.array([1, 3, 4, 0])) == 70 + 2 * 2 * 9


def _above(lattice):
    c = {"k": 256, "config": "optimal:3", "reps": 1, "fwd_bwd": True, "cells_ratio": (2.0,) * 3,
         "time_per_cell_ratio": (1.5,) * 3, "speedup": (3.0,) * 3}
    if lattice is not None:
        c[W.LATTICE] = (lattice,) * 3
    return {"cells": [c], "label_r": 0.85}


def test_a_speedup_above_its_cell_bound_is_set_against_the_lattice_bound():
    between = " ".join(W.cells_sentences(_above(3.5)))
    assert "between its cell bound and its CTC lattice bound" in between and "r = 0.85" in between
    assert "3.50× fewer CTC lattice cells" in between
    # controls: above the lattice bound too, it stays unexplained; without lattice cells, untraced
    assert "exceeds even the CTC lattice bound" in " ".join(W.cells_sentences(_above(2.5)))
    assert "recorded no lattice cells" in " ".join(W.cells_sentences(_above(None)))
    rows = R.frame(W.rows({**_above(3.5), "fig3": [], "fig5": [], "ends": []}))
    assert set(rows.quantity) == set(W.CELLS) | {W.LATTICE}


def test_mixed_ks_are_each_said_where_they_stand():
    # k = 64 within its lattice bound, k = 256 beyond it: each named under its own sentence
    a, b = _above(3.5)["cells"][0], _above(2.5)["cells"][0]
    text = " ".join(W.cells_sentences({"cells": [{**a, "k": 64}, {**b, "k": 256}], "label_r": 0.85}))
    assert "At k = 64 it lies between" in text and "At k = 256 it exceeds even" in text
    assert "k = 64 it exceeds" not in text and "not traced" not in text
