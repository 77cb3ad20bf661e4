"""The tests by kind (tests/conftest.py ``KINDS``): every test file sits in a kind's folder, and
the unit tests, which check the engine and the data sets against references, import nothing
from reproduce, neither directly nor through a helper or another test module. Negative
control: the same probe finds reproduce behind a paper's tests."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import KINDS

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent

# imports the named test modules in a fresh interpreter and prints the project's packages it loaded
PROBE = """
import importlib, sys
sys.path[:0] = sys.argv[1].split({sep!r})
for name in sys.argv[2:]:
    importlib.import_module(name)
print(" ".join(sorted({{m.split(".")[0] for m in sys.modules}} & {{"engine", "datasets", "reproduce"}})))
"""


def packages_loaded(folder: str, modules: list[str] | None = None) -> set[str]:
    names = modules or sorted(p.stem for p in (TESTS / folder).glob("test_*.py"))
    path = os.pathsep.join(str(p) for p in (ROOT, TESTS, *(TESTS / k for k in (*KINDS, "helpers"))))
    out = subprocess.run([sys.executable, "-c", PROBE.format(sep=os.pathsep), path, *names],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_unit_tests_import_nothing_from_reproduce():
    loaded = packages_loaded("unit")
    assert "engine" in loaded and "datasets" in loaded  # the probe imported them
    assert "reproduce" not in loaded


def test_control_a_papers_test_loads_reproduce():
    assert "reproduce" in packages_loaded("papers", ["test_paper4_claims"])


def test_every_test_file_is_in_a_kind():
    assert not list(TESTS.glob("test_*.py"))  # none left at the top
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name[0] not in "._"}
    assert folders == {*KINDS, "helpers"}
    assert not list((TESTS / "helpers").glob("test_*.py"))  # helpers are not collected
    for kind in KINDS:
        assert list((TESTS / kind).glob("test_*.py")), kind
