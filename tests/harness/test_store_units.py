"""reproduce/store.py's small pieces, each against a worked example with a control (issue 35:
the survivors of its mutation run): JSON of numpy values, key order and NaN in the cache's
form, folders given as strings, nested files in a generation, provenance kept out of a cache
entry."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from reproduce import store as S


def test_dumps_writes_numpy_values_as_plain_json():
    d = {"i": np.int64(3), "f": np.float32(0.5), "a": np.arange(3), "p": Path("x/y")}
    for strict in (True, False):
        text = S.dumps(d, strict=strict)
        assert json.loads(text) == {"i": 3, "f": 0.5, "a": [0, 1, 2], "p": "x/y"}
        assert '"i": 3,' in text  # an integer stays an integer, not 3.0 nor null
    # control: a type JSON has no form for is refused, naming it
    with pytest.raises(TypeError, match="not JSON serialisable: object"):
        S.dumps({"x": object()})


def test_the_caches_form_keeps_key_order_and_nan():
    text = S.dumps({"b": 1, "a": math.nan, "c": [math.inf]}, strict=False)
    assert list(json.loads(text)) == ["b", "a", "c"] and "NaN" in text and "Infinity" in text
    # control: the strict form (results files) turns them into null
    assert json.loads(S.dumps({"b": 1, "a": math.nan}, strict=True)) == {"b": 1, "a": None}


def test_check_writable_makes_the_missing_parents(tmp_path):
    out = tmp_path / "a" / "b" / "c"
    S.check_writable(out)
    S.check_writable(out)  # again: an existing folder is fine
    assert out.is_dir() and not list(out.iterdir())  # its probe file is gone
    # control: a file where the folder should be is refused with a plain message
    (tmp_path / "f").write_text("x")
    with pytest.raises(OSError, match="cannot write results to"):
        S.check_writable(tmp_path / "f")


def test_a_generation_with_nested_files_given_as_strings(tmp_path):
    out = tmp_path / "res"

    def write(stage):
        (stage / "sub").mkdir()
        (stage / "sub" / "x.txt").write_text("one")
        (stage / "top.txt").write_text("two")
        return "done"

    assert S.write_generation(str(out), write, generation="g1") == "done"
    assert (out / "sub" / "x.txt").read_text() == "one" and (out / "top.txt").read_text() == "two"
    assert S.check_generation(str(out)) == "g1"
    # control: a changed file is named as another generation's
    (out / "sub" / "x.txt").write_text("changed")
    with pytest.raises(S.GenerationError, match="x.txt"):
        S.check_generation(str(out))


def test_provenance_never_enters_a_cache_entry(tmp_path):
    cache = S.RunCache(tmp_path / ".cache", recorded={"invocation": "inv"})
    cfg = {"name": "t", "seed": 1}
    cache.put(cfg, {"x": 1.0, "_cached_from": {"invocation": "old"}, "_seconds": 3.0}, seconds=2.0)
    stored = json.loads(cache.path(cfg).read_text())
    assert stored["result"] == {"x": 1.0} and stored["recorded"]["seconds"] == 2.0
    got = cache.get(cfg)  # on the way out the provenance is this entry's own
    assert got["x"] == 1.0 and got["_seconds"] == 2.0 and got["_cached_from"]["invocation"] == "inv"


def test_remove_stale_tolerates_a_temporary_another_cleaner_removed(tmp_path, monkeypatch):
    # two runs cleaning one folder: a temporary listed by this one is gone before its unlink
    stale = tmp_path / ".report.md.abcd1234.tmp"
    stale.write_text("x")
    keep = tmp_path / "report.md"
    keep.write_text("y")
    is_file = Path.is_file

    def racing(self):
        found = is_file(self)
        if self == stale and found:
            self.unlink()  # the other cleaner got there first
        return found

    monkeypatch.setattr(Path, "is_file", racing)
    assert S.remove_stale(tmp_path) == [stale]
    assert not stale.exists() and keep.read_text() == "y"  # control: our file is left alone


def test_a_second_generation_replaces_nested_files_and_survives_a_bad_manifest(tmp_path):
    out = tmp_path / "res"

    def write(text):
        def w(stage):
            (stage / "sub").mkdir()
            (stage / "sub" / "x.txt").write_text(text)
        return w

    S.write_generation(out, write("one"), generation="g1")
    S.write_generation(out, write("two"), generation="g2")  # the old sub/x.txt is set aside first
    assert (out / "sub" / "x.txt").read_text() == "two" and S.check_generation(out) == "g2"
    (out / S.MANIFEST).write_text("{not json")  # a manifest no one can read: nothing to remove by it
    with pytest.raises(S.GenerationError):
        S.check_generation(out)
    S.write_generation(out, write("three"), generation="g3")
    assert S.check_generation(out) == "g3" and (out / "sub" / "x.txt").read_text() == "three"


def test_a_cache_key_does_not_depend_on_the_order_of_keys(tmp_path):
    cache = S.RunCache(tmp_path / ".cache")
    a = cache.key({"name": "t", "seed": 1, "setup": {"x": 1, "y": 2}})
    assert a == cache.key({"setup": {"y": 2, "x": 1}, "seed": 1, "name": "t"})
    assert a != cache.key({"name": "t", "seed": 2, "setup": {"x": 1, "y": 2}})  # control: content counts


def test_a_figure_is_written_whole_and_the_same_bytes_twice(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [1, 0])
    S.atomic_savefig(fig, tmp_path / "a.png")
    S.atomic_savefig(fig, tmp_path / "b.png")
    plt.close(fig)
    a = (tmp_path / "a.png").read_bytes()
    assert a.startswith(b"\x89PNG") and a == (tmp_path / "b.png").read_bytes()  # no date in the metadata
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_alive_tells_a_live_process_from_a_gone_one():
    import os
    import subprocess
    import sys

    assert S._alive(os.getpid()) is True
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert S._alive(p.pid) is False  # reaped: no such process (control)


def test_a_manifest_without_its_file_list_is_unreadable(tmp_path):
    (tmp_path / S.MANIFEST).write_text('{"generation": "g"}')
    with pytest.raises(S.GenerationError, match="no file list"):
        S.read_manifest(tmp_path)
    (tmp_path / S.MANIFEST).write_text('{"generation": "g", "files": {}}')  # control: an empty list is one
    assert S.read_manifest(tmp_path)["files"] == {}


def test_cache_hits_add_up_their_seconds_per_invocation(tmp_path):
    cache = S.RunCache(tmp_path / ".cache", recorded={"invocation": "inv"})
    for seed, sec in ((1, 2.0), (2, 3.0)):
        cache.put({"name": "t", "seed": seed}, {"x": 1.0}, seconds=sec)
    reader = S.RunCache(tmp_path / ".cache", recorded={"invocation": "later"})
    for seed in (1, 2):
        reader.get({"name": "t", "seed": seed})
    assert reader.hits == 2 and reader.sources["inv"]["tasks"] == 2 and reader.sources["inv"]["seconds"] == 5.0
