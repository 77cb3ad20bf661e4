"""Faults of the results store and the task cache (issue 15, defects 4-6): a corrupt cache
entry is set aside and its task recomputed; a writer killed mid-write leaves the previous
generation whole; stale temporaries go; files are 0644 and summary.json strict JSON; a
cache key follows the data and, for a timing, the conditions it was taken under."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import types
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from reproduce import harness, runner
from reproduce.harness import Paper, run_paper
from reproduce.result_schema import Result
from reproduce.runner import Task
from reproduce.store import (MANIFEST, GenerationError, atomic_write, check_generation, dumps,
                             remove_stale)


@dataclass(frozen=True)
class Setup:
    runs: int = 3


CALLS = []
FAIL_AFTER = {}  # {"files": n}: the report raises after writing n files


def toy_tasks(run):
    return ([Task("t", "measured", 1, {"run": i, "seed": run.seed + i}) for i in range(run.setup.runs)]
            + [Task("e", "emulated", 1, {"seed": run.seed})])


def toy_run_task(task, comm, run):
    CALLS.append((task.name, task.params.get("run")))
    return {"value": float(task.params["seed"]), "nan": math.nan, "inf": math.inf}


def toy_write(run, results, meta):
    rows = [{"name": t.name, "value": r["value"], "nan": r["nan"]} for t, r in results]
    files = {"a.csv": "".join(f"{r['name']},{r['value']}\n" for r in rows),
             "summary.json": dumps({"meta": meta, "rows": rows}),
             "report.md": f"# toy {meta['invocation']}\n"}
    for i, (name, text) in enumerate(files.items()):
        if FAIL_AFTER.get("files") == i:
            raise RuntimeError("killed mid-write")
        atomic_write(run.out / name, text)
    return {"meta": meta, "rows": rows, "results": results}


@pytest.fixture
def toy(monkeypatch):
    mod = types.ModuleType("toy_faults_report")
    mod.write = toy_write
    monkeypatch.setitem(sys.modules, "toy_faults_report", mod)
    CALLS.clear()
    FAIL_AFTER.clear()
    s = Setup()
    return Paper(name="toy", setups={"default": s, "quick": s, "full": s}, quick_shrunk=[],
                 make_tasks=toy_tasks, run_task=toy_run_task, report="toy_faults_report",
                 code=("reproduce/harness",))


def _entry(out: Path, run: int) -> Path:
    """The cache file of measured task ``run``."""
    for f in (out / ".cache").glob("*.json"):
        c = json.loads(f.read_text())["config"]
        if c["name"] == "t" and c["run"] == run:
            return f
    raise AssertionError(f"no cache entry for run {run}")


# ---- 5: a corrupt cache entry ---------------------------------------------------------------
@pytest.mark.parametrize("content", [b"\x00\xff\xfe garbage \x89PNG", b"[]", b"null",
                                     b'{"config": {"name": "t"}}', b'{"config": {"name": "t", "ki'],
                         ids=["binary", "list", "null", "no-result", "truncated"])
def test_a_corrupt_entry_is_set_aside_named_and_recomputed(toy, tmp_path, capsys, content):
    out = tmp_path / "toy"
    run_paper(toy, out=out, workers=1)
    bad = _entry(out, 1)
    bad.write_bytes(content)
    CALLS.clear()
    s = run_paper(toy, out=out, workers=1)
    assert CALLS == [("t", 1)]  # only the corrupt one; the intact entries are still used
    err = capsys.readouterr().err
    assert f"discarding corrupt cache entry {bad}" in err and "recomputed" in err
    assert bad.with_name(bad.name + ".corrupt").read_bytes() == content  # kept aside, for a look
    assert json.loads(bad.read_text())["result"]["value"] == 2.0  # rewritten by the rerun
    assert s["meta"]["tasks_from_cache"] == 3


class ToyResult(Result):
    value: float
    nan: float
    inf: float


@pytest.mark.parametrize("result", [{}, {"value": "fast", "nan": 0.0, "inf": 0.0},
                                    {"converged": True, "rounds": 3, "epochs": 1.0},
                                    {"value": 1.0, "nan": 0.0}, [1, 2]],
                         ids=["empty", "string", "another-papers", "missing-key", "list"])
def test_a_result_of_the_wrong_shape_is_set_aside_and_recomputed(toy, tmp_path, capsys, result):
    """Issue 33: the entry's JSON and config are sound, its result is not what the task
    returns; with the paper's result model it is set aside, naming the key, and recomputed."""
    toy = replace(toy, result_model=lambda task: ToyResult)
    out = tmp_path / "toy"
    run_paper(toy, out=out, workers=1)
    bad = _entry(out, 1)
    entry = json.loads(bad.read_text())
    bad.write_text(json.dumps({**entry, "result": result}))
    CALLS.clear()
    s = run_paper(toy, out=out, workers=1)
    assert CALLS == [("t", 1)]
    err = capsys.readouterr().err
    assert f"discarding corrupt cache entry {bad}" in err
    assert "ToyResult" in err or not isinstance(result, dict)  # a list fails before the model
    assert json.loads(bad.read_text())["result"]["value"] == 2.0
    assert s["meta"]["tasks_from_cache"] == 3
    # control: without a result model the same entry is used as it is (the old behaviour)
    bad.write_text(json.dumps({**entry, "result": {**entry["result"], "value": 7.5}}))
    CALLS.clear()
    run_paper(replace(toy, result_model=None), out=out, workers=1)
    assert CALLS == []


