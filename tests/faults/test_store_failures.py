"""Failure injection for reproduce/store.py (issue 35): writes that fail must never be
swallowed, must leave the previous file or generation readable, and must leave no
temporary behind.

The faults are injected where the operating system would raise them (``os.replace``,
``os.fchmod``, ``tempfile.mkstemp``, the file's ``write``), with the errno a full disk
(ENOSPC), a read-only file system (EROFS) or a permission problem (EACCES, EPERM) gives.
Each test ends with a control: the same call without the fault succeeds, so the test's own
assertions are shown to depend on the fault. (tests/faults/test_store_faults.py covers ENOSPC from
``write``, a failing move of a file the old generation had, and a killed writer;
tests/harness/test_mutation_guards.py an EPERM from ``os.replace``.)
"""
from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import reproduce.store as store
from reproduce.store import (MANIFEST, GenerationError, RunCache, atomic_write, check_generation,
                             check_writable, write_generation)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _raiser(exc):
    def f(*a, **k):
        raise exc
    return f


# ---- atomic_write ---------------------------------------------------------------------------

# kills: the error branch without its re-raise (or without the naming) for a failing rename
def test_enospc_from_replace_is_raised_named_and_the_old_file_kept(tmp_path, monkeypatch):
    target = tmp_path / "summary.json"
    target.write_text("old")
    monkeypatch.setattr(store.os, "replace",
                        _raiser(OSError(errno.ENOSPC, "No space left on device")))  # no file name
    with pytest.raises(OSError) as e:
        atomic_write(target, "new")
    assert e.value.errno == errno.ENOSPC
    assert e.value.filename == str(target)  # named after the file we were writing
    assert target.read_text() == "old"  # the previous file intact
    assert _names(tmp_path) == ["summary.json"]  # the temporary removed
    monkeypatch.undo()  # control: the same write goes through without the fault
    atomic_write(target, "new")
    assert target.read_text() == "new" and _names(tmp_path) == ["summary.json"]


