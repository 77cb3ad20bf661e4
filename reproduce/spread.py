"""Spread of repeated runs: a bootstrap confidence interval of the median.

Issue 13 asks for one beside min–max where a configuration has 3 or more runs.
It is a helper only: no paper calls it yet (wiring it in changes every
report's columns, which the report code owns).

The percentile method is used, not scipy's default BCa: with the 3–10 runs the
papers have, the resampled medians take only a handful of distinct values, BCa's
acceleration and bias estimates are unstable or undefined there (scipy warns
and can return NaN on ties), and the percentile interval stays inside the
observed range, so it can be read against min–max directly.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

MIN_RUNS = 3


def bootstrap_median_ci(values, *, rng: np.random.Generator, confidence: float = 0.95,
                        n_resamples: int = 9999) -> tuple[float, float]:
    """(low, high) percentile-bootstrap interval of the median of ``values``.

    Fewer than MIN_RUNS values give (nan, nan): two runs have no median spread
    worth resampling, and the caller reports min–max alone. Non-finite values
    raise ValueError rather than being dropped silently. ``rng`` is required so
    that a rebuilt report gives the same interval.
    """
    x = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("bootstrap_median_ci: values must be finite")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if x.size < MIN_RUNS:
        return math.nan, math.nan
    res = stats.bootstrap((x,), np.median, confidence_level=confidence, n_resamples=n_resamples,
                          method="percentile", vectorized=True, random_state=rng)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)
