"""reproduce/spread.py: the bootstrap interval of the median against worked cases."""
from __future__ import annotations

import math

import numpy as np
import pytest

from reproduce.spread import bootstrap_median_ci


def test_three_runs_worked_case():
    # Medians of 3 draws from {1, 2, 3}: P(1) = P(3) = 7/27 ≈ 0.26 > 0.025, so the
    # 2.5 % and 97.5 % percentiles are 1 and 3: the interval is min–max.
    lo, hi = bootstrap_median_ci([3.0, 1.0, 2.0], rng=np.random.default_rng(0))
    assert (lo, hi) == (1.0, 3.0)


def test_three_runs_narrow_confidence_shrinks_to_the_median():
    # At 40 % the 30th and 70th percentiles fall in the 13/27 ≈ 48 % mass at 2.
    lo, hi = bootstrap_median_ci([1.0, 2.0, 3.0], rng=np.random.default_rng(0), confidence=0.4)
    assert (lo, hi) == (2.0, 2.0)


def test_width_matches_the_asymptotic_median_interval():
    # Normal(0, 1), n = 401: the median's standard error is sqrt(pi/2)/sqrt(n) ≈ 0.0626,
    # so a 95 % interval is about 0.245 wide and contains the true median 0.
    x = np.random.default_rng(1).standard_normal(401)
    lo, hi = bootstrap_median_ci(x, rng=np.random.default_rng(2), n_resamples=2000)
    assert lo < 0 < hi
    assert 0.15 < hi - lo < 0.35


def test_negative_control_shifted_data_excludes_the_old_median():
    x = np.random.default_rng(1).standard_normal(401) + 1.0
    lo, hi = bootstrap_median_ci(x, rng=np.random.default_rng(2), n_resamples=2000)
    assert not lo < 0 < hi and lo > 0.5


def test_same_rng_seed_same_interval():
    x = [1.2, 0.7, 1.9, 1.1, 1.4, 0.9]
    a = bootstrap_median_ci(x, rng=np.random.default_rng(5), n_resamples=500)
    b = bootstrap_median_ci(x, rng=np.random.default_rng(5), n_resamples=500)
    assert a == b and a[0] <= np.median(x) <= a[1]


def test_fewer_than_three_runs_and_bad_input():
    assert all(math.isnan(v) for v in bootstrap_median_ci([1.0, 2.0], rng=np.random.default_rng(0)))
    with pytest.raises(ValueError):
        bootstrap_median_ci([1.0, float("nan"), 2.0], rng=np.random.default_rng(0))
    with pytest.raises(ValueError):
        bootstrap_median_ci([1.0, 2.0, 3.0], rng=np.random.default_rng(0), confidence=1.0)


# ---- the papers' helpers: format_spread, ci_note, rng_for --------------------------------
from reproduce.spread import ci_note, format_spread, median_spread, rng_for  # noqa: E402


def test_format_spread_three_runs_worked_case():
    # the worked case above: for 3 runs the 95 % interval of the median is min–max
    assert format_spread([3.0, 1.0, 2.0], label="t") == "2.00 [1.00, 3.00] (1.00–3.00)"
    assert format_spread([1.0, 3.0], label="t") == "2.00 (1.00–3.00)"  # two: no interval
    assert format_spread([1.5], label="t") == "1.50"
    assert ci_note([1.0, 3.0], label="t") == ""
    assert ci_note([3.0, 1.0, 2.0], label="t") == "median 95% CI [1, 3] (percentile bootstrap, 3 runs)"
    assert ci_note([9600.0, 9806.0, 11217.0], label="t") == (
        "median 95% CI [9,600, 11,217] (percentile bootstrap, 3 runs)")


def test_median_spread_is_bootstrap_median_ci_with_the_labels_generator():
    x = np.random.default_rng(3).standard_normal(41)
    s = median_spread(x, label="paper3 table1 total_time nodes=8")
    ref = bootstrap_median_ci(x, rng=rng_for("paper3 table1 total_time nodes=8"))
    assert (s["ci_low"], s["ci_high"]) == ref
    assert (s["median"], s["min"], s["max"], s["n"]) == (np.median(x), x.min(), x.max(), 41)


def test_rebuild_gives_the_same_text_and_labels_differ():
    x = list(np.random.default_rng(4).standard_normal(25))
    a = format_spread(x, label="row a", fmt="{:.6f}")
    assert a == format_spread(x, label="row a", fmt="{:.6f}")  # a rebuilt report is identical
    # negative control: another label seeds another stream (the interval itself often
    # lands on the same order statistics, so compare the streams)
    draws = {rng_for(f"row {i}").integers(2**62) for i in range(8)}
    assert len(draws) == 8 and rng_for("row a").integers(2**62) == rng_for("row a").integers(2**62)


def test_spread_row_median_min_max_and_the_interval_in_the_note():
    from reproduce.report import spread_row

    r = spread_row("paper0", "t", "q", "c", "x", [3.0, 1.0, 2.0], kind="measured", note="n")
    assert (r["ours"], r["ours_low"], r["ours_high"], r["runs"]) == (2.0, 1.0, 3.0, 3)
    # the worked case above: three runs of {1, 2, 3} give the interval [1, 3]
    assert r["note"] == "n; median 95% CI [1, 3] (percentile bootstrap, 3 runs)"
    two = spread_row("paper0", "t", "q", "c", "x", [1.0, 2.0], kind="measured", note="n")
    assert two["note"] == "n" and two["runs"] == 2  # negative control: no interval below 3 runs


def test_spread_row_missing_values():
    from reproduce.report import spread_row

    vals = [3.0, None, 1.0, math.nan, 2.0]
    r = spread_row("paper0", "t", "q", "c", "x", vals, kind="measured", drop_missing=True)
    assert (r["ours"], r["runs"]) == (2.0, 3) and "3 runs" in r["note"]
    # without dropping, a missing run makes the median NaN and leaves the interval out
    kept = spread_row("paper0", "t", "q", "c", "x", [3.0, 1.0, math.nan], kind="measured")
    assert math.isnan(kept["ours"]) and kept["runs"] == 3 and kept["note"] == ""
    empty = spread_row("paper0", "t", "q", "c", "x", [None], kind="measured", drop_missing=True)
    assert math.isnan(empty["ours"]) and empty["runs"] == 0
