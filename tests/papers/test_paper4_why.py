"""paper4's why (reproduce/paper4/why.py and why_text.py, the issue "The why behind every verdict"): worked
examples of its splits against hand calculations (a speedup = compute alone × share outside
the collectives; an emulated time = compute + straggler wait + allgather; the gap to the paper
= a model's width factor × the rest; Table 1's implied numerator offset), the intervals equal
to the claims' draw for draw, negative controls, the comparison rows and the reasons."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from reproduce.paper4.blocked import node_profile
from reproduce.paper4.model import NodeModel
from reproduce import claims as C
from reproduce import report as R
from reproduce.paper4 import claims as P4C
from reproduce.paper4 import why as W
from reproduce.paper4 import why_text as WT
from reproduce.paper4.report import emulated_time_per_pass, runs_frame
from reproduce.paper4.setup import DEFAULT, PASSES

PROFILE = node_profile(2e-6, 1e-9, name="test-ab", source="test")
CAL = {"exchange": {"local": {"t_startup": 2e-6, "t_data": 1e-9}},
       "t_a": {w: {"t_a": 5e-10, "sizes": [132, w]} for w in (132, 2048)}}


def _emu(serial: float, compute: float) -> dict:
    return {"serial_s": serial, "compute_per_pass_s": compute, "compute_fastest_pass_s": compute,
            "compute_per_pass_mean_s": compute, "reps": 40, "exchanges": {"1024": 6}, "loadavg": [0, 0, 0]}


def _meas(serial: float, t: float, share: float) -> dict:
    return {"serial_s": serial, "time_per_pass_s": t, "fastest_pass_s": t, "mean_s": t,
            "comm_share": share, "loadavg": [0, 0, 0]}


def results(widths=(132, 2048), runs: int = 5) -> list:
    """Sweep results as tasks.py ``sweep`` returns them: per width, passes and run, emulated
    P = 1..16 and measured P = 1, 2; the wide net at P = 2 twice as fast as its serial time with
    10 % communication, the narrow one at a third of it with 30 %."""
    out = []
    for w in widths:
        for ps in PASSES:
            for i in range(runs):
                f = 1 + 0.03 * ((i % 3) - 1)
                t = SimpleNamespace(name="sweep", kind="measured", params={"width": w, "passes": ps, "run": i,
                                                                           "seed": 1 + i})
                fast = w == max(widths)
                out.append((t, {"emulated": {str(P): _emu(0.01 * f, 0.011 / P) for P in (1, 2, 4, 8, 16)},
                                "measured": {"1": _meas(0.01 * f, 0.01, 0.01),
                                             "2": _meas(0.01 * f, 0.005 if fast else 0.03, 0.1 if fast else 0.3)}}))
    return out


def host_raw(compute_speedup: float = 8.0, share: float = 0.75) -> dict:
    """The host's runs (claims.HOST_RUNS5's rows) at width 2,048: at P, compute alone
    ``compute_speedup``·P/16 and ``share`` of the time outside the collectives, ±3 % per run."""
    raw = {}
    for ps in PASSES:
        for P in (1, 2, 4, 8, 16):
            rs = []
            for i in range(5):
                f = 1 + 0.03 * ((i % 3) - 1)
                serial = 0.01 * f
                t = serial / (compute_speedup * P / 16 * f * share)
                rs.append({"passes": ps, "width": 2048, "run": i, "seed": 1 + i, "P": P, "serial_s": serial,
                           "time_per_pass_s": t, "comm_share": 1 - share})
            raw[(ps, 2048, P)] = rs
    return raw


def host_rows(raw: dict) -> list[dict]:
    """The same runs as claims.runs5_rows gives them (speedups in run order)."""
    out = []
    for (ps, w, P), rs in raw.items():
        v = [r["serial_s"] / r["time_per_pass_s"] for r in rs]
        out.append({"passes": ps, "width": w, "P": P, "values": v, "speedup": (float(np.median(v)), min(v), max(v)),
                    "comm_share": 1 - rs[0]["comm_share"]})
    return out


def compute(raw=None, widths=(132, 2048)):
    res = results(widths)
    runs = runs_frame(res, DEFAULT, PROFILE)
    w = W.compute(res, setup=DEFAULT, runs=runs, cal=CAL, profile=PROFILE,
                  raw=host_raw() if raw is None else raw, host_cal=CAL)
    return res, runs, w


@pytest.fixture(scope="module")
def computed():
    """compute() once (every split's bootstrap takes a while)."""
    return compute()


def test_split_record_by_hand():
    # serial 10 ms, pass 2 ms of which 20 % in the collectives: 1.6 ms outside
    assert W.split_record(0.010, 0.002, 0.2) == pytest.approx((6.25, 0.8, 5.0), rel=1e-12)
    cs, sh, s = W.split_record(0.010, 0.002, 0.2)
    assert cs * sh == pytest.approx(s, rel=1e-12)
    # negative control: no communication leaves the whole speedup to compute alone
    assert W.split_record(0.010, 0.002, 0.0) == pytest.approx((5.0, 1.0, 5.0), rel=1e-12)


def test_host_speedup_interval_is_the_claims_draw_for_draw():
    raw = host_raw()
    splits = {(x["passes"], x["P"]): x for x in W.host_splits(raw)}
    hosts = {P4C.HOST: host_rows(raw), P4C.OTHER_HOST: []}
    ev = P4C.evidence([], runs=None, hosts=hosts, profile="test")
    for ps, cid in W.CLAIM_OF.items():
        x = splits[(ps, 16)]
        assert x["speedup"] == (ev[cid].ours, ev[cid].low, ev[cid].high)
        assert x["compute_speedup"][0] * x["compute_share"][0] == pytest.approx(x["speedup"][0], rel=1e-12)
        f = C.gmean([1 + 0.03 * ((i % 3) - 1) for i in range(5)])  # host_raw's spread over runs
        assert x["compute_speedup"][0] == pytest.approx(8.0 * f, rel=1e-12)  # host_raw's 8 at P = 16
        assert x["compute_share"][0] == pytest.approx(0.75, rel=1e-12)


def test_emulated_parts_by_hand_and_sum_to_the_emulated_time():
    e = _emu(0.01, 0.0025)
    rec, parts = W.emulated_record(e, 4, PROFILE)
    # α/β: no straggler wait; 6 allgathers of 1,024 bytes on 4 ranks: 6·(2·α + 3·1024/β), β = 8/t_data
    ag = 6 * (2 * 2e-6 + 3 * 1024 * 1e-9 / 8)
    assert parts == pytest.approx({"compute": 0.0025, "straggler_wait": 0.0, "allgather": ag}, rel=1e-12)
    t = emulated_time_per_pass(e, 4, PROFILE)
    assert sum(parts.values()) == pytest.approx(t, rel=1e-12)
    assert rec == pytest.approx((0.01 / 0.0025, 0.0025 / t, 0.01 / t), rel=1e-12)


def test_emulated_speedup_interval_is_the_beside_figures(computed):
    res, runs, w = computed
    x = next(x for x in w["emulated"] if x["passes"] == "forward" and x["P"] == 16 and x["source"] == "test-ab")
    g = runs[(runs.kind == "emulated") & (runs.passes == "forward") & (runs.width == 2048) & (runs.nodes == 16)]
    assert x["speedup"] == C.over_seeds(list(g.speedup), C.gmean, label="paper4 here-emulated forward 2048 16")


def test_gap_split_by_hand_and_without_communication():
    raw = host_raw()
    gs = {(g["passes"], g["model"]): g for g in W.gap_splits(raw, CAL, DEFAULT, cal_source="test")}
    g = gs[("forward", "s6")]
    m = NodeModel(5e-10, 2e-6, 1e-9, DEFAULT.log_base)
    r = (2e-6 + 1e-9) / 5e-10
    by_hand = [16 * (n + 1) / ((n + 1) + 16 * r * math.log2(16)) for n in (2048, 64_000)]
    assert g["at_ours"][0] == pytest.approx(by_hand[0], rel=1e-12) == m.forward_speedup(2048, 16, 7)
    assert g["width_factor"][0] == pytest.approx(by_hand[1] / by_hand[0], rel=1e-12)
    assert g["gap"][0] * 1 == pytest.approx(15.72 / C.gmean(host_rows(raw)[4]["values"]), rel=1e-12)
    assert g["width_factor"][0] * g["rest"][0] == pytest.approx(g["gap"][0], rel=1e-12)
    # negative control: with free communication every model gives P at any width: the width
    # explains nothing and the rest is the whole gap
    free = {"exchange": {"local": {"t_startup": 0.0, "t_data": 0.0}}, "t_a": CAL["t_a"]}
    for g in W.gap_splits(raw, free, DEFAULT, cal_source="test"):
        # (§6's forward + backward pair is not exactly P even then: its serial 9L against its
        # parallel 9n/P, engine/perfmodel.py forward_backward_speedup)
        exact = g["passes"] == "forward" or g["model"] == "blocked"
        assert g["width_factor"][0] == pytest.approx(1.0, rel=1e-9 if exact else 1e-3)
        assert g["rest"][0] == pytest.approx(g["gap"][0] / g["width_factor"][0], rel=1e-12)


def test_width_split_is_the_claims_statistic(computed):
    res, runs, w = computed
    x = w["width"]
    ev = P4C.evidence([], runs=runs, hosts={P4C.HOST: [], P4C.OTHER_HOST: []}, profile="test")["sec3-width"]
    assert x["speedup_ratio"] == pytest.approx((ev.ours, ev.low, ev.high), rel=1e-9)
    # results(): wide 2× at 10 % communication, narrow 1/3× at 30 %: compute alone 2/0.9 ÷ (1/3)/0.7
    assert x["compute_speedup_ratio"][0] == pytest.approx((2 / 0.9) / ((1 / 3) / 0.7), rel=1e-9)
    assert x["compute_share_ratio"][0] == pytest.approx(0.9 / 0.7, rel=1e-9)
    assert x["speedup_ratio"][0] == pytest.approx(6.0, rel=1e-9)
    # negative control: one width measured gives no split (the claim has none either)
    assert W.width_split(runs[runs.width == 2048], CAL, DEFAULT) is None


def test_table1_implied_offset_by_hand(monkeypatch):
    t = {x["P"]: x for x in W.table1_terms("e")}
    # P = 1: log 1 = 0, den = 2n + 2 + 9/(L−1) = 267.5; the paper's 1.02 needs 2n + 2 + X = 1.02·267.5
    assert t[1]["offset"][0] == pytest.approx(1.02 * 267.5 - 266, rel=1e-12)
    assert t[1]["offset"][1:] == pytest.approx((1.015 * 267.5 - 266, 1.025 * 267.5 - 266), rel=1e-12)
    assert t[2]["free_comm"] == pytest.approx(2 * (266 + 63 / 792) / 267.5, rel=1e-12)
    assert t[1]["formula_offset"] == pytest.approx(63 / 792, rel=1e-12)
    said = " ".join(WT.table1_sentences(W.table1_split()))
    assert "At P = 1, 2 the paper's 1.02, 2.01 exceed" in said and "no single offset fits" in said
    # negative control: a table equal to the formula implies the printed term at every P
    m = NodeModel(1.0, 1.0, 1.0, "e")
    monkeypatch.setattr(W, "TABLE1", [(P, round(m.aggregate_speedup(132, P, 7), 2), 1.0) for P in (1, 2, 4, 8, 16)])
    s = W.table1_split()["bases"]["e"]
    assert s["common"][0] <= 63 / 792 <= s["common"][1]
    assert "exceed" not in " ".join(WT.table1_sentences(W.table1_split()))


def test_rows_section_and_reasons(computed):
    res, runs, w = computed
    df = R.frame(W.rows(w))
    assert (df.table == "why").all() and not df.duplicated(["quantity", "condition"]).any()
    assert df.reported.isna().all() and set(df.kind) <= set(R.KINDS)
    md = "\n".join(WT.section(w))
    assert md.startswith("## Why") and "| host | passes | width | P |" in md and "Table 1, n = 132" in md
    ev = P4C.evidence([], runs=runs, hosts={P4C.HOST: host_rows(host_raw()), P4C.OTHER_HOST: []}, profile="t")
    WT.cite(ev, w)
    for cid in ("table2-p16", "table3-p16", "conclusion-linear", "sec3-width", "table1-n132"):
        assert "; why (section Why): " in ev[cid].reason, cid
    assert "= compute alone 7.95 [" in ev["table2-p16"].reason  # host_raw's 8 × its spread
    assert "with free communication compute alone would still stay below the paper's 15.72" in ev["table2-p16"].reason
    # negative control: compute alone above the paper's value: no such sentence
    fast = host_raw(compute_speedup=20.0)
    w2 = {**w, "host": W.host_splits(fast), "gap": W.gap_splits(fast, CAL, DEFAULT, cal_source="test")}
    ev2 = P4C.evidence([], runs=runs, hosts={P4C.HOST: host_rows(host_raw(20.0)), P4C.OTHER_HOST: []}, profile="t")
    WT.cite(ev2, w2)
    assert "would still stay below" not in ev2["table2-p16"].reason
    assert "would stay below the" not in ev2["conclusion-linear"].reason


def wide_results(runs: int = 5, width: int = 8192) -> list:
    """The widest-net ablation's results as tasks.py ``wide`` returns them: P = 16 emulated only,
    compute alone 15× its serial time (±3 % per run in the serial time)."""
    out = []
    for ps in PASSES:
        for i in range(runs):
            f = 1 + 0.03 * ((i % 3) - 1)
            t = SimpleNamespace(name="wide", kind="emulated",
                                params={"width": width, "passes": ps, "run": i, "seed": 1 + i, "timed": 10})
            out.append((t, {"emulated": {"16": _emu(0.16 * f, 0.16 / 15)}, "measured": {}}))
    return out


def test_widest_net_ablation_split_rows_section_and_reason():
    host = node_profile(2e-6, 1e-9, name=P4C.HOST, source="test")
    res = results() + wide_results()
    runs = runs_frame(res, DEFAULT, PROFILE)
    assert set(runs.width) == {132, 2048}  # the ablation stays out of the sweep's tables and claims
    w = W.compute(res, setup=DEFAULT, runs=runs, cal=CAL, profile=PROFILE, host_profile=host,
                  raw=host_raw(), host_cal=CAL)
    x = next(x for x in w["wide"] if x["passes"] == "forward" and x["source"] == P4C.HOST)
    assert x["width"] == 8192 and x["P"] == 16 and x["runs"] == 5
    # by hand: an α/β profile does not scale compute, so compute alone = serial / compute = 15·f
    fs = [1 + 0.03 * ((i % 3) - 1) for i in range(5)]
    assert x["compute_speedup"][0] == pytest.approx(15 * math.exp(np.mean(np.log(fs))), rel=1e-12)
    # its parts (the compute is the same in every run) add up to the emulated time of one pass
    assert sum(x["parts"][k][0] for k in W.PARTS) == pytest.approx(
        emulated_time_per_pass(_emu(0.16, 0.16 / 15), 16, host), rel=1e-12)
    df = R.frame(W.rows(w))
    cond = df[df.condition.str.contains("width=8192") & (df.quantity == "compute_speedup")]
    assert len(cond) == 2 * 2  # two passes on two profiles (this run's and the host's)
    md = "\n".join(WT.section(w))
    assert "**Ablation: the widest net this machine holds.** Width 8,192" in md and "| 8,192 | 16 |" in md
    ev = P4C.evidence([], runs=runs, hosts={P4C.HOST: host_rows(host_raw()), P4C.OTHER_HOST: []}, profile="t")
    WT.cite(ev, w)
    r = ev["table2-p16"].reason
    assert f"the widest-net ablation (emulated on `{P4C.HOST}`, 5 runs): at width 8,192" in r
    assert "at width 8,192 " in r and "% of the paper's 15.72 at width 64,000) = compute alone" in r and "at 2,048" in r
    # negative controls: without the ablation's results no sentence, and the section says it did not run
    w0 = W.compute(results(), setup=DEFAULT, runs=runs, cal=CAL, profile=PROFILE, host_profile=host,
                   raw=host_raw(), host_cal=CAL)
    assert w0["wide"] == []
    ev0 = P4C.evidence([], runs=runs, hosts={P4C.HOST: host_rows(host_raw()), P4C.OTHER_HOST: []}, profile="t")
    WT.cite(ev0, w0)
    assert "widest-net" not in ev0["table2-p16"].reason
    assert "did not run" in "\n".join(WT.section(w0))
