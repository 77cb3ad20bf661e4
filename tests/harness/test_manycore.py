"""The many-core comparison (reproduce/manycore.py): the embedded measurements equal their
files, the composition of emulated speedups on hand-made results equals the hand computation,
the zero-cost profile gives the compute-only composition, and a negative control."""
import math
from pathlib import Path

import pytest

from engine.perfmodel import FREE, MachineProfile
from reproduce import manycore as M
from reproduce.paper3.report import manycore_emulated as p3_emulated
from reproduce.paper4.report import manycore_emulated as p4_emulated
from reproduce.runner import Task

# A hand-made calibrated profile: allgather of 8,000 bytes 20 µs at P = 2 and 40 µs at P = 4;
# compute twice as slow as here, contention and straggler per kernel.
H = MachineProfile(
    "hand", 1e-5, 1e9, source="hand-made",
    coll={"allgather": {2: [[0, 1e-5], [8000, 2e-5]], 4: [[0, 2e-5], [8000, 4e-5]]}},
    contention={"small": {2: 1.5, 4: 2.0}, "gemv": {2: 1.2, 4: 1.6}},
    straggler={"small": {2: 1.1, 4: 1.2}, "gemv": {2: 1.05, 4: 1.3}},
    compute_ratio=2.0)


def _p3_results():
    R = []
    for seed, t in ((1, 3.0), (2, 4.0), (3, 5.0), (4, 100.0)):  # seed 4: not a host seed
        R.append((Task("serial", "measured", 1, {"nodes": 1, "run": seed - 1, "seed": seed}),
                  {"converged": True, "time_s": t}))
    R.append((Task("serial", "measured", 1, {"nodes": 1, "run": 0, "seed": 1, "init": "fann0.1"}),
              {"converged": False, "time_s": 50.0}))  # the init ablation: left out
    for seed, c, rounds in ((1, 1.0, 100), (2, 1.5, 200), (3, 2.0, 300)):
        R.append((Task("pattern", "emulated", 1, {"nodes": 2, "local_epoch": 32, "run": seed - 1,
                                                    "seed": seed}),
                  {"converged": True, "sum_max_compute_s": c, "rounds": rounds, "msg_bytes": 8000.0}))
    R.append((Task("pattern", "emulated", 1, {"nodes": 2, "local_epoch": 32, "run": 0, "seed": 1,
                                                "combine": "mean"}),
              {"converged": True, "sum_max_compute_s": 9.0, "rounds": 9, "msg_bytes": 8000.0}))
    return R


def test_paper3_composition_by_hand():
    e = p3_emulated(_p3_results(), H)
    assert list(e) == [M.key(2, local_epoch=32)]
    # per seed: compute c·2·1.5 = 3c, wait 0.1·3c, rounds · 20 µs
    times = [3.0 + 0.3 + 100 * 2e-5, 4.5 + 0.45 + 200 * 2e-5, 6.0 + 0.6 + 300 * 2e-5]
    r = e[M.key(2, local_epoch=32)]
    assert r["runs"] == 3
    assert r["speedup"] == pytest.approx(4.0 * 2.0 / times[1], rel=1e-12)  # median serial × ratio
    assert r["comm_share"] == pytest.approx((0.45 + 200 * 2e-5) / times[1], rel=1e-12)
    assert r["time_s"] == pytest.approx(times[1], rel=1e-12)  # on that machine


def _p4_results():
    R = []
    for seed, serial, c in ((1, 0.010, 0.004), (2, 0.012, 0.005), (3, 0.011, 0.006)):
        em = {"2": {"serial_s": serial, "compute_per_pass_s": c, "exchanges": {"8000": 6}}}
        R.append((Task("sweep", "measured", 1, {"width": 512, "passes": "forward", "run": seed - 1,
                                                  "seed": seed}), {"emulated": em, "measured": {}}))
    return R


def test_paper4_composition_by_hand():
    e = p4_emulated(_p4_results(), H)
    k = M.key(2, passes="forward", width=512)
    assert list(e) == [k]
    sp, ts = [], []
    for serial, c in ((0.010, 0.004), (0.012, 0.005), (0.011, 0.006)):
        cs = c * 2.0 * 1.2  # compute ratio × gemv contention at P = 2
        ts.append(cs + 0.05 * cs + 6 * 2e-5)
        sp.append(serial * 2.0 / ts[-1])
    assert e[k]["speedup"] == pytest.approx(sorted(sp)[1], rel=1e-12)  # median over runs
    assert e[k]["time_s"] == pytest.approx(sorted(ts)[1], rel=1e-12)
    assert e[k]["runs"] == 3


def test_free_profile_is_the_compute_only_composition():
    assert M.emulated_speedup(FREE, 8, 3.0, 0.5, [("allgather", 8016, 1000)]) == 3.0 / 0.5
    e = p3_emulated(_p3_results(), FREE)[M.key(2, local_epoch=32)]
    assert e["speedup"] == 4.0 / 1.5  # median serial / median Σ max compute
    assert e["comm_share"] == 0.0
    e4 = p4_emulated(_p4_results(), FREE)[M.key(2, passes="forward", width=512)]
    assert e4["speedup"] == pytest.approx(sorted([0.010 / 0.004, 0.012 / 0.005, 0.011 / 0.006])[1])


