"""reproduce/claims.py and reproduce/compare.py: verdicts from intervals (worked examples,
each with a control that must come out the other way), seed pairing, the claims-first
index, and the committed claims against the papers' text and their own numbers."""
from __future__ import annotations

import importlib
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reproduce import claims as C
from reproduce import compare as K
from reproduce import report as R
from reproduce.papers import PAPERS

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
PAPER_TEXTS = ROOT.parent / "shared" / "papers"


def ratio_claim(**kw):
    return C.Claim(**{"id": "s8", "quote": "a speed-up of 10.6", "where": "§5", "test": "ratio",
                      "quantity": "speedup at 8 nodes", "reported": 10.0, "tolerance": 0.2,
                      "tolerance_why": "test", **kw})


# ---- verdicts from intervals ------------------------------------------------------------
@pytest.mark.parametrize("low,high,expected", [
    (8.5, 11.5, "reproduced"),        # inside the band [8, 12]
    (12.5, 14.0, "not-reproduced"),   # wholly above
    (5.0, 7.9, "not-reproduced"),     # wholly below
    (7.0, 9.0, "inconclusive"),       # straddles the lower edge
    (7.0, 13.0, "inconclusive"),      # wider than the band
])
def test_ratio_verdict_from_the_interval_not_the_point(low, high, expected):
    # the point is the same (10, on the paper's value) in every case: only the interval decides
    assert C.verdict(ratio_claim(), C.Evidence(10.0, low, high, n=5)) == expected


def test_direction_verdict_both_senses():
    up = C.Claim(id="d", quote="q", where="w", test="direction", quantity="x", threshold=1.0)
    assert C.verdict(up, C.Evidence(2.0, 1.2, 2.5, n=5)) == "reproduced"
    assert C.verdict(up, C.Evidence(0.5, 0.2, 0.9, n=5)) == "not-reproduced"
    assert C.verdict(up, C.Evidence(1.1, 0.9, 1.3, n=5)) == "inconclusive"
    down = C.Claim(id="d", quote="q", where="w", test="direction", quantity="x", threshold=1.0, sense="<")
    assert C.verdict(down, C.Evidence(2.0, 1.2, 2.5, n=5)) == "not-reproduced"  # control: flipped sense
    assert C.verdict(down, C.Evidence(0.5, 0.2, 0.9, n=5)) == "reproduced"


def test_no_interval_is_inconclusive_and_rules_win():
    assert C.verdict(ratio_claim(), C.Evidence(10.0, n=1)) == "inconclusive"
    ruled = ratio_claim(rule="not-comparable", reason="1994 hardware")
    assert C.verdict(ruled, C.Evidence(99.0, 98.0, 100.0, n=5)) == "not-comparable"


def test_choice_verdict():
    """A choice is an equivalence test on the shortfall of the paper's option from our best:
    reproduced when its whole interval lies below the tolerance (default 10 %), not reproduced
    when wholly above, inconclusive when it straddles; candidates do not decide it."""
    c = C.Claim(id="c", quote="q", where="w", test="choice", quantity="best local epoch", reported=32)
    assert c.tolerance == C.CHOICE_TOLERANCE == 0.10 and c.tolerance_why
    assert C.verdict(c, C.Evidence(0.03, -0.02, 0.08, n=10, best=64)) == "reproduced"
    assert C.verdict(c, C.Evidence(0.0, 0.0, 0.0, n=10, best=32)) == "reproduced"  # the paper's is our best
    assert C.verdict(c, C.Evidence(0.2, 0.12, 0.3, n=10, best=64)) == "not-reproduced"
    # told apart from the best (interval above 0) but not by more than 10 % everywhere: inconclusive
    assert C.verdict(c, C.Evidence(0.12, 0.05, 0.3, n=10, best=64, candidates=(64,))) == "inconclusive"
    # not told apart (interval holds 0) but as wide as 40 %: inconclusive, not reproduced
    assert C.verdict(c, C.Evidence(0.1, -0.05, 0.4, n=10, best=64, candidates=(64, 32))) == "inconclusive"
    assert C.verdict(c, C.Evidence(None, n=0)) == "inconclusive"
    assert C.verdict(c, C.Evidence(0.03, -0.02, 0.08, n=3, best=64)) == "inconclusive"  # fewer than 5 runs
    wide = C.Claim(id="c", quote="q", where="w", test="choice", quantity="x", reported=32, tolerance=0.5,
                   tolerance_why="why")
    assert C.verdict(wide, C.Evidence(0.2, 0.12, 0.3, n=10, best=64)) == "reproduced"  # its own tolerance
    row = C.judge("p", c, C.Evidence(0.12, 0.05, 0.3, n=10, best=64, candidates=(64,)))
    assert row["best"] == 64 and row["more_runs"] is not None and "runs in all" in row["reason"]
    assert C.ours_text(row) == "best 64; 32 short of it by 12 % [5 %, 30 %]"


