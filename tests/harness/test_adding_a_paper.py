"""docs/adding_a_paper.md, run: its toy paper's code blocks written to a temporary folder as a
package, registered without editing a shared file, and run end to end through the command
line (tasks, cache, claims, report, plot, the index of `report`); the line counts the page
states are the blocks' own. Negative controls: a second registration of the name, an entry
without a key, a command's name and a package without a required attribute are refused, and
the paper list is as it was after."""
from __future__ import annotations

import json
import re
import runpy
import sys
from pathlib import Path

import pandas as pd
import pytest

from reproduce import claims as C
from reproduce import papers
from reproduce.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "adding_a_paper.md"


def blocks() -> dict:
    """{file: code} of the page's fenced blocks tagged ```python <file>.py."""
    return dict(re.findall(r"^```python (\S+\.py)\n(.*?)^```$", DOC.read_text(), re.S | re.M))


def _forget(prefix: str) -> None:
    for m in [m for m in sys.modules if m == prefix or m.startswith(prefix + ".")]:
        del sys.modules[m]


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The page's package written under tmp_path and importable; afterwards the paper list,
    sys.modules and sys.path are as they were."""
    before = list(papers.PAPERS)
    for name, code in blocks().items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for p in [p["name"] for p in papers.PAPERS if p not in before]:
        papers.unregister(p)
    _forget("xor")
    _forget("xorbad")
    assert papers.PAPERS == before and list(papers.BY_NAME) == [p["name"] for p in before]


def test_the_toy_paper_runs_end_to_end(toy, monkeypatch, capsys):
    out = toy / "results"
    # python -m xor xor --quick ...: its __main__ registers it and runs the shared command line
    monkeypatch.setattr(sys, "argv", ["xor", "xor", "--quick", "--out", str(out), "--no-progress"])
    with pytest.raises(SystemExit) as e:
        runpy.run_module("xor", run_name="__main__")
    assert e.value.code == 0, capsys.readouterr().err
    assert "xor" in papers.BY_NAME and papers.load("xor").name == "xor"
    d = out / "xor"
    first = json.loads((d / "summary.json").read_text())["meta"]
    assert first["tasks"] == 10 and first["tasks_from_cache"] == 0  # 5 seeds × (serial, pattern)
    assert len(list((d / ".cache").glob("*.json"))) == 10
    cl = C.read(d)  # claims.csv, checked: the columns and a known verdict
    assert list(cl["claim"]) == ["same-epochs"] and cl["verdict"][0] in C.VERDICTS
    assert int(cl["n"][0]) == 5 and pd.notna(cl["ours_low"][0]) and pd.notna(cl["ours_high"][0])
    cmp = pd.read_csv(d / "comparison.csv")
    assert set(cmp["quantity"]) == {"serial", "pattern", "ratio"}
    assert "same-epochs" in (d / "report.md").read_text()
    assert (d / "epochs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()

    # a second run: every task from the cache, the same claim
    assert main(["xor", "--quick", "--out", str(out), "--no-progress", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)["meta"]
    assert again["tasks_from_cache"] == again["tasks"] == 10
    assert C.read(d).equals(cl)

    # the shared commands see it: the index of `report`, `list`, `xor --help`
    assert main(["report", "--out", str(out)]) == 0
    assert "| xor (QUICK) | 1 |" in (out / "index.md").read_text()
    assert main(["list"]) == 0 and "xor  a toy, no paper 2026" in capsys.readouterr().out
    assert main(["xor", "--help"]) == 0 and "grid (xor/setup.py)" in capsys.readouterr().out

    # its cache key follows its own code, kept outside the checkout, as the five papers' follow theirs
    from reproduce.harness import code_of

    assert first["code_hash"] == again["code_hash"] == code_of(papers.load("xor"))
    with (toy / "xor" / "tasks.py").open("a") as f:
        f.write("# changed\n")
    assert code_of(papers.load("xor")) != first["code_hash"]


def test_the_stated_line_counts_are_the_blocks():
    text, code = DOC.read_text(), blocks()
    assert set(code) == {f"xor/{f}.py" for f in ("__init__", "setup", "tasks", "report", "__main__")}
    stated = {f: int(n) for f, n in re.findall(r"^\| `(xor/\S+\.py)` \| (\d+) \|$", text, re.M)}
    assert stated == {f: len(c.splitlines()) for f, c in code.items()}
    (total,) = re.findall(r"^\| total \| (\d+) \|$", text, re.M)
    assert int(total) == sum(stated.values())


def test_shared_code_knows_no_toy():
    """Registered, not listed: no module of the shared harness names it."""
    assert not [p for p in (ROOT / "reproduce").rglob("*.py") if re.search(r"\bxor\b", p.read_text())]


def test_registration_refuses_what_cannot_run(toy):
    from xor import ENTRY

    papers.register(ENTRY)
    with pytest.raises(ValueError, match="'xor' is already registered"):
        papers.register(ENTRY)
    with pytest.raises(ValueError, match="missing budget_min"):
        papers.register({k: v for k, v in ENTRY.items() if k != "budget_min"} | {"name": "xor2"})
    with pytest.raises(ValueError, match="the name of a command"):
        papers.register(ENTRY | {"name": "report"})
    # a package whose tasks.py lacks run_task: refused at registration, not after its tasks ran
    bad = toy / "xorbad"
    bad.mkdir()
    for name, code in blocks().items():
        (bad / Path(name).name).write_text(code.replace("from xor import", "from xorbad import")
                                           .replace('NAME = "xor"', 'NAME = "xorbad"')
                                           .replace("def run_task(", "def not_run_task("))
    n = len(papers.PAPERS)
    with pytest.raises(ValueError, match="xorbad does not load as a paper.*no attribute 'run_task'"):
        papers.register(ENTRY | {"name": "xorbad", "module": "xorbad"})
    assert len(papers.PAPERS) == n and "xorbad" not in papers.BY_NAME
    with pytest.raises(KeyError):
        papers.unregister("paper3")  # the listed papers stay
