"""reproduce.harness.run_paper with a toy paper: the cache, the metadata every paper
shares, prepare before any file, and the report module it hands the results to."""
from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass

import pytest

from reproduce.harness import Paper, UsageError, run_paper
from reproduce.papers import PAPERS, load
from reproduce.runner import Task
from reproduce.store import atomic_write, dumps


@dataclass(frozen=True)
class ToySetup:
    runs: int = 3
    scale: float = 2.0


CALLS = []


def toy_tasks(run):
    return [Task("square", "measured", 1, {"run": i, "seed": run.seed + i}) for i in range(run.setup.runs)]


def toy_run_task(task, comm, run):
    CALLS.append(task.params["run"])
    return {"value": run.setup.scale * task.params["seed"] ** 2}


def toy_write(run, results, meta):
    rows = [{"run": t.params["run"], "value": r["value"]} for t, r in results]
    summary = {"meta": meta, "rows": rows}
    atomic_write(run.out / "summary.json", dumps(summary))
    return summary


@pytest.fixture
def toy(monkeypatch):
    mod = types.ModuleType("toy_report")
    mod.write = toy_write
    monkeypatch.setitem(sys.modules, "toy_report", mod)
    CALLS.clear()
    s = ToySetup()
    return Paper(name="toy", setups={"default": s, "quick": ToySetup(runs=1), "full": s},
                 quick_shrunk=["runs 3 → 1"], make_tasks=toy_tasks, run_task=toy_run_task,
                 report="toy_report", code=("reproduce/harness",))


def test_runs_tasks_writes_and_caches(toy, tmp_path):
    s = run_paper(toy, out=tmp_path / "toy", seed=5, workers=1)
    assert [r["value"] for r in s["rows"]] == [50.0, 72.0, 98.0] and CALLS == [0, 1, 2]
    meta = json.loads((tmp_path / "toy" / "summary.json").read_text())["meta"]
    for k in ("paper", "mode", "seed", "seeds", "workers", "backend", "setup", "wall_s",
              "loadavg_start", "loadavg_end", "tasks", "tasks_from_cache", "versions", "code_hash"):
        assert k in meta, k
    assert meta["seeds"] == "5..7" and meta["tasks"] == 3 and meta["tasks_from_cache"] == 0
    assert not any(k.startswith("load_avg") for k in meta)
    import subprocess  # the code version is the checkout's HEAD
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert meta["code"]["commit"] == (head or None) and meta["code"]["dirty"] in (True, False, None)
    again = run_paper(toy, out=tmp_path / "toy", seed=5, workers=1)
    assert CALLS == [0, 1, 2] and again["meta"]["tasks_from_cache"] == 3  # nothing recomputed
    assert again["rows"] == s["rows"]


def test_cache_key_follows_the_setup(toy, tmp_path):
    run_paper(toy, out=tmp_path / "toy", seed=1, workers=1)
    run_paper(toy, out=tmp_path / "toy", setup=ToySetup(runs=4), seed=1, workers=1)  # runs: ignored
    assert CALLS == [0, 1, 2, 3]
    run_paper(toy, out=tmp_path / "toy", setup=ToySetup(scale=3.0), seed=1, workers=1)
    assert CALLS == [0, 1, 2, 3, 0, 1, 2]


def test_prepare_runs_first_and_can_refuse(toy, tmp_path):
    from dataclasses import replace

    def refuse(run):
        raise UsageError("toy refuses")

    with pytest.raises(UsageError, match="toy refuses"):
        run_paper(replace(toy, prepare=refuse), out=tmp_path / "toy")
    assert not (tmp_path / "toy").exists() and CALLS == []


def test_quick_mode_and_context(toy, tmp_path):
    from dataclasses import replace

    from engine.perfmodel import MachineProfile

    def prepare(run):
        run.context["profiles"] = [MachineProfile("p", 1e-6, 1e9, "test")]
        run.meta["extra_key"] = 1

    s = run_paper(replace(toy, prepare=prepare), out=tmp_path / "toy", mode="quick", workers=1)
    assert len(s["rows"]) == 1 and s["meta"]["mode"] == "quick"
    assert s["meta"]["profiles"][0]["name"] == "p" and s["meta"]["extra_key"] == 1


def test_every_listed_paper_is_a_package_with_a_paper():
    for p in PAPERS:
        paper = load(p["name"])
        assert paper.name == p["name"] and set(paper.setups) == {"default", "quick", "full"}
        assert paper.report == f"reproduce.{p['name']}.report"


def test_a_stalled_task_is_never_cached(toy, tmp_path, monkeypatch):
    """Issue 15: a task that ends with a stall (WorkerError from the watchdog) leaves no cache
    entry, so a rerun measures it again instead of serving the stall as a time."""
    from dataclasses import replace

    from engine.comm.base import WorkerError

    def stall_on_run_1(task, comm, run):
        if task.params["run"] == 1:
            raise WorkerError("worker 1 made no progress for 2 s in allreduce (stopped or deadlocked?)")
        return toy_run_task(task, comm, run)

    with pytest.raises(WorkerError, match="no progress"):
        run_paper(replace(toy, run_task=stall_on_run_1), out=tmp_path / "toy", seed=5, workers=1)
    cached = [json.loads(f.read_text())["config"]["run"] for f in (tmp_path / "toy" / ".cache").glob("*.json")]
    assert 1 not in cached and 0 in cached  # the finished run is cached, the stalled one is not
    CALLS.clear()
    s = run_paper(toy, out=tmp_path / "toy", seed=5, workers=1)
    assert 1 in CALLS and s["meta"]["tasks_from_cache"] == len(cached)