def test_claim_checks_its_own_fields():
    with pytest.raises(ValueError, match="tolerance"):
        ratio_claim(tolerance_why="")
    with pytest.raises(ValueError, match="test must be"):
        ratio_claim(test="vibes")
    with pytest.raises(ValueError, match="choice"):
        C.Claim(id="c", quote="q", where="w", test="choice", quantity="x")
    with pytest.raises(ValueError, match="quote"):
        ratio_claim(quote="")


def test_more_runs_worked_example():
    # estimate 8.4, interval [7.6, 9.2]: half-width h = 0.8, nearest edge 8 at d = 0.4;
    # n' = 5 · (0.8 / 0.4)² = 20
    ev = C.Evidence(8.4, 7.6, 9.2, n=5)
    assert C.more_runs(ratio_claim(), ev) == 20
    # on the edge: more runs cannot decide it
    assert C.more_runs(ratio_claim(), C.Evidence(8.0, 7.5, 8.5, n=5)) is None
    # a zero-width interval exactly on the edge: no estimate, no division by zero
    assert C.more_runs(ratio_claim(), C.Evidence(8.0, 8.0, 8.0, n=5)) is None
    # not inconclusive: no estimate
    assert C.more_runs(ratio_claim(), C.Evidence(10.0, 9.0, 11.0, n=5)) is None
    row = C.judge("p", ratio_claim(), ev)
    assert "about 20 runs" in row["reason"] and row["more_runs"] == 20


def test_fall_back_judges_the_ample_figure_and_the_few_one_can_veto_it():
    c = ratio_claim()  # band [8, 12]
    host = C.Evidence(10.0, 9.0, 11.0, n=3, kind="measured", host="big16", reason="host")
    em_in = C.Evidence(10.5, 9.5, 11.5, n=5, kind="emulated", host="profile p", reason="emu")
    ev = C.fall_back(host, em_in)
    assert (ev.kind, ev.n, ev.few) == ("emulated", 5, host) and ev.reason == "emu; host"
    j = C.judge("p", c, ev)
    assert j["verdict"] == "reproduced" and "rests on 3, fewer than 5" in j["reason"]
    assert "disagree" not in j["reason"] and ev.beside == "measured on big16: 10 [9, 11], n = 3"
    # the host's interval alone inside the band, the emulated one wholly above: neither decides
    em_out = C.Evidence(14.0, 13.0, 15.0, n=5, kind="emulated", host="profile p")
    assert C.interval_verdict(c, em_out) == "not-reproduced" and C.vetoed(c, C.fall_back(host, em_out))
    j = C.judge("p", c, C.fall_back(host, em_out))
    assert j["verdict"] == "inconclusive" and "the two disagree" in j["reason"] and j["more_runs"] is None
    # control: a host figure that straddles the band vetoes nothing
    wide = C.Evidence(10.0, 6.0, 14.0, n=3, kind="measured", host="big16")
    assert C.judge("p", c, C.fall_back(wide, em_out))["verdict"] == "not-reproduced"


