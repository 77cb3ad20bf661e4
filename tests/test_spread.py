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