def test_code_version_dirty_means_code_not_results(tmp_path):
    """summary.json's ``dirty``: a rewritten results file (what `reproduce all` leaves behind
    paper0 when it reaches paper1) is no change of code; an edited source file is."""
    import subprocess

    from reproduce.report import code_version

    def git(*a):
        subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "x.csv").write_text("1\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    assert code_version(tmp_path)["dirty"] is False
    (tmp_path / "results" / "x.csv").write_text("2\n")
    assert code_version(tmp_path)["dirty"] is False
    (tmp_path / "a.py").write_text("x = 2\n")  # negative control: a change of code
    v = code_version(tmp_path)
    assert v["dirty"] is True and len(v["commit"]) == 40
    assert code_version(tmp_path / "nowhere")["dirty"] is None  # outside any checkout


def test_check_size_counts_tasks_linearly_in_runs_and_refuses_what_cannot_fit(tmp_path):
    """Issue 33: the task count is extrapolated from 1 and 2 runs; it is exact for a paper
    whose tasks grow linearly in runs (paper3 at 5 runs: counted against make_tasks), a
    default run passes, and 10^6 runs or 10^9 local workers are refused before any work."""
    from dataclasses import replace

    import reproduce.harness as H
    from reproduce.paper3 import PAPER
    from reproduce.paper3.setup import DEFAULT

    def run(runs, workers=2):
        return H.Run(PAPER, replace(DEFAULT, runs=runs), "default", workers, "local", 1, tmp_path)

    H.check_size(PAPER, run(10))  # the default passes
    n5 = len(PAPER.make_tasks(run(5)))
    n1, n2 = len(PAPER.make_tasks(run(1))), len(PAPER.make_tasks(run(2)))
    assert n1 + (n2 - n1) * 4 == n5  # the extrapolation is the count
    # 17 tasks a run (1 serial, 2 × 4 measured and emulated at 2 nodes, 4 each at 4 and 8 emulated) and
    # the ablations on their own seeds: FANN's init, combine=mean and one serial run per lr scale
    fixed = DEFAULT.ablation_runs * (2 + len(DEFAULT.lr_scales))
    with pytest.raises(H.UsageError, match=rf"--runs 1,000,000: about {17 * 10**6 + fixed:,} tasks"):
        H.check_size(PAPER, run(10**6))
    with pytest.raises(H.UsageError, match=r"--workers 1,000,000,000: as many local processes"):
        H.check_size(PAPER, run(10, workers=10**9))


def test_a_rebuild_reuses_the_profiles_the_original_run_measured(toy, tmp_path):
    """Run.measured (tools/rebuild_from_cache.py's way of reusing the recorded profiles): the
    recorded ones where all the names asked for were recorded, else a measurement."""
    from dataclasses import replace as dc_replace

    from engine.perfmodel import MachineProfile

    seen = []

    def prepare(run):
        run.context["profiles"] = run.measured(("here",), lambda: seen.append(1) or [
            MachineProfile("here", 1e-6, 1e9, source="measured now")])

    p = dc_replace(toy, prepare=prepare)
    old = MachineProfile("here", 5e-6, 2e9, source="measured by the original run")
    s = run_paper(p, out=tmp_path / "a", workers=1, recorded={"here": old, "other": old})
    assert seen == [] and s["meta"]["profiles"][0]["source"] == "measured by the original run"
    s = run_paper(p, out=tmp_path / "b", workers=1)  # control: nothing recorded, so measured
    assert seen == [1] and s["meta"]["profiles"][0]["source"] == "measured now"
    r = dc_replace(toy, prepare=lambda run: run.context.__setitem__(
        "profiles", run.measured(("here", "there"), lambda: [MachineProfile("x", 0, 1, source="new")] * 2)))
    s = run_paper(r, out=tmp_path / "c", workers=1, recorded={"here": old})  # "there" missing: measure both
    assert [q["source"] for q in s["meta"]["profiles"]] == ["new", "new"]


def test_the_engine_names_no_paper_of_the_harness():
    """engine/ knows no paper (issue 31): no module of it names paper0..paper4 or imports the
    harness's packages; its docstrings cite the literature instead. Negative control: the
    pattern finds such a name."""
    import re
    from pathlib import Path

    pat = re.compile(r"\bpaper\d\b|^\s*(from|import)\s+(reproduce|datasets)\b", re.M)
    assert pat.search("see paper3's Table 1") and pat.search("from reproduce.paper1 import x")
    root = Path(__file__).resolve().parents[2] / "engine"
    hits = [f"{p.relative_to(root)}:{m.group(0).strip()}" for p in sorted(root.rglob("*.py"))
            for m in pat.finditer(p.read_text())]
    assert hits == []


def test_the_shared_modules_name_no_paper():
    """reproduce/'s shared modules know no paper (issue 31): only the paper list
    (reproduce/papers.py) names one; each paper's strategies, matrix cells, many-core data
    and machine colours come from its package through ``Paper``. Negative control: the
    pattern finds a name, an author and a paper's machine."""
    import re
    from pathlib import Path

    from reproduce.papers import PAPERS

    authors = {a.strip() for p in PAPERS for a in re.split(r",|&", p["authors"])}
    pat = re.compile(r"\bpaper\d\b|\b(" + "|".join(map(re.escape, sorted(authors)))
                     + r"|gige2008|multispert)\b", re.I)
    assert pat.search("paper3's cap") and pat.search("as Färber 1997 says") and pat.search("gige2008")
    root = Path(__file__).resolve().parents[2] / "reproduce"
    hits = [f"{p.name}:{m.group(0)}" for p in sorted(root.glob("*.py")) if p.name != "papers.py"
            for m in pat.finditer(p.read_text())]
    assert hits == []