def test_a_figure_fixed_by_the_models_construction_is_by_construction_never_reproduced():
    up = C.Claim(id="d", quote="q", where="§1", test="direction", quantity="x", threshold=1.0, sense="<")
    ev = C.Evidence(0.93, 0.92, 0.94, n=5, kind="emulated", construction="the model puts it there")
    j = C.judge("p", up, ev)
    assert j["verdict"] == "by-construction" and "the model puts it there" in j["reason"]
    assert "on its values it is reproduced" in j["reason"]
    # controls: the same interval without the flag is judged; with it on too few runs, inconclusive
    assert C.verdict(up, C.Evidence(0.93, 0.92, 0.94, n=5, kind="emulated")) == "reproduced"
    assert C.verdict(up, C.Evidence(0.93, 0.92, 0.94, n=2, kind="emulated", construction="x")) == "inconclusive"


def test_more_runs_are_not_promised_where_they_would_land_against_the_few_figure():
    c = ratio_claim()  # band [8, 12]
    host_out = C.Evidence(14.0, 13.0, 15.0, n=3, kind="measured", host="big16")  # alone: not reproduced
    em = C.Evidence(11.0, 7.0, 13.0, n=5, kind="emulated", host="profile p")  # straddles, estimate inside
    j = C.judge("p", c, C.fall_back(host_out, em))
    assert j["verdict"] == "inconclusive" and j["more_runs"] is None
    assert "likely end in a disagreement" in j["reason"] and "at least 5 runs measured on big16" in j["reason"]
    # control: with the estimate on the host's side, more runs here would likely decide it
    em_low = C.Evidence(12.5, 10.0, 15.0, n=5, kind="emulated", host="profile p")
    j = C.judge("p", c, C.fall_back(host_out, em_low))
    assert j["verdict"] == "inconclusive" and j["more_runs"] > 5 and "disagreement" not in j["reason"]


def test_a_choice_few_figure_is_shown_as_a_shortfall_in_percent():
    c = C.Claim(id="ch", quote="q", where="§1", test="choice", quantity="best P", reported=6,
                tolerance=0.1, tolerance_why="test")
    host = C.Evidence(0.507, 0.126, 0.966, n=3, kind="measured", host="big16", best=14)
    em = C.Evidence(0.285, 0.235, 0.455, n=5, kind="emulated", host="profile p", best=11)
    j = C.judge("p", c, C.fall_back(host, em))
    assert j["verdict"] == "not-reproduced" and j["best"] == 11
    assert "best 14, short of it by 50.7 % [12.6 %, 96.6 %]" in j["reason"]


def test_fall_back_keeps_the_few_figure_where_the_other_has_too_few_runs_too():
    c = ratio_claim()
    host = C.Evidence(10.0, 9.0, 11.0, n=3, kind="measured", host="big16")
    short = C.Evidence(10.5, 9.5, 11.5, n=2, kind="emulated", host="profile p")
    ev = C.fall_back(host, short)
    assert ev.kind == "measured" and ev.n == 3 and ev.few is None
    assert ev.beside.startswith("emulated (profile p): 10.5 [9.5, 11.5], n = 2")  # shown beside, not judged
    assert C.judge("p", c, ev)["verdict"] == "inconclusive"
    # a preferred figure with enough runs is judged itself, the other beside it
    enough = C.Evidence(10.0, 9.0, 11.0, n=5, kind="measured", host="big16")
    ev = C.fall_back(enough, C.Evidence(14.0, 13.0, 15.0, n=9, kind="emulated", host="profile p"))
    assert (ev.ours, ev.kind, ev.n, ev.few) == (10.0, "measured", 5, None) and "14 [13, 15], n = 9" in ev.beside
    assert C.judge("p", c, ev)["verdict"] == "reproduced"


