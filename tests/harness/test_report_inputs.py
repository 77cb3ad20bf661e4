"""Unreadable inputs to ``python -m reproduce report`` (issue 35): a comparison.csv,
claims.csv or summary.json that pandas or json cannot read is refused in one line that names
the file (exit 1, index.md left as it was), never a traceback.

Each case's content makes the reader itself fail (checked first, as the control: without
report.py's conversion the caller would get that exception, not a ResultsError).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from reproduce import cli
from reproduce import report as R

PAPER = [{"name": "paper3", "authors": "A", "year": 2008, "title": "T"}]

UNREADABLE = {  # content: what pandas says about it (the start of its message)
    "binary": (b"\xff\xfe\x00\x81garbage\n", "'utf-8' codec can't decode byte 0xff"),
    "empty": (b"", "No columns to parse from file"),
    "open-quote": (b'paper,"table\n1,2\n', "Error tokenizing data. C error: EOF inside string"),
}


def _paper(root: Path) -> Path:
    """results/paper3 with an intact comparison.csv and summary.json of 3 rows (no manifest,
    as before generations: the CSV is read as it is), and an index.md to keep."""
    d = root / "paper3"
    d.mkdir(parents=True)
    R.write_tables(d, [R.row("paper3", "t", "q", R.condition(nodes=i), "s", reported=1.0,
                             ours=1.0 + i / 10, kind="measured") for i in range(3)], {"note": None})
    (root / "index.md").write_text("the old index\n")
    return d


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_an_unreadable_comparison_csv_is_refused_by_name(tmp_path, case):
    # kills: the "not a readable CSV" refusal removed (check_paper would end in an
    # UnboundLocalError traceback), or its message not naming the file
    content, says = UNREADABLE[case]
    d = _paper(tmp_path)
    assert len(R.check_paper(d)) == 3  # control: intact, it reads
    f = d / "comparison.csv"
    f.write_bytes(content)
    with pytest.raises((ValueError, UnicodeDecodeError)) as raw:  # control: the reader fails
        pd.read_csv(f)
    assert not isinstance(raw.value, R.ResultsError) and str(raw.value).startswith(says)
    with pytest.raises(R.ResultsError) as e:
        R.check_paper(d)
    msg = str(e.value)
    assert msg.startswith(f"{f}: not a readable CSV ({says}") and "\n" not in msg


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_report_refuses_an_unreadable_comparison_csv_in_one_line(tmp_path, capsys, case):
    d = _paper(tmp_path)
    assert cli.main(["report", "--out", str(tmp_path)]) == 0  # control: intact, it indexes
    (tmp_path / "index.md").write_text("the old index\n")
    capsys.readouterr()
    (d / "comparison.csv").write_bytes(UNREADABLE[case][0])
    assert cli.main(["report", "--out", str(tmp_path)]) == 1
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1  # one line, no traceback
    assert err[0].startswith(f"error: {d / 'comparison.csv'}: not a readable CSV ({UNREADABLE[case][1]}")
    assert err[0].endswith(f"; {tmp_path / 'index.md'} left as it was")
    assert (tmp_path / "index.md").read_text() == "the old index\n"


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_an_unreadable_claims_csv_is_refused_by_name(tmp_path, case):
    # kills (and found): claims_of's refusal losing the file name. Its docstring says the
    # ResultsError names the file; for pandas' own errors it said only e.g. "No columns to
    # parse from file", with nothing to tell which paper's claims.csv it was.
    d = _paper(tmp_path)
    f = d / "claims.csv"
    f.write_bytes(UNREADABLE[case][0])
    with pytest.raises(R.ResultsError) as e:
        R.claims_of(tmp_path, ["paper3"])
    assert str(e.value).startswith(f"{f}: not a readable CSV ({UNREADABLE[case][1]}")
    with pytest.raises(R.ResultsError, match="claims.csv: not a readable CSV"):
        R.build_index(tmp_path, PAPER)  # what report calls: refused before any text is made
    f.unlink()  # control: without a claims.csv the paper is indexed row by row
    assert "No claims table yet for paper3" in R.build_index(tmp_path, PAPER)


@pytest.mark.parametrize("summary,error", [
    ("{not json", "JSONDecodeError"),
    ("[1, 2, 3]", "TypeError"),  # a list: ["rows"] is a TypeError
    ('{"meta": {}}', "KeyError"),  # no rows
])
def test_an_unreadable_summary_is_refused_by_name(tmp_path, summary, error):
    # kills: the summary.json refusal removed or catching too little (a traceback instead)
    d = _paper(tmp_path)
    (d / "summary.json").write_text(summary)
    with pytest.raises(R.ResultsError) as e:
        R.check_paper(d)
    assert str(e.value) == f"{d / 'summary.json'}: not a run summary with rows ({error})"
    (d / "summary.json").write_text(json.dumps({"rows": [{}, {}, {}]}))  # control: 3 rows
    assert len(R.check_paper(d)) == 3
