"""The shared report code of the emulator's validation and of rebuilt results
(reproduce/report.py): worked examples with their negative controls."""
from __future__ import annotations

import pytest

from reproduce import report as R


def _pairs():
    # config a: runs 0.8, 0.9, 0.2 (one disturbed run) → median 0.8; config b: 1.1 → 1.1
    return ([{"P": 2, "config": "a", "emulated_s": e, "measured_s": 1.0} for e in (0.8, 0.9, 0.2)]
            + [{"P": 2, "config": "b", "emulated_s": 1.1, "measured_s": 1.0}])


def test_emulator_error_is_the_configuration_median_furthest_from_one():
    assert R.emulator_error(_pairs()) == pytest.approx(0.8)  # |ln 0.8| > |ln 1.1|
    # negative control: the per-run extreme would have been the disturbed 0.2
    assert R.emulator_error(_pairs()[:2] + _pairs()[3:]) == pytest.approx(0.85)
    assert R.emulator_error([]) is None


def test_validation_rows_one_per_P_with_median_and_range():
    pairs = _pairs() + [{"P": 4, "config": "a", "emulated_s": 2.0, "measured_s": 4.0}]
    rows = R.validation_rows("pX", pairs, profile="here")
    assert [r["condition"] for r in rows] == ["workers=2;profile=here", "workers=4;profile=here"]
    r2 = rows[0]
    assert (r2["ours"], r2["ours_low"], r2["ours_high"], r2["runs"]) == pytest.approx((0.85, 0.2, 1.1, 4))
    assert r2["quantity"] == "emulated_over_measured" and r2["kind"] == "emulated"
    assert r2["reported"] is None and r2["verdict"] == "no-paper-value"
    assert rows[1]["ours"] == pytest.approx(0.5)


def test_beyond_measured_note_names_the_largest_error_and_the_range():
    note = R.beyond_measured_note(_pairs(), profile="here")
    assert "beyond the measured P ≤ 2" in note and "0.80×" in note
    assert "no measured run" in R.beyond_measured_note([], profile="here")


def test_origin_line_only_for_rebuilt_results():
    meta = {"date_utc": "2026-11-23T08:00:00Z", "code": {"commit": "abcdef0123"}, "tasks": 5,
            "tasks_from_cache": 5}
    assert R.origin_line(meta) == []  # computed by this invocation: nothing to say
    meta["origin"] = {"date_utc": "2026-11-22T10:00:00Z", "code": {"commit": "1234567890"},
                      "wall_s": 1850.4, "loadavg_start": [1.0, 1.2, 1.5]}
    line = R.origin_line(meta)[0]
    assert "Rebuilt from the task cache" in line and "5 of 5" in line
    assert "2026-11-22T10:00:00Z" in line and "`1234567`" in line and "1850 s" in line
    assert "`abcdef0`" in line


def test_oversubscribed():
    assert R.oversubscribed(3, cores=2) and not R.oversubscribed(2, cores=2)


def test_a_strict_json_profile_with_unbounded_bandwidth_loads():
    """summary.json writes β = inf as null; reading it back gives inf (and only then)."""
    import json
    import math

    from engine.perfmodel import MachineProfile
    from reproduce.store import dumps

    p = MachineProfile("compute-only", 0.0, math.inf, "bound")
    d = json.loads(dumps(p.as_dict()))
    assert d["bandwidth_Bps"] is None
    assert MachineProfile.from_dict(d) == p
    assert MachineProfile.from_dict({**d, "bandwidth_Bps": 1e9}).bandwidth_Bps == 1e9


def test_report_refuses_a_folder_that_is_not_one_generation(tmp_path):
    """A file changed after its generation's manifest was written: check_paper names it."""
    import json

    from reproduce.store import write_generation

    folder = tmp_path / "pX"
    rows = [R.row("pX", "t", "q", "", "x", ours=1.0, kind="measured")]
    csv = R.frame(rows).to_csv(index=False)
    def write(staging):
        (staging / "comparison.csv").write_text(csv)
        (staging / "summary.json").write_text(json.dumps({"rows": rows}))

    write_generation(folder, write, generation="g1")
    assert len(R.check_paper(folder)) == 1
    # another writer's file, same rows and columns (the CSV check alone would pass it)
    other = R.frame([R.row("pX", "t", "q", "", "x", ours=2.0, kind="measured")]).to_csv(index=False)
    (folder / "comparison.csv").write_text(other)
    with pytest.raises(R.ResultsError, match="comparison.csv"):
        R.check_paper(folder)


def test_pair_table_scales_and_shows_runs_only_where_given():
    pairs = [{"P": 2, "config": "a", "emulated_s": 0.002, "measured_s": 0.004}]
    L = R.pair_table(pairs, unit="ms", scale=1e3)
    assert L[0] == "| P | configuration | emulated ms | measured ms | emulated / measured |"
    assert L[2] == "| 2 | a | 2 | 4 | 0.50 |"
    L = R.pair_table([{**pairs[0], "runs": 3}], unit="s", profile="here-best")
    assert L[0].startswith("| profile | P |") and L[0].endswith("| runs |")
    assert L[2] == "| here-best | 2 | a | 0.002 | 0.004 | 0.50 | 3 |"
    assert "beyond P = 2" in R.validation_footer(pairs)[1]