# ---- intervals -----------------------------------------------------------------------
def test_over_groups_is_over_seeds_with_one_group_and_resamples_groups_independently():
    x = [1.0, 2.0, 4.0, 8.0, 3.0]
    assert C.over_groups([x], lambda gs: float(np.mean(gs[0])), label="g") == C.over_seeds(
        x, lambda r: float(np.mean(r)), label="g")  # draw for draw
    # two constant groups: every resample gives the same ratio, the interval is the point
    est, lo, hi = C.over_groups([[2.0] * 7, [4.0] * 5], lambda gs: np.mean(gs[1]) / np.mean(gs[0]), label="h")
    assert (est, lo, hi) == (2.0, 2.0, 2.0)
    # each group keeps its own size: a statistic on group sizes sees 7 and 5 in every resample
    assert C.over_groups([[0.0] * 7, [0.0] * 5], lambda gs: len(gs[0]) * 10 + len(gs[1]), label="k") == (75, 75, 75)
    # control: one group of a single record has no interval
    assert all(math.isnan(v) for v in C.over_groups([[1.0, 2.0], [3.0]], lambda gs: 1.0, label="m")[1:])


@pytest.mark.parametrize("stat", [C.gmean, C.mean_of])
def test_a_stat_with_rows_gives_the_loops_interval_bit_for_bit(stat):
    """over_seeds evaluates gmean and mean_of on all resamples at once (``stat.rows``); the
    loop over resamples (the same function without ``rows``) gives the same three numbers."""
    loop = lambda r: stat(r)  # noqa: E731 - no ``rows``: over_groups' loop
    rng = np.random.default_rng(5)
    cases = [list(np.exp(rng.normal(0, s, size=n)) * 3.7) for n, s in ((2, 0.1), (5, 1.0), (7, 2.5),
                                                                       (10, 0.01), (33, 1.5))]
    cases += [[1.0, 2.0, 0.0, 4.0, 5.0], [1.0, -2.0, 3.0], [2.0, float("nan"), 3.0, 4.0],
              [1.0, float("inf"), 2.0], [3.0], []]
    for i, x in enumerate(cases):
        got, want = C.over_seeds(x, stat, label=f"v{i}"), C.over_seeds(x, loop, label=f"v{i}")
        assert np.array_equal(got, want, equal_nan=True), (x, got, want)
    # control: another label draws other resamples, another interval
    assert C.over_seeds(cases[2], stat, label="v2") != C.over_seeds(cases[2], stat, label="w2")


def test_least_gmean_on_rows_of_columns_gives_the_loops_interval_bit_for_bit():
    """least_gmean (the smallest of the columns' geometric means) on all resamples at once
    equals the loop over resamples, nan columns and a single record included. Controls: a
    column of nan that comes first makes the whole nan, as Python's min does, while one that
    comes later is passed over; one record has no interval."""
    loop = lambda r: C.least_gmean(r)  # noqa: E731 - no ``rows``: over_groups' loop
    rng = np.random.default_rng(7)
    cases = [[tuple(np.exp(rng.normal(0, 0.5, size=m)) * 2.0) for _ in range(n)] for n, m in ((2, 2), (5, 3), (9, 2))]
    cases += [[(1.0, 2.0), (0.0, 3.0), (4.0, 5.0)], [(1.0, float("nan")), (2.0, 3.0), (3.0, 1.0)],
              [(2.0, 1.0, 3.0)]]
    for i, x in enumerate(cases):
        got, want = C.over_seeds(x, C.least_gmean, label=f"c{i}"), C.over_seeds(x, loop, label=f"c{i}")
        assert np.array_equal(got, want, equal_nan=True), (x, got, want)
    assert math.isnan(C.least_gmean([(float("nan"), 1.0), (1.0, 1.0)]))
    assert C.least_gmean([(1.0, float("nan")), (1.0, 1.0)]) == 1.0
    assert C.over_seeds([(2.0, 1.0, 3.0)], C.least_gmean, label="one")[0] == 1.0
    assert all(math.isnan(v) for v in C.over_seeds([(2.0, 1.0, 3.0)], C.least_gmean, label="one")[1:])


