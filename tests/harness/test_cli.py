"""The command line end to end: --quick, bad inputs, faults, resume, MPI."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from reproduce import report as R
from reproduce.report import COLUMNS, KINDS
from reproduce.store import RunCache

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, env=None, timeout=240, mpi: int | None = None):
    cmd = [sys.executable, "-m", "reproduce", *args]
    if mpi:
        cmd = [mpiexec(), "-n", str(mpi), *cmd]
    e = {k: v for k, v in os.environ.items() if k != "ENGINE_FAULT"}  # no inherited faults
    e.update(env or {})
    return subprocess.run(cmd, cwd=ROOT, env=e, capture_output=True, text=True, timeout=timeout)


# the quick runs' emulated tasks two at a time where there are two cores: their timings are not
# what these tests check (measured tasks still run alone)
JOBS = ("--jobs", str(min(2, len(os.sched_getaffinity(0)))))


def mpiexec():
    cand = Path(sys.executable).parent / "mpiexec"
    return str(cand) if cand.exists() else shutil.which("mpiexec")


def last_line(p):
    lines = [x for x in p.stderr.strip().splitlines() if x.strip()]
    return lines[-1] if lines else ""


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("quick")
    p = cli("paper3", "--quick", "--out", str(out), "--json", "--no-progress", *JOBS)
    assert p.returncode == 0, p.stderr
    return out, p


def test_quick_writes_shared_format(quick):
    out, p = quick
    d = out / "paper3"
    for f in ("comparison.csv", "summary.json", "report.md", "time_vs_nodes.png",
              "local_epoch_8nodes.png"):
        assert (d / f).stat().st_size > 0, f
    df = pd.read_csv(d / "comparison.csv")
    assert list(df.columns) == COLUMNS
    assert set(df.kind) <= set(KINDS)
    assert set(df.verdict) <= set(R.VERDICTS)
    # The paper's Table 1 and Table 2 numbers are all there beside ours.
    t1 = df[(df.table == "table1") & (df.quantity == "total_time")]
    assert {689, 190, 177, 65} <= set(t1.reported.dropna())
    t2 = df[(df.table == "table2") & (df.quantity == "epochs_to_train")]
    assert {19891.2, 109568.0} <= set(t2.reported)
    # ratio is ours/reported wherever the paper has a value
    r = df.dropna(subset=["reported"])
    r = r[r.reported != 0]
    assert ((r.ours / r.reported - r.ratio).abs() < 1e-4 * r.ratio.abs().clip(lower=1)).all()
    summary = json.loads(p.stdout)
    assert summary["meta"]["mode"] == "quick" and summary["meta"]["workers"] >= 1
    assert len(summary["rows"]) == len(df)
    assert "QUICK RUN" in (d / "report.md").read_text()


def test_list_shows_every_paper():
    p = cli("list")
    assert p.returncode == 0
    for n in ("paper0", "paper1", "paper2", "paper3", "paper4"):
        assert n in p.stdout
    assert "Dahl" in p.stdout and "[implemented]" in p.stdout


def test_version_is_the_installed_distributions(capsys, monkeypatch):
    """`--version` prints the version pyproject.toml installed and exits 0 without a target;
    control: outside an install it says so instead of guessing."""
    from importlib import metadata

    from reproduce import cli as C

    assert C.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"python -m reproduce {metadata.version('parallel-nn-repro')}"

    def missing(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(metadata, "version", missing)
    assert C._version() == "unknown"


def test_paper_help_gives_its_grid_time_and_outputs(capsys, tmp_path):
    """`paperN --help`: the paper's settings at default, --quick and --full (from its setup
    module), the committed default run's wall time (from its summary.json) and what it
    writes; control: the general --help has none of it."""
    import json

    from reproduce import cli as C
    from reproduce.paper3 import setup as S

    assert C.main(["paper3", "--help"]) == 0
    out = capsys.readouterr().out
    row = next(re.split(r"\s{2,}", line.strip()) for line in out.splitlines()
               if line.strip().startswith("local_epochs"))
    assert row == ["local_epochs", *(", ".join(map(str, s.local_epochs)) for s in (S.DEFAULT, S.QUICK, S.FULL))]
    meta = json.loads((ROOT / "results" / "paper3" / "summary.json").read_text())["meta"]
    wall = (meta.get("origin") or meta)["wall_s"]
    assert f"({wall:,.0f} s)" in out and "claims.csv" in out and "results/quick/paper3/" in out
    # without a committed run, it says so instead of a time
    assert "no committed default run here" in C.paper_help("paper3", results=tmp_path)
    # a run that resumed from earlier invocations counts their task time too
    (tmp_path / "paper3").mkdir()
    o = {"wall_s": 60.0, "cpu_count": 2, "date_utc": "2026-01-01T00:00:00Z",
         "cached_from": [{"seconds": 540.0}, {"seconds": 600.0}]}
    (tmp_path / "paper3" / "summary.json").write_text(json.dumps({"meta": {"origin": o, "seeds": "1..5"}}))
    assert "20 min (1,200 s) over 3 invocations" in C.paper_help("paper3", results=tmp_path)
    assert C.main(["--help"]) == 0  # control: the general help
    general = capsys.readouterr().out
    assert "local_epochs" not in general and "usage: python -m reproduce" in general


def test_unimplemented_paper_is_a_usage_error(monkeypatch, capsys):
    """In process, with one paper's module taken away (every paper has one now)."""
    from reproduce import cli as C
    from reproduce.papers import BY_NAME

    monkeypatch.setitem(BY_NAME["paper1"], "module", None)
    assert C.main(["list"]) == 0
    assert "paper1" in capsys.readouterr().out.split("not implemented yet")[0].splitlines()[-2]
    assert C.main(["paper1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "paper1 is not implemented yet" in err[0]


def test_a_papers_own_options_come_from_its_paper(monkeypatch, capsys):
    """In process: a paper's own options are its Paper's (options, check_options), which the
    command line parses and checks for every paper without naming one, telling each whether
    the target runs it; the shared parser has none, and list does not load the papers."""
    from dataclasses import replace

    from reproduce import cli as C
    from reproduce.harness import UsageError
    from reproduce.papers import load

    assert "--nettalk-file" not in C.parser()._option_string_actions  # paper0's, from its package
    assert "--nettalk-file" in C.parser([load("paper0")])._option_string_actions
    seen = []

    def check(args, runs):
        seen.append((args.target, args.toy_level, runs))
        raise UsageError("checked")  # before any work: nothing runs

    toy = replace(load("paper3"), options=lambda ap: ap.add_argument("--toy-level", type=int, default=None),
                  check_options=check)
    monkeypatch.setattr(C, "_implemented", lambda: [toy])
    for target, runs in (("paper3", True), ("all", True), ("paper1", False)):
        assert C.main([target, "--toy-level", "3", "--quick"]) == 2
        assert seen[-1] == (target, 3, runs) and capsys.readouterr().err.strip() == "error: checked"
    assert C.main(["report", "--toy-level", "3"]) == 2
    assert "--toy-level 3 does not apply to report" in capsys.readouterr().err and len(seen) == 3
    monkeypatch.setattr(C, "_implemented", lambda: pytest.fail("list loaded the papers"))
    assert C.main(["list"]) == 0


@pytest.mark.parametrize("args,needle", [
    (["paper9"], "unknown paper 'paper9'"),
    (["paper3", "--workers", "0"], "--workers: must be an integer >= 1, got '0'"),
    (["paper3", "--workers", "two"], "--workers: must be an integer >= 1, got 'two'"),
    (["paper3", "--runs", "1.5"], "--runs: must be an integer >= 1, got '1.5'"),
    (["paper3", "--backend", "tcp"], "invalid choice: 'tcp'"),
])
def test_usage_errors_exit_2_with_one_line(args, needle):
    p = cli(*args)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert needle in p.stderr


def test_unwritable_out(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    p = cli("paper3", "--quick", "--out", str(blocker / "sub"))
    assert p.returncode == 2
    assert "cannot write results to" in last_line(p)


@pytest.mark.parametrize("mode,needle", [("raise", "injected fault"), ("kill", "died")])
def test_worker_fault_fails_fast_and_keeps_old_results(tmp_path, mode, needle, quick):
    d = tmp_path / "paper3"
    d.mkdir()
    (d / "comparison.csv").write_text("previous results\n")
    if mode == "kill":  # a rerun: the serial result of an earlier run (the --quick fixture's) cached
        (d / ".cache").mkdir()
        for f in (quick[0] / "paper3" / ".cache").glob("*.json"):
            if json.loads(f.read_text())["config"]["name"] == "serial":
                shutil.copy(f, d / ".cache" / f.name)
        earlier = json.loads(next((d / ".cache").glob("*.json")).read_text())["recorded"]
    p = cli("paper3", "--quick", "--out", str(tmp_path), "--no-progress",
            env={"ENGINE_FAULT": f"{mode}:1:5"}, timeout=120)
    assert p.returncode == 1
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "worker 1" in p.stderr and needle in p.stderr
    assert (d / "comparison.csv").read_text() == "previous results\n"
    assert not list(d.glob("*.tmp")) and not list(d.glob(".*.tmp"))
    # raise: the serial run finished before the fault and is cached whole, so that a rerun
    # resumes from it; kill: the rerun did, the serial entry is the earlier run's, not
    # recomputed. Checked on the entry itself (RunCache.get re-derives its file name from
    # its key and parses it, as a rerun's lookup does).
    cached = sorted((d / ".cache").glob("*.json"))
    assert len(cached) == 1
    entry = json.loads(cached[0].read_text())
    if mode == "kill":
        assert entry["recorded"] == earlier
    assert entry["config"]["name"] == "serial" and entry["config"]["kind"] == "measured"
    cache = RunCache(d / ".cache")
    hit = cache.get(entry["config"])
    assert hit is not None and hit["epochs"] > 0 and cache.hits == 1
    assert cache.get({**entry["config"], "seed": entry["config"]["seed"] + 1}) is None  # control


def test_report_builds_index(quick):
    out, _ = quick
    p = cli("report", "--out", str(out))
    assert p.returncode == 0, p.stderr
    text = (out / "index.md").read_text()
    assert "## Claims" in text and "## paper3" in text and "comparison row" in text
    assert "| paper1 | – |" in text  # not run yet


needs_mpi = pytest.mark.skipif(mpiexec() is None, reason="mpiexec not found (pip install mpich)")


@needs_mpi
def test_mpi_size_disagrees_with_workers(tmp_path):
    pytest.importorskip("mpi4py")
    p = cli("paper3", "--backend", "mpi", "--workers", "3", "--quick", "--out", str(tmp_path),
            mpi=2, timeout=120)
    assert p.returncode == 2
    assert "--workers 3 disagrees with the MPI world size 2" in p.stderr


@needs_mpi
def test_mpi_end_to_end(tmp_path, quick):
    """paper3 --quick under mpiexec -n 2. Its emulated tasks run on rank 0 alone, the code
    the local run ran: to time only what MPI changes, the local --quick run's emulated
    results are put in this run's cache under the keys an MPI run looks up (its backend,
    one job), and the run must compute exactly its measured tasks (serial and 2 ranks)."""
    pytest.importorskip("mpi4py")
    local, dst = RunCache(quick[0] / "paper3" / ".cache"), RunCache(tmp_path / "paper3" / ".cache")
    emulated = 0
    for f in sorted((quick[0] / "paper3" / ".cache").glob("*.json")):
        e = json.loads(f.read_text())
        if e["config"]["kind"] == "emulated":
            cfg = {**e["config"], "backend": "mpi",
                   "conditions": {k: v for k, v in e["config"]["conditions"].items() if k != "jobs"}}
            dst.put(cfg, local.get(e["config"]), seconds=e["recorded"].get("seconds"))
            emulated += 1
    assert emulated >= 4  # 2 local epochs at 2, 4 and 8 nodes
    p = cli("paper3", "--backend", "mpi", "--quick", "--out", str(tmp_path), "--no-progress",
            mpi=2, timeout=300)
    assert p.returncode == 0, p.stderr
    df = pd.read_csv(tmp_path / "paper3" / "comparison.csv")
    meas = df[(df.kind == "measured") & df.condition.str.startswith("nodes=2")]
    assert not meas.empty
    meta = json.loads((tmp_path / "paper3" / "summary.json").read_text())["meta"]
    assert meta["backend"] == "mpi" and meta["workers"] == 2
    assert meta["tasks_from_cache"] == emulated  # every emulated result found under its MPI key
    assert set(meta["task_seconds"]) == {"measured"}  # and every measured task computed here


@needs_mpi
def test_mpi_worker_fault_aborts(tmp_path):
    pytest.importorskip("mpi4py")
    p = cli("paper3", "--backend", "mpi", "--quick", "--out", str(tmp_path), "--no-progress",
            mpi=2, env={"ENGINE_FAULT": "raise:1:5", "REPRODUCE_ALL_RANKS_SAY": "1"}, timeout=120)
    assert p.returncode != 0
    assert "injected fault" in p.stderr
