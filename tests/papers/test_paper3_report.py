"""paper3's report with the emulator's validation (issue 12): the composition under an α/β
profile is bit for bit the old one; on a tiny run, --profile's profile replaces `here`, the
emulator rows and the note of rows beyond the measured P, and oversubscribed measured runs."""
import os
from dataclasses import replace

import pandas as pd
import pytest

from engine.perfmodel import MachineProfile
from reproduce.harness import run_paper
from reproduce.paper3 import PAPER
from reproduce.paper3.report import emulated_time
from reproduce.paper3.setup import QUICK, gige2008

# XOR-sized parity so every run converges in a second; nodes 1, 2, 4 with 2 workers measured.
TINY = replace(QUICK, bits=3, hidden=6, nodes=(1, 2, 4), local_epochs=(4,), runs=1, max_epochs=3000,
               ablation_runs=0)
TEST = MachineProfile("test", 2e-6, 5e9, source="a test profile")


def test_alpha_beta_composition_is_the_old_one_bit_for_bit():
    res = {"sum_max_compute_s": 0.123456789, "rounds": 1337, "msg_bytes": 8016.0}
    for prof in (TEST, gige2008()):
        for P in (2, 3, 8, 16):
            comm = res["rounds"] * prof.allgather_time(P, int(res["msg_bytes"]))
            t = res["sum_max_compute_s"] + comm
            assert emulated_time(res, P, prof) == (t, comm / t)  # exactly the old formula


def _run(tmp_path_factory, name, cores):
    def no_here():
        raise AssertionError("--profile was given: here must not be measured")

    out = tmp_path_factory.mktemp(name) / "paper3"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "cpu_count", lambda: cores)
        mp.setattr("reproduce.paper3.tasks.measure_here", no_here)
        run_paper(PAPER, setup=TINY, mode="quick", workers=2, backend="local", seed=1, out=out,
                  profile=TEST)
    return pd.read_csv(out / "comparison.csv", keep_default_na=False), (out / "report.md").read_text()


@pytest.fixture(scope="module")
def free_cores(tmp_path_factory):
    return _run(tmp_path_factory, "p3free", 8)


@pytest.fixture(scope="module")
def one_core(tmp_path_factory):
    return _run(tmp_path_factory, "p3over", 1)


def test_profile_replaces_here_and_validates(free_cores):
    df, md = free_cores
    emu = df[df.kind == "emulated"]
    assert emu.condition.str.contains("profile=test").any() and not df.condition.str.contains("profile=here").any()
    v = df[(df.table == "emulator")]
    assert list(v.condition) == ["workers=2;profile=test"] and (v.quantity == "emulated_over_measured").all()
    assert v.ours.iloc[0] > 0 and v.reported.iloc[0] == ""
    beyond = emu[emu.condition.str.contains("nodes=4;") & emu.condition.str.contains("profile=test")]
    assert len(beyond) and beyond.note.str.contains("beyond the measured P ≤ 2").all()
    at2 = emu[emu.condition.str.contains("nodes=2;") & emu.condition.str.contains("profile=test")]
    assert len(at2) and not at2.note.str.contains("beyond").any()
    gige = emu[emu.condition.str.contains("profile=gige2008")]
    assert len(gige) and not gige.note.str.contains("beyond").any()
    assert not df.condition.str.contains("oversubscribed").any()
    assert "## Emulator validation" in md and "**Headline.**" in md and "extrapolated" in md


def test_oversubscribed_measured_runs(one_core):
    df, md = one_core
    meas = df[(df.kind == "measured")]
    timed = meas[meas.condition.str.contains("nodes=2")]
    assert len(timed) and timed.condition.str.contains("oversubscribed=yes").all()
    assert not meas[meas.condition.str.startswith("nodes=1")].condition.str.contains("oversubscribed").any()
    assert (df.table == "emulator").sum() == 0  # an oversubscribed run validates nothing
    emu = df[(df.kind == "emulated") & df.condition.str.contains("profile=test")]
    assert emu.note.str.contains("no measured run to validate it against").all()
    assert "not measured scaling" in md


def test_a_measured_speedup_says_when_serial_and_parallel_come_from_different_invocations():
    """Issue 15: a cached serial time paired with a fresh parallel one is said in the note;
    from one invocation, nothing is said (negative control)."""
    import pandas as pd

    from reproduce.paper3.report import comparison_rows
    from reproduce.paper3.setup import DEFAULT

    def frame(serial_inv, par_inv):
        base = dict(study="main", converged=True, rounds=10, epochs=100.0, final_mse=0.0, kind="measured",
                    profile="", comm_share=0.1, serial_scale=1.0, run=0, seed=1)
        return pd.DataFrame([
            {**base, "name": "serial", "nodes": 1, "local_epoch": None, "source": "measured (serial)",
             "time_s": 2.0, "invocation": serial_inv, "timed": f"date-{serial_inv}"},
            {**base, "name": "pattern", "nodes": 2, "local_epoch": 32, "source": "measured",
             "time_s": 1.0, "invocation": par_inv, "timed": f"date-{par_inv}"}])

    def note(rows):
        return next(r["note"] for r in rows if r["quantity"] == "speedup" and r["kind"] == "measured")

    mixed = note(comparison_rows(frame("a", "b"), DEFAULT)[0])
    assert "different invocations" in mixed and "date-a" in mixed and "date-b" in mixed
    assert "different invocations" not in note(comparison_rows(frame("a", "a"), DEFAULT)[0])
