"""Issue 13 item 4: every figure the findings quote appears in a committed result.

The findings used to be in README.md; they are now in docs/findings.md (README.md keeps the
generated claims block, which tests/harness/test_claims.py checks). The findings section is
docs/findings.md from "## What each reproduction found" to the next "## " heading or the
end of the file. Its "### paperN" subsections are checked against results/paperN/ only;
text before the first of them against every paper's results.

A *figure* is a number in that text, outside code (fenced blocks and `inline code`),
that
  - has a decimal point (4.06, 0.85, 44,441.6), or
  - is followed by ×, % (with or without a space: 4×, 23 %), or
  - has a thousands separator (1,200; 64,000);
not one right after § or in a word (§6.2, log2, K40), nor part of a scientific
literal (1e-12). Plain integers (k = 4, P = 16, 33 min) are left out: they are
settings and counts, too easy to find by chance to be checked this way.

Formatting is normalised: thousands separators dropped, the sign ignored (−3.4 % and
"3.4 % higher" are the same figure), × dropped. A figure F with d decimals *appears*
when some number x of the committed results shows as F at d decimals (|x − F| ≤ half
a unit in the last place of F), or, for a percentage, when 100·x does. The numbers
of a paper's results are every number in its comparison.csv (cells and the numbers
inside its text cells), every scalar of its summary.json (and the numbers inside its
strings) except the per-epoch and per-run series (lists longer than SERIES, where
almost any figure would be found by chance), and every number in its report.md.

What this cannot catch: a wrong figure that happens to equal some other committed
number. The results hold thousands of numbers, so measured on the results of
2026-11-23 a random two-decimal figure in [0.5, 10] is found by chance 14 % (paper1,
paper2) to 42 % (paper0) of the time, a one-decimal one in [1, 100] 11–13 %, a whole
number with × or % in [1, 100] about half the time. The check proves absence, not
provenance: a figure it flags is in no committed result.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
SERIES = 12  # longer numeric lists in summary.json are curves, not quotable figures
FINDINGS = ROOT / "docs" / "findings.md"
HEAD = "## What each reproduction found"

_FIG = re.compile(
    r"(?<![\w.§,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+)(?![\d.,]\d|[eE][-+−]?\d|\w)"
    r"(?P<unit>\s?[×%])?")
_ANY = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def findings(text: str) -> str:
    """The findings section of ``text`` (its heading to the next level-2 heading)."""
    start = text.index(HEAD)
    nxt = re.search(r"^## ", text[start + len(HEAD):], flags=re.M)
    return text[start:start + len(HEAD) + nxt.start()] if nxt else text[start:]


def strip_code(md: str) -> str:
    md = re.sub(r"^```.*?^```", "", md, flags=re.M | re.S)
    md = re.sub(r"\]\([^)]*\)", "]", md)  # link targets (paths)
    return re.sub(r"`[^`]*`", "", md)


def figures(md: str) -> list[tuple[str, float, int, str]]:
    """(as written, value, decimals, unit '' | '×' | '%') of every figure in ``md``."""
    out = []
    for m in _FIG.finditer(strip_code(md)):
        num, unit = m.group("num"), (m.group("unit") or "").strip()
        if "." not in num and "," not in num and not unit:
            continue  # a plain integer: not a figure
        plain = num.replace(",", "")
        dec = len(plain.split(".")[1]) if "." in plain else 0
        out.append((m.group(0).strip(), float(plain), dec, unit))
    return out


def sections(md: str) -> dict[str, str]:
    """{"paperN": its subsection, "": the text before the first} of the findings."""
    parts = re.split(r"^### (paper\d)\b", md, flags=re.M)
    out = {"": parts[0]}
    for name, body in zip(parts[1::2], parts[2::2]):
        out[name] = out.get(name, "") + body
    return out


def _numbers_in(s: str) -> list[float]:
    return [float(t.replace(",", "")) for t in _ANY.findall(s.replace("−", "-"))]


def _json_numbers(x, out: list) -> None:
    if isinstance(x, bool) or x is None:
        return
    if isinstance(x, (int, float)):
        out.append(float(x))
    elif isinstance(x, str):
        out += _numbers_in(x)
    elif isinstance(x, dict):
        for v in x.values():
            _json_numbers(v, out)
    elif isinstance(x, list):
        if len(x) > SERIES and all(isinstance(v, (int, float)) for v in x):
            return  # a series
        for v in x:
            _json_numbers(v, out)


def result_numbers(folder: Path) -> list[float]:
    """Every committed number of one paper's results (see the module docstring)."""
    nums: list[float] = []
    csv = folder / "comparison.csv"
    if csv.exists():
        for v in pd.read_csv(csv, dtype=str, keep_default_na=False).to_numpy().ravel():
            nums += _numbers_in(v)
    js = folder / "summary.json"
    if js.exists():
        _json_numbers(json.loads(js.read_text()), nums)
    md = folder / "report.md"
    if md.exists():
        nums += _numbers_in(md.read_text())
    return [abs(x) for x in nums if math.isfinite(x)]


