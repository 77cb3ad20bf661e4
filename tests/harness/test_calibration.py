"""Calibrated machine profiles: probe -> profile conversions, the collective table's
interpolation and extrapolation on worked numbers, the shipped profiles and a quick
calibration (issue 12)."""
import argparse
import json
import math
from pathlib import Path

import pytest

from engine.calibration import profile_from_probe, with_compute_ratio, worker_counts
from engine.perfmodel import MachineProfile
from reproduce import profiles
from reproduce.calibrate import main as calibrate_main
from reproduce.calibrate import paths

# A hand-made probe (the probe's JSON form: string P keys, µs). At P = 2 the allgather of
# 8,016 and 100,000 float64 (64,128 and 800,000 bytes) differ by 735.872 µs: β = 1 GB/s;
# the 1,000-element one (8,000 B) takes 20 µs: α = 20 − 8 = 12 µs (above the barrier).
PROBE = {
    "nproc": 4,
    "coll": {
        "2": {"allgather:1000": 20.0, "allgather:8016": 100.0, "allgather:100000": 835.872,
              "barrier:1000": 1.0, "barrier:8016": 2.0, "barrier:100000": 3.0},
        "4": {"allgather:1000": 40.0, "allgather:8016": 200.0, "allgather:100000": 1600.0,
              "barrier:1000": 4.0, "barrier:8016": 4.0, "barrier:100000": 4.0},
    },
    "work": {"gemv": {"1": [0.2, 0.2], "2": [0.3, 0.36], "4": [0.4, 0.6]}},
    "jitter": {"gemv": {"2": {"mean_of_max_over_mean": 1.1}}},
}


def _profile(probe=PROBE):
    return profile_from_probe(probe, name="t", description="test machine", source="hand-made")


def test_profile_from_probe_worked_example():
    p = _profile()
    flat = lambda pts: [v for pt in pts for v in pt]  # noqa: E731
    assert flat(p.coll["allgather"][2]) == pytest.approx([8000, 20e-6, 64128, 100e-6, 800000, 835.872e-6])
    assert flat(p.coll["barrier"][2]) == pytest.approx([0, 1e-6, 0, 2e-6, 0, 3e-6])
    assert p.bandwidth_Bps == pytest.approx(1e9)
    assert p.latency_s == pytest.approx(12e-6)
    assert p.contention == {"gemv": {2: pytest.approx(1.5), 4: pytest.approx(2.0)}}
    # P = 2 from the jitter; P = 4 from work max / median = 0.6 / 0.4
    assert p.straggler == {"gemv": {2: 1.1, 4: pytest.approx(1.5)}}
    assert p.kernels == {"gemv": pytest.approx(0.2 / 200)}  # xeon16's 200 calls
    assert "hand-made" in p.source and "work max / median" in p.source
    assert p.extrapolated(8) and not p.extrapolated(4) and not p.extrapolated(3)


def test_kernels_from_method_and_alone():
    assert _profile({**PROBE, "method": {"work": {"gemv": 100}}}).kernels["gemv"] == pytest.approx(2e-3)
    alone = {"gemv": {"s_per_call": 7e-4, "gflops": 1.0}}
    assert _profile({**PROBE, "alone": alone}).kernels["gemv"] == 7e-4


def test_alpha_floored_at_the_barrier():
    coll = {"2": {**PROBE["coll"]["2"], "barrier:1000": 15.0, "barrier:8016": 15.0,
                  "barrier:100000": 15.0}}
    assert _profile({**PROBE, "coll": coll}).latency_s == pytest.approx(15e-6)


def test_collective_time_measured_interpolated_extrapolated():
    p = _profile()
    assert p.collective_time("allgather", 2, 64128) == pytest.approx(100e-6)  # measured
    assert p.collective_time("barrier", 2, 0) == pytest.approx(2e-6)  # median of its 3 points
    assert p.collective_time("allgather", 2, 4000) == pytest.approx(11e-6)  # (0, 2 µs)–(8000, 20 µs)
    assert p.collective_time("allgather", 3, 64128) == pytest.approx(150e-6)  # between P = 2 and 4
    # beyond P = 4: latency 4 µs × ⌈log2 8⌉/⌈log2 4⌉ + (200 − 4) µs × 7/3
    assert p.collective_time("allgather", 8, 64128) == pytest.approx(4e-6 * 3 / 2 + 196e-6 * 7 / 3)