def test_negative_control_latency_lowers_the_speedup():
    fast = MachineProfile("fast", 1e-6, 1e10, source="test")
    slow = MachineProfile("slow", 1e-2, 1e10, source="test")  # a large latency
    k = M.key(2, local_epoch=32)
    s_free, s_fast, s_slow = (p3_emulated(_p3_results(), p)[k]["speedup"] for p in (FREE, fast, slow))
    assert s_slow < s_fast < s_free
    assert s_slow < 0.5 * s_free  # 200 rounds × 10 ms dwarf 1.5 s of compute


def test_effect_profiles_switch_one_effect_off():
    e = M.effect_profiles(H)
    assert set(e) == set(M.EFFECTS)
    assert e["model"] is H and e["compute_only"] is FREE
    assert not e["alpha_beta"].calibrated and e["alpha_beta"].contention == H.contention
    assert e["no_contention"].compute_scale(4, "small") == 2.0 and H.compute_scale(4, "small") == 4.0
    assert e["no_straggler"].sync_wait(4, 1.0, "small") == 0.0
    assert e["ratio_1"].compute_ratio == 1.0 and e["ratio_1"].coll == H.coll


def test_compare_rows_and_targets():
    m8 = next(r for r in M.measured("paper3", "xeon16") if r["P"] == 8 and r["local_epoch"] == 32)
    s = m8["speedup"][0]

    def emulate(prof):  # 1.1× the measurement under the model, 1.5× with any effect off
        f = 1.1 if prof is H else 1.5
        return {M.key(8, local_epoch=32): {"speedup": f * s, "comm_share": 0.2, "runs": 3}}

    recs = M.compare("paper3", emulate, hosts=("xeon16",), profiles={"xeon16": H}, target=lambda c: M.PM20)
    assert len(recs) == 1
    r = recs[0]
    assert r["ratio"] == pytest.approx(1.1) and r["met"] and r["target"][:2] == (0.8, 1.2)
    assert set(r["effects"]) == set(M.EFFECTS) and r["effects"]["no_straggler"] == pytest.approx(1.5 * s)
    rows = M.csv_rows("paper3", recs)
    assert rows[0]["quantity"] == "speedup_emulated_over_measured" and rows[0]["kind"] == "emulated"
    assert rows[0]["reported"] is None and rows[0]["verdict"] == "no-paper-value"
    assert rows[0]["condition"] == "nodes=8;local_epoch=32;profile=hand;host=xeon16"
    assert "target ±20 %: met" in rows[0]["note"]
    text = "\n".join(M.section("paper3", recs, profiles={"xeon16": H}))
    assert "## Against many-core hosts" in text and "Target met at 1 of 1" in text
    # a miss names the direction and the effects' contributions
    miss = dict(r, ratio=0.5, emulated=0.5 * s, met=False)
    assert "pessimistic" in M.missed_sentence(miss) and "no_straggler gives" in M.missed_sentence(miss)
    # the targets are the papers' own: paper4's by width; without one a record has none
    from reproduce.paper3.report import manycore_target as t3
    from reproduce.paper4.report import manycore_target as t4
    assert t4({"width": 512})[:2] == (0.5, 2.0) and t4({"width": 2048}) == M.PM20 == t3({"local_epoch": 64})
    assert t4({"width": 132}) is None
    bare = M.compare("paper3", emulate, hosts=("xeon16",), profiles={"xeon16": H})
    assert bare[0]["target"] is None and bare[0]["met"] is None


def test_append_beyond_note():
    rows = [{"kind": "emulated", "condition": f"nodes={P};profile=here", "note": "n"} for P in (2, 4)]
    rows.append({"kind": "emulated", "condition": "nodes=4;profile=gige2008", "note": ""})
    M.append_beyond_note(rows, "here", [{"P": 2, "config": "c", "emulated_s": 0.8, "measured_s": 1.0}])
    assert rows[0]["note"] == "n" and rows[2]["note"] == ""
    assert rows[1]["note"].startswith("n; emulated (here) beyond the measured P ≤ 2") and "0.80×" in rows[1]["note"]


@pytest.mark.parametrize("paper,host", sorted(M.sources()))
def test_constants_equal_the_files(paper, host):
    folder = M.ROOT / M.sources()[(paper, host)]["folder"]
    if not (folder / "comparison.csv").exists():
        pytest.skip(f"{folder} not here")
    assert M.extract(paper, host) == M.measured_data()[(paper, host)]


@pytest.mark.parametrize("host", M.HOSTS)
def test_paper3_derived_speedup_equals_the_reports(host):
    import csv

    f = M.ROOT / M.sources()[("paper3", host)]["folder"] / "comparison.csv"
    if not f.exists():
        pytest.skip(f"{f} not here")
    rep = {r["condition"]: float(r["ours"]) for r in csv.DictReader(f.open())
           if r["quantity"] == "speedup" and r["kind"] == "measured"}
    for r in M.measured("paper3", host):
        c = f"nodes={r['P']};local_epoch={r['local_epoch']}"
        if c in rep:
            assert r["speedup"][0] == pytest.approx(rep[c], rel=1e-5)


def test_sources_and_profiles_exist():
    for (paper, host), s in M.sources().items():
        assert {"folder", "command", "date", "commit"} <= set(s) and host in M.HOSTS
    assert Path(M.ROOT / "engine" / "profiles" / f"{M.HERE_PROFILE}.json").exists()
    for host in M.HOSTS:
        p = M.host_profile(host)
        assert p.calibrated and p.name == host and math.isfinite(p.compute_ratio) and p.compute_ratio > 0