def test_an_intact_cache_warns_of_nothing(toy, tmp_path, capsys):
    run_paper(toy, out=tmp_path / "toy", workers=1)
    capsys.readouterr()
    CALLS.clear()
    run_paper(toy, out=tmp_path / "toy", workers=1)
    assert CALLS == [] and "warning" not in capsys.readouterr().err


# ---- 6: results written as a unit ------------------------------------------------------------
def test_a_writer_killed_mid_write_leaves_the_previous_generation(toy, tmp_path):
    out = tmp_path / "toy"
    first = run_paper(toy, out=out, workers=1)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert check_generation(out) == first["meta"]["invocation"]
    FAIL_AFTER["files"] = 2  # a.csv and summary.json written, then the writer dies
    with pytest.raises(RuntimeError, match="killed mid-write"):
        run_paper(toy, out=out, workers=1)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert check_generation(out) == first["meta"]["invocation"]
    assert not [p for p in out.iterdir() if p.name.startswith(".staging-")]
    FAIL_AFTER.clear()
    second = run_paper(toy, out=out, workers=1)
    assert check_generation(out) == second["meta"]["invocation"] != first["meta"]["invocation"]
    assert (out / "report.md").read_text() == f"# toy {second['meta']['invocation']}\n"


@pytest.mark.parametrize("which", ["new-in", "old-out"])
def test_a_move_that_fails_restores_the_previous_generation(toy, tmp_path, monkeypatch, which):
    """Issue 33: one file of the new generation cannot be put in place (an immutable
    report.md, a full disk): the files already moved go back, the folder holds the previous
    generation whole, and the error names the file."""
    import reproduce.store as store

    out = tmp_path / "toy"
    run_paper(toy, out=out, workers=1)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    real = os.replace

    def fail_report(src, dst):
        staged = ".staging-" in str(src) and ".previous" not in str(src)  # the new file
        if which == "new-in" and Path(dst).name == "report.md" and staged and ".staging-" not in str(dst):
            raise PermissionError(1, "Operation not permitted", str(src), None, str(dst))
        if which == "old-out" and src == out / "report.md":  # immutable: cannot be renamed away
            raise PermissionError(1, "Operation not permitted", str(src), None, str(dst))
        return real(src, dst)

    monkeypatch.setattr(store.os, "replace", fail_report)
    with pytest.raises(OSError, match=rf"could not put {out / 'report.md'} in place .*previous generation"):
        run_paper(toy, out=out, workers=1)
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before  # every file as it was: a.csv and summary.json moved back
    assert check_generation(out) is not None
    assert not [p for p in out.iterdir() if p.name.startswith(".staging-")]
    # control: without the fault the next run replaces the generation
    monkeypatch.setattr(store.os, "replace", real)
    run_paper(toy, out=out, workers=1)
    assert (out / "report.md").read_bytes() != before["report.md"]


def test_a_mix_of_generations_is_named(toy, tmp_path):
    out = tmp_path / "toy"
    run_paper(toy, out=out, workers=1)
    (out / "a.csv").write_text("t,1.0\n")  # as if a later generation's file had been moved in
    with pytest.raises(GenerationError, match=r"a\.csv is not the file of generation"):
        check_generation(out)
    (out / "a.csv").unlink()
    with pytest.raises(GenerationError, match=r"a\.csv"):
        check_generation(out)
    assert check_generation(tmp_path) is None  # no manifest: nothing to check


