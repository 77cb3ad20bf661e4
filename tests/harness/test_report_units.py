"""reproduce/report.py's pieces that the report tests reached only through whole reports,
each on a worked example with a control (issue 35: the survivors of its mutation run): the
±10 % point rule, the notes under a report's Run line, the QUICK marks and counts of the index
and README, the refusal of a comparison.csv with other columns."""
from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from reproduce import report as R
from test_claims import claims_table, fake_paper  # the test folders are on sys.path (tests/conftest.py)

PAPERS = [{"name": n, "authors": "A", "year": 2000, "title": "T"} for n in ("pa", "pb", "pc")]


def test_the_point_rule_is_ten_percent():
    assert R.verdict(10.0, 10.99) == (pytest.approx(1.099), "close")
    assert R.verdict(10.0, 11.05)[1] == "differs"  # within 11 %, outside 10 %
    assert R.verdict(10.0, 8.95)[1] == "differs" and R.verdict(None, 1.0)[1] == "no-paper-value"
    # the band includes its edge: ratios exact in binary (1.25, 0.75) at a tolerance of 0.25
    assert R.verdict(4.0, 5.0, tolerance=0.25) == (1.25, "close")
    assert R.verdict(4.0, 3.0, tolerance=0.25) == (0.75, "close")
    assert R.verdict(4.0, 5.0, tolerance=0.125)[1] == "differs"


def test_run_metadata_keeps_the_load_to_two_decimals(monkeypatch):
    monkeypatch.setattr(os, "getloadavg", lambda: (1.23456, 0.5, 2.0))
    assert R.run_metadata()["loadavg_end"] == [1.23, 0.5, 2.0]


def test_jobs_line_only_where_emulated_tasks_shared_the_machine():
    meta = {"conditions": {"jobs": 2}, "task_seconds": {"emulated": 1200.4, "measured": 30.0}}
    line = " ".join(R.jobs_line(meta))
    assert "Emulated tasks ran 2 at a time" in line and "emulated 1,200 s, measured 30 s" in line
    assert R.jobs_line({**meta, "conditions": {"jobs": 1}}) == []  # control: one at a time
    # no emulated task computed and none from the cache: nothing to say; from the cache: the note
    assert R.jobs_line({"conditions": {"jobs": 2}, "task_seconds": {"measured": 3.0}}) == []
    assert R.jobs_line({"conditions": {"jobs": 2}, "task_seconds": {}, "tasks_from_cache": 5})


def test_jobs_line_says_where_the_untimed_tasks_shared_the_cores():
    meta = {"conditions": {"jobs": 1}, "untimed_jobs": 2, "task_seconds": {"untimed": 700.0, "measured": 30.0}}
    line = " ".join(R.jobs_line(meta))
    assert "record no time" in line and "ran 2 at a time" in line and "untimed 700 s" in line
    assert "Emulated tasks ran" not in line
    assert R.jobs_line({**meta, "untimed_jobs": 1}) == []  # control: one at a time


def test_origin_line_names_the_run_and_what_it_resumed_from():
    o = {"date_utc": "D0", "code": {"commit": "abcdef123"}, "wall_s": 100.0, "loadavg_start": [1.0],
         "tasks": 10, "tasks_from_cache": 4,
         "cached_from": [{"date_utc": "D1", "tasks": 3, "seconds": 50.0, "load_1min": 0.5},
                         {"date_utc": "D2", "tasks": 1, "seconds": 5.0, "load_1min": 0.7}]}
    meta = {"origin": o, "tasks": 10, "tasks_from_cache": 10, "date_utc": "D3", "code": {"commit": "9876543aa"}}
    line = R.origin_line(meta)[0]
    assert "computed by the run of D0 with the project at `abcdef1`" in line and "project at `9876543`" in line
    assert "resumed from 2 earlier invocations" in line and "D1: 3 tasks, 50 s of tasks" in line
    assert "and computed 6 itself" in line
    # control: a run that resumed from nothing says nothing of it; no origin, no line
    assert "resumed" not in R.origin_line({**meta, "origin": {**o, "cached_from": []}})[0]
    assert R.origin_line({"tasks": 1}) == []


def test_not_a_program_names_the_paper_and_exits_2(capsys):
    assert R.not_a_program("reproduce.paper3.report") == 2
    assert "python -m reproduce paper3 writes its report" in capsys.readouterr().err
    assert R.not_a_program("report") == 2
    assert "python -m reproduce paperN" in capsys.readouterr().err


def test_quick_papers_are_marked_in_counts_index_and_readme(tmp_path):
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11)}), meta={"mode": "quick"})
    fake_paper(tmp_path / "pb", claims_table("pb", {"b1": (13, 14)}), meta={"mode": "default"})
    assert R.quick_papers(tmp_path, ["pa", "pb", "pc"]) == ["pa"]  # pc: no summary at all
    cf = R.claims_of(tmp_path, ["pa", "pb"])
    table = R.claim_counts_table(cf, PAPERS, quick=["pa"])
    assert "| pa (QUICK) | 1 | 1 | 0 | 0 | 0 | 0 |" in table and "| pb | 1 | 0 | 1 | 0 | 0 | 0 |" in table
    assert "| pc | – | – | – | – | – | – |" in table and table[-1] == "| **all** | 2 | 1 | 1 | 0 | 0 | 0 |"
    index = R.build_index(tmp_path, PAPERS)
    assert "## pa: A 2000, *T* (**QUICK**)" in index and "## pb: A 2000, *T*\n" in index
    assert R.QUICK_MARK in index and "## Claims" in index
    # control: without a quick run, no mark anywhere
    (tmp_path / "pa" / "summary.json").write_text(
        (tmp_path / "pa" / "summary.json").read_text().replace('"quick"', '"default"'))
    assert R.QUICK_MARK not in R.build_index(tmp_path, PAPERS) and "(QUICK)" not in R.build_index(tmp_path, PAPERS)


