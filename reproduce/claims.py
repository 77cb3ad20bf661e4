"""A paper's claims as data, judged on intervals (README.md, "How to read a verdict").

A paper package declares its claims (:class:`Claim`): the paper's words with
section, table or figure; the quantity that tests it; and its test, one of

- ``ratio``: ours over the paper's value lies within ``tolerance`` (relative);
- ``direction``: a statistic lies on one side of a threshold ("speedup > 1",
  "ours at k = 3 minus ours at k = 1 < 0", the smallest step of a curve > 0);
- ``choice``: the paper's choice (best local epoch, best worker count) cannot be
  told apart from our best by more than ``tolerance``: its shortfall from our
  best option, as a fraction of our best's value (:func:`shortfall`, the best
  taken anew in each resample), is judged against that margin like a direction
  claim (an equivalence test). A zero margin (the paper's option among those
  whose difference to the best holds 0) flips at noise level on curves flat near
  the top, and calls a wide interval reproduced; the options whose difference
  holds 0 are still listed.

The package measures each claim (:class:`Evidence`: our estimate, its interval,
how many seeds or repetitions it rests on, its kind and host) and
:func:`judge` gives the verdict from the interval, never from the point:

- ``reproduced``: the whole interval lies inside the tolerance band (ratio), or
  on the claimed side of the threshold (direction), or the paper's choice falls
  short of our best by less than the tolerance across the interval (choice);
- ``not-reproduced``: the whole interval lies outside the band or on the wrong
  side, or beyond the choice's tolerance;
- ``inconclusive``: the interval straddles; :func:`more_runs` says about how
  many runs would likely decide it, from the spread;
- ``by-construction`` and ``not-comparable``: by rule, stated in the claim.

A claim rests on at least :data:`MIN_N` seeds or repetitions. Where the kind the
project prefers (measured on a many-core host) has fewer (a host that ran 3
seeds), :func:`fall_back` judges the claim on a figure of the same quantity that
has enough (emulated over this run's seeds) and keeps the preferred one as
``Evidence.few``: it stands beside, and it can veto but never decide. Where its
interval alone gives the opposite decided verdict, the claim is inconclusive and
its reason says so.

Intervals are percentile bootstraps over seeds (:func:`over_seeds`): each
resample draws whole seeds, so a seed's serial and parallel runs stay together
and a speedup is paired by seed (:func:`paired_ratio`). The generator is
seeded from the claim's label (:func:`reproduce.spread.rng_for`), so a report
rebuilt from the same runs gives the same interval. This module knows no paper.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from reproduce.spread import rng_for

TESTS = ("ratio", "direction", "choice")
VERDICTS = ("reproduced", "not-reproduced", "inconclusive", "by-construction", "not-comparable")
KINDS = ("measured", "emulated", "modeled", "reported")
MIN_N = 5  # seeds or repetitions behind every judged claim (issue: "at least 5")
CHOICE_TOLERANCE = 0.10
CHOICE_TOLERANCE_WHY = ("the project's standing band (reproduce/report.py DEFAULT_TOLERANCE), fixed before "
                        "choices were judged on it: an option within a tenth of our best's value is as good in "
                        "practice")
CONFIDENCE = 0.95
N_RESAMPLES = 4999
COLUMNS = ["paper", "claim", "quote", "where", "test", "tolerance", "reported", "ours", "ours_low",
           "ours_high", "n", "kind", "host", "verdict", "reason", "quantity", "row", "method",
           "more_runs", "beside", "best"]
METHOD = ("95 % percentile bootstrap over seeds (whole seeds resampled, speedups paired by seed), "
          f"{N_RESAMPLES} resamples")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, as data. ``reported``: the paper's value (ratio), its choice
    (choice), or None (direction). ``tolerance``: the band's relative half-width (ratio),
    or the largest shortfall from our best still called as good (choice; default
    :data:`CHOICE_TOLERANCE`), with ``tolerance_why``. ``threshold`` and ``sense`` (">" or "<"): the side a direction
    claim's statistic must lie on. ``rule``: a verdict fixed by rule (by-construction,
    not-comparable), with ``reason`` saying why. ``row``: the primary comparison row
    (``table/quantity/condition`` in comparison.csv)."""

    id: str
    quote: str
    where: str
    test: str
    quantity: str
    row: str = ""
    reported: float | str | None = None
    tolerance: float | None = None
    tolerance_why: str = ""
    threshold: float = 0.0
    sense: str = ">"
    rule: str | None = None
    reason: str = ""

    def __post_init__(self):
        if self.test == "choice" and self.tolerance is None:
            object.__setattr__(self, "tolerance", CHOICE_TOLERANCE)
            object.__setattr__(self, "tolerance_why", self.tolerance_why or CHOICE_TOLERANCE_WHY)
        if self.test not in TESTS:
            raise ValueError(f"claim {self.id}: test must be one of {TESTS}, got {self.test!r}")
        if self.rule is not None and self.rule not in ("by-construction", "not-comparable"):
            raise ValueError(f"claim {self.id}: rule must be by-construction or not-comparable")
        if self.rule is None:
            if self.test == "ratio" and (not _finite(self.reported) or not self.tolerance
                                         or self.tolerance <= 0 or not self.tolerance_why):
                raise ValueError(f"claim {self.id}: a ratio test needs a finite reported value, "
                                 "a positive tolerance and why that tolerance")
            if self.test == "choice" and (self.reported is None or not self.tolerance or self.tolerance <= 0
                                          or not self.tolerance_why):
                raise ValueError(f"claim {self.id}: a choice test needs the paper's choice and a positive "
                                 "tolerance with why")
            if self.sense not in (">", "<"):
                raise ValueError(f"claim {self.id}: sense must be '>' or '<'")
        if not self.quote or not self.where:
            raise ValueError(f"claim {self.id}: quote the paper and say where")


