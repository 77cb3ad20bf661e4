"""`python -m reproduce paper0 --quick` end to end: the shared comparison format."""
from __future__ import annotations

import pandas as pd
import pytest

from datasets import nettalk
from reproduce import cli
from reproduce.report import COLUMNS, KINDS
from test_cli import JOBS  # the test folders are on sys.path (tests/conftest.py)


@pytest.mark.skipif(nettalk.data_dir() is None, reason="NETtalk data absent (set NETTALK_DATA)")
def test_quick_run_writes_the_comparison(tmp_path):
    # one worker: no multi-process timings (the partitions have their own tests), so the
    # test stays short on a loaded machine
    assert cli.main(["paper0", "--quick", "--no-progress", "--workers", "1", "--out", str(tmp_path), *JOBS]) == 0
    out = tmp_path / "paper0"
    df = pd.read_csv(out / "comparison.csv")
    assert list(df.columns) == COLUMNS
    assert set(df.kind) <= set(KINDS) and {"measured", "emulated"} <= set(df.kind)
    assert not df.condition.str.contains("workers=2;").any() or (df[df.condition.str.contains(
        "workers=2;")].kind == "emulated").all()  # with --workers 1 nothing on 2 is measured
    for q in ("loop_speedup", "epoch_speedup", "deriv_epoch_time", "fwd_epoch_time", "phoneme_accuracy",
              "us_per_pattern_weight"):
        assert q in set(df.quantity), q
    r = df[df.quantity == "deriv_epoch_time"].iloc[0]
    assert r.reported == 417 and r.ours > 0
    # emulated speedup with one worker is 1 by construction
    one = df[(df.quantity == "epoch_speedup") & df.condition.str.startswith("workers=1;")]
    assert len(one) and (one.ours == 1).all()
    assert (out / "report.md").read_text().startswith("# paper0")
    assert (out / "fig4_5_sequence_partition.png").stat().st_size > 0


def test_paper0_refuses_mpi(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PMI_SIZE", "1")  # a one-process launch (without a launcher --backend mpi is refused first)
    assert cli.main(["paper0", "--quick", "--no-progress", "--out", str(tmp_path), "--backend", "mpi",
                     "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "paper0 studies shared-memory strategies: use --backend local" in err[0]