def test_paired_ratio_pairs_by_seed():
    # Seed s has a slow or fast machine moment that hits serial and parallel alike: paired, the
    # ratio is exactly 4 for every seed and the interval is a point.
    serial = {s: 4.0 * (1 + s) for s in range(6)}
    parallel = {s: 1.0 * (1 + s) for s in range(6)}
    est, lo, hi, n = C.paired_ratio(serial, parallel, label="t")
    assert n == 6 and est == pytest.approx(4.0) and lo == pytest.approx(4.0) and hi == pytest.approx(4.0)
    # control: the same times unpaired (shifted by one seed) spread the interval widely
    shifted = {s: parallel[(s + 1) % 6] for s in range(6)}
    _, lo2, hi2, _ = C.paired_ratio(serial, shifted, label="t")
    assert hi2 - lo2 > 1.0
    # only seeds on both sides pair
    assert C.paired_ratio(serial, {0: 1.0, 1: 2.0, 99: 1.0}, label="t")[3] == 2


def test_over_seeds_is_reproducible_by_label_and_covers_the_mean():
    x = np.random.default_rng(0).normal(10.0, 1.0, size=8)
    a = C.mean(x, label="q")
    assert a == C.mean(x, label="q")  # rebuilt report, same interval
    assert a[1] < float(np.mean(x)) < a[2]
    assert a[1] >= x.min() and a[2] <= x.max()


def test_indistinguishable_keeps_what_the_interval_cannot_tell_apart():
    rng = np.random.default_rng(1)
    noise = {s: rng.normal(0, 0.01) for s in range(8)}
    opts = {32: {s: 1.00 + noise[s] for s in range(8)},
            64: {s: 1.00 + noise[s] + (0.01 if s % 2 else -0.008) for s in range(8)},
            128: {s: 1.5 + noise[s] for s in range(8)}}
    best, keep = C.indistinguishable(opts, label="t")
    assert set(keep) == {32, 64} and best in (32, 64)
    assert 128 not in keep  # control: clearly worse is told apart
    one_run = {**opts, 256: {1: 0.5}}  # a single run has no interval: nothing is told apart
    assert C.indistinguishable(one_run, label="t") == (256, ())
    best_hi, keep_hi = C.indistinguishable(opts, label="t", lower_is_better=False)
    assert best_hi == 128 and keep_hi == (128,)


def test_evaluate_needs_evidence_for_every_claim():
    with pytest.raises(KeyError, match="s8"):
        C.evaluate("p", [ratio_claim()], {})
    df = C.evaluate("p", [ratio_claim()], {"s8": C.Evidence(10.0, 9.0, 11.0, n=5, host="h")})
    assert list(df.columns) == C.COLUMNS and df.verdict.tolist() == ["reproduced"]


# ---- index and compare from fake folders ----------------------------------------------------
def fake_paper(folder: Path, claims: pd.DataFrame, meta: dict | None = None):
    from reproduce.store import atomic_write, dumps

    folder.mkdir(parents=True)
    rows = R.frame([R.row(folder.name, "t", "q", "", "x", reported=1.0, ours=1.05, kind="measured")])
    atomic_write(folder / "comparison.csv", rows.to_csv(index=False))
    atomic_write(folder / "summary.json", dumps({"meta": meta or {}, "rows": rows.to_dict(orient="records")}))
    C.write(folder, claims)
    atomic_write(folder / "report.md", "# x\n")


def claims_table(paper: str, verdicts: dict) -> pd.DataFrame:
    rows = []
    for cid, (lo, hi) in verdicts.items():
        rows.append(C.judge(paper, ratio_claim(id=cid), C.Evidence(10.0, lo, hi, n=5, host="h")))
    return C.frame(rows)