@pytest.mark.parametrize("files,needle", [
    ({"../../etc/passwd": {"bytes": 1, "sha1": "x"}}, "not a path inside the folder"),
    ({"/etc/passwd": {"bytes": 1, "sha1": "x"}}, "not a path inside the folder"),
    ({"a.csv": "sha1"}, "lacks its bytes and sha1"),
    ({"a.csv": {"bytes": "7", "sha1": "x"}}, "lacks its bytes and sha1"),
    ({"a.csv": {"bytes": -1, "sha1": "x"}}, "lacks its bytes and sha1"),
    ({"a.csv": {"bytes": 7}}, "lacks its bytes and sha1"),
])
def test_a_wrong_shaped_manifest_is_refused_by_name(toy, tmp_path, files, needle):
    """A manifest that parses but is wrong (an entry outside the folder, or without its size
    and sha1) is a GenerationError naming the manifest, not an AttributeError or a read
    outside the folder; control: the manifest the run wrote passes."""
    out = tmp_path / "toy"
    run_paper(toy, out=out, workers=1)
    assert check_generation(out) is not None  # control
    m = json.loads((out / MANIFEST).read_text())
    (out / MANIFEST).write_text(json.dumps({**m, "files": files}))
    with pytest.raises(GenerationError, match=needle) as e:
        check_generation(out)
    assert str(out / MANIFEST) in str(e.value)


def test_a_new_generation_removes_the_files_only_the_old_one_had(toy, tmp_path):
    out = tmp_path / "toy"
    run_paper(toy, out=out, workers=1)
    (out / "mine.txt").write_text("a user's file")  # in no manifest
    man = json.loads((out / MANIFEST).read_text())
    (out / "old.png").write_bytes(b"png")
    man["files"]["old.png"] = {"bytes": 3, "sha1": "x"}
    (out / MANIFEST).write_text(json.dumps(man))
    run_paper(toy, out=out, workers=1)
    assert not (out / "old.png").exists() and (out / "mine.txt").exists()
    assert set(json.loads((out / MANIFEST).read_text())["files"]) == {"a.csv", "summary.json", "report.md"}


def test_stale_temporaries_and_dead_staging_folders_are_removed(toy, tmp_path):
    out = tmp_path / "toy"
    run_paper(toy, out=out, workers=1)
    stale = [out / ".summary.json.k3j_x9a2.tmp", out / ".cache" / ".0123abcd.json.abcdefgh.tmp"]
    for p in stale:
        p.write_text("{partial")
    dead = out / ".staging-20260101T000000Z-999999999-abcd"  # no such pid
    dead.mkdir()
    (dead / "a.csv").write_text("x")
    alive = out / f".staging-20260101T000000Z-{os.getpid()}-abcd"  # a live writer's
    alive.mkdir()
    keep = [out / "notes.tmp", out / ".hidden.tmp"]  # not ours: no mkstemp part
    for p in keep:
        p.write_text("keep")
    run_paper(toy, out=out, workers=1)
    assert not any(p.exists() for p in stale + [dead])
    assert alive.is_dir() and all(p.exists() for p in keep)
    assert remove_stale(out) == []


def test_files_follow_the_umask_not_mkstemp(toy, tmp_path):
    def modes(umask):
        old = os.umask(umask)
        try:
            out = tmp_path / f"toy{umask:o}"
            run_paper(toy, out=out, workers=1)
            files = [p for p in out.iterdir() if p.is_file()] + list((out / ".cache").glob("*.json"))
            return {oct(p.stat().st_mode & 0o777) for p in files}
        finally:
            os.umask(old)

    assert modes(0o022) == {"0o644"}
    assert modes(0o027) == {"0o640"}  # the umask decides, not a constant


# ---- NaN / Infinity --------------------------------------------------------------------------
def _strict(text):
    def refuse(c):
        raise ValueError(f"not strict JSON: {c}")
    return json.loads(text, parse_constant=refuse)


def test_summary_is_strict_json_and_says_what_null_means(toy, tmp_path):
    out = tmp_path / "toy"
    run_paper(toy, out=out, workers=1)
    for _ in range(2):  # computed, then from the cache
        s = _strict((out / "summary.json").read_text())
        assert s["rows"][0]["nan"] is None and "NaN" in s["meta"]["null_means"]
        run_paper(toy, out=out, workers=1)
    with pytest.raises(ValueError, match="not strict"):  # the check can fail
        _strict(dumps({"x": math.nan}, strict=False))


def test_the_cache_keeps_nan_and_inf_as_computed(toy, tmp_path):
    run_paper(toy, out=tmp_path / "toy", workers=1)
    s = run_paper(toy, out=tmp_path / "toy", workers=1)
    r = s["results"][0][1]
    assert math.isnan(r["nan"]) and r["inf"] == math.inf and "_cached_from" in r