def appears(value: float, decimals: int, unit: str, pool) -> bool:
    half = 0.5 * 10.0 ** -decimals * (1 + 1e-9) + 1e-12
    for x in pool:
        x = abs(x)
        if abs(x - value) <= half or (unit == "%" and abs(100 * x - value) <= half):
            return True
    return False


def missing(md: str, pools: dict[str, list[float]]) -> list[str]:
    """The figures of findings text ``md`` found in no committed result of their paper."""
    every = [x for p in pools.values() for x in p]
    bad = []
    for name, body in sections(md).items():
        pool = pools.get(name, []) if name else every
        bad += [f"{name or 'preamble'}: {w}" for w, v, d, u in figures(body)
                if not appears(v, d, u, pool)]
    return bad


@pytest.fixture(scope="module")
def findings_text():
    return findings(FINDINGS.read_text())


@pytest.fixture(scope="module")
def pools():
    return {p.name: result_numbers(p) for p in sorted(RESULTS.glob("paper*")) if p.is_dir()}


# ---- the definition, on worked text -------------------------------------------------------
def test_what_counts_as_a_figure():
    got = [(w, v, d, u) for w, v, d, u in figures(
        "Q = 3 measured 4.06× (3.97–4.15) at k = 4, 23 % lower, 2× more, 1,200 sequences "
        "and 44,441.6 epochs; §6.2, log2, K40, 1e-12, `0.77` and ```\n9.99\n``` are not; "
        "[run](results/paper2/x_1.5.md); 16 processors.")]
    assert got == [("4.06×", 4.06, 2, "×"), ("3.97", 3.97, 2, ""), ("4.15", 4.15, 2, ""),
                   ("23 %", 23.0, 0, "%"), ("2×", 2.0, 0, "×"), ("1,200", 1200.0, 0, ""),
                   ("44,441.6", 44441.6, 1, "")]


def test_appears_rounds_to_the_written_precision():
    assert appears(4.06, 2, "×", [4.0581])  # shows as 4.06
    assert appears(4.06, 2, "×", [4.0649])  # shows as 4.06 too
    assert not appears(4.06, 2, "×", [4.0651, 4.0549])  # show as 4.07 and 4.05
    assert appears(23.2, 1, "%", [-0.232456])  # a fraction quoted as a signed percentage
    assert not appears(23.2, 1, "", [-0.232456])  # ... but only where it is written as one


# ---- docs/findings.md ------------------------------------------------------------------------
def test_findings_section_has_figures_for_every_paper(findings_text, pools):
    per = {name: len(figures(body)) for name, body in sections(findings_text).items()}
    assert set(pools) <= set(per) and all(per[p] > 0 for p in pools), per


def test_negative_control_a_fabricated_figure_is_caught(findings_text, pools):
    # a figure no committed result of paper2 shows, put into paper2's findings
    fake = next(f"{v:.2f}×" for v in (9.87, 8.76, 7.65, 6.54, 5.43, 97.31)
                if not appears(v, 2, "×", pools["paper2"]))
    planted = findings_text.replace(
        "### paper3", f"- **Fabricated**: Q = 3 measured {fake} faster.\n\n### paper3", 1)
    assert f"paper2: {fake}" in missing(planted, pools)
    assert f"paper2: {fake}" not in missing(findings_text, pools)


def test_every_findings_figure_appears_in_a_committed_result(findings_text, pools):
    bad = missing(findings_text, pools)
    assert not bad, f"{len(bad)} figures of docs/findings.md in no committed result: {bad}"


def test_the_findings_live_in_docs_not_in_the_readme():
    # README.md is the front page (the claims block, no findings): findings written back into it
    # would escape the check above
    assert HEAD in FINDINGS.read_text()
    assert HEAD not in (ROOT / "README.md").read_text()
