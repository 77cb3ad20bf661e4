"""paper1's emulated bunch time under α/β and calibrated profiles, the emulated /
measured pairs and the labels of the rows (issue 12)."""
from __future__ import annotations

import pandas as pd
import pytest

from engine.perfmodel import MachineProfile
from reproduce.paper1.spert import n_wts, spert_terms, spert_time
from reproduce.paper1.perf import here_model
from reproduce.paper1.report import (collectives, emulated_label, emulated_time, here_profile, label_rows,
                                     validation_pairs)

CAL = {"fits": {"48": {"c1": 1e-9, "c2": 1e-7, "c1_fwd": 3e-10, "c2_fwd": 0.0, "hidden": [100, 200]}},
       "c_h": 2e-7, "c_h_fwd": 1e-7, "latency_s": 4e-6, "bandwidth_Bps": 5e9, "profile_source": "test"}
TAB = MachineProfile(
    "tab", 1e-6, 1e9, source="test",
    coll={"allgather": {2: [[8000, 6e-6], [80000, 30e-6]]}, "broadcast": {2: [[8000, 4e-6]]},
          "allreduce": {2: [[8000, 7e-6], [800000, 300e-6]]}},
    contention={"small": {2: 1.25}}, straggler={"small": {2: 1.1}}, compute_ratio=1.5)


def test_the_default_profile_is_the_calibration_and_alpha_beta_keeps_section_2_5():
    prof = here_profile(CAL)
    assert (prof.name, prof.latency_s, prof.bandwidth_Bps) == ("here", 4e-6, 5e9) and not prof.calibrated
    assert emulated_label(prof) == "emulated (here)" and emulated_label(TAB) == "emulated (tab)"
    m = here_model(CAL, B=48)
    for s, fwd in (("NP", False), ("NP", True), ("PP", False)):
        T_d = spert_terms(s, P=3, B=48, N_i=156, N_h=400, N_o=56, m=m, forward=fwd)["T_d"]
        T, d = emulated_time(s, P=3, B=48, N_h=400, forward=fwd, T_c=1e-3, T_h=2e-4, prof=prof, spert_here=m)
        assert (T, d) == (spert_time(T_d, 1e-3, 2e-4, 3), T_d)  # bit for bit


def test_a_calibrated_profile_prices_the_collectives_the_code_runs():
    assert collectives("NP", P=2, B=48, N_h=400, forward=False) == [("allgather", 48 * 56 * 8, 1),
                                                                      ("broadcast", 48 * 56 * 8, 1)]
    assert collectives("PP", P=2, B=1000, N_h=400, forward=True) == [("allgather", 500 * 56 * 8, 1)]
    n = 400 * 157 + 56 * 401
    assert collectives("PP", P=2, B=1000, N_h=400, forward=False) == [("allreduce", (n + 2) * 8, 1)]
    T, comm = emulated_time("NP", P=2, B=48, N_h=400, forward=False, T_c=1e-3, T_h=2e-4, prof=TAB,
                            spert_here=None)
    c = 1e-3 * 1.5 * 1.25
    ag = TAB.collective_time("allgather", 2, 48 * 56 * 8)
    assert comm == pytest.approx(0.1 * c + ag + TAB.collective_time("broadcast", 2, 48 * 56 * 8))
    assert T == pytest.approx(c + comm + 2e-4 * 1.5)


def _df():
    W = 48 * n_wts(156, 400, 56)
    rows = []
    for P, t_meas, t_em in ((1, 2e-3, 1.5e-3), (2, 2e-3, 1e-3), (4, 1e-3, 5e-4)):
        rows.append(dict(figure="fig3", strategy="NP", hidden=400, bunch=48, P=P, source="measured",
                         kind="measured", perf=W / t_meas))
    for P in (1, 2, 3, 4):
        rows.append(dict(figure="fig3", strategy="NP", hidden=400, bunch=48, P=P, source="emulated (here)",
                         kind="emulated", perf=W / (1.5e-3 / P ** 0.5)))
    return pd.DataFrame(rows)


def test_pairs_and_labels():
    pairs = validation_pairs(_df(), "emulated (here)", cores=2)
    assert [(p["P"], p["config"]) for p in pairs] == [(1, "NP training 156:400:56 B=48"),
                                                      (2, "NP training 156:400:56 B=48")]  # P = 4 > cores
    assert pairs[0]["emulated_s"] / pairs[0]["measured_s"] == pytest.approx(0.75)
    rows = [{"kind": "emulated", "condition": "nodes=3;bunch=48;hidden=400;source=emulated (here)", "note": "x"},
            {"kind": "emulated", "condition": "bunch=48;hidden=400;strategy=NP;source=emulated (here)",
             "note": "at P = 8 of [1, 2, 8]"},
            {"kind": "emulated", "condition": "nodes=2;bunch=48;hidden=400;source=emulated (here)", "note": ""},
            {"kind": "emulated", "condition": "nodes=3;source=emulated (MultiSpert bus)", "note": ""},
            {"kind": "measured", "condition": "nodes=4;bunch=48;hidden=400;source=measured", "note": ""},
            {"kind": "measured", "condition": "nodes=2;bunch=48;hidden=400;source=measured", "note": ""}]
    label_rows(rows, pairs, "emulated (here)", cores=2)
    assert "beyond the measured P ≤ 2" in rows[0]["note"] and rows[0]["note"].startswith("x; ")
    assert "beyond the measured P ≤ 2" in rows[1]["note"]
    assert rows[2]["note"] == "" and rows[3]["note"] == ""  # measured P; the paper's machine
    assert rows[4]["condition"].endswith(";oversubscribed=yes")
    assert "oversubscribed" not in rows[5]["condition"]