@dataclass
class Evidence:
    """What we measured for one claim. ``ours``: the estimate (choice: how far the paper's
    option falls short of our best, :func:`shortfall`); ``low``/``high``: its interval;
    ``best`` (choice): our best option; ``n``: seeds or repetitions behind it;
    ``kind`` and ``host`` (a machine, or ``profile <name>`` for an emulated figure);
    ``candidates`` (choice): the options whose difference to our best holds 0;
    ``beside``: other kinds' figures of the same quantity, one phrase (e.g. the emulated
    figure beside a measured one); ``reason``: the one-line why; ``few``: a figure of a
    preferred kind on fewer than :data:`MIN_N` runs, which this one stands in for
    (:func:`fall_back`); ``construction``: set where the model fixes the figure's side by
    its design (an emulated dip the barrier model puts there): the verdict is
    ``by-construction`` on :data:`MIN_N` runs or more, never reproduced or not."""

    ours: float | str | None
    low: float = math.nan
    high: float = math.nan
    n: int = 0
    kind: str = "measured"
    host: str = ""
    reason: str = ""
    candidates: tuple = ()
    beside: str = ""
    method: str = METHOD
    best: object = None
    few: "Evidence | None" = None
    construction: str = ""  # why the model fixes this figure's side by its design (verdict: by-construction)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")