# ---- 4: the key holds the data and the conditions --------------------------------------------
def _nettalk(folder: Path, text: str) -> Path:
    folder.mkdir()
    (folder / "nettalk.data").write_text(text)
    (folder / "nettalk.list").write_text("*** (A)\n")
    return folder


def test_the_data_identity_is_in_the_key(toy, tmp_path, monkeypatch):
    from reproduce.paper0 import data

    t = replace(toy, data_identity=data.identity)
    a = _nettalk(tmp_path / "a", "a\t@\t1\n")
    b = _nettalk(tmp_path / "b", "a\tx\t1\n")  # another dictionary
    a2 = _nettalk(tmp_path / "a2", "a\t@\t1\n")  # the same one elsewhere
    out = tmp_path / "toy"
    monkeypatch.setenv("NETTALK_DATA", str(a))
    run_paper(t, out=out, workers=1)
    n = len(CALLS)
    monkeypatch.setenv("NETTALK_DATA", str(a2 / "nettalk.data"))
    run_paper(t, out=out, workers=1)
    assert len(CALLS) == n  # same content, same key
    monkeypatch.setenv("NETTALK_DATA", str(b))
    run_paper(t, out=out, workers=1)
    assert len(CALLS) == 2 * n  # every task again


def test_paper0_is_keyed_on_its_corpus_and_others_on_their_generator(tmp_path, monkeypatch):
    from datasets import nettalk
    from reproduce.papers import load

    monkeypatch.setenv("NETTALK_DATA", str(_nettalk(tmp_path / "a", "a\t@\t1\n")))
    ident = harness.data_identity(load("paper0"), None)
    assert set(ident) == {"nettalk.data", "nettalk.list"} and len(ident["nettalk.data"]) == 40
    assert harness.data_identity(load("paper3"), None) == "generated"
    monkeypatch.setattr(nettalk, "data_dir", lambda path=None: None)  # no files: the cmudict corpus
    assert set(harness.data_identity(load("paper0"), None)) == {"cmudict"}


def test_a_timing_is_reused_only_under_its_conditions(toy, tmp_path, monkeypatch):
    out = tmp_path / "toy"
    first = run_paper(toy, out=out, workers=1)
    CALLS.clear()
    again = run_paper(toy, out=out, workers=1)
    assert CALLS == []  # same conditions: every task from the cache
    came = {r["_cached_from"]["invocation"] for _, r in again["results"]}
    assert came == {first["meta"]["invocation"]} and again["meta"]["cached_from"][0]["tasks"] == 4
    took = [json.loads(f.read_text())["recorded"]["seconds"] for f in (out / ".cache").glob("*.json")]
    assert len(took) == 4 and again["meta"]["cached_from"][0]["seconds"] == pytest.approx(sum(took))
    assert not any("_cached_from" in r for _, r in first["results"])
    run_paper(toy, out=out, workers=2)  # another worker count: the timings again, not the emulated
    assert CALLS == [("t", 0), ("t", 1), ("t", 2)]
    CALLS.clear()
    other = {**runner.machine_identity(), "host": "elsewhere"}
    monkeypatch.setattr(runner, "machine_identity", lambda: other)
    s = run_paper(toy, out=out, workers=1)  # another machine: everything again
    assert CALLS == [("t", 0), ("t", 1), ("t", 2), ("e", None)]
    assert s["meta"]["conditions"]["machine"]["host"] == "elsewhere"
    entries = [json.loads(f.read_text()) for f in (out / ".cache").glob("*.json")]
    rec = [d["recorded"] for d in entries if d["config"]["conditions"]["machine"]["host"] == "elsewhere"]
    assert len(rec) == 4 and all(r["invocation"] == s["meta"]["invocation"] for r in rec)
    assert all(isinstance(r["load_1min"], float) for r in rec)  # the load: recorded, not keyed


def _make_old(out: Path, key) -> None:
    """Rewrite every cache entry as before issue 15: another code hash, no data identity, no
    conditions, nothing recorded."""
    for f in list((out / ".cache").glob("*.json")):
        d = json.loads(f.read_text())
        cfg = {k: v for k, v in d["config"].items() if k not in ("data", "conditions")} | {"code": "old"}
        f.unlink()
        atomic_write(out / ".cache" / f"{key(cfg)}.json",
                     dumps({"config": cfg, "result": d["result"]}, strict=False))


