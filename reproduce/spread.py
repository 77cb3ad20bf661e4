"""Spread of repeated runs: a bootstrap confidence interval of the median.

Issue 13 asks for one beside min–max where a configuration has 3 or more runs.
Reports use it through :func:`format_spread` (report text) and
:func:`ci_note` (a comparison row's note: the columns stay median and min–max,
which reproduce/report.py owns), each with the generator :func:`rng_for` gives
the quantity's label, so a report rebuilt from the same runs is identical.

The percentile method is used, not scipy's default BCa: with the 3–10 runs the
papers have, the resampled medians take only a handful of distinct values, BCa's
acceleration and bias estimates are unstable or undefined there (scipy warns
and can return NaN on ties), and the percentile interval stays inside the
observed range, so it can be read against min–max directly.
"""
from __future__ import annotations

import math

import numpy as np

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
    from scipy import stats  # here, not at the top: 1.4 s of import a refusal never needs

    res = stats.bootstrap((x,), np.median, confidence_level=confidence, n_resamples=n_resamples,
                          method="percentile", vectorized=True, random_state=rng)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


# ---- the papers' use: one line per spread, the same on every rebuild ----------------------
CI_SEED = 13  # issue 13 item 6; any fixed value: it only makes a rebuilt report identical


def rng_for(label: str) -> np.random.Generator:
    """A Generator for the interval of the quantity named ``label`` (e.g. the comparison
    row's table, quantity and condition): seeded from CI_SEED and a hash of the label, so
    a report rebuilt from the same runs gets the same interval whatever order its rows
    are computed in. (sha1, not hash(): Python salts str hashes per process.)"""
    import hashlib

    words = np.frombuffer(hashlib.sha1(label.encode()).digest()[:16], dtype=np.uint32)
    return np.random.default_rng(np.random.SeedSequence(CI_SEED, spawn_key=tuple(int(w) for w in words)))


def median_spread(values, *, label: str, confidence: float = 0.95) -> dict:
    """{median, min, max, ci_low, ci_high, n} of ``values``; ci_* are the percentile
    bootstrap interval of the median (:func:`bootstrap_median_ci`, generator
    :func:`rng_for` of ``label``), NaN below MIN_RUNS values."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        return {"median": math.nan, "min": math.nan, "max": math.nan, "ci_low": math.nan,
                "ci_high": math.nan, "n": 0}
    lo, hi = bootstrap_median_ci(x, rng=rng_for(label), confidence=confidence)
    return {"median": float(np.median(x)), "min": float(x.min()), "max": float(x.max()),
            "ci_low": lo, "ci_high": hi, "n": int(x.size)}


def format_spread(values, *, label: str, fmt: str = "{:.2f}", confidence: float = 0.95) -> str:
    """"median [CI low, high] (min–max)" for MIN_RUNS or more values (the bracket: the
    ``confidence`` bootstrap interval of the median), "median (min–max)" for two, the value
    alone for one."""
    s = median_spread(values, label=label, confidence=confidence)
    if s["n"] == 0:
        return "–"
    f = fmt.format
    if s["n"] == 1:
        return f(s["median"])
    ci = f" [{f(s['ci_low'])}, {f(s['ci_high'])}]" if s["n"] >= MIN_RUNS else ""
    return f"{f(s['median'])}{ci} ({f(s['min'])}–{f(s['max'])})"


def _num(x: float) -> str:
    """3 significant digits, whole numbers from 1,000 on (9,806 epochs, not 9.81e+03)."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def ci_note(values, *, label: str, fmt: str | None = None, confidence: float = 0.95) -> str:
    """For a comparison row's note (whose columns hold median and min–max already):
    "median 95% CI [low, high] (percentile bootstrap, n runs)", or "" below MIN_RUNS
    values. ``fmt``: a format string for the ends, else :func:`_num`."""
    s = median_spread(values, label=label, confidence=confidence)
    if s["n"] < MIN_RUNS:
        return ""
    f = fmt.format if fmt else _num
    return (f"median {confidence:.0%} CI [{f(s['ci_low'])}, {f(s['ci_high'])}] "
            f"(percentile bootstrap, {s['n']} runs)")
