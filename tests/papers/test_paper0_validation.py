"""paper0's emulated compositions under α/β and calibrated profiles, the emulated /
measured pairs and the notes of emulated rows beyond the measured P (issue 12)."""
from __future__ import annotations

import math

import pytest

from engine.perfmodel import MachineProfile, barrier_time_linear
from reproduce.paper0.report import (BOUND, netpart_emulated, seqpart_emulated, validation_notes,
                                     validation_pairs)
from reproduce.paper0.setup import Setup
from reproduce.runner import Task

AB = MachineProfile("here-best", latency_s=3e-7, bandwidth_Bps=6e9, source="test")  # barrier_model "tree"
CAL = MachineProfile(
    "cal", 1e-6, 1e9, source="test",
    coll={"barrier": {2: [[0, 2e-6]], 4: [[0, 4e-6]]},
          "broadcast": {2: [[8000, 5e-6]], 4: [[8000, 7e-6]]},
          "allreduce": {2: [[8000, 10e-6]], 4: [[8000, 20e-6]]}},
    contention={"small": {2: 1.2, 4: 1.5}}, straggler={"small": {2: 1.1, 4: 1.3}}, compute_ratio=2.0)


def _loop(H=10, steps=100):
    return {"block_s": {str(k): 1e-3 * k + 1e-4 for k in range(1, H + 1)}, "steps": steps}


def test_alpha_beta_profiles_keep_the_old_formulas_bit_for_bit():
    r = _loop()
    for P in range(1, 11):
        old = r["block_s"][str(-(-10 // P))] + r["steps"] * barrier_time_linear(AB, P)  # (P − 1)·α
        assert netpart_emulated(r, P, 10, AB) == old
    times = [0.31, 0.5, 0.47]
    for P in (1, 3):
        old = max(times) + 2 * barrier_time_linear(AB, P) + (P - 1) * 8000 / AB.bandwidth_Bps
        assert seqpart_emulated(times, P, 8000, AB, weight_bytes=8000) == old
    free = MachineProfile(BOUND, 0.0, math.inf, source="bound")
    assert seqpart_emulated(times, 3, 8000, free) == max(times)


def test_a_calibrated_profile_scales_compute_waits_and_prices_its_tables():
    r = _loop(H=8, steps=50)
    c = r["block_s"]["4"] * 2.0 * 1.2  # compute ratio × contention at P = 2
    assert netpart_emulated(r, 2, 8, CAL) == pytest.approx(c + 0.1 * c + 50 * 2e-6)
    c1 = r["block_s"]["8"] * 2.0  # one worker: the speed ratio only, no collective
    assert netpart_emulated(r, 1, 8, CAL) == pytest.approx(c1)
    times = [0.2, 0.25, 0.1, 0.22]
    c = 0.25 * 2.0 * 1.5
    assert seqpart_emulated(times, 4, 8000, CAL, weight_bytes=8000) == pytest.approx(
        c + 0.3 * c + 7e-6 + 20e-6)


def _results():
    """Two runs of one measured 2-worker loop and epoch beside their emulated twins."""
    out = []
    for i in range(2):
        out.append((Task("netpart", "emulated", 1, {"net": "radio", "run": i, "seed": 1 + i}), _loop(H=10)))
        out.append((Task("netpart", "measured", 2, {"net": "radio", "workers": 2, "run": i, "seed": 1 + i}),
                    {"serial_s": 0.0101, "parallel_s": 0.006 + 0.001 * i}))
        em = {"deriv": {str(P): [0.2 / P] * P for P in range(1, 5)},
              "fwd": {str(P): [0.01 / P] * P for P in range(1, 5)}, "n_params": 999}
        out.append((Task("seqpart", "emulated", 1, {"run": i, "seed": 1 + i}), em))
        out.append((Task("seqpart", "measured", 2, {"workers": 2, "run": i, "seed": 1 + i}),
                    {"1": {"deriv_s": 0.2, "fwd_s": 0.01}, "2": {"deriv_s": 0.125, "fwd_s": 0.006}}))
        out.append((Task("seqpart", "measured", 4, {"workers": 4, "run": i, "seed": 1 + i}),  # > cores
                    {"1": {"deriv_s": 0.2, "fwd_s": 0.01}, "4": {"deriv_s": 0.5, "fwd_s": 0.05}}))
    return out


def test_validation_pairs_give_each_measured_configuration_its_twin_and_skip_oversubscribed():
    free = MachineProfile(BOUND, 0.0, math.inf, source="bound")
    setup = Setup(max_workers=4)
    pairs = validation_pairs(_results(), setup, [AB, free], cores=2)
    assert set(pairs) == {"here-best"}  # the bound is never validated
    v = pairs["here-best"]
    assert {p["config"] for p in v} == {"fig2 radio loop", "fig4 derivative epoch", "fig5 forward epoch"}
    assert {p["P"] for p in v} == {2}  # P = 4 is oversubscribed on 2 cores: left out
    loop = next(p for p in v if p["config"] == "fig2 radio loop")
    assert loop["measured_s"] == pytest.approx(0.0065) and loop["runs"] == 2
    assert loop["emulated_s"] == netpart_emulated(_loop(H=10), 2, 10, AB)
    deriv = next(p for p in v if p["config"] == "fig4 derivative epoch")
    assert deriv["emulated_s"] == seqpart_emulated([0.1, 0.1], 2, 1000 * 8, AB, weight_bytes=8000)


def test_rows_beyond_the_measured_P_carry_their_validation():
    pairs = {"here-best": [{"P": 2, "config": "x", "emulated_s": 1.5, "measured_s": 1.0}]}
    rows = [{"kind": "emulated", "quantity": "loop_speedup", "condition": f"workers={P};profile={n};net=radio",
             "note": "n"} for P in (2, 3) for n in ("here-best", BOUND)]
    rows.append({"kind": "emulated", "quantity": "overall_speedup", "condition": "workers=17/6;profile=here-best",
                 "note": ""})
    rows.append({"kind": "measured", "quantity": "loop_speedup", "condition": "workers=3;net=radio", "note": ""})
    validation_notes(rows, pairs, Setup())
    assert [r["note"] for r in rows[:2]] == ["n", "n"]  # P = 2 was measured
    assert "largest emulator error at measured P was 1.50×" in rows[2]["note"]
    assert "bound" in rows[3]["note"] and "not validated" in rows[3]["note"]
    assert "beyond the measured P ≤ 2" in rows[4]["note"]
    assert rows[5]["note"] == ""


def test_the_many_core_twins_are_composed_like_the_emulated_rows():
    from engine.perfmodel import FREE
    from reproduce.manycore import key
    from reproduce.paper0.report import manycore_emulated

    em = manycore_emulated(_results(), Setup(max_workers=4), AB)
    assert set(em) == {key(P, curve="fig4") for P in (2, 3, 4)}  # no parsing-net runs in these results
    e = em[key(2, curve="fig4")]
    t2 = seqpart_emulated([0.1, 0.1], 2, 8000, AB, weight_bytes=8000)
    assert e["speedup"] == pytest.approx(seqpart_emulated([0.2], 1, 8000, AB) / t2) and e["runs"] == 2
    assert e["comm_share"] == pytest.approx(1 - 0.1 / t2)
    free = manycore_emulated(_results(), Setup(max_workers=4), FREE)[key(4, curve="fig4")]
    assert free["speedup"] == pytest.approx(4.0) and free["comm_share"] == pytest.approx(0.0)