def test_index_opens_with_the_claims_counted_per_claim(tmp_path):
    papers = [{"name": n, "authors": "A", "year": 2000, "title": "T"} for n in ("pa", "pb", "pc")]
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11), "a2": (13, 14), "a3": (7, 9)}))
    fake_paper(tmp_path / "pb", claims_table("pb", {"b1": (9, 11)}))
    text = R.build_index(tmp_path, papers)
    assert text.index("## Claims") < text.index("## pa:")
    assert "| pa | 3 | 1 | 1 | 1 | 0 | 0 |" in text
    assert "| pb | 1 | 1 | 0 | 0 | 0 | 0 |" in text
    assert "| pc | – |" in text  # not run
    assert "| **all** | 4 | 2 | 1 | 1 | 0 | 0 |" in text
    assert "about" in text and "**inconclusive**" in text
    lines = R.screen_lines(tmp_path, papers)
    assert "| pa | 3 | 1 | 1 | 1 | 0 | 0 |" in lines


def test_a_bad_claims_file_is_refused(tmp_path):
    papers = [{"name": "pa", "authors": "A", "year": 2000, "title": "T"}]
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11)}))
    f = tmp_path / "pa" / "claims.csv"
    f.write_text(f.read_text().replace("reproduced", "sort of"))
    with pytest.raises(R.ResultsError, match="sort of"):
        R.build_index(tmp_path, papers)


def test_compare_counts_flips_and_moves(tmp_path):
    fake_paper(tmp_path / "old" / "paper3", claims_table("paper3", {"a": (9, 11), "b": (9, 11), "c": (7, 9), "d": (9, 11)}),
               meta={"code": {"commit": "abc1234def"}, "date_utc": "2026-11-26T10:00:00Z"})
    fake_paper(tmp_path / "new" / "paper3", claims_table("paper3", {"a": (9, 11), "b": (13, 14), "c": (9, 11), "e": (9, 11)}))
    old, new = K.load(str(tmp_path / "old"), ["paper3"]), K.load(str(tmp_path / "new"), ["paper3"])
    r = K.compare(old, new)
    assert (r["n"], r["flips"], r["moves"]) == (3, 1, 1)
    assert r["added"] == ["paper3/e"] and r["removed"] == ["paper3/d"]
    text = "\n".join(K.markdown("old", "new", old, new))
    assert "3 claims compared: 1 flipped, 1 moved" in text and "abc1234" in text
    # a side rebuilt from its task cache names the run that computed it, and says so
    rebuilt = {"paper3": (old["paper3"][0], {"code": {"commit": "fff0000"}, "date_utc": "2026-11-27",
                                             "origin": {"code": {"commit": "abc1234"}, "date_utc": "2026-11-26"}})}
    side = "\n".join(K.markdown("old", "new", rebuilt, new))
    assert "commit abc1234, 2026-11-26" in side and "rebuilt from its task cache at commit fff0000" in side
    assert "rebuilt" not in text  # control: a side computed by its own run
    same = K.compare(old, old)
    assert (same["flips"], same["moves"]) == (0, 0)  # control
    with pytest.raises(K.CompareError):
        K.load(str(tmp_path / "nowhere-and-no-commit"), ["paper3"])


# ---- the papers' claims and the committed results --------------------------------------------
def _norm(t: str) -> str:
    t = t.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    t = re.sub(r"[–—−]", "-", t)
    t = re.sub(r"-\s*\n\s*", "-", t)
    return re.sub(r"\s+", " ", t).strip()


def paper_claims():
    out = []
    for p in PAPERS:
        try:
            mod = importlib.import_module(f"reproduce.{p['name']}.claims")
        except ModuleNotFoundError:
            continue
        if hasattr(mod, "CLAIMS"):
            out.append((p["name"], mod.CLAIMS))
    return out


