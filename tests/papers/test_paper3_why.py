"""paper3's `why` rows (the issue "The why behind every verdict": split every training speed-up
into (serial passes ÷ parallel passes) × (time per pass, serial ÷ parallel), with intervals,
per P): a worked example on a small synthetic runs frame against a hand calculation, the
product per seed, negative controls (the passes moved while the speed-up stays, the serial
run put on a profile's machine), capped runs left out, and the report's "## Why" section."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from reproduce import report as R
from reproduce.paper3 import claims as P3
from reproduce.paper3.why import WHY, why_records, why_rows
from reproduce.paper3.setup import DEFAULT
from reproduce.paper3.text import why_section
from test_paper3_claims import HERE, SEEDS, runs_frame  # the test folders are on sys.path (tests/conftest.py)

# By hand, per seed 1..6: the serial run takes 2.0 s (test_paper3_claims.runs_frame) over
# E_SERIAL epochs; the 8-node PPT run at local epoch 32 takes T_PPT s over E_PPT epochs.
E_SERIAL = [1000.0, 1200.0, 800.0, 1000.0, 1100.0, 900.0]
E_PPT = [200.0, 300.0, 100.0, 250.0, 220.0, 150.0]
T_PPT = [0.5, 0.4, 0.25, 0.5, 0.44, 0.3]
COND = "nodes=8;local_epoch=32;profile=here"


def frame(e_ppt=E_PPT, t_ppt=T_PPT, e_serial=E_SERIAL, capped=()):
    return runs_frame(serial_epochs=e_serial, ppt_epochs={32: list(e_ppt)}, times={32: list(t_ppt)},
                      capped=capped)


def by_hand(e_ppt=E_PPT, t_ppt=T_PPT, e_serial=E_SERIAL, t_serial=2.0):
    """{seed: (passes, time per pass, speed-up)} straight from the definitions."""
    return {s: (es / ep, (t_serial / es) / (tp / ep), t_serial / tp)
            for s, es, ep, tp in zip(SEEDS, e_serial, e_ppt, t_ppt)}


def gmean(v):
    return float(np.exp(np.mean(np.log(v))))


def why(runs) -> pd.DataFrame:
    return R.frame(why_rows(runs)).set_index("quantity")


def test_per_seed_factors_equal_the_hand_values_and_multiply_to_the_speedup():
    recs, left = why_records(frame(), 8, 32, HERE)
    assert left == 0 and sorted(recs) == list(SEEDS)
    hand = by_hand()
    for s in SEEDS:
        assert recs[s] == pytest.approx(hand[s], rel=1e-12)
        passes, per_pass, speedup = recs[s]
        assert passes * per_pass == pytest.approx(speedup, rel=1e-12)  # the decomposition, per seed
    # seed 1 spelled out: 1000/200 = 5 fewer passes; a serial pass 2 ms, a PPT pass 2.5 ms: 0.8×; 2/0.5 = 4×
    assert recs[1] == pytest.approx((5.0, 0.8, 4.0), rel=1e-12)


def test_rows_are_geometric_means_with_intervals_and_no_paper_value():
    d = why(frame())
    assert list(d.index) == list(WHY) and (d.condition == COND).all() and (d.table == "why").all()
    assert (d.verdict == "no-paper-value").all() and d.reported.isna().all()
    assert (d.kind == "emulated").all() and (d.runs == 6).all() and (d.unit == "x").all()
    hand = np.array(list(by_hand().values()))
    for k, q in enumerate(WHY):
        assert d.loc[q, "ours"] == pytest.approx(gmean(hand[:, k]), rel=1e-12)
        assert d.loc[q, "ours_low"] <= d.loc[q, "ours"] <= d.loc[q, "ours_high"]
        assert hand[:, k].min() <= d.loc[q, "ours_low"] and d.loc[q, "ours_high"] <= hand[:, k].max()
    assert d.loc["passes_ratio", "ours"] * d.loc["time_per_pass_ratio", "ours"] == pytest.approx(
        d.loc["speedup", "ours"], rel=1e-12)
    # the same speed-up as the claims' paired estimate (reproduce/paper3/claims.py)
    assert d.loc["speedup", "ours"] == pytest.approx(P3.paired_speedup(frame(), 8, 32, HERE, label="x")[0], rel=1e-12)
    assert "a pass is an epoch" in d.loc["passes_ratio", "note"]


def test_negative_control_passes_move_while_the_speedup_stays():
    # the parallel epochs swapped between seeds, the times kept: every seed's speed-up is the
    # same, but its passes factor (and so its time per pass) moves as the hand values say
    swapped = E_PPT[::-1]
    a, b = why_records(frame(), 8, 32, HERE)[0], why_records(frame(e_ppt=swapped), 8, 32, HERE)[0]
    hand = by_hand(e_ppt=swapped)
    for s in SEEDS:
        assert b[s] == pytest.approx(hand[s], rel=1e-12) and b[s][2] == pytest.approx(a[s][2], rel=1e-12)
    assert any(b[s][0] != pytest.approx(a[s][0]) for s in SEEDS)
    # seed 1's PPT run took 4× the epochs in the same time: its passes factor ÷ 4, its time per
    # pass × 4; over the 6 seeds the geometric means move by 4^(1/6), the speed-up not at all
    more = list(E_PPT)
    more[0] *= 4
    r0, r1 = why(frame()), why(frame(e_ppt=more))
    assert r1.loc["passes_ratio", "ours"] == pytest.approx(r0.loc["passes_ratio", "ours"] / 4 ** (1 / 6), rel=1e-12)
    assert r1.loc["time_per_pass_ratio", "ours"] == pytest.approx(
        r0.loc["time_per_pass_ratio", "ours"] * 4 ** (1 / 6), rel=1e-12)
    assert r1.loc["speedup", "ours"] == pytest.approx(r0.loc["speedup", "ours"], rel=1e-12)
    assert r1.loc["passes_ratio", "ours"] * r1.loc["time_per_pass_ratio", "ours"] == pytest.approx(
        r1.loc["speedup", "ours"], rel=1e-12)


def test_serial_run_put_on_the_profiles_machine():
    runs = frame()
    runs.loc[runs.source == HERE, "serial_scale"] = 1.5  # the profile's compute ratio
    a, b = why(frame()), why(runs)
    assert b.loc["passes_ratio", "ours"] == pytest.approx(a.loc["passes_ratio", "ours"], rel=1e-12)
    for q in ("time_per_pass_ratio", "speedup"):
        assert b.loc[q, "ours"] == pytest.approx(1.5 * a.loc[q, "ours"], rel=1e-12)
    assert "compute ratio 1.5" in b.loc["speedup", "note"]


def test_capped_runs_are_left_out_and_counted():
    # seed 6's PPT run and seed 3's serial run hit the cap: seeds 1, 2, 4, 5 remain
    runs = frame(capped={("pattern", 32, 6), ("serial", None, 3)})
    recs, left = why_records(runs, 8, 32, HERE)
    assert sorted(recs) == [1, 2, 4, 5] and left == 2
    d = why(runs)
    assert (d.runs == 4).all() and d.note.str.contains("2 seeds left out").all()
    hand = by_hand()
    assert d.loc["speedup", "ours"] == pytest.approx(gmean([hand[s][2] for s in (1, 2, 4, 5)]), rel=1e-12)
    # every run capped: no pair, no estimate
    none = why(frame(capped={("pattern", 32, s) for s in SEEDS}))
    assert (none.runs == 0).all() and none.ours.isna().all()


def test_report_section_says_which_factor_dominates():
    here = SimpleNamespace(name="here")
    md = "\n".join(why_section(R.frame(why_rows(frame())), frame(), here=here, setup=DEFAULT))
    assert md.startswith("## Why") and "| 8 | emulated (here) | 32 |" in md
    d = why(frame())
    assert f"{d.loc['passes_ratio', 'ours']:.3g}× fewer passes" in md
    assert "most of the speed-up comes from needing fewer passes" in md  # about 5.2 against 1.0
    # control: as many PPT epochs as serial ones, the same times → the passes factor is 1
    same = frame(e_ppt=E_SERIAL)
    md = "\n".join(why_section(R.frame(why_rows(same)), same, here=here, setup=DEFAULT))
    assert "most of the speed-up comes from faster passes" in md
    assert why_section(R.frame([]), frame(), here=here, setup=DEFAULT) == []


def test_best_local_epoch_reason_cites_the_split_by_local_epoch():
    from reproduce import claims as C
    from reproduce.paper3.why import cite

    # by hand: serial 1000 epochs in 2 s; local epoch 32: 100 epochs in 0.5 s (10× fewer passes,
    # a pass 2 ms serial against 5 ms: 0.4×, 4×); 256: 500 epochs in 0.5 s (2×, 2×, 4×)
    runs = runs_frame(ppt_epochs={32: 100.0, 256: 500.0}, times={32: 0.5, 256: 0.5})
    ev = {"best-local-epoch-8": C.Evidence(0.0, 0.0, 0.1, n=6, kind="emulated", host="profile here")}
    cite(ev, why_rows(runs), here="here")
    r = ev["best-local-epoch-8"].reason
    assert "32: 10× fewer passes × 0.4× per pass = 4×, 256: 2× fewer passes × 2× per pass = 4×" in r
    # the passes needed grow 5× from 32 to 256 and so does the pace
    assert "the passes needed grow 5× and the pace 5×: the two move about alike" in r
    faster = runs_frame(ppt_epochs={32: 100.0, 256: 500.0}, times={32: 0.5, 256: 0.25})  # 256 twice the pace
    ev = {"best-local-epoch-8": C.Evidence(0.0, 0.0, 0.1, n=6, kind="emulated", host="profile here")}
    cite(ev, why_rows(faster), here="here")
    assert "grow 5× and the pace 10×: the pace rises faster than the passes fall" in ev["best-local-epoch-8"].reason
    # control: a claim judged on measured runs finds no measured rows here, and no sentence
    ev = {"best-local-epoch-8": C.Evidence(0.0, 0.0, 0.1, n=6, kind="measured", host="here")}
    cite(ev, why_rows(runs), here="here")
    assert "why" not in ev["best-local-epoch-8"].reason


def test_comm_share_reason_cites_table2s_emulated_shares():
    from reproduce import claims as C
    from reproduce.paper3.why import cite

    rows = [R.row("paper3", "table2", "comm_share", f"nodes=8;local_epoch={m};profile={p}", "fraction",
                  ours=s, kind="emulated") for p, m, s in (("gige2008", 32, 0.88), ("gige2008", 256, 0.76),
                                                           ("here", 32, 0.07), ("here", 256, 0.03))]
    ev = {"comm-share-falls-with-local-epoch": C.Evidence(0.02, -0.05, 0.09, n=6, host="h")}
    cite(ev, rows, here="here")
    r = ev["comm-share-falls-with-local-epoch"].reason
    assert "emulated on gige2008 88% at 32 and 76% at 256, emulated on here 7% at 32 and 3% at 256" in r
    # control: no table 2 rows, nothing cited
    ev = {"comm-share-falls-with-local-epoch": C.Evidence(0.02, -0.05, 0.09, n=6, host="h")}
    cite(ev, [], here="here")
    assert ev["comm-share-falls-with-local-epoch"].reason == ""


def with_lr_study(runs: pd.DataFrame, epochs, f: int = 8) -> pd.DataFrame:
    """``runs`` and serial runs at f·η (study "lr×f", reproduce/paper3/tasks.py), one per seed."""
    lr = runs[runs.name == "serial"].copy()
    lr["study"], lr["epochs"], lr["time_s"] = f"lr×{f}", list(epochs), 99.0  # its own time is not used
    return pd.concat([runs, lr], ignore_index=True)


def test_serial_at_p_eta_splits_the_speedup_into_the_step_and_the_nodes_by_hand():
    from reproduce.paper3.why import LR, ablation_rows, lr_records

    e_lr = [125.0, 150.0, 100.0, 125.0, 137.5, 112.5]  # serial at 8·η: 8× fewer passes than E_SERIAL
    runs = with_lr_study(frame(), e_lr)
    recs, left = lr_records(runs, 8, 32, HERE, 8)
    assert left == 0
    # seed 1 by hand: serial 2 s over 1000 passes, at 8·η 125 passes (8×), timed at 2 ms a pass =
    # 0.25 s; PPT 0.5 s over 200 passes: speed-up 4 = 8 × (0.25 / 0.5); PPT's passes beyond 125/200
    assert recs[1] == pytest.approx((8.0, 0.5, 4.0, 0.625), rel=1e-12)
    for s in SEEDS:
        assert recs[s][0] * recs[s][1] == pytest.approx(recs[s][2], rel=1e-12)
    d = R.frame(ablation_rows(runs, DEFAULT, source_for=lambda P: HERE if P == 8 else None)).set_index("quantity")
    assert list(d.index) == list(LR) and (d.condition == COND + ";baseline=serial lr×8").all()
    assert d.loc["lr_passes_ratio", "ours"] == pytest.approx(8.0, rel=1e-12)
    assert d.loc["speedup", "ours"] == pytest.approx(why(frame()).loc["speedup", "ours"], rel=1e-12)
    # negative control: a larger step that saves nothing leaves the whole speed-up to the nodes
    flat = with_lr_study(frame(), E_SERIAL)
    recs = lr_records(flat, 8, 32, HERE, 8)[0]
    assert all(recs[s][0] == 1.0 and recs[s][1] == pytest.approx(recs[s][2], rel=1e-12) for s in SEEDS)
    # a seed without its ablation run is left out and counted
    part = runs[~((runs.study == "lr×8") & (runs.seed == 6))]
    recs, left = lr_records(part, 8, 32, HERE, 8)
    assert sorted(recs) == [1, 2, 3, 4, 5] and left == 1


def test_speedup_claim_cites_the_ablation():
    from reproduce import claims as C
    from reproduce.paper3.why import ablation_rows, cite

    runs = with_lr_study(frame(), [125.0, 150.0, 100.0, 125.0, 137.5, 112.5])
    rows = ablation_rows(runs, DEFAULT, source_for=lambda P: HERE if P == 8 else None)
    ev = {"speedup-8-nodes": C.Evidence(6.5, 5.5, 7.6, n=6, host="h")}
    cite(ev, rows, here="here")
    assert "serial batch at 8·η needs 8" in ev["speedup-8-nodes"].reason
    ev = {"speedup-8-nodes": C.Evidence(6.5, 5.5, 7.6, n=6, host="h")}
    cite(ev, [], here="here")  # control: no ablation, no sentence
    assert ev["speedup-8-nodes"].reason == ""
