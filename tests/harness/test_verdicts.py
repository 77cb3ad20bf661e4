"""The verdicts set by rule (reproduce/report.py, RULES): each rule on a row it must take
and on a near miss it must leave alone; the counts keep them apart from close/differs;
the one-screen table from two fake paper folders."""
from __future__ import annotations

import pandas as pd
import pytest

from reproduce import report as R
from reproduce.store import dumps

# (rule's verdict, positive row, near miss): each row as row()'s arguments.
CASES = {
    "P = 1 identity": (
        "by-construction",
        dict(paper="paper4", table="table2", quantity="speedup", cond="nodes=1;width=512",
             unit="x", reported=1, ours=1.0, kind="modeled"),
        # measured at P = 1: ours is not 1 by definition (it measures the parallel code's overhead)
        dict(paper="paper4", table="table2", quantity="speedup", cond="nodes=1;width=512",
             unit="x", reported=1, ours=0.8, kind="measured")),
    "n = 32k": (
        "by-construction",
        dict(paper="paper4", table="table1", quantity="aggregate_speedup",
             cond="nodes=4;L=7;log=2;n=32000", unit="x", reported=4, ours=3.998, kind="modeled"),
        dict(paper="paper4", table="table1", quantity="aggregate_speedup",
             cond="nodes=4;L=7;log=2;n=132", unit="x", reported=3.79, ours=3.55, kind="modeled")),
    "corpus": (
        "by-construction",
        dict(paper="paper0", table="sec3.2", quantity="corpus_words",
             cond="selection=fahlman-list-first-821", unit="count", reported=821, ours=821,
             kind="measured"),
        # the pattern count depends on the words: a real comparison
        dict(paper="paper0", table="sec3.2", quantity="corpus_patterns",
             cond="selection=fahlman-list-first-821", unit="count", reported=4535, ours=4338,
             kind="measured")),
    "paper1 constants": (
        "by-construction",
        dict(paper="paper1", table="table1", quantity="relative_performance",
             cond="nodes=2;bunch=48;hidden=1000;source=modeled (paper)", unit="x raw",
             reported=1.78, ours=1.81, kind="modeled"),
        dict(paper="paper1", table="table1", quantity="relative_performance",
             cond="nodes=2;bunch=48;hidden=1000;source=modeled (here)", unit="x raw",
             reported=1.78, ours=1.90, kind="modeled")),
    "paper1 printed formula is judged": (
        "by-construction",
        dict(paper="paper1", table="table1", quantity="relative_performance",
             cond="nodes=3;bunch=48;hidden=1000;source=modeled (paper)", unit="x raw",
             reported=2.35, ours=2.46, kind="modeled"),
        # the formula as printed, at the same constants, does not give the table: a finding
        dict(paper="paper1", table="table1", quantity="relative_performance",
             cond="nodes=3;bunch=48;hidden=1000;source=modeled (paper, printed formula)",
             unit="x raw", reported=2.35, ours=6.30, kind="modeled")),
    "paper1 transfer": (
        "by-construction",
        dict(paper="paper1", table="table1", quantity="transfer_per_slave", cond="bunch=48;hidden=1000",
             unit="ms", reported=4.7, ours=4.68, kind="modeled"),
        dict(paper="paper1", table="table1", quantity="transfer_total", cond="bunch=48;hidden=1000",
             unit="ms", reported=4.7, ours=4.68, kind="modeled")),
    "paper4 sec5": (
        "not-comparable",
        dict(paper="paper4", table="sec5", quantity="output_1", cond="nodes=2;epoch=10000",
             unit="value", reported=0.954, ours=0.995, kind="measured"),
        dict(paper="paper4", table="table2", quantity="speedup", cond="nodes=2;width=2048",
             unit="x", reported=1.8, ours=1.7, kind="measured")),
    "gige2008": (
        "not-comparable",
        dict(paper="paper3", table="table2", quantity="comm_share",
             cond="nodes=8;local_epoch=32;profile=gige2008", unit="fraction", reported=0.806,
             ours=0.97, kind="emulated"),
        dict(paper="paper3", table="table2", quantity="comm_share",
             cond="nodes=8;local_epoch=32;profile=here", unit="fraction", reported=0.806,
             ours=0.13, kind="emulated")),
    "paper1 workstation baseline": (
        "not-comparable",
        dict(paper="paper1", table="headline", quantity="over_ultrasparc", cond="nodes=5",
             unit="x", reported=25, ours=30.0, kind="emulated"),
        # the same paper's ratio to one board of its own kind is measured here
        dict(paper="paper1", table="headline", quantity="over_single_board", cond="nodes=5",
             unit="x", reported=8, ours=7.5, kind="emulated")),
    "absolute time": (
        "not-comparable",
        dict(paper="paper3", table="table1", quantity="total_time", cond="nodes=1", unit="s",
             reported=689, ours=1.39, kind="measured"),
        # a ratio of times within one run is compared
        dict(paper="paper0", table="sec3.2", quantity="deriv_over_fwd_epoch", cond="workers=1",
             unit="x", reported=37.91, ours=36.1, kind="measured")),
    "absolute rate": (
        "not-comparable",
        dict(paper="paper1", table="table1", quantity="training_mcups",
             cond="nodes=1;source=measured", unit="MCUPS", reported=111, ours=5505, kind="measured"),
        dict(paper="paper1", table="table1", quantity="training_mcups",
             cond="nodes=1;source=modeled (here)", unit="MCUPS", reported=111, ours=109,
             kind="modeled")),
}


