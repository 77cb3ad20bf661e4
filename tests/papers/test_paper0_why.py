"""paper0's why (reproduce/paper0/why.py, why_text.py; the issue "The why behind every verdict"):
worked examples of its splits against hand calculations (an epoch's speed-up = P × work ×
balance × contention × compute share; the loop's = units × per-unit time × contention ×
compute share, and its fixed cost; Amdahl's ours ÷ the paper's by one input at a time; the
loop share = loop ÷ D × D's weight), the emulated time's parts summing to compose.py's, negative
controls, the comparison rows, and the reasons the claims take from them."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine.perfmodel import MachineProfile
from reproduce import report as R
from reproduce.paper0 import claims as P0C
from reproduce.paper0 import compose as P0
from reproduce.paper0 import why as W
from reproduce.paper0 import why_text as T
from test_paper0_claims import BOUND_P, FREE_HERE, FREE_HOST, SETUP, host, results  # the test folders are on sys.path (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
XEON = MachineProfile.load(ROOT / "engine" / "profiles" / "xeon207x16.json")
ALPHA_BETA = MachineProfile("here-best", 1e-3, 1e6, source="test: α 1 ms, β 1 MB/s")


def seq(deriv4: list, fwd4: list | None = None, n_params: int = 99) -> dict:
    """A seqpart emulated result at P = 1 and 4 (one worker's compute 1 s; forward 0.1 s)."""
    return {"deriv": {"1": [1.0], "4": deriv4}, "fwd": {"1": [0.1], "4": fwd4 or [0.025] * 4},
            "n_params": n_params}


def test_epoch_speedup_is_P_work_balance_contention_share_by_hand():
    # 4 workers sum to 1.3 s against one worker's 1 s (work 1/1.3), the slowest 0.4 s against
    # their mean 0.325 (balance 0.8125); free synchronisation: S = 1 / 0.4 = 2.5
    rec = W.epoch_record(seq([0.3, 0.3, 0.3, 0.4]), "fig4", 4, FREE_HERE)
    assert rec == pytest.approx((4, 1 / 1.3, 0.8125, 1.0, 1.0, 2.5), rel=1e-12)
    assert math.prod(rec[:-1]) == pytest.approx(rec[-1], rel=1e-12)
    # negative control: equal shares and the one worker's work: the ideal P, every factor 1
    assert W.epoch_record(seq([0.25] * 4), "fig4", 4, FREE_HERE) == pytest.approx((4, 1, 1, 1, 1, 4), rel=1e-12)


def test_alpha_beta_epoch_parts_by_hand_and_as_compose_sums_them():
    # α/β (paper0's shared memory): 2 barriers of (P − 1)·α and P − 1 vectors of (99 + 1)·8 bytes at β
    parts = W.seqpart_parts([0.3, 0.3, 0.3, 0.4], 4, 800, ALPHA_BETA, weight_bytes=800)
    assert parts == pytest.approx({"compute": 0.4, "straggler_wait": 0.0, "barrier": 2 * 3e-3,
                                   "reduction": 3 * 800 / 1e6}, rel=1e-12)
    rec = W.epoch_record(seq([0.3, 0.3, 0.3, 0.4]), "fig4", 4, ALPHA_BETA)
    assert rec[4] == pytest.approx(0.4 / sum(parts.values()), rel=1e-12)  # compute share
    assert rec[-1] == pytest.approx(1.0 / sum(parts.values()), rel=1e-12)


@pytest.mark.parametrize("P", [2, 5, 11, 16])
def test_calibrated_parts_add_up_to_the_composed_times(P):
    res = {"deriv": {"1": [1.0], str(P): [1.0 / P * (1 + 0.01 * i) for i in range(P)]}, "n_params": 5501}
    nb, w = P0._bytes(res)["fig4"]
    parts = W.seqpart_parts(res["deriv"][str(P)], P, nb, XEON, weight_bytes=w)
    assert set(parts) == {"compute", "straggler_wait", "broadcast", "allreduce"}
    assert sum(parts.values()) == pytest.approx(P0.seqpart_emulated(res["deriv"][str(P)], P, nb, XEON, weight_bytes=w),
                                                rel=1e-12)
    # contention: the profile's compute scale at 1 over at P
    rec = W.epoch_record({**res, "fwd": res["deriv"]}, "fig4", P, XEON)
    assert rec[3] == pytest.approx(XEON.compute_scale(1) / XEON.compute_scale(P), rel=1e-12)
    assert math.prod(rec[:-1]) == pytest.approx(rec[-1], rel=1e-12)
    loop = {"block_s": {str(k): 1e-3 * (3 + k) for k in range(1, 25)}, "steps": 100}
    lp = W.netpart_parts(loop, P, 24, XEON)
    assert set(lp) == {"compute", "straggler_wait", "barrier"}
    assert sum(lp.values()) == pytest.approx(P0.netpart_emulated(loop, P, 24, XEON), rel=1e-12)


def test_loop_speedup_and_fixed_cost_by_hand():
    # t(k) = 10 ms + 1 ms·k over 100 pattern steps; 10 units on 5 workers: blocks of 2.
    # S = t(10) / t(2) = 20 / 12 = 5 units × (2 / 10) / (12 / 2) per-unit = 5 × 1/3
    res = {"block_s": {str(k): 0.010 + 0.001 * k for k in range(1, 11)}, "steps": 100}
    assert W.loop_record(res, 10, 5, FREE_HERE) == pytest.approx((5, 1 / 3, 1, 1, 5 / 3), rel=1e-12)
    # the fit: a = 10 ms of t(10) = 20 ms, 100 µs a step; b = 10 µs a unit a step
    assert W.fixed_cost(res, 10) == pytest.approx((0.5, 100.0, 10.0), rel=1e-9)
    # negative control: no fixed cost: every unit's time shrinks with the block, S = 5
    res0 = {"block_s": {str(k): 0.001 * k for k in range(1, 11)}, "steps": 100}
    assert W.loop_record(res0, 10, 5, FREE_HERE)[1:] == pytest.approx((1, 1, 1, 5), rel=1e-12)
    assert W.fixed_cost(res0, 10)[0] == pytest.approx(0.0, abs=1e-9)


def test_amdahl_swap_split_by_hand():
    # ours f = 0.5, S = 2 (overall 4/3); the paper's 0.8 and 4.889 (overall 2.75)
    implied = P0C.implied_loop_speedup(2.75, 0.8)
    a = P0C.amdahl
    share, speed, whole = W.swap_split(a, (0.5, 2.0), (0.8, implied))
    assert whole == pytest.approx((4 / 3) / 2.75, rel=1e-12)
    assert share == pytest.approx(math.sqrt(a(0.5, implied) / 2.75 * (4 / 3) / a(0.8, 2.0)), rel=1e-12)
    assert share * speed == pytest.approx(whole, rel=1e-12)
    # negative control: the paper's share leaves the whole gap to the loop speed-up
    s1, s2, w1 = W.swap_split(a, (0.8, 2.0), (0.8, implied))
    assert s1 == pytest.approx(1.0, rel=1e-12) and s2 == pytest.approx(w1, rel=1e-12)


def test_overall_and_loop_share_splits_by_hand():
    # S_D = S_F = s: the weights cannot matter, the whole gap is the epochs'
    assert W.overall_split(0.3, 5.0, 5.0) == pytest.approx((1.0, 5 / 8.96, 5 / 8.96), rel=1e-12)
    fw, fs, whole = W.overall_split(0.5, 10.0, 2.0)  # 1 / (0.05 + 0.25) = 3.33
    assert whole == pytest.approx(1 / 0.3 / 8.96, rel=1e-12) and fw * fs == pytest.approx(whole, rel=1e-12)
    assert fw < 1  # less weight on the faster derivative epoch than the paper's 0.791
    # loop 0.9 s of D = 1 s; F = 0.1 s, k = 10: D's weight 0.5, loop share 0.45
    rec = W.share_record(0.9, 1.0, 0.1, 10.0)
    assert rec[:4] == pytest.approx((0.9, 0.5, 0.45, 10.0), rel=1e-12)
    assert math.prod(rec[4:7]) == pytest.approx(rec[7], rel=1e-12) and rec[7] == pytest.approx(0.45 / 0.8)
    # negative control: the paper's D ÷ F and k leave the gap to the loop's part of D
    paper = W.share_record(0.9, 417.0, 11.0, 10.0)
    assert paper[5:7] == pytest.approx((1.0, 1.0), rel=1e-12)
    assert paper[1] == pytest.approx(W.PAPER_DERIV_SHARE, rel=1e-12)


def varied(**kw) -> list:
    """test_paper0_claims.results() with the radio loop slower by 10 % a seed, so that the
    loop's share and Amdahl's figure differ between seeds."""
    res = results(**kw)
    for t, r in res:
        if t.name == "netpart" and t.params["net"] == "radio":
            r["block_s"] = {k: v * (1 + 0.1 * t.params["run"]) for k, v in r["block_s"].items()}
    return res


@pytest.fixture(scope="module")
def why():
    res = varied(peak=12)  # the derivative curve peaks at 12, not the paper's 17
    h = host(3, fig4_16=8.96, fig5_6=8.96, fig2_5=5.0)  # 3 host seeds: the claims fall back on the twin
    w = W.compute(res, SETUP, [FREE_HERE, BOUND_P], host=h, host_profile=FREE_HOST)
    ev = P0C.evidence(res, SETUP, [FREE_HERE, BOUND_P], cores=2, host=h, host_profile=FREE_HOST)
    return res, w, ev


@pytest.fixture(scope="module")
def why5():
    res = varied(peak=12)
    h = host(5, fig4_16=8.96, fig5_6=8.96, fig2_5=5.0)  # 5 host seeds: the claims are the host's
    w = W.compute(res, SETUP, [FREE_HERE, BOUND_P], host=h, host_profile=FREE_HOST)
    ev = P0C.evidence(res, SETUP, [FREE_HERE, BOUND_P], cores=2, host=h, host_profile=FREE_HOST)
    return res, w, ev


def test_five_host_seeds_split_the_hosts_figures_draw_for_draw(why5):
    _, w, ev = why5
    o, r5 = ev["overall-17-6"], ev["radio-5"]
    assert o.kind == r5.kind == "measured"
    oh = w["overall_host"]
    assert oh["profile"] == "xeon207x16 (measured)" and oh["seeds"] == 5 and (oh["Pd"], oh["Pf"]) == (16, 6)
    assert tuple(x * 8.96 for x in oh["ratio_to_paper"]) == pytest.approx((o.ours, o.low, o.high), rel=1e-9)
    # w = r / (r + k) with the host's D(1)/F(1) = 100 and our k = 10
    assert oh["deriv_share"][0] == pytest.approx(100 / 110)
    rh = w["radio"][0]
    assert rh["kind"] == "measured" and rh["overall"] == pytest.approx((r5.ours, r5.low, r5.high), rel=1e-12)
    assert math.prod(rh[f][0] for f in ("from_share", "from_part_speedup")) == pytest.approx(rh["ratio_to_paper"][0])
    # the twin's splits stay beside (the figures the claims keep beside)
    assert w["overall"]["profile"] == "xeon207x16" and any(x["profile"] == "xeon207x16" for x in w["radio"])
    df = R.frame(W.rows(w))
    host_rows = df[df.condition.str.contains("xeon207x16 \\(measured\\)")]
    assert len(host_rows) == 12 and set(host_rows.kind) == {"measured"}
    T.cite(ev, w)
    assert "on xeon207x16 (measured)" in ev["overall-17-6"].reason
    assert "xeon207x16 (measured)" in ev["radio-5"].reason
    # dip-7 on the host (1.0 on every seed: inconclusive) says what its measurement cannot split
    assert ev["dip-7"].kind == "measured" and "a seventh worker's extra wait shows on it is unexplained" in ev["dip-7"].reason


def test_the_claims_figures_are_the_splits_products_draw_for_draw(why):
    _, w, ev = why
    radio = next(x for x in w["radio"] if x["profile"] == "xeon207x16")
    r5 = ev["radio-5"]  # the host's 3 seeds fall back on the emulated twin, 5 seeds
    assert radio["overall"] == pytest.approx((r5.ours, r5.low, r5.high), rel=1e-12)
    assert radio["ratio_to_paper"][0] == pytest.approx(r5.ours / 2.75, rel=1e-12)
    assert radio["overall"][1] < radio["overall"][2]  # the seeds differ: a real interval
    o = ev["overall-17-6"]
    assert tuple(x * 8.96 for x in w["overall"]["ratio_to_paper"]) == pytest.approx((o.ours, o.low, o.high), rel=1e-9)
    # every split's geometric means multiply to its figure's
    splits = ([(x, W.EPOCH[:-1], "speedup") for x in w["epochs"] + w["peaks"]]
              + [(x, W.LOOP[:-1], "speedup") for x in w["loops"]]
              + [(x, ("from_share", "from_part_speedup"), "ratio_to_paper") for x in w["radio"]]
              + [(w["overall"], ("from_weights", "from_epoch_speedups"), "ratio_to_paper"),
                 (w["share"], ("from_loop_over_deriv", "from_deriv_over_fwd", "from_k"), "ratio_to_paper"),
                 (w["share"], ("loop_over_deriv", "deriv_share"), "loop_share")])
    assert len(splits) > 8
    for x, factors, whole in splits:
        assert math.prod(x[f][0] for f in factors) == pytest.approx(x[whole][0], rel=1e-9), (whole, factors)


def test_peak_split_and_what_it_leaves_unexplained(why):
    _, w, ev = why
    # derivative on the run's profile: S(P) = P up to 12, 12 − 0.3·(P − 12) after; at 17: 10.5
    p = next(p for p in w["peaks"] if p["fig"] == "fig4" and p["profile"] == "here-best")
    assert (p["P"], p["paper_P"]) == (12, 17)
    assert p["speedup"][0] == pytest.approx(12 / 10.5) and p["workers"][0] == pytest.approx(12 / 17)
    assert p["work"][0] == pytest.approx(17 / 10.5)  # the 17 workers' total is 17/10.5 one worker's
    assert p["balance"][0] == pytest.approx(1.0) and p["compute_share"][0] == pytest.approx(1.0)
    T.cite(ev, w)
    assert "why (section Why): our derivative curve on here-best peaks at 12, not 17" in ev["best-deriv-17"].reason
    assert "the one that moves most is work" in ev["best-deriv-17"].reason
    assert "summed compute" in ev["best-deriv-17"].reason and "unexplained" in ev["best-deriv-17"].reason
    # negative control: the forward curve peaks at the paper's 6, so no peak split and no sentence
    assert not [p for p in w["peaks"] if p["fig"] == "fig5"] and "why (section Why)" not in ev["best-fwd-6"].reason
    for cid in ("overall-17-6", "radio-5", "loop-share"):
        assert "; why (section Why): ours ÷ " in ev[cid].reason, cid
    # negative control of the host's splits: on 3 host seeds the claims are the twin's, and so is the split cited
    assert "(measured)" not in ev["overall-17-6"].reason and "(measured)" not in ev["radio-5"].reason
    assert "seventh worker" not in ev["dip-7"].reason


def test_rows_and_section(why):
    _, w, _ = why
    df = R.frame(W.rows(w))
    assert (df.table == "why").all() and not df.duplicated(["quantity", "condition"]).any()
    assert set(df.kind) <= {"measured", "emulated", "modeled"}
    assert df[df.quantity == "paper_deriv_share"].ours.iloc[0] == pytest.approx(417 / 527, abs=1e-4)
    md = "\n".join(T.section(w))
    assert md.startswith("## Why") and "| epoch | profile | P | speed-up | = P |" in md
    assert "12 ÷ 17" in md and "none was measured" in md  # no measured seqpart task in these results
    # free synchronisation: no straggler wait, the profile charges nothing
    assert "all of it collectives; the profile charges no straggler wait" in md
    # negative control: no results, no section
    assert T.section(W.compute([], SETUP, [FREE_HERE, BOUND_P], host={})) == []


def test_a_quick_run_gets_what_its_four_workers_and_one_seed_allow():
    # --quick: P ≤ 4 and one seed: no radio loop at 5, no 16 / 6, no interval; the rest stands
    from reproduce.paper0.setup import QUICK

    one = [(t, r) for t, r in results() if t.params.get("run", 0) == 0]
    w = W.compute(one, QUICK, [FREE_HERE, BOUND_P], host=host(), host_profile=FREE_HOST)
    assert w["loops"] == [] and w["overall"] is None and w["peaks"] == []
    # the host's own figures do not depend on our P: their splits stand (one of our seeds pairs with one of its)
    assert [x["kind"] for x in w["radio"]] == ["measured"] and w["radio"][0]["seeds"] == 1
    assert w["overall_host"]["seeds"] == 5
    assert {e["P"] for e in w["epochs"]} <= {1, 2, 3, 4} and w["epochs"]
    assert all(math.isnan(e["speedup"][1]) for e in w["epochs"])  # one seed: no interval
    df = R.frame(W.rows(w))
    assert (df.table == "why").all() and not df.duplicated(["quantity", "condition"]).any()
    md = "\n".join(T.section(w))
    assert md.startswith("## Why") and "loop share" in md
    amdahl = md.split("22 h → 8 h by Amdahl")[1].split("\n\n", 2)[1]  # its table: the host's row and the paper's
    assert "| xeon207x16 (measured) |" in amdahl and "| here-best |" not in amdahl