def test_results_say_which_invocation_computed_them(toy, tmp_path):
    out = tmp_path / "toy"
    first = run_paper(toy, out=out, workers=1)
    fresh = [r for _, r in first["results"]]
    assert runner.invocations(*fresh, current=first["meta"]["invocation"]) == {first["meta"]["invocation"]}
    _entry(out, 2).unlink()
    s = run_paper(toy, out=out, workers=1)  # run 2 computed anew, the others from the cache
    rs = [r for _, r in s["results"]]
    assert runner.invocations(rs[0], rs[1], current=s["meta"]["invocation"]) == {first["meta"]["invocation"]}
    assert runner.invocations(rs[0], rs[2], current=s["meta"]["invocation"]) == {
        first["meta"]["invocation"], s["meta"]["invocation"]}


def test_migration_gives_old_entries_the_new_fields(toy, tmp_path, capsys):
    """tools/rebuild_from_cache.py's re-key: an entry from before the data and conditions were
    keyed is found again by a run under this machine's conditions, and only under them."""
    spec = importlib.util.spec_from_file_location(
        "rebuild_from_cache", Path(__file__).resolve().parents[2] / "tools" / "rebuild_from_cache.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    unmigrated, out = tmp_path / "unmigrated", tmp_path / "toy"
    for d in (unmigrated, out):
        run_paper(toy, out=d, workers=1)
        _make_old(d, tool.RunCache.key)
    CALLS.clear()
    run_paper(toy, out=unmigrated, workers=1)
    assert len(CALLS) == 4  # without the migration the old entries are orphans
    (out / ".cache" / "garbage.json").write_bytes(b"\x00")
    run = harness.Run(toy, toy.setups["default"], "default", 1, "local", 1, out)
    code = runner.code_hash("engine", "datasets", *toy.code)
    olds, n = tool.rekey(out / ".cache", code, data=harness.data_identity(toy, run),
                         cond=harness.conditions(run))
    assert olds == {"old"} and n == 4 and "garbage.json is not a readable" in capsys.readouterr().err
    CALLS.clear()
    s = run_paper(toy, out=out, workers=1)
    assert CALLS == [] and s["meta"]["cached_from"][0]["load_1min"] == "unknown"
    assert s["meta"]["cached_from"][0]["seconds"] is None  # old entries did not record it
    run_paper(toy, out=out, workers=2)
    assert len(CALLS) == 3  # the migrated timings hold for workers=1 only


def test_a_full_disk_names_the_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    """Issue 33: ENOSPC from write() carries no file name; atomic_write adds it (control:
    an error that names its file is passed on as it is)."""
    import errno

    import reproduce.store as store

    class Full:
        def __init__(self, fd, mode):
            os.close(fd)

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def write(self, b):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store.os, "fdopen", Full)
    target = tmp_path / "report.md"
    with pytest.raises(OSError, match=r"No space left on device: '.*report\.md'") as e:
        atomic_write(target, "x")
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []  # no temporary left behind

    class Named(Full):  # control: an error that names its own file is passed on unchanged
        def write(self, b):
            raise OSError(errno.EACCES, "Permission denied", "/elsewhere")

    monkeypatch.setattr(store.os, "fdopen", Named)
    with pytest.raises(OSError) as e2:
        atomic_write(target, "x")
    assert e2.value.filename == "/elsewhere"


def test_a_rebuild_reuses_only_the_machine_profiles_a_summary_records(tmp_path):
    """tools/rebuild_from_cache.py ``recorded``: the summary's machine profiles by name; a
    paper's own model recorded beside them (paper1's §2.5 constants) is left out, not an error."""
    spec = importlib.util.spec_from_file_location(
        "rebuild_from_cache", Path(__file__).resolve().parents[2] / "tools" / "rebuild_from_cache.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    from engine.perfmodel import MachineProfile

    here = MachineProfile("here", 5e-6, 4e9, source="measured at start-up")
    spert = {"name": "multispert1997", "bw_write_Bps": 4e6, "bw_read_Bps": 2.7e6, "c1_s": 1e-6}
    f = tmp_path / "summary.json"
    f.write_text(json.dumps({"meta": {"profiles": [spert, {**here.as_dict(), "bandwidth_Bps": None}]}}))
    got = tool.recorded(f)
    assert list(got) == ["here"] and got["here"].latency_s == 5e-6
    assert got["here"].bandwidth_Bps == math.inf  # a strict summary's null is an unbounded bandwidth
    f.write_text(json.dumps({"meta": {}}))
    assert tool.recorded(f) == {}