@pytest.mark.skipif(not PAPER_TEXTS.is_dir(), reason="../shared/papers not beside the checkout")
@pytest.mark.parametrize("name,claims", paper_claims(), ids=[n for n, _ in paper_claims()])
def test_every_quote_is_the_papers_words(name, claims):
    (text_file,) = PAPER_TEXTS.glob(f"{name}-*.txt")
    text = _norm(text_file.read_text())
    assert 4 <= len(claims) <= 12, "about 4–10 claims per paper"
    for c in claims:
        for piece in re.split(r"\s*(?:…|\.\.\.)\s*", c.quote):
            if piece.strip():
                assert _norm(piece) in text, f"{name} {c.id}: not in the paper: {piece!r}"
    # control: a word changed in a quote is caught
    assert _norm(claims[0].quote.split("…")[0] + " zzyzx") not in text


def committed():
    return [p["name"] for p in PAPERS if (RESULTS / p["name"] / "claims.csv").exists()]


@pytest.mark.parametrize("name", committed())
def test_committed_claims_follow_from_their_own_numbers(name):
    """Each committed claim's verdict is what judge() gives for its own interval, and each
    judged claim rests on at least 5 seeds or repetitions unless its reason says why not."""
    df = C.read(RESULTS / name)
    mods = dict(paper_claims())
    declared = {c.id: c for c in mods.get(name, [])}
    assert set(df.claim) == set(declared), "claims.csv is not the package's CLAIMS (regenerate)"
    for _, r in df.iterrows():
        c = declared[r.claim]
        # what the row's reason records beside its numbers: a figure the model fixes by design
        # (Evidence.construction) or one the host's fewer runs contradict (claims.vetoed)
        why = str(r.reason)
        ev = C.Evidence(r.ours, r.ours_low, r.ours_high, n=int(r.n), kind=r.kind,
                        construction="recorded" if why.startswith("by construction of the model:") else "")
        if not c.rule:
            expect = "inconclusive" if "the two disagree" in why else C.verdict(c, ev)
            assert r.verdict == expect, r.claim
        if c.test == "choice" and r.verdict not in ("by-construction", "not-comparable") and pd.notna(r.ours):
            assert pd.notna(r.best), f"{name} {r.claim}: a choice names our best option"
        # judged (reproduced / not-reproduced) only on an interval from at least 5 runs; a choice's
        # interval is the paper's option's shortfall from our best
        if r.verdict in ("reproduced", "not-reproduced"):
            assert int(r.n) >= C.MIN_N and pd.notna(r.ours_low) and pd.notna(r.ours_high), \
                f"{name} {r.claim}: judged without an interval from {C.MIN_N} runs"
        if r.verdict == "inconclusive" and int(r.n) < C.MIN_N:
            assert f"fewer than {C.MIN_N}" in str(r.reason) or "not measured" in str(r.reason), r.claim


def test_committed_index_is_what_report_builds():
    """One generation: results/index.md is exactly what `report` builds from the committed CSVs."""
    built = R.build_index(RESULTS, PAPERS)
    assert (RESULTS / "index.md").read_text() == built, \
        "results/index.md is stale: run `python -m reproduce report`"


def test_readme_claims_block_is_the_committed_claims():
    """The README's claims (verdicts and values) are exactly what the committed claims.csv give."""
    text = (ROOT / "README.md").read_text()
    assert R.README_BEGIN in text and R.README_END in text
    block = text[text.index(R.README_BEGIN):text.index(R.README_END) + len(R.README_END)]
    assert block == R.readme_claims(RESULTS, PAPERS), \
        "README's claims block is stale: paste reproduce.report.readme_claims(results, PAPERS)"


def test_readme_block_control(tmp_path):
    """Control: a changed verdict in a claims.csv changes the block the README must hold."""
    papers = [{"name": "pa", "authors": "A", "year": 2000, "title": "T"}]
    fake_paper(tmp_path / "pa", claims_table("pa", {"a1": (9, 11)}))
    before = R.readme_claims(tmp_path, papers)
    fake = tmp_path / "pa" / "claims.csv"
    fake.write_text(fake.read_text().replace(",reproduced,", ",not-reproduced,"))
    assert R.readme_claims(tmp_path, papers) != before and "| not-reproduced |" in R.readme_claims(tmp_path, papers)