def _finite(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and math.isfinite(float(x))


# ---- intervals ---------------------------------------------------------------------------
def over_seeds(records: Sequence, stat: Callable[[list], float], *, label: str,
               confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES) -> tuple[float, float, float]:
    """(estimate, low, high): ``stat`` of ``records`` (one record per seed, any object) and
    its percentile-bootstrap interval, each resample drawing len(records) whole seeds with
    replacement. Resamples where ``stat`` is not finite are left out (a resample without a
    converged run, say); if more than half are, the interval is (nan, nan). Fewer than 2
    records give (stat, nan, nan).

    A ``stat`` with a ``rows`` attribute (:func:`gmean`, :func:`mean_of`, :func:`least_gmean`)
    is evaluated on all resamples at once: ``stat.rows`` of the (n_resamples, len(records))
    array of the same draws (a third axis where a record is a row of columns), equal to
    ``stat`` of each resample bit for bit (tested), about 100 times faster
    (5 records, 4,999 resamples: 1.6 ms against 0.19 s)."""
    rows = getattr(stat, "rows", None)
    if rows is None:
        return over_groups([list(records)], lambda gs: stat(gs[0]), label=label, confidence=confidence,
                           n_resamples=n_resamples)
    x = np.asarray(list(records), dtype=float)  # (n,), or (n, columns)
    est = float(stat(list(x))) if len(x) else math.nan
    if len(x) < 2:
        return est, math.nan, math.nan
    idx = rng_for(label).integers(0, len(x), size=(n_resamples, len(x)))  # over_groups' draws
    return (est, *_percentiles(np.asarray(rows(x[idx]), dtype=float), confidence, n_resamples))


def over_groups(groups: Sequence[Sequence], stat: Callable[[list], float], *, label: str,
                confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES) -> tuple[float, float, float]:
    """:func:`over_seeds` for independent groups of records (e.g. the repeated timings of
    separate tasks): ``stat`` takes the list of groups; each resample redraws every group's
    records with replacement, independently of the others (a stratified bootstrap). With one
    group it is :func:`over_seeds`, draw for draw. A group of fewer than 2 records gives
    (stat, nan, nan)."""
    gs = [list(g) for g in groups]
    est = float(stat(gs)) if gs and all(gs) else math.nan
    if not gs or min(len(g) for g in gs) < 2:
        return est, math.nan, math.nan
    rng = rng_for(label)
    idx = [rng.integers(0, len(g), size=(n_resamples, len(g))) for g in gs]
    vals = np.array([stat([[g[i] for i in ix[k]] for g, ix in zip(gs, idx)]) for k in range(n_resamples)],
                    dtype=float)
    return (est, *_percentiles(vals, confidence, n_resamples))


def _percentiles(vals: np.ndarray, confidence: float, n_resamples: int) -> tuple[float, float]:
    """The percentile interval of the finite resampled values; (nan, nan) where more than
    half are not finite."""
    ok = vals[np.isfinite(vals)]
    if ok.size < n_resamples / 2:
        return math.nan, math.nan
    a = (1 - confidence) / 2
    return float(np.quantile(ok, a)), float(np.quantile(ok, 1 - a))


def mean(values: Sequence[float], *, label: str) -> tuple[float, float, float]:
    """The mean of per-seed ``values`` with its bootstrap interval."""
    v = [float(x) for x in values]
    return over_seeds(v, mean_of, label=label)


def mean_of(values: Sequence[float]) -> float:
    """The arithmetic mean (``mean_of.rows``: of each row of a 2-D array)."""
    return float(np.mean(values))


mean_of.rows = lambda X: np.mean(X, axis=1)


def gmean(values: Sequence[float]) -> float:
    """The geometric mean; nan unless every value is > 0 (``gmean.rows``: of each row)."""
    v = np.asarray(values, dtype=float)
    return float(np.exp(np.mean(np.log(v)))) if v.size and np.all(v > 0) else math.nan


def _gmean_rows(X: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.exp(np.mean(np.log(X), axis=1))
    return np.where(np.all(X > 0, axis=1), g, math.nan)


gmean.rows = _gmean_rows


def least_gmean(records: Sequence[Sequence[float]]) -> float:
    """The smallest of the columns' geometric means, ``records`` one row of columns per seed
    (Python's min: a nan column is passed over unless it comes first; ``least_gmean.rows``:
    of each resample of a (resamples, seeds, columns) array, the same way)."""
    return min(gmean([r[i] for r in records]) for i in range(len(records[0])))


def _least_gmean_rows(X: np.ndarray) -> np.ndarray:
    out = _gmean_rows(X[:, :, 0])
    for i in range(1, X.shape[2]):
        g = _gmean_rows(X[:, :, i])
        out = np.where(g < out, g, out)  # min keeps the current unless the next is smaller
    return out


least_gmean.rows = _least_gmean_rows


def paired_ratio(numerator: dict, denominator: dict, *, label: str) -> tuple[float, float, float, int]:
    """A speedup paired by seed: per seed s in both dicts, numerator[s] / denominator[s]
    (e.g. serial time over parallel time of the same seed); the geometric mean of those
    ratios with its bootstrap interval over seeds, and how many seeds paired."""
    seeds = sorted(set(numerator) & set(denominator))
    r = [numerator[s] / denominator[s] for s in seeds
         if _finite(numerator[s]) and _finite(denominator[s]) and denominator[s] > 0]
    est, lo, hi = over_seeds(r, gmean, label=label)
    return est, lo, hi, len(r)


def indistinguishable(options: dict, *, label: str, lower_is_better: bool = True) -> tuple[object, tuple]:
    """(our best option, the options that cannot be told apart from it). ``options``: option →
    {seed: value}. Best: the lowest (or highest) mean. An option is told apart from the best
    when the bootstrap interval of its mean difference to the best (paired by seed where they
    share seeds, else independent resamples) excludes 0. Where an option has fewer than 2
    runs, no interval exists and the candidates are empty."""
    sign = 1.0 if lower_is_better else -1.0
    means = {o: float(np.mean([v for v in d.values() if _finite(v)])) for o, d in options.items()
             if any(_finite(v) for v in d.values())}
    if not means:
        return None, ()
    best = min(means, key=lambda o: sign * means[o])
    if any(sum(_finite(v) for v in options[o].values()) < 2 for o in means):
        return best, ()  # an option with one run has no interval: nothing can be told apart
    keep = [best]
    for o in means:
        if o == best:
            continue
        a, b = options[o], options[best]
        shared = sorted(s for s in set(a) & set(b) if _finite(a[s]) and _finite(b[s]))
        if len(shared) >= 2:
            _, lo, hi = over_seeds([a[s] - b[s] for s in shared], lambda r: float(np.mean(r)),
                                   label=f"{label} {o}-{best}")
        else:
            av = [v for v in a.values() if _finite(v)]
            bv = [v for v in b.values() if _finite(v)]
            rng = rng_for(f"{label} {o}-{best}")
            d = [np.mean(rng.choice(av, len(av))) - np.mean(rng.choice(bv, len(bv)))
                 for _ in range(N_RESAMPLES)]
            lo, hi = (float(np.quantile(d, 0.025)), float(np.quantile(d, 0.975))) if len(av) > 1 and len(bv) > 1 \
                else (math.nan, math.nan)
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0 <= hi:
            keep.append(o)
    return best, tuple(keep)


def shortfall(options: dict, choice, *, label: str, lower_is_better: bool = True,
              confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES) -> tuple[float, float, float]:
    """(estimate, low, high): how far option ``choice`` falls short of our best option, as a
    fraction of the best's mean: (mean(choice) − mean(best)) / mean(best), negated where higher
    is better, so 0.08 reads "8 % worse than our best" and 0 "it is our best" (options:
    option → {seed: value}, values > 0). The interval is a percentile bootstrap over whole
    seeds, each resample drawing the seeds of every option together (paired by seed) and
    taking the best anew: the choice of the best is part of what is uncertain, so the
    paper's option when it is our best still gets an interval [0, x], wide where another
    option is close. The estimate never lies below 0. nan where ``choice`` was not run; no
    interval with fewer than 2 of its runs."""
    if choice not in options:
        return math.nan, math.nan, math.nan
    names = list(options)
    seeds = sorted(set().union(*(set(d) for d in options.values())), key=str)
    V = np.array([[float(options[o][s]) if s in options[o] and _finite(options[o][s]) and options[o][s] > 0
                   else np.nan for s in seeds] for o in names])
    c = names.index(choice)
    sign = 1.0 if lower_is_better else -1.0

    def short(M):  # M: option × resample means
        best = np.nanmin(M, axis=0) if lower_is_better else np.nanmax(M, axis=0)
        return sign * (M[c] - best) / best

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # an option without a run in a resample
        est = float(short(np.nanmean(V, axis=1)[:, None])[0])
        if np.isfinite(V[c]).sum() < 2:
            return est, math.nan, math.nan
        idx = rng_for(f"{label} shortfall {choice}").integers(0, len(seeds), size=(n_resamples, len(seeds)))
        vals = short(np.nanmean(V[:, idx], axis=2))
    ok = vals[np.isfinite(vals)]
    if ok.size < n_resamples / 2:
        return est, math.nan, math.nan
    a = (1 - confidence) / 2
    return est, float(np.quantile(ok, a)), float(np.quantile(ok, 1 - a))


# ---- verdicts ---------------------------------------------------------------------------
def band(claim: Claim) -> tuple[float, float]:
    """The ratio test's band of values of ours: reported·(1 ± tolerance)."""
    r = float(claim.reported)
    lo, hi = r * (1 - claim.tolerance), r * (1 + claim.tolerance)
    return (min(lo, hi), max(lo, hi))


def verdict(claim: Claim, ev: Evidence) -> str:
    """The claim's verdict from the evidence's interval (module docstring). Two rules come
    first: a claim measured by a formula (kind ``modeled``: deterministic, no seeds) is
    ``by-construction``, its values standing beside the paper's; a claim resting on fewer than
    :data:`MIN_N` seeds or repetitions is ``inconclusive``, whatever its interval says."""
    if claim.rule:
        return claim.rule
    if ev.kind == "modeled" or (ev.construction and ev.n >= MIN_N):
        return "by-construction"
    if ev.n < MIN_N:
        return "inconclusive"
    return "inconclusive" if vetoed(claim, ev) else interval_verdict(claim, ev)


def _decided(claim: Claim, ev: Evidence, point: bool = False) -> str:
    """interval_verdict of ``ev``, or (``point``) of its estimate alone: the side more runs
    would likely land on."""
    return interval_verdict(claim, replace(ev, low=ev.ours, high=ev.ours) if point else ev)


def against_few(claim: Claim, ev: Evidence) -> bool:
    """Whether ``ev.few``'s decided verdict is opposite to the side ``ev``'s estimate lies on:
    more runs of ``ev``'s kind would then likely end in a disagreement (:func:`vetoed`), not
    a verdict."""
    if ev.few is None or not _finite(ev.ours):
        return False
    return {_decided(claim, ev, point=True), interval_verdict(claim, ev.few)} == {"reproduced", "not-reproduced"}


def vetoed(claim: Claim, ev: Evidence) -> bool:
    """Whether ``ev.few`` (:func:`fall_back`), on its own interval, gives the decided verdict
    opposite to ``ev``'s: then neither decides."""
    if ev.few is None:
        return False
    return {interval_verdict(claim, ev), interval_verdict(claim, ev.few)} == {"reproduced", "not-reproduced"}


def fall_back(few: Evidence, ample: Evidence) -> Evidence:
    """``ample`` judged in place of ``few`` where ``few`` (the preferred kind, e.g. measured on
    a many-core host) rests on fewer than :data:`MIN_N` runs and ``ample`` (the same quantity,
    e.g. emulated over this run's seeds) on enough: ``ample`` with ``few`` kept beside it and
    both reasons; :func:`verdict` turns the verdict inconclusive where ``few`` alone says the
    opposite (:func:`vetoed`). Otherwise ``few`` itself, with ``ample``'s figure beside it."""
    if few.n >= MIN_N or ample.n < MIN_N or not _finite(ample.ours):
        if not _finite(ample.ours):
            return few
        fig = _iv_text(ample)
        return replace(few, beside="; ".join(x for x in (f"{ample.kind} ({ample.host}): {fig}, n = {ample.n}",
                                                        ample.beside, few.beside) if x))
    fig = _iv_text(few)
    return replace(ample, few=few, beside="; ".join(x for x in (f"{few.kind} on {few.host}: {fig}, n = {few.n}",
                                                              ample.beside, few.beside) if x),
                   reason="; ".join(x for x in (ample.reason, few.reason) if x))


def _iv_text(ev: Evidence) -> str:
    """"est [low, high]"; a choice's (``best`` set) shortfall in percent, as :func:`ours_text`."""
    if ev.best is not None:
        pct = lambda x: f"{100 * float(x) + 0.0:.3g} %"  # noqa: E731 - + 0.0: no "-0 %"
        return (f"best {_num(ev.best)}, short of it by {pct(ev.ours)}"
                + (f" [{pct(ev.low)}, {pct(ev.high)}]" if _finite(ev.low) and _finite(ev.high) else "")
                if _finite(ev.ours) else f"best {_num(ev.best)}")
    return (f"{_num(ev.ours)} [{_num(ev.low)}, {_num(ev.high)}]" if _finite(ev.low) and _finite(ev.high)
            else _num(ev.ours))


def _few_text(claim: Claim, ev: Evidence) -> str:
    """The sentence a row judged by :func:`fall_back` adds to its reason."""
    f = ev.few
    iv = _iv_text(f)
    where = f.host or "this machine"
    s = (f"judged on the {ev.kind} figure ({ev.n} seeds or repetitions): the {f.kind} one on {where}, "
         f"{iv}, rests on {f.n}, fewer than {MIN_N} (its interval alone would say {interval_verdict(claim, f)})")
    if vetoed(claim, ev):
        s += (f"; the two disagree ({ev.kind}: {interval_verdict(claim, ev)}): at least {MIN_N} runs "
              f"{f.kind} on {where} would decide it")
    elif against_few(claim, ev):
        s += (f"; our estimate lies on the {_decided(claim, ev, point=True)} side, against the {f.kind} "
              f"figure: more runs here would likely end in a disagreement; at least {MIN_N} runs {f.kind} "
              f"on {where} would decide it")
    return s


def interval_verdict(claim: Claim, ev: Evidence) -> str:
    """What the interval alone says (a choice's: its shortfall against the tolerance), before
    :func:`verdict`'s rules on formulas and on fewer than :data:`MIN_N` runs: reproduced,
    not-reproduced or inconclusive. The reason of a claim those rules decide quotes it."""
    lo, hi = ev.low, ev.high
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "inconclusive"
    if claim.test == "ratio":
        b0, b1 = band(claim)
        if b0 <= lo and hi <= b1:
            return "reproduced"
        return "not-reproduced" if hi < b0 or lo > b1 else "inconclusive"
    t, sense = _side(claim)
    if sense == ">":
        return "reproduced" if lo > t else ("not-reproduced" if hi < t else "inconclusive")
    return "reproduced" if hi < t else ("not-reproduced" if lo > t else "inconclusive")


def _side(claim: Claim) -> tuple[float, str]:
    """(threshold, sense) of a direction claim, or of a choice: its shortfall below the tolerance."""
    return (float(claim.tolerance), "<") if claim.test == "choice" else (claim.threshold, claim.sense)


def more_runs(claim: Claim, ev: Evidence) -> int | None:
    """About how many runs in all would likely decide an inconclusive claim: the interval's
    half-width shrinks as 1/√n, so n·(h/d)² runs bring it inside the distance d from our
    estimate to the nearest edge (band edge or threshold). None where the estimate sits on
    the edge (d < h/10: more runs would not decide it) or the claim is not inconclusive."""
    if verdict(claim, ev) != "inconclusive" or not _finite(ev.ours) or against_few(claim, ev):
        return None
    if not (math.isfinite(ev.low) and math.isfinite(ev.high)) or ev.n < MIN_N:
        return None
    edges = band(claim) if claim.test == "ratio" else (_side(claim)[0],)
    x = float(ev.ours)
    d = min(abs(x - e) for e in edges)
    h = max(x - ev.low, ev.high - x)
    if d <= 0 or d < h / 10:
        return None
    return int(math.ceil(ev.n * (h / d) ** 2))


def judge(paper: str, claim: Claim, ev: Evidence) -> dict:
    """One row of claims.csv (:data:`COLUMNS`)."""
    v = verdict(claim, ev)
    m = more_runs(claim, ev)
    reason = "; ".join(x for x in (claim.reason, ev.reason) if x)
    if ev.few is not None and not claim.rule:
        reason = f"{reason}; {_few_text(claim, ev)}" if reason else _few_text(claim, ev)
    if v == "by-construction" and ev.kind == "modeled" and not claim.rule:
        reason = ("deterministic (a formula, no seeds): by construction; on its values against the "
                  f"paper's it is {interval_verdict(claim, ev)}" + (f"; {reason}" if reason else ""))
    elif v == "by-construction" and ev.construction and not claim.rule:
        reason = (f"by construction of the model: {ev.construction}; the emulator cannot test the claim, so "
                  f"no reproduced or not; on its values it is {interval_verdict(claim, ev)}"
                  + (f"; {reason}" if reason else ""))
    elif v == "inconclusive" and _finite(ev.ours) and ev.n < MIN_N:
        reason = (f"{reason}; " if reason else "") + (
            f"rests on {ev.n} run{'s' * (ev.n != 1)}, fewer than {MIN_N}: not judged (its interval alone "
            f"would say {interval_verdict(claim, ev)}); at least {MIN_N} would decide it")
    elif v == "inconclusive":
        if not _finite(ev.ours):
            decide = "not measured in this run"
        elif not (_finite(ev.low) and _finite(ev.high)):
            decide = f"no interval ({ev.n} run{'s' * (ev.n != 1)}): at least {MIN_N} would give one"
        elif vetoed(claim, ev) or against_few(claim, ev):
            decide = ""  # _few_text says what would decide it
        else:
            decide = (f"about {m} runs in all would likely decide it" if m is not None else
                      "our estimate sits on the band's edge: more runs would not decide it")
        reason = "; ".join(x for x in (reason, decide) if x)
    if claim.test == "ratio":
        tol = f"±{claim.tolerance:.0%} ({claim.tolerance_why})" if claim.tolerance else ""
    elif claim.test == "direction":
        tol = f"{claim.sense} {claim.threshold:g}"
    else:
        tol = (f"short of our best by < {claim.tolerance:.0%} ({claim.tolerance_why})"
               + (f"; difference to the best holds 0 for: {', '.join(map(str, ev.candidates))}"
                  if ev.candidates else ""))
    return {"paper": paper, "claim": claim.id, "quote": claim.quote, "where": claim.where,
            "test": claim.test, "tolerance": tol, "reported": claim.reported, "ours": ev.ours,
            "ours_low": ev.low, "ours_high": ev.high, "n": ev.n, "kind": ev.kind, "host": ev.host,
            "verdict": v, "reason": reason, "quantity": claim.quantity, "row": claim.row,
            "method": ev.method, "more_runs": m, "beside": ev.beside, "best": ev.best}


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


def evaluate(paper: str, claims: Sequence[Claim], evidence: dict) -> pd.DataFrame:
    """The claims table: every claim judged on ``evidence`` (claim id → Evidence). A claim
    without evidence raises: a declared claim is either measured or ruled."""
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{paper}: claim ids repeat")
    missing = [c.id for c in claims if c.id not in evidence]
    if missing:
        raise KeyError(f"{paper}: no evidence for claims {', '.join(missing)}")
    return frame([judge(paper, c, evidence[c.id]) for c in claims])


# ---- files and text ----------------------------------------------------------------------
def write(out: Path, df: pd.DataFrame) -> None:
    from reproduce.store import atomic_write

    atomic_write(Path(out) / "claims.csv", df.to_csv(index=False, float_format="%.6g"))


def read(folder: Path) -> pd.DataFrame:
    """``folder/claims.csv``, checked: the columns and the verdicts."""
    f = Path(folder) / "claims.csv"
    df = pd.read_csv(f, keep_default_na=True)
    if list(df.columns) != COLUMNS:
        raise ValueError(f"{f}: columns are not the claims format")
    bad = ~df["verdict"].isin(VERDICTS)
    if bad.any():
        raise ValueError(f"{f}: verdict {df['verdict'][bad].iloc[0]!r} is not one of {', '.join(VERDICTS)}")
    return df


def _num(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, str):
        return x
    x = float(x)
    if x.is_integer() and abs(x) < 1e7:
        return f"{int(x):,}"
    ax = abs(x)
    return f"{x:.3g}" if ax < 999.5 else f"{x:,.0f}"  # 999.5 would round to "1e+03" at 3 digits


def ours_text(r) -> str:
    """"est [low, high]" (or the estimate alone, or the candidates of a choice)."""
    lo, hi = r["ours_low"], r["ours_high"]
    if r["test"] == "choice":
        pct = (lambda x: "–" if pd.isna(x) else f"{100 * float(x) + 0.0:.3g} %")  # + 0.0: no "-0 %"
        short = (f"; {_num(r['reported'])} short of it by {pct(r['ours'])}"
                 + (f" [{pct(lo)}, {pct(hi)}]" if not (pd.isna(lo) or pd.isna(hi)) else "")
                 if not pd.isna(r["ours"]) else "")
        return f"best {_num(r['best'])}{short}"

    iv = f" [{_num(lo)}, {_num(hi)}]" if not (pd.isna(lo) or pd.isna(hi)) else ""
    return _num(r["ours"]) + iv


def _cell(s) -> str:
    return "" if s is None or (isinstance(s, float) and math.isnan(s)) else str(s).replace("|", "/").replace("\n", " ")


def markdown(df: pd.DataFrame, *, with_paper: bool = False) -> list[str]:
    """The claims table as markdown lines: claim, the paper's value, ours with its interval
    and n, kind (host), verdict, reason."""
    head = (["paper"] if with_paper else []) + ["claim", "paper's value", "ours [95 % interval]", "n",
                                                "kind (host)", "verdict", "reason"]
    L = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in df.iterrows():
        kind = f"{r['kind']} ({r['host']})" if _cell(r["host"]) else r["kind"]
        cells = ([r["paper"]] if with_paper else []) + [
            f"**{r['claim']}** {_cell(r['where'])}", _num(r["reported"]), ours_text(r), _num(r["n"]), kind,
            f"**{r['verdict']}**", _cell(r["reason"]) + (f" Beside: {_cell(r['beside'])}." if _cell(r["beside"]) else "")]
        L.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return L


def counts(df: pd.DataFrame) -> dict:
    c = df["verdict"].value_counts()
    return {v: int(c.get(v, 0)) for v in VERDICTS}


def report_lines(df: pd.DataFrame, *, level: str = "##") -> list[str]:
    """A report.md's opening: the claims table, the counts and the method in one line."""
    c = counts(df)
    return [f"{level} Claims", "",
            "Each claim of the paper, with the quantity that tests it judged on an interval, "
            "never a point (reproduce/claims.py). Method: " + METHOD + ".", "",
            *markdown(df), "",
            "Counts: " + ", ".join(f"{n} {v}" for v, n in c.items()) + ".", ""]