def make(a: dict, **kw) -> dict:
    a = {**a, **kw}
    return R.row(a.pop("paper"), a.pop("table"), a.pop("quantity"), a.pop("cond"), a.pop("unit"),
                 **a)


@pytest.mark.parametrize("name", list(CASES))
def test_rule_takes_its_row_and_leaves_the_near_miss(name):
    v, pos, neg = CASES[name]
    r = make(pos, note="earlier note")
    assert r["verdict"] == v
    assert r["note"].startswith("earlier note; " + v + ": ")  # the reason is appended
    assert r["ratio"] == pytest.approx(pos["ours"] / pos["reported"])  # still shown
    n = make(neg)
    assert n["verdict"] in ("close", "differs")
    assert v not in n["note"]


def test_no_paper_value_is_never_ruled():
    v, pos, _ = CASES["absolute time"]
    assert make(pos, reported=None)["verdict"] == "no-paper-value"


def every_rule() -> list:
    """The shared rules and every paper's own, each once."""
    from reproduce.papers import PAPERS

    return list({rule[1]: rule for p in PAPERS for rule in R.rules(p["name"])}.values())


def test_every_rule_has_a_reason_and_a_known_verdict():
    for v, name, test, reason in every_rule():
        assert v in ("by-construction", "not-comparable") and name and reason and callable(test)


def test_a_papers_own_rules_take_only_its_rows():
    # the paper4 §5 rule is paper4's: the same row under paper3 keeps close/differs (control)
    v, pos, _ = CASES["paper4 sec5"]
    assert make(pos)["verdict"] == "not-comparable"
    assert make({**pos, "paper": "paper3"})["verdict"] in ("close", "differs")


def test_every_rule_has_a_case_here():
    """Each rule of :func:`reproduce.report.rules`, shared or a paper's own, is the one that
    takes some case's positive row."""
    by_reason = {reason: name for _, name, _, reason in every_rule()}
    taken = set()
    for _, pos, _ in CASES.values():
        got = R.rule_verdict(pos["paper"], pos["table"], pos["quantity"], pos["cond"], pos["unit"],
                             kind=pos["kind"], reported=pos["reported"])
        taken.add(by_reason[got[1]])
    assert taken == set(by_reason.values())


def rows_of_every_kind():
    return R.frame([make(CASES["n = 32k"][1]), make(CASES["absolute time"][1]),
                    make(CASES["gige2008"][2]),  # differs (0.13 vs 0.806)
                    make(CASES["paper1 constants"][2]),  # close (1.90 / 1.78 = 1.07)
                    R.row("paper4", "t", "q", "", "x", ours=1.0, kind="measured"),  # no paper value
                    R.row("paper4", "t", "q2", "", "x", reported=2.0, kind="measured")])  # unpaired


def test_fidelity_keeps_the_ruled_verdicts_apart():
    assert R.fidelity(rows_of_every_kind()) == {"close": 1, "differs": 2, "by-construction": 1,
                                                "not-comparable": 1, "no-paper-value": 1}