def test_every_paper_declares_its_claims():
    assert [n for n, _ in paper_claims()] == [p["name"] for p in PAPERS]


def test_fewer_than_five_runs_are_not_judged_and_a_formula_is_by_construction():
    inside = C.Evidence(10.0, 9.0, 11.0, n=3)
    assert C.verdict(ratio_claim(), inside) == "inconclusive"
    assert "fewer than 5" in C.judge("p", ratio_claim(), inside)["reason"]
    assert C.verdict(ratio_claim(), C.Evidence(10.0, 9.0, 11.0, n=5)) == "reproduced"  # control
    formula = C.Evidence(13.0, 13.0, 13.0, n=1, kind="modeled")
    row = C.judge("p", ratio_claim(), formula)
    assert row["verdict"] == "by-construction" and "deterministic" in row["reason"]


def test_shortfall_worked_examples_and_controls():
    """The paper's option's shortfall from our best, with the best taken anew in each resample."""
    rng = np.random.default_rng(2)
    opts = {17: {s: 10.0 + rng.normal(0, 0.2) for s in range(6)}}
    opts[18] = {s: v + 1.0 + rng.normal(0, 0.05) for s, v in opts[17].items()}  # 18 better on every seed
    opts[16] = {s: v - 3.0 + rng.normal(0, 0.5) for s, v in opts[17].items()}  # far behind
    m = {o: float(np.mean(list(d.values()))) for o, d in opts.items()}
    est, lo, hi = C.shortfall(opts, 17, label="g", lower_is_better=False)
    assert est == pytest.approx((m[18] - m[17]) / m[18]) and 0 < lo <= est <= hi  # told apart
    # 18 is best on every seed and in every resample: exactly 0
    assert C.shortfall(opts, 18, label="g", lower_is_better=False) == (0.0, 0.0, 0.0)
    # lower is better: the same numbers read as times make 16 the best, 17 short by (m17 − m16)/m16
    assert C.shortfall(opts, 17, label="g")[0] == pytest.approx((m[17] - m[16]) / m[16])
    # a near tie: the paper's option best on the means still gets an interval above 0, since
    # the other option wins some resamples
    tie = {1: {s: 10.0 + rng.normal(0, 1) for s in range(8)}}
    tie[2] = {s: v + rng.normal(0, 1) for s, v in tie[1].items()}
    top = max(tie, key=lambda o: np.mean(list(tie[o].values())))
    est, lo, hi = C.shortfall(tie, top, label="t", lower_is_better=False)
    assert est == 0 and lo == 0 and hi > 0.01
    # controls: not run, one run, a run missing from some seeds
    assert all(math.isnan(x) for x in C.shortfall(opts, 99, label="g"))
    one = {**opts, 15: {0: 5.0}}
    assert math.isnan(C.shortfall(one, 15, label="g")[1])
    gap = {**opts, 17: {s: v for s, v in opts[17].items() if s != 3}}
    assert C.shortfall(gap, 17, label="g", lower_is_better=False)[1] > 0

def test_inconclusive_reason_says_what_is_missing():
    assert "not measured" in C.judge("p", ratio_claim(), C.Evidence(None, n=0))["reason"]
    assert "at least 5" in C.judge("p", ratio_claim(), C.Evidence(10.0, n=1))["reason"]
    assert "would say reproduced" in C.judge("p", ratio_claim(), C.Evidence(10.0, 9.0, 11.0, n=3))["reason"]
    # control: a measured, straddling interval gets the run estimate instead
    assert "runs in all" in C.judge("p", ratio_claim(), C.Evidence(8.4, 7.6, 9.2, n=5))["reason"]