def test_readme_claims_name_the_host_where_there_is_one(tmp_path):
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11)}))  # host "h"
    df = pd.read_csv(tmp_path / "pa" / "claims.csv")
    df.loc[len(df)] = {**df.iloc[0].to_dict(), "claim": "a2", "host": float("nan")}
    df.to_csv(tmp_path / "pa" / "claims.csv", index=False)
    block = R.readme_claims(tmp_path, PAPERS[:1])
    assert "| 5 | measured (h) | reproduced |" in block and "| 5 | measured | reproduced |" in block


@pytest.mark.parametrize("change,what", [(lambda df: df.drop(columns=["note"]), "missing note"),
                                         (lambda df: df.assign(extra=1), "unexpected extra"),
                                         (lambda df: df[list(df.columns[::-1])], "wrong order")])
def test_a_comparison_with_other_columns_is_refused_saying_which(tmp_path, change, what):
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11)}))
    f = tmp_path / "pa" / "comparison.csv"
    change(pd.read_csv(f)).to_csv(f, index=False)
    (tmp_path / "pa" / "MANIFEST.json").unlink(missing_ok=True)
    with pytest.raises(R.ResultsError, match=f"columns are not the comparison format \\({what}\\)"):
        R.check_paper(tmp_path / "pa")
    json.loads((tmp_path / "pa" / "summary.json").read_text())  # the rest left as it was


def test_screen_lines_show_the_papers_value_beside_ours(tmp_path):
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11)}))  # the paper's value: 10
    lines = R.screen_lines(tmp_path, PAPERS[:1])
    header = next(x for x in lines if x.startswith("| paper | claim |"))
    assert "| paper's value |" in header
    assert any(x.startswith("| pa | **a1** §5 | 10 | 10 [9, 11] |") for x in lines)


def test_a_bad_kind_is_refused_naming_its_row(tmp_path):
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11)}))
    f = tmp_path / "pa" / "comparison.csv"
    df = pd.read_csv(f)
    df.loc[0, "kind"] = "guessed"  # every number is fine: only the kind is wrong
    df.to_csv(f, index=False)
    (tmp_path / "pa" / "MANIFEST.json").unlink(missing_ok=True)
    with pytest.raises(R.ResultsError, match="row 1: kind = 'guessed' is not one of measured"):
        R.check_paper(tmp_path / "pa")


def test_origin_line_falls_back_to_the_load_during_tasks():
    o = {"date_utc": "D0", "code": {"commit": "abcdef1"}, "wall_s": 10.0, "loadavg_1min_during_tasks": {"min": 0.5}}
    line = R.origin_line({"origin": o, "tasks": 1, "tasks_from_cache": 1, "date_utc": "D1", "code": {}})[0]
    assert "load average {'min': 0.5} at its start" in line
    # control: the load at the start comes first where it was recorded; neither: a dash
    assert "load average [1.0] at its start" in R.origin_line(
        {"origin": {**o, "loadavg_start": [1.0]}, "tasks": 1, "tasks_from_cache": 1, "code": {}})[0]
    assert "load average – at its start" in R.origin_line(
        {"origin": {"date_utc": "D0", "wall_s": 1.0}, "tasks": 1, "tasks_from_cache": 1, "code": {}})[0]


def test_fidelity_counts_every_verdict_absent_ones_as_zero():
    df = pd.DataFrame({"verdict": ["close", "close", "differs"]})
    got = R.fidelity(df)
    assert got["close"] == 2 and got["differs"] == 1 and set(got) == set(R.VERDICTS)
    assert all(v == 0 for k, v in got.items() if k not in ("close", "differs"))


def test_a_value_that_is_not_a_number_is_refused_naming_its_row(tmp_path):
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11)}))
    f = tmp_path / "pa" / "comparison.csv"
    df = pd.read_csv(f)
    df["ours"] = df["ours"].astype(object)
    df.loc[0, "ours"] = "about 1"
    df.to_csv(f, index=False)
    (tmp_path / "pa" / "MANIFEST.json").unlink(missing_ok=True)
    with pytest.raises(R.ResultsError, match="row 1: ours = 'about 1' is not a number"):
        R.check_paper(tmp_path / "pa")


def test_emulator_error_skips_pairs_without_a_measured_time():
    pairs = [{"P": 2, "measured_s": 1.0, "emulated_s": 1.2},
             {"P": 4, "measured_s": 0.0, "emulated_s": 9.0},  # no measured time: left out
             {"P": 8, "measured_s": 1.0, "emulated_s": float("nan")}]  # no emulated time: left out
    assert R.emulator_error(pairs) == pytest.approx(1.2)
    assert R.emulator_error(pairs[1:]) is None  # control: nothing finite, nothing to say


def test_oversubscribed_counts_this_machines_cores_unless_told():
    n = os.cpu_count()
    assert R.oversubscribed(n + 1) and not R.oversubscribed(n)
    assert not R.oversubscribed(n + 1, cores=n + 1) and R.oversubscribed(3, cores=2)
