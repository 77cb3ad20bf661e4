"""paper1's why (reproduce/paper1/why.py and why_text.py, the issue "The why behind every verdict"): the
emulated bunch taken apart sums to the emulator's own time (α/β and calibrated profiles);
§3.2's ratio = compute × the rest on the claim's own resamples; the §2.5 counterfactuals, the
measured rest, updates per epoch and the equal-updates split against hand calculations, each
with a negative control; the rows, the section and the claims' reasons."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from reproduce import claims as C
from reproduce import report as R
from reproduce.paper1 import claims as P1
from reproduce.paper1 import why as P1W
from reproduce.paper1 import why_text as P1WT
from reproduce.paper1.perf import here_model
from reproduce.paper1.report import emulated_parts, emulated_time
from reproduce.runner import Task
from test_paper1_claims import CAL, PROF, SETUP, _emul, _emul_cfg, results  # the test folders are on sys.path (tests/conftest.py)
from test_paper1_validation import CAL as CAL_V, TAB

CTX = {"prof": PROF, "cal": CAL, "parts": emulated_parts}


@pytest.mark.parametrize("s,P,T_h", [("NP", 3, 2e-4), ("NP", 4, 5e-2), ("PP", 2, 1e-4)])
def test_parts_sum_to_the_emulated_time_alpha_beta(s, P, T_h):
    m = here_model(CAL_V, B=48)
    kw = dict(P=P, B=48, N_h=400, forward=False, T_c=1e-3, T_h=T_h, spert_here=m)
    T, T_d = emulated_time(s, prof=R_here(), **kw)
    parts = emulated_parts(s, prof=R_here(), **kw)
    assert sum(parts.values()) == T  # bit for bit: the same two terms added
    assert set(parts) == {"compute", "transfers", "host", "straggler_wait"} and parts["straggler_wait"] == 0
    if T_h > 1e-2:  # a 50 ms host binds: the slaves' compute hides behind it
        assert (parts["compute"], parts["host"], parts["transfers"]) == (0.0, T_h, P * T_d)
    else:  # negative control: a fast host hides behind the slaves
        assert (parts["compute"], parts["host"], parts["transfers"]) == (1e-3, 0.0, T_d)


def R_here():
    from reproduce.paper1.report import here_profile

    return here_profile(CAL_V)


def test_parts_sum_to_the_emulated_time_calibrated():
    for s in ("NP", "PP"):
        T, comm = emulated_time(s, P=2, B=48, N_h=400, forward=False, T_c=1e-3, T_h=2e-4, prof=TAB, spert_here=None)
        parts = emulated_parts(s, P=2, B=48, N_h=400, forward=False, T_c=1e-3, T_h=2e-4, prof=TAB, spert_here=None)
        assert sum(parts.values()) == pytest.approx(T, rel=1e-12)
        assert parts["compute"] == pytest.approx(1e-3 * 1.5 * 1.25) and parts["host"] == pytest.approx(2e-4 * 1.5)
        assert parts["straggler_wait"] == pytest.approx(0.1 * parts["compute"])
        assert {"allgather", "broadcast"} <= set(parts) if s == "NP" else "allreduce" in parts
        # negative control: communication is everything but compute and host
        assert comm == pytest.approx(T - parts["compute"] - parts["host"], rel=1e-12)


def test_the_drop_counterfactuals_by_hand():
    # T_d 1, T_c 30 at 3 slaves and 20 at 4, no host: max(k + 20, 4k) = max(k + 30, 3k) at k = 10;
    # a serial host Δ: max(21, 4 + Δ) = max(31, 3 + Δ) at Δ = 27
    assert P1W.drop_factor(1.0, 30.0, 0.0, 20.0, 0.0) == pytest.approx(10.0, rel=1e-9)
    assert P1W.drop_host(1.0, 30.0, 0.0, 20.0, 0.0) == pytest.approx(27.0, rel=1e-9)
    # negative control: four slaves already slower than three need nothing
    assert P1W.drop_factor(1.0, 20.0, 0.0, 30.0, 0.0) == 0.0 == P1W.drop_host(1.0, 20.0, 0.0, 30.0, 0.0)


def test_four_split_is_the_claims_interval_and_multiplies():
    res = _emul(3e-3, 2e-3, 1e-4, 1e-4)
    f = P1W.four_split(res, CTX, SETUP)
    ev = P1.four_over_three(res, SETUP, prof=PROF, cal=CAL, Pmax_validated=2, emulate=emulated_time)
    assert f["time_ratio"] == (ev.ours, ev.low, ev.high)  # the same resamples, draw for draw
    assert f["compute_ratio"][0] * f["overhead_ratio"][0] == pytest.approx(f["time_ratio"][0], rel=1e-12)
    assert f["compute_ratio"][0] == pytest.approx(1.5, rel=0.03)
    assert f["overhead_ratio"][0] == pytest.approx(1, abs=1e-3)
    assert f["host_over_slave_branch"] < 1 and f["drop_factor"] > 1
    # negative control: a 10 ms host at 4 slaves binds there; compute alone no longer explains the ratio
    g = P1W.four_split(_emul(3e-3, 2e-3, 1e-4, 1e-2), CTX, SETUP)
    assert g["time_ratio"][0] == pytest.approx(0.3, rel=0.05) and g["overhead_ratio"][0] < 0.25


def test_split_config_shares_sum_to_one_and_name_the_binding_branch():
    res = _emul_cfg("NP", 1000, 48, {3: 3e-3, 4: 2e-3})
    x = P1W.split_config(res, CTX, ("NP", 1000, 48, 4))
    assert x["binds"] == "slaves" and x["runs"] == 7  # the emulated runs
    assert sum(v[0] for v in x["shares"].values()) == pytest.approx(1.0)
    assert sum(v[0] for v in x["parts"].values()) == pytest.approx(x["total"][0], rel=1e-12)
    assert P1W.split_config(res, CTX, ("NP", 1000, 48, 5)) is None  # not emulated: nothing to split


def _perf(P=1, wall=30e-3, compute=24e-3, comm=3e-3):
    """A measured PP run of 3 bunches of 1000 on 156:400:56: 10 ms a bunch."""
    from reproduce.paper1.spert import n_wts

    mc = 3 * 1000 * n_wts(156, 400, 56) / wall / 1e6
    return Task("perf", "measured", P, {"strategy": "PP", "hidden": 400, "P": P, "bunch": 1000, "pipelined": False,
                                        "compressed": False, "seed": 1}), \
        {"wall": wall, "bunches": 3, "patterns": 3000, "mcups": mc, "mcups_low": mc / 1.1, "mcups_high": mc,
         "repeats": 3, "compute_s": compute, "comm_s": comm}


def test_measured_rest_by_hand():
    # emulated: T_c 5 ms, transfers free (PROF: 1e12 B/s, no latency) → rest 10 − 5 = 5 ms a bunch:
    # 8 − 5 = 3 in rank 0's compute, 1 − 0 = 1 in its communication, 1 outside the log
    res = _emul_cfg("PP", 400, 1000, {1: 5e-3}) + [_perf()]
    pairs = [{"P": 1, "config": "PP training 156:400:56 B=1000"}]
    (x,) = P1W.measured_rest(res, CTX, pairs)
    assert x["measured"][0] == pytest.approx(10e-3) and x["measured"][2] == pytest.approx(11e-3)
    assert x["emulated"] == pytest.approx(5e-3, rel=0.02)
    assert x["rest"][0] == pytest.approx(10e-3 - x["emulated"])
    assert x["rest_compute"] + x["rest_comm"] + x["rest_unlogged"] == pytest.approx(x["rest"][0], rel=1e-9)
    assert (x["rest_comm"], x["rest_unlogged"]) == pytest.approx((1e-3, 1e-3), abs=1e-5)  # transfers: µs
    # negative control: a configuration the validation left out (oversubscribed) is not split
    assert P1W.measured_rest(res, CTX, [{"P": 2, "config": "PP training 156:400:56 B=1000"}]) == []
    # a fixed 5 ms a bunch over three works: the fit's slope 0, intercept 5 ms
    xs = [{"emulated": e, "rest": (5e-3,)} for e in (1e-3, 2e-3, 4e-3)]
    assert P1W.rest_fit(xs) == pytest.approx((5.0, 0.0), abs=1e-9)


def test_updates_per_epoch_by_hand():
    # chunks of B·⌈10000/B⌉ frames: B = 12 → 10,008-frame chunks, 4 of 834 bunches + 6,706 frames (559)
    assert P1W.updates_per_epoch(46_738, 12, 10_000) == 4 * 834 + 559
    assert P1W.updates_per_epoch(46_738, 5000, 10_000) == 4 * 2 + 2
    assert P1W.updates_per_epoch(46_738, 1, 10_000) == 46_738
    # chunks hold whole bunches, so only an epoch's last bunch is short: ⌈n/B⌉, never n // B
    for B in (12, 96, 200, 1000, 5000, 10_000):
        assert P1W.updates_per_epoch(46_738, B, 10_000) == math.ceil(46_738 / B)
    assert P1W.updates_per_epoch(46_738, 5000, 10_000) != 46_738 // 5000  # negative control: the short bunch counts


def _run(errs, bunches):
    return {"cv_acc": [1 - e / 100 for e in errs], "bunches": bunches, "n_train": 1000}


def test_equal_updates_split_by_hand():
    a = _run([40, 30, 20, 10], 100)  # 25 updates an epoch
    b = _run([50, 40, 30, 25], 50)  # 12.5 an epoch: A at B's 50 updates = A after epoch 2, 30 %
    assert P1W.equal_updates_record(a, b) == pytest.approx((25 / 30, 30 / 10, 25 / 10))
    # B with more updates: read B at A's total (100 updates = B's epoch 2 of 50 an epoch)
    c = _run([35, 20, 15, 12], 200)
    assert P1W.equal_updates_record(a, c) == pytest.approx((20 / 10, 12 / 20, 12 / 10))
    # best so far: a worse last epoch does not count; before the first epoch's end there is no error
    assert P1W.best_so_far(_run([30, 20, 25], 3)).tolist() == pytest.approx([30, 20, 20])
    assert math.isnan(P1W.error_at_updates(a, 10))
    # negative control: the same run gives 1 × 1 = 1
    assert P1W.equal_updates_record(a, a) == pytest.approx((1.0, 1.0, 1.0))


def _pp_results(same=True):
    out = []
    for s in range(1, 6):
        j = 0.5 * s
        errs = {"seq12": [40 + j, 20 + j], "big": [80 + j, 70 + j]}
        for mode, B, e in (("sequential", 12, errs["seq12"]), ("PP", 5000, errs["big"]))  \
                + ((("sequential", 5000, errs["big"]),) if same else ()):
            out.append((Task("train", "measured", 1, {"mode": mode, "hidden": 1000, "bunch": B, "seed": s}),
                        _run(e, 3895 * 2 if B == 12 else 20)))
    return out


def test_pp_split_by_hand_and_without_the_same_bunch_run():
    st = replace(SETUP, nets=(1000,))
    (x,) = P1W.pp_split(_pp_results(), st)
    assert x["pp_over_sequential_same_bunch"] == (1.0, 1.0, 1.0) and x["identical_seeds"] == 5
    assert x["bunch_over_sequential_bunch"][0] == pytest.approx(x["pp_over_sequential"][0], rel=1e-12)
    assert x["pp_over_sequential"][0] == pytest.approx(math.exp(sum(math.log((70 + .5 * s) / (20 + .5 * s))
                                                                for s in range(1, 6)) / 5), rel=1e-12)
    # negative control: without sequential training at PP's bunch only the product is known
    (y,) = P1W.pp_split(_pp_results(same=False), st)
    assert math.isnan(y["pp_over_sequential_same_bunch"][0]) and not y["same_bunch_run"]
    assert y["pp_over_sequential"][0] == pytest.approx(x["pp_over_sequential"][0], rel=1e-12)


def test_rows_section_and_reasons():
    # four epochs (each of results()' two twice), B = 1 left out (one seed in the run): B = 200's
    # 936 updates are B = 96's epoch 1.9
    res = [(t, r) for t, r in results(b200=3.0) if t.params["bunch"] != 1] + _emul(3e-3, 2e-3, 1e-4, 1e-4)
    for t, r in res:
        if t.name == "train":
            r["cv_acc"] = [r["cv_acc"][0]] * 2 + [r["cv_acc"][1]] * 2
            if t.params["bunch"] == 12 and t.params["hidden"] == 400 and t.params["mode"] == "sequential":
                r["cv_acc"] = [a - 0.02 for a in r["cv_acc"]]  # 2 points worse: B = 96 is the best bunch
            r["bunches"] = 4 * P1W.updates_per_epoch(r["n_train"], t.params["bunch"], SETUP.chunk)
    w = P1W.compute(res, SETUP, ctx=CTX)
    df = R.frame(P1WT.rows(w))
    assert (df.table == "why").all() and not df.duplicated(["quantity", "condition"]).any()
    assert df.reported.isna().all() and set(df.kind) <= set(R.KINDS)
    assert {"time_ratio", "compute_ratio", "overhead_ratio", "updates_per_epoch", "error_ratio",
            "pp_over_sequential"} <= set(df.quantity)
    # B = 12's first epoch (3,895 updates) ends after B = 96's last (1,948): no equal-updates split for it
    assert [x["bunch"] for x in w["fig6"]] == [200]
    text = "\n".join(P1WT.section(w))
    assert text.startswith("## Why") and "four slaves below three" in text and "at equal updates" in text
    ev = P1.evidence(res, SETUP, prof=PROF, cal=CAL, emulate=emulated_time)
    before = {k: v.reason for k, v in ev.items()}
    P1WT.cite(ev, w)
    for cid in ("four-below-three", "fig6-moderate", "table2-pp-wer"):
        assert C.verdict(next(c for c in P1.CLAIMS if c.id == cid), ev[cid]) == "not-reproduced"
        assert ev[cid].reason.startswith(before[cid]) and "; why (section Why): " in ev[cid].reason
    assert "4 slaves to fall to 3's speed" in ev["four-below-three"].reason
    # negative control: a reproduced claim's reason is left alone
    assert ev["pipelined-np-accuracy"].reason == before["pipelined-np-accuracy"]
    # without emulated runs there is nothing emulated to take apart
    assert P1W.compute(res, SETUP)["emulated"] == [] and P1WT.section(P1W.compute([], SETUP)) == []


def test_a_calibrated_profile_names_its_collectives_and_no_branch():
    res = _emul(3e-3, 2e-3, 1e-4, 1e-4)
    ctx = {"prof": TAB, "cal": CAL, "parts": emulated_parts}
    w = P1W.compute(res, SETUP, ctx=ctx)
    x4 = {x["config"]: x for x in w["emulated"]}[("NP", 1000, 48, 4)]
    assert x4["binds"] is None and {"compute", "straggler_wait", "allgather", "broadcast", "host"} == set(x4["parts"])
    assert sum(v[0] for v in x4["parts"].values()) == pytest.approx(x4["total"][0], rel=1e-12)
    f = w["four"]
    assert "drop_factor" not in f  # §2.5's branches belong to α/β profiles only
    assert f["compute_ratio"][0] * f["overhead_ratio"][0] == pytest.approx(f["time_ratio"][0], rel=1e-12)
    text = "\n".join(P1WT.section(w))
    assert "allgather" in text and "binds" in text and "4 slaves to fall" not in text


def _warm(seed: int, ms=(60.0, 35.0, 21.0, 20.0, 19.0, 20.0, 22.0, 20.0)) -> tuple:
    t = Task("warmup", "measured", 1, {"strategy": "PP", "hidden": 400, "P": 1, "bunch": 1000,
                                       "bunches": len(ms), "run": seed - 1, "seed": seed})
    return t, {"compute_s": [m * 1e-3 for m in ms], "comm_s": [0.0] * len(ms), "wall": 1.0,
               "loadavg": [0, 0, 0]}


def test_warmup_split_by_hand_rows_and_section():
    res = [_warm(s) for s in range(1, 6)]
    rest = [{"config": ("PP", 400, 1000, 1), "rest": (0.028, 0.027, 0.029)}]
    (x,) = P1W.warmup_split(res, rest)
    # by hand: steady = median of bunches 4..8 (20, 19, 20, 22, 20) = 20 ms; the first 3 average
    # (60 + 35 + 21)/3 = 38.67 ms, 1.933× steady, 18.67 ms above it; every run the same
    assert x["steady_ms"][0] == pytest.approx(20.0) and x["first_ms"][0] == pytest.approx(60.0)
    assert x["three_mean_ms"][0] == pytest.approx(116 / 3) and x["three_over_steady"][0] == pytest.approx(116 / 60)
    assert x["excess_ms"] == pytest.approx(116 / 3 - 20) and x["rest_ms"] == pytest.approx(28.0)
    assert x["runs"] == 5 and x["config"] == ("PP", 400, 1000, 1)
    w = {"emulated": [], "four": None, "rest": [], "updates": [], "fig6": [], "pp": [], "warmup": [x],
         "setup": replace(SETUP, warmup_bunches=8)}
    rows = [r for r in P1WT.rows(w) if r["quantity"].startswith("warmup_")]
    assert {r["quantity"] for r in rows} == {"warmup_first", "warmup_second", "warmup_steady",
                                             "warmup_three_mean", "warmup_three_over_steady"}
    assert all("study=warmup" in r["condition"] and r["kind"] == "measured" and r["runs"] == 5 for r in rows)
    s = P1WT.warmup_sentence(w)
    assert "average 1.93× the steady bunch (18.7 ms above it), against a rest of 28 ms" in s
    # negative controls: a run too short for a steady part is left out; flat bunches show no excess
    assert P1W.warmup_split([_warm(1, ms=(20.0, 20.0, 20.0))], rest) == []
    (flat,) = P1W.warmup_split([_warm(s, ms=(20.0,) * 8) for s in range(1, 6)], [])
    assert flat["excess_ms"] == pytest.approx(0.0) and math.isnan(flat["rest_ms"])


def test_warmup_task_times_every_bunch():
    """tasks._warmup on a small corpus: one entry a bunch, as many as asked for (the chunk and
    boundary rounds left out), on one and two ranks."""
    from reproduce.paper1.setup import QUICK
    from reproduce.paper1.tasks import _warmup, corpora

    tr, _ = corpora(QUICK, 1)
    for P in (1, 2):
        p = {"strategy": "PP", "hidden": 16, "P": P, "bunch": 64, "bunches": 5, "run": 0, "seed": 1}
        r = _warmup(tr, (156, 16, 56), p, setup=QUICK, backend="local", comm=None)
        assert len(r["compute_s"]) == len(r["comm_s"]) == 5 and min(r["compute_s"]) > 0
        assert r["wall"] >= sum(r["compute_s"])


def _lr_results(times=(4.0, 25.0), with_sweep=True):
    """Five seeds of sequential training on 156:400:56: B = 12 ends at 20 %, B = 5000 at the
    setup's η at 70 %, and the sweep's η × m at 70 / m**0.5 % (+ a seed's 0.5·s everywhere)."""
    out = []
    for s in range(1, 6):
        j = 0.5 * s
        for B, e in ((12, 20 + j), (5000, 70 + j)):
            out.append((Task("train", "measured", 1, {"mode": "sequential", "hidden": 400, "bunch": B, "seed": s}),
                        _run([e + 5, e], 10)))
        for m in times if with_sweep else ():
            out.append((Task("lr_sweep", "measured", 1, {"mode": "sequential", "hidden": 400, "bunch": 5000,
                                                         "lr": 1.2e-4 * m, "lr_times": m, "seed": s}),
                        _run([70 / m ** 0.5 + j + 5, 70 / m ** 0.5 + j], 10)))
    return out


def test_lr_sweep_by_hand_rows_section_and_sentence():
    st = replace(SETUP, fig6_hidden=400, pp_bunch=5000, np_bunch=12)
    xs = P1W.lr_split(_lr_results(), st)
    assert [x["times"] for x in xs] == [4.0, 25.0] and all(x["seeds"] == 5 for x in xs)
    for x in xs:
        m = x["times"]
        assert x["error"][0] == pytest.approx(sum(70 / m ** 0.5 + 0.5 * s for s in range(1, 6)) / 5)
        want = math.exp(sum(math.log((70 / m ** 0.5 + 0.5 * s) / (70 + 0.5 * s)) for s in range(1, 6)) / 5)
        assert x["over_base"][0] == pytest.approx(want, rel=1e-12)
        assert x["over_base"][1] <= x["over_base"][0] <= x["over_base"][2]
    w = {"lr": xs, "setup": st}
    df = R.frame(P1WT.rows({**P1W.compute(_lr_results(), st), "lr": xs}))
    assert set(df[df.quantity.str.startswith("lr_sweep")].condition.str.extract(r"lr_times=([\d.]+)")[0]) == {"4", "25"}
    assert "η × 25 gives 15.5 [" in P1WT.lr_sentence(w)  # 70/5 + the mean of 0.5·s = 14 + 1.5
    # negative control: without the sweep's tasks, nothing to say and no rows
    assert P1W.lr_split(_lr_results(with_sweep=False), st) == [] and P1WT.lr_sentence({"lr": [], "setup": st}) == ""


def test_lr_sweep_tasks_are_in_the_default_run_only():
    from types import SimpleNamespace

    from reproduce.paper1.setup import DEFAULT, QUICK
    from reproduce.paper1.tasks import make_tasks

    full = make_tasks(SimpleNamespace(setup=DEFAULT, workers=2, seed=1))
    sweep = [t for t in full if t.name == "lr_sweep"]
    assert len(sweep) == DEFAULT.runs * len(DEFAULT.lr_sweep) and {t.params["lr_times"] for t in sweep} == {4.0, 25.0}
    assert all(t.params["lr"] == pytest.approx(DEFAULT.lr_for(DEFAULT.pp_bunch) * t.params["lr_times"]) for t in sweep)
    assert DEFAULT.lr_for(DEFAULT.pp_bunch) * 25 == pytest.approx(DEFAULT.lr_for(DEFAULT.np_bunch))  # × 25: η = 0.003
    same = [t for t in full if t.name == "train" and t.params["mode"] == "sequential"
            and t.params["bunch"] == DEFAULT.pp_bunch]
    assert sorted({t.params["hidden"] for t in same}) == [400, 1000] and len(same) == 2 * DEFAULT.runs
    assert not [t for t in make_tasks(SimpleNamespace(setup=QUICK, workers=2, seed=1)) if t.name == "lr_sweep"]