# kills: `except BaseException` narrowed to `except Exception` (a Ctrl-C mid-write would leave
# its temporary), and the re-raise dropped (the interrupt swallowed: the caller carries on as
# if the file were written)
def test_an_interrupt_mid_write_is_passed_on_and_cleans_up(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("old")
    real_fdopen = os.fdopen

    class Interrupted:
        def __init__(self, fd, mode):
            self.f = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()
            return False

        def write(self, b):
            self.f.write(b[:3])  # part of it reached the temporary
            raise KeyboardInterrupt

    monkeypatch.setattr(store.os, "fdopen", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new content")
    assert target.read_text() == "old"
    assert _names(tmp_path) == ["report.md"]
    monkeypatch.undo()  # control
    atomic_write(target, "new content")
    assert target.read_text() == "new content"


# kills: a failing chmod swallowed (the file would be written with mkstemp's 0600) or its
# temporary left behind
def test_a_failing_chmod_is_raised_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "a.csv"
    monkeypatch.setattr(store.os, "fchmod", _raiser(OSError(errno.EPERM, "Operation not permitted")))
    with pytest.raises(PermissionError) as e:
        atomic_write(target, b"x,y\n")
    assert e.value.filename == str(target)
    assert _names(tmp_path) == []  # neither the target nor a temporary
    monkeypatch.undo()
    atomic_write(target, b"x,y\n")
    assert target.read_bytes() == b"x,y\n"


# kills: an unwritable folder turned into a silent no-op (the caller must learn of it)
def test_an_unwritable_folder_is_raised(tmp_path, monkeypatch):
    target = tmp_path / "sub" / "a.csv"
    monkeypatch.setattr(store.tempfile, "mkstemp",
                        _raiser(PermissionError(errno.EACCES, "Permission denied", str(target.parent))))
    with pytest.raises(PermissionError):
        atomic_write(target, "x")
    assert not target.exists()
    monkeypatch.undo()
    atomic_write(target, "x")
    assert target.read_text() == "x"


# ---- check_writable -------------------------------------------------------------------------

# kills: check_writable passing a read-only folder, or its message losing the folder or reason
def test_check_writable_refuses_a_read_only_folder_in_one_line(tmp_path, monkeypatch):
    out = tmp_path / "results"
    monkeypatch.setattr(store.tempfile, "mkstemp",
                        _raiser(OSError(errno.EROFS, "Read-only file system")))
    with pytest.raises(OSError) as e:
        check_writable(out)
    assert str(e.value) == f"cannot write results to {out}: Read-only file system"
    monkeypatch.undo()  # control: a writable folder passes and keeps no probe file
    check_writable(out)
    assert _names(out) == []


# ---- write_generation -----------------------------------------------------------------------

def _two_files(a: str, b: str):
    def write(staging: Path):
        (staging / "a.csv").write_text(a)
        (staging / "report.md").write_text(b)
        return "written"
    return write


# kills: write_generation swallowing an error of ``write`` (or not cleaning its staging folder)
def test_a_failing_writer_leaves_the_previous_generation(tmp_path):
    out = tmp_path / "paper"
    assert write_generation(out, _two_files("1", "one"), generation="g1") == "written"
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def dies(staging: Path):
        (staging / "a.csv").write_text("2")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_generation(out, dies, generation="g2")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert check_generation(out) == "g1"
    write_generation(out, _two_files("2", "two"), generation="g3")  # control
    assert check_generation(out) == "g3" and (out / "a.csv").read_text() == "2"


# kills: the restore of a *new* file (one the old generation lacked) dropped from _move_all:
# after a failed move it would stay beside the old generation's files
def test_a_failed_move_removes_new_files_the_old_generation_lacked(tmp_path, monkeypatch):
    out = tmp_path / "paper"
    write_generation(out, _two_files("1", "one"), generation="g1")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = os.replace

    def write3(staging: Path):  # new.csv sorts before report.md: it moves in first
        _two_files("2", "two")(staging)
        (staging / "new.csv").write_text("only in g2")

    def refuse_report(src, dst):
        if Path(dst) == out / "report.md" and ".staging-" in str(src) and ".previous" not in str(src):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(store.os, "replace", refuse_report)
    with pytest.raises(OSError, match=rf"could not put {out / 'report.md'} in place") as e:
        write_generation(out, write3, generation="g2")
    assert e.value.errno == errno.ENOSPC
    assert "in place (No space left on device); the previous generation" in str(e.value)  # its words, once
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no new.csv, a.csv back
    assert check_generation(out) == "g1"
    monkeypatch.undo()  # control: the same generation goes in whole without the fault
    write_generation(out, write3, generation="g2")
    assert check_generation(out) == "g2" and (out / "new.csv").read_text() == "only in g2"


# kills: a failing MANIFEST.json write swallowed: the new files are in place but the manifest
# still lists the old ones, so the error must reach the caller and readers must notice the mix
def test_a_full_disk_at_the_manifest_is_raised_and_the_mix_is_named(tmp_path, monkeypatch):
    out = tmp_path / "paper"
    write_generation(out, _two_files("1", "one"), generation="g1")
    real = store.atomic_write

    def full_at_manifest(path, data):
        if Path(path).name == MANIFEST:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data)

    monkeypatch.setattr(store, "atomic_write", full_at_manifest)
    with pytest.raises(OSError) as e:
        write_generation(out, _two_files("2", "two"), generation="g2")
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(out / MANIFEST)
    assert not [p for p in out.iterdir() if p.name.startswith(store.STAGING_PREFIX)]
    with pytest.raises(GenerationError, match="a.csv is not the file of generation g1"):
        check_generation(out)  # a reader is told, not handed a mix as generation g1
    monkeypatch.undo()  # control: the next run writes a whole generation
    write_generation(out, _two_files("2", "two"), generation="g3")
    assert check_generation(out) == "g3"


# ---- the run cache --------------------------------------------------------------------------

# kills: RunCache.put swallowing a full disk (the task would be recorded as cached but is not)
def test_a_cache_put_on_a_full_disk_is_raised_and_stores_nothing(tmp_path, monkeypatch):
    cache = RunCache(tmp_path / ".cache")
    cfg = {"task": "t", "seed": 1}
    monkeypatch.setattr(store.os, "replace", _raiser(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(OSError) as e:
        cache.put(cfg, {"loss": 0.5})
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(cache.path(cfg))
    assert _names(tmp_path / ".cache") == []
    assert cache.get(cfg) is None
    monkeypatch.undo()  # control
    cache.put(cfg, {"loss": 0.5})
    assert cache.get(cfg)["loss"] == 0.5


# kills: _discard's fallback dropped (a corrupt entry that cannot be renamed aside would stay
# and be read again every run) or its warning not saying what happened
def test_a_corrupt_entry_that_cannot_be_moved_aside_is_deleted(tmp_path, monkeypatch, capsys):
    cache = RunCache(tmp_path / ".cache")
    cfg = {"task": "t", "seed": 2}
    p = cache.path(cfg)
    p.parent.mkdir(parents=True)
    p.write_text("{not json")
    monkeypatch.setattr(store.os, "replace", _raiser(PermissionError(errno.EPERM, "Operation not permitted")))
    assert cache.get(cfg) is None
    assert not p.exists() and _names(p.parent) == []
    err = capsys.readouterr().err
    assert f"discarding corrupt cache entry {p}" in err and "deleted" in err
    # control: where the rename works the entry is kept aside as .corrupt
    monkeypatch.undo()
    p.write_text("{not json")
    assert cache.get(cfg) is None
    assert _names(p.parent) == [p.name + ".corrupt"]
    assert "moved to" in capsys.readouterr().err
