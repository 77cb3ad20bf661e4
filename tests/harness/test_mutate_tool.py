"""tools/mutate.py, the project's mutation-testing tool (issue 35): which mutants it makes
of a small source worked by hand, that the edits land on the right bytes (non-ASCII text
before them included), that sampling is reproducible by seed, and that the equivalents file
is read with a reason for every entry. Nothing here runs a mutant (that is the tool's job,
not CI's)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutate_tool", ROOT / "tools" / "mutate.py")
M = importlib.util.module_from_spec(_spec)
sys.modules["mutate_tool"] = M  # dataclasses look their module up there
_spec.loader.exec_module(M)

SRC = '''"""Module docstring: not mutated."""


def f(a: int, b=2) -> int:
    """Docstring."""
    if a < b and a != 0:
        a += 1
    x = -a * 3.0
    gone = a is None
    return x  # pragma: no mutate
'''

# by hand, per line: what each operator makes of it
EXPECTED = {
    (4, "constant: 2 -> 3"),  # a default value; the annotations are left alone
    (6, "negate: if"),
    (6, "compare: < -> <="), (6, "compare: < -> >="),
    (6, "boolop: and -> or"),
    (6, "compare: != -> =="),
    (6, "constant: 0 -> 1"),
    (7, "remove: augassign"), (7, "arith: += -> -="), (7, "constant: 1 -> 0"),
    (8, "remove: assign"), (8, "arith: -x -> x"), (8, "arith: * -> /"), (8, "constant: 3.0 -> 3.3"),
    (9, "remove: assign"), (9, "compare: is -> is not"),
    # line 10 carries the pragma: no "return: value -> None"
}


def _mutants(src=SRC):
    return M.find_mutants("toy.py", src.encode())


def test_the_operators_on_a_worked_example():
    assert {(m.line, m.mutation) for m in _mutants()} == EXPECTED


@pytest.mark.parametrize("mutation,line", [
    ("compare: < -> <=", "    if a <= b and a != 0:"),
    ("negate: if", "    if not (a < b and a != 0):"),
    ("boolop: and -> or", "    if a < b or a != 0:"),
    ("arith: += -> -=", "        a -= 1"),
    ("arith: -x -> x", "    x = (a) * 3.0"),
    ("remove: assign", "    pass"),
    ("compare: is -> is not", "    gone = a is not None"),
])
def test_each_edit_changes_only_its_place(mutation, line):
    ms = [m for m in _mutants() if m.mutation == mutation]
    m = ms[0]
    new = m.apply(SRC.encode()).decode().splitlines()
    old = SRC.splitlines()
    assert new[m.line - 1] == line
    assert [a for a, b in zip(old, new) if a != b] == [old[m.line - 1]]  # nothing else moved


def test_offsets_are_bytes_so_non_ascii_text_before_an_operator_is_fine():
    src = 'def g(β, γ):\n    return "Φ → Ψ" if β < γ else β\n'
    ms = {m.mutation: m for m in M.find_mutants("toy.py", src.encode())}
    out = ms["compare: < -> <="].apply(src.encode()).decode()
    assert out.splitlines()[1] == '    return "Φ → Ψ" if β <= γ else β'
    assert "constant" not in " ".join(ms)  # strings are not mutated


def test_return_and_raise_mutants():
    src = "def h(x):\n    if x:\n        raise ValueError('no')\n    return x + 1\n"
    got = {(m.line, m.mutation) for m in M.find_mutants("toy.py", src.encode())}
    assert {(3, "remove: raise"), (4, "return: value -> None")} <= got


def test_sampling_is_reproducible_by_seed():
    src = "".join(SRC.split('"""Docstring."""')[0].replace("def f(", f"def f{i}(") + SRC.split('"""Docstring."""')[1]
                  for i in range(12))  # twelve copies of f, as f0 … f11
    ms = M.find_mutants("toy.py", src.encode())
    assert len(ms) == 12 * len(EXPECTED)
    a = [m.ident for m in M.select(ms, sample=10, seed=4)]
    b = [m.ident for m in M.select(ms, sample=10, seed=4)]
    c = [m.ident for m in M.select(ms, sample=10, seed=5)]
    assert a == b and len(a) == 10 and a != c
    only = M.select(ms, function=["f1*"])
    assert {m.func for m in only} == {"f1", "f10", "f11"} and len(only) == 3 * len(EXPECTED)


def test_a_survivor_is_shown_before_and_after():
    m = next(m for m in _mutants() if m.mutation == "arith: += -> -=")
    assert M._show(m, SRC.encode()) == ["    -         a += 1", "    +         a -= 1"]


def test_the_filters_by_operator_and_line():
    ms = _mutants()
    assert {m.kind for m in M.select(ms, operators=["compare", "boolop"])} == {"compare", "boolop"}
    assert {(m.line, m.mutation) for m in M.select(ms, lines=(7, 8))} == {
        x for x in EXPECTED if x[0] in (7, 8)}
    assert M.select(ms, lines=(9, 9), operators=["arith"]) == []


def test_the_equivalents_file_has_a_reason_for_every_entry(tmp_path):
    entries = M.load_equivalent(M.EQUIVALENT)
    assert entries and all(e["reason"].strip() for e in entries)
    bad = tmp_path / "eq.toml"
    bad.write_text('[[equivalent]]\nmodule = "a.py"\nline = 1\nmutation = "negate: if"\n')
    with pytest.raises(SystemExit, match="lacks reason"):
        M.load_equivalent(bad)


def test_an_entry_matches_only_its_source_line():
    m = next(m for m in _mutants() if m.mutation == "compare: != -> ==")
    entry = {"module": "toy.py", "line": 6, "mutation": "compare: != -> ==", "reason": "r",
             "code": "if a < b and a != 0:"}
    assert M.match_equivalent(m, [entry]) is entry
    assert M.match_equivalent(m, [{**entry, "code": "if a < b and a != 1:"}]) is None  # moved
    assert M.match_equivalent(m, [{**entry, "line": 7}]) is None


def test_a_record_names_its_commit_and_whether_the_checkout_was_clean(tmp_path):
    """results/quality/ records carry the date, commit and a dirty flag (issue 35): worked on
    a throw-away repository, then the same after an uncommitted edit (the negative control)."""
    import subprocess
    def git(*a):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=tmp_path,
                       check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / "m.py").write_text("x = 1\n")
    git("add", "m.py")
    git("commit", "-qm", "one")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True).stdout.strip()
    p = M.provenance(tmp_path)
    assert p["commit"] == head and len(head) == 40 and p["dirty"] is False
    assert p["date_utc"].endswith("Z") and p["python"] == sys.version.split()[0]
    (tmp_path / "m.py").write_text("x = 2\n")
    assert M.provenance(tmp_path)["dirty"] is True
    (tmp_path.parent / "plain").mkdir(exist_ok=True)
    assert M.provenance(tmp_path.parent / "plain")["commit"] is None  # no repository there