def test_negative_control_one_point_changed():
    coll = {**PROBE["coll"], "2": {**PROBE["coll"]["2"], "allgather:8016": 101.0}}
    q = _profile({**PROBE, "coll": coll})
    assert q.collective_time("allgather", 2, 64128) != _profile().collective_time("allgather", 2, 64128)


def test_round_trip_through_json():
    p = _profile()
    q = MachineProfile.from_dict(json.loads(p.to_json()))
    assert q == p
    for op, P, b in (("allgather", 2, 64128), ("allgather", 3, 1000), ("allgather", 16, 8e5),
                     ("barrier", 4, 0)):
        assert q.collective_time(op, P, b) == p.collective_time(op, P, b)


def test_with_compute_ratio():
    p = _profile()
    assert with_compute_ratio(p, {"gemv": 0.5e-3}).compute_ratio == pytest.approx(2.0)
    assert with_compute_ratio(p, {"gemm": 1.0}) == p  # no kernel in common
    ab = MachineProfile("ab", 1e-6, 1e9, source="α/β")
    assert with_compute_ratio(ab) is ab  # no kernels: nothing measured, unchanged
    two = MachineProfile("k", 1e-6, 1e9, source="s", kernels={"gemv": 2.0, "gemm": 8.0})
    assert with_compute_ratio(two, {"gemv": 1.0, "gemm": 1.0}).compute_ratio == pytest.approx(4.0)


def test_worker_counts():
    assert worker_counts(16) == [2, 4, 8, 16]
    assert worker_counts(12) == [2, 4, 8, 12]
    assert worker_counts(2) == worker_counts(1) == [2]


def test_resolve_shipped_and_paper_machines():
    x = profiles.resolve("xeon16", here_kernels=dict(_xeon16_kernels()))
    assert x.name == "xeon16" and x.calibrated and x.compute_ratio == pytest.approx(1.0)
    assert x.measured_P("allgather") == [2, 4, 8, 16]
    assert "ca20bd6" in x.source and x.date == "2026-11-23"
    g = profiles.resolve("gige2008")
    assert g.name == "gige2008" and g.fitted and g.source
    m = profiles.resolve("multispert1997")
    assert m.bandwidth_Bps == 2.7e6 and "MULTISPERT_1997" in m.source
    assert set(profiles.names()) >= {"here", "gige2008", "multispert1997", "xeon16", "xeon207x16", "dev2"}


def _xeon16_kernels():
    return MachineProfile.load(profiles.PROFILES_DIR / "xeon16.json").kernels.items()


def test_resolve_unknown_names_the_choices():
    with pytest.raises(ValueError, match="gige2008.*xeon16"):
        profiles.resolve("no-such-machine")


@pytest.mark.parametrize("name", list(profiles.SHIPPED))
def test_shipped_profile_rebuilds_from_its_probe(name):
    src = Path(profiles.SHIPPED[name]["probe"])
    if not src.is_file():
        pytest.skip(f"{src} is absent (the shared machines folder is not next to this checkout)")
    committed = (profiles.PROFILES_DIR / f"{name}.json").read_text()
    assert profiles.build(name).to_json() == committed


def test_quick_calibrate_writes_a_loadable_profile(tmp_path, capsys):
    args = argparse.Namespace(workers=2, backend="local", out=tmp_path, quick=True, name="quick2")
    assert calibrate_main(args) == 0
    prof_path, probe_path = paths(tmp_path, "quick2", "local", 2)
    assert prof_path == tmp_path / "profile.json" and probe_path.is_file()
    p = profiles.resolve(str(prof_path), here_kernels={"gemv": 1.0})
    assert p.name == "quick2" and p.measured_P("allgather") == [2]
    assert set(p.kernels) == {"gemv", "gemm", "small"} and math.isfinite(p.compute_ratio)
    assert "QUICK" in p.source and "| 2 |" in capsys.readouterr().out


def test_the_machine_checks_write_outside_the_committed_results_by_default():
    import shutil
    import subprocess

    from reproduce.store import LOCAL

    assert paths(None, "box", "local", 2)[0] == LOCAL / "machines" / "box" / "profile.json"
    assert LOCAL == Path("results/local")
    root = Path(__file__).resolve().parents[2]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")

    def ignored(rel):
        return subprocess.run(["git", "check-ignore", "-q", rel], cwd=root).returncode == 0
    assert ignored("results/local/matrix.csv") and ignored("results/local/machines/box/profile.json")
    # control: the committed files those commands regenerate with --out are not ignored
    assert not ignored("results/matrix.csv") and not ignored("results/validate/validate.csv")
