"""`python -m reproduce paper1 --quick` end to end: the shared result format, the paper's
Table 1 beside ours, kinds and conditions on every row, and a cached rerun."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from reproduce.paper1.setup import TABLE1_RELATIVE
from reproduce.report import COLUMNS, KINDS
from test_cli import JOBS  # the test folders are on sys.path (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, timeout=300):
    e = {k: v for k, v in os.environ.items() if k != "ENGINE_FAULT"}
    return subprocess.run([sys.executable, "-m", "reproduce", *args], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("p1quick")
    p = cli("paper1", "--quick", "--out", str(out), "--json", "--no-progress", *JOBS)
    assert p.returncode == 0, p.stderr
    return out / "paper1", p


def test_shared_format_and_kinds(quick):
    d, p = quick
    df = pd.read_csv(d / "comparison.csv")
    assert list(df.columns) == COLUMNS
    assert set(df.kind) <= set(KINDS) and (df.paper == "paper1").all()
    for f in ("summary.json", "report.md", "fig3_training.png", "fig5_forward.png",
              "fig6_convergence.png", "curves.csv", "training.csv"):
        assert (d / f).exists(), f
    meta = json.loads((d / "summary.json").read_text())["meta"]
    assert meta["mode"] == "quick" and len(meta["loadavg_start"]) == 3
    assert json.loads(p.stdout)["meta"]["paper"] == "paper1"
    assert "QUICK RUN" in (d / "report.md").read_text()


def test_table1_rows_carry_the_paper_values(quick):
    d, _ = quick
    df = pd.read_csv(d / "comparison.csv")
    t1 = df[(df.table == "table1") & (df.quantity == "relative_performance")]
    for P, rel in TABLE1_RELATIVE.items():
        g = t1[t1.condition.str.startswith(f"nodes={P};")]
        assert not g.empty and (g.reported == rel).all()
        paper = g[g.condition.str.endswith("source=modeled (paper)")]
        assert len(paper) == 1 and paper.kind.iloc[0] == "modeled"
    measured = t1[t1.kind == "measured"]
    assert set(measured.condition.str.split(";").str[0]) <= {"nodes=1", "nodes=2"}


def test_rerun_is_served_from_the_cache(quick):
    d, _ = quick
    before = (d / "comparison.csv").read_text()
    p = cli("paper1", "--quick", "--out", str(d.parent), "--no-progress", *JOBS, timeout=120)
    assert p.returncode == 0, p.stderr
    # training and model rows do not depend on timing; the cache makes every row equal
    assert (d / "comparison.csv").read_text() == before
