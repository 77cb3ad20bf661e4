"""paper2's claims as data and the evidence that tests them (issue 30, reproduce/claims.py).

Khomenko, Shyshkov, Radyvonenko & Bokhan 2016: every claim of the abstract and the
conclusion, and the main message of §III.A and of Figs. 3, 4 and 5 (§IV.B). Quotes are
verbatim from the plain-text paper (/work/shared/papers/paper2-...txt, whitespace aside;
its OCR prints the bucket count Q as "O" in some places, quoted as printed).

:func:`evidence` reads the task results ``report.write`` receives: the interleaved epoch
timings of Fig. 4 (one record per repetition, speedups paired by repetition), the 1-worker
training runs of every Q and seed (Fig. 3, read at equal time on the clock of those
interleaved timings: :func:`fig3_runs`), and the P-worker runs of Fig. 5 against the
1-worker run of the same seed. No many-core host measured paper2 (results/machines/,
../shared/machines/ hold none), so the 6-GPU claim rests on emulated runs.
"""
from __future__ import annotations

import math

import numpy as np

from reproduce import claims as C
from reproduce import report as R
from reproduce.paper2.setup import (BASELINE_EPOCH_S, BEST_Q, DEFAULT, GPUS, LOSS_REDUCTION_6, NAME,
                                    SPEEDUP_Q3)
from reproduce.paper2.tasks import loss_at

K = DEFAULT.batch_size
EARLY_FRACTION = 0.1  # "at the beginning": the first of report.EARLY_FRACTIONS (a tenth of Fig. 3's budget)
RANDOM_Q1, EQ1_Q1 = "1 (random batches)", "1 (eq. 1)"  # Fig. 3's two readings of the paper's Q = 1

TOL_4X = 0.125
TOL_4X_WHY = ("the paper gives a whole factor ('close to 4', 'the acceleration factor 4') and no "
              "spread: what rounds to 4 lies within 3.5–4.5")
TOL_23 = 0.5 / 23
TOL_23_WHY = ("the paper prints a whole percentage from one 30-h run and no spread: what rounds "
              "to 23 % lies within 22.5–23.5 %")

SPEEDUP_Q = ("epoch-time speedup of optimal Q = 3 buckets over random batches (one training "
             f"epoch, k = {K}, 1 worker, measured), geometric mean over interleaved repetitions, "
             "paired by repetition")
CLAIMS = [
    C.Claim("abstract-speed",
            quote=("The approach increases the training speed for tasks where a length of the input "
                   "sequence may vary significantly. … The proposed approach improves training speed "
                   "by clustering sequences into buckets by their length"),
            where="Abstract; Conclusion", test="direction", quantity=SPEEDUP_Q,
            row=f"fig4/speedup_vs_random/{R.condition(Q=3, method='optimal', bunch=K)}",
            threshold=1.0, sense=">"),
    # the paper's Q = 1 is "purely random split of sequences on mini-batches" (§IV.B): the
    # primary baseline; eq. 1's reading (all padded to the longest) stands beside
    C.Claim("fig4-4x",
            quote=("For the value of O = 3, the speed up factor is close to 4. … We obtained the "
                   "acceleration factor 4 for the number of buckets O = 3."),
            where="§IV.B, Fig. 4; Conclusion", test="ratio", quantity=SPEEDUP_Q,
            row=f"fig4/speedup_vs_random/{R.condition(Q=3, method='optimal', bunch=K)}",
            reported=SPEEDUP_Q3, tolerance=TOL_4X, tolerance_why=TOL_4X_WHY),
    C.Claim("fig4-longest",
            quote=("In terms of the wall clock time, the system without bucketing … has the longest "
                   "epoch time"),
            where="§IV.B, Fig. 4", test="direction",
            quantity=("smallest epoch-time speedup over random batches among optimal Q = 2, 3, 4, 6 "
                      f"(k = {K}, measured; geometric means over repetitions, paired by repetition)"),
            row=f"fig4/speedup_vs_random/{R.condition(Q=2, method='optimal', bunch=K)}",
            threshold=1.0, sense=">"),
    # the step from the paper's Q = 1 (random batches) to Q = 2 is fig4-longest's; this one
    # tests the bucketed Q among themselves
    C.Claim("fig4-Q", quote="The epoch time reduces as Q increases.", where="§IV.B, Fig. 4",
            test="direction",
            quantity=("smallest ratio T(Q_i)/T(Q_i+1) of the epoch times of consecutive optimal "
                      f"Q = 2, 3, 4, 6 (k = {K}, measured; geometric means over repetitions, "
                      "paired by repetition)"),
            row=f"fig4/epoch_time/{R.condition(Q=6, method='optimal', bunch=K)}",
            threshold=1.0, sense=">"),
    C.Claim("fig4-4h", quote="has the longest epoch time (4 hours per epoch, Fig. 4)",
            where="§IV.B, Fig. 4", test="ratio",
            quantity=f"epoch time of random batches (k = {K}, 1 worker, measured)",
            row=f"fig4/epoch_time/{R.condition(Q=1, method='random', bunch=K)}",
            reported=BASELINE_EPOCH_S, rule="not-comparable",
            reason=("an absolute time: 1 GB of pen data on a 2016 K40 GPU against ~1,100 synthetic "
                    "sequences on one 2026 CPU core")),
    C.Claim("fig3-bestQ",
            quote="the best acceleration with minimum validation loss was achieved for Q = 3.",
            where="§IV.B, Fig. 3", test="choice",
            quantity=("validation CTC loss at Fig. 3's time budget (the training time of the fastest "
                      "configuration's epochs, each epoch's padded cells at its configuration's seconds "
                      "per cell in Fig. 4's interleaved timing), 1 worker, per seed; options: Q = 1 read as random "
                      "batches and as eq. 1, optimal Q = 2, 3, 6 shortest bucket first; lowest best"),
            row="fig3/best_Q/workers=1", reported=BEST_Q),
    # Q = 3: the paper's chosen Q; Q = 2 and 6 stand beside
    C.Claim("fig3-early",
            quote=("We observed faster convergence of the validation loss especially at the "
                   "beginning of the training."),
            where="§IV.B, Fig. 3", test="direction",
            quantity=("validation loss with optimal Q = 3 over that with random batches at a tenth "
                      "of Fig. 3's time budget (on Fig. 4's interleaved clock), same seed; geometric mean over seeds (< 1: buckets ahead)"),
            row=(f"fig3/val_loss_vs_random/{R.condition(workers=1, Q=3, method='optimal', bunch=K)}"
                 f";time_fraction={EARLY_FRACTION:g}"),
            threshold=1.0, sense="<"),
    C.Claim("fig5a-23pct",
            quote=("The experiment shows that the validation error for 30 hours of training is "
                   "better by 23% for 6 GPU case (see Fig. 5a, 1 GPU vs 6 GPU comparison)."),
            where="§IV.B, Fig. 5a", test="ratio",
            quantity=(f"1 − loss_{GPUS}/loss_1: validation loss of {GPUS} workers (model averaging, "
                      "eq. 3, Q = 6) against the 1-worker run of the same seed at the same training "
                      "time; mean over seeds"),
            row=f"fig5a/val_loss_reduction_vs_1/workers={GPUS};Q=6;profile=here;scheme=average",
            reported=LOSS_REDUCTION_6, tolerance=TOL_23, tolerance_why=TOL_23_WHY),
    # DEVIATION: the paper's 6 GPUs are beyond our 2 cores; the sign of the data-parallel gain
    # is tested where it is measured (2 workers), the 6-worker emulated figure beside; its
    # size is fig5a-23pct's
    C.Claim("concl-dp",
            quote=("Due to data parallelization in its turn, we observed the reduction of the "
                   "validation loss by 23% for the same wall clock time compared to the single GPU "
                   "case."),
            where="Conclusion (Fig. 5a)", test="direction",
            quantity=("1 − loss_P/loss_1 at equal training time, model averaging (eq. 3, Q = 6) on the "
                      "largest measured P, against the 1-worker run of the same seed; mean over seeds"),
            row="fig5a/val_loss_reduction_vs_1/workers=2;Q=6;scheme=average",
            threshold=0.0, sense=">"),
    C.Claim("dp-optimal",
            quote="The dynamic programming algorithm is used to find optimal bucket sizes.",
            where="§III.A", test="direction",
            quantity=("eq. 2's cost Σ_q |S_q|·max l of optimal Q = 3 buckets over the lower of "
                      "quantile and equal-width Q = 3 buckets, on our training lengths (modeled)"),
            row=f"fig4/padded_cell_bound/{R.condition(Q=3, method='optimal', bunch=K)}",
            threshold=1.0, sense="<", rule="by-construction",
            reason=("DYNAMICBUCKETING minimises eq. 2's cost exactly (engine/schedule.py "
                    "optimal_buckets; tests/unit/test_buckets.py checks it against brute force): a "
                    "property of the algorithm, deterministic, not a measurement")),
]
BY_ID = {c.id: c for c in CLAIMS}


# ---- evidence ---------------------------------------------------------------------------
def _label(cid: str) -> str:
    return f"{NAME} {cid}"


def _fmt(x: float, low: float, high: float, fmt: str = ".2f", unit: str = "") -> str:
    iv = f" [{low:{fmt}}, {high:{fmt}}]" if math.isfinite(low) and math.isfinite(high) else ""
    return f"{x:{fmt}}{unit}{iv}"


def timing_reps(et: dict) -> list[dict]:
    """Fig. 4's interleaved timings as one record per repetition: configuration → seconds."""
    keys = [k for k, v in et.items() if not k.startswith("_") and isinstance(v, dict)]
    n = min((len(et[k]["time_s"]) for k in keys), default=0)
    return [{k: float(et[k]["time_s"][i]) for k in keys} for i in range(n)]


def _gm(xs) -> float:
    """:func:`reproduce.claims.gmean` in plain Python (it runs inside 4,999 bootstrap
    resamples): NaN unless every value is positive."""
    xs = list(xs)
    if not xs or not all(x > 0 for x in xs):
        return math.nan
    return math.exp(math.fsum(map(math.log, xs)) / len(xs))


def _ratio_gmean(recs: list, num: str, den: str) -> float:
    return _gm(r[num] / r[den] for r in recs)


def _optimal_qs(reps: list) -> list[int]:
    return sorted(int(k.split(":")[1]) for k in (reps[0] if reps else {})
                  if k.startswith("optimal:") and int(k.split(":")[1]) >= 2)


def _fig4(et: dict, kres: dict, *, host: str) -> dict:
    """Evidence of the Fig. 4 claims from the interleaved timings (repetitions as records)."""
    reps = timing_reps(et)
    n = len(reps)
    ev = {}
    # the speedup at Q = 3 over random batches: one quantity for two claims (one label: one interval)
    num = {i: r["random:1"] for i, r in enumerate(reps)}
    den = {i: r["optimal:3"] for i, r in enumerate(reps) if "optimal:3" in r}
    s, lo, hi, m = C.paired_ratio(num, den, label=_label("fig4 speedup Q=3 vs random"))
    beside = []
    if all("optimal:1" in r for r in reps) and den:
        e, elo, ehi, _ = C.paired_ratio({i: r["optimal:1"] for i, r in enumerate(reps)}, den,
                                        label=_label("fig4 speedup Q=3 vs eq1"))
        beside.append(f"against eq. 1's baseline (every batch padded to the longest) "
                      f"{_fmt(e, elo, ehi, unit='×')}, measured, {m} repetitions")
    if kres:
        parts = []
        for kk, r in sorted(kres.items()):
            rk = timing_reps(r)
            if rk and "optimal:3" in rk[0]:
                parts.append(f"k = {kk} {_ratio_gmean(rk, 'random:1', 'optimal:3'):.2f}×")
        if parts:
            beside.append("forward + backward passes only, against random batches: " + ", ".join(parts)
                          + f" (measured, {len(timing_reps(next(iter(kres.values()))))} repetition(s) each)")
    cells = [c_r / c_3 for c_r, c_3 in zip(et["random:1"]["cells"], et.get("optimal:3", {}).get("cells", []))]
    bound = float(np.median(cells)) if cells else math.nan
    ev["abstract-speed"] = C.Evidence(
        s, lo, hi, m, kind="measured", host=host,
        reason=(f"row fig4/speedup_vs_random Q=3: {_fmt(s, lo, hi, unit='×')} at k = {K}; the padded-cell "
                f"bound, what bucketing can save against random batches at this k, is {bound:.2f}×"))
    ev["fig4-4x"] = C.Evidence(
        s, lo, hi, m, kind="measured", host=host, beside="; ".join(beside),
        reason=(f"row fig4/speedup_vs_random Q=3: {s / SPEEDUP_Q3 - 1:+.0%} from the paper's 4×; at "
                f"k = {K} the padded cells bound it to {bound:.2f}× (we get {s / bound:.0%} of that); random "
                f"batches pad more as k grows and the paper's k is not stated; eq. 1's reading beside"))
    # the longest epoch: every bucketed optimal Q faster than random batches
    qs = [q for q in _optimal_qs(reps)]
    if qs and n:
        def slowest(recs):
            return min(_ratio_gmean(recs, "random:1", f"optimal:{q}") for q in qs)
        v, vlo, vhi = C.over_seeds(reps, slowest, label=_label("fig4-longest"))
        per = {q: _ratio_gmean(reps, "random:1", f"optimal:{q}") for q in qs}
        worst = min(per, key=per.get)
        ev["fig4-longest"] = C.Evidence(
            v, vlo, vhi, n, kind="measured", host=host,
            reason=(f"rows fig4/speedup_vs_random: over random batches Q = "
                    + ", ".join(f"{q} {x:.2f}×" for q, x in per.items())
                    + (f"; Q = {worst} is slower than random batches: padding each sequence to its "
                       f"bucket's bound costs more than random batches' own-longest padding at k = {K}"
                       if per[worst] < 1 else f"; the slowest of them is Q = {worst}")))
    else:
        ev["fig4-longest"] = C.Evidence(math.nan, n=n, kind="measured", host=host,
                                        reason="no bucketed optimal Q was timed in this run")
    if len(qs) >= 2 and n:
        steps = list(zip(qs[:-1], qs[1:]))

        def smallest_step(recs):
            return min(_ratio_gmean(recs, f"optimal:{a}", f"optimal:{b}") for a, b in steps)
        v, vlo, vhi = C.over_seeds(reps, smallest_step, label=_label("fig4-Q"))
        per = {(a, b): _ratio_gmean(reps, f"optimal:{a}", f"optimal:{b}") for a, b in steps}
        first = (f"; with eq. 1 as Q = 1 the first step is {_ratio_gmean(reps, 'optimal:1', f'optimal:{qs[0]}'):.2f}×"
                 if "optimal:1" in reps[0] else "")
        ev["fig4-Q"] = C.Evidence(
            v, vlo, vhi, n, kind="measured", host=host, beside=first.removeprefix("; "),
            reason=("rows fig4/epoch_time: T(Q)/T(next Q) "
                    + ", ".join(f"{a}→{b} {x:.2f}" for (a, b), x in per.items())
                    + "; every step cuts the padded cells (eq. 2), so time follows"))
    else:
        ev["fig4-Q"] = C.Evidence(math.nan, n=n, kind="measured", host=host,
                                  reason="fewer than two bucketed optimal Q were timed in this run")
    t, tlo, thi = C.mean([r["random:1"] for r in reps], label=_label("fig4-4h"))
    ev["fig4-4h"] = C.Evidence(t, tlo, thi, n, kind="measured", host=host,
                               reason=f"ours {t:.3g} s per epoch against the paper's 4 h")
    return ev


def train_runs(results) -> dict:
    """1-worker training runs: (Q, order) → {seed: result}."""
    out = {}
    for t, r in results:
        p = t.params
        if t.name == "train" and p.get("workers") == 1:
            out.setdefault((p["Q"], p.get("order", "short_first")), {})[p["seed"]] = r
    return out


def timing_key(Q: int) -> str:
    """The configuration of Fig. 4's interleaved timing whose epochs a 1-worker Fig. 3 run of
    ``Q`` buckets makes: random batches for Q = 1, else optimal buckets (either bucket order)."""
    return "random:1" if Q == 1 else f"optimal:{Q}"


def seconds_per_cell(et: dict, key: str, rep: int | None = None) -> float:
    """Seconds per padded cell of configuration ``key`` in Fig. 4's interleaved timing:
    repetition ``rep``'s, or the median over the repetitions (NaN where it was not timed)."""
    if key not in et or not et[key]["time_s"]:
        return math.nan
    x = np.asarray(et[key]["time_s"], dtype=float) / np.asarray(et[key]["cells"], dtype=float)
    return float(np.median(x)) if rep is None else float(x[rep % len(x)])


def on_clock(r: dict, s_per_cell: float, cells=None) -> dict:
    """``r`` on the interleaved clock: epoch e ends at Σ_{j≤e} cells_j · ``s_per_cell``, the
    run's own padded cells per epoch (or ``cells``) priced at its configuration's seconds per
    padded cell in Fig. 4's timing; the run's own wall clock is kept as ``own_time_s``."""
    c = np.asarray(r["cells"] if cells is None else cells, dtype=float)
    return {**r, "time_s": (np.cumsum(c) * s_per_cell).tolist(), "own_time_s": r["time_s"]}


def fig3_runs(results, et: dict, *, setup, rep: int | None = None) -> tuple[dict, dict, float]:
    """Fig. 3's 1-worker runs on one clock (issue 30): ((Q, order) → {seed: result}, the
    short-first ones at the setup's Qs and the order ablation; eq. 1's runs, {seed: result};
    the time budget, the shortest run's training time, eq. 1's included; NaN without a run).

    The runs' losses per epoch are deterministic for a seed, but each task's own wall clock
    drifts with the VM by up to ±30 % between tasks minutes apart (results/stability.md), so
    equal training time is read on the clock of Fig. 4's ``epoch_times`` task instead, whose
    configurations ran interleaved: each epoch costs the run's padded cells at its
    configuration's seconds per cell there (:func:`on_clock`), repetition ``rep``'s, or the
    median over the repetitions. A configuration the timing lacks keeps the run's own clock.
    Eq. 1's Q = 1 makes the random-batch run's updates (padding after a sequence's end changes
    no update: tests/equivalence/test_bucketed.py) with every batch padded to the longest
    sequence: its epochs cost eq. 1's timed epoch (``optimal:1``)."""
    one = train_runs(results)
    one = {(q, o): d for (q, o), d in one.items() if o != "short_first" or q in setup.Qs}
    clocked = {}
    for (q, o), d in one.items():
        spc = seconds_per_cell(et, timing_key(q), rep)
        clocked[(q, o)] = {s: on_clock(r, spc) if math.isfinite(spc) else r for s, r in d.items()}
    eq1 = {}
    spc1 = seconds_per_cell(et, "optimal:1", rep)
    if math.isfinite(spc1):
        c1 = float(np.median(et["optimal:1"]["cells"]))  # every batch padded to the longest: fixed
        eq1 = {s: on_clock(r, spc1, [c1] * len(r["val_loss"]))
               for s, r in one.get((1, "short_first"), {}).items()}
    ends = [r["time_s"][-1] for d in (*clocked.values(), eq1) for r in d.values()]
    return clocked, eq1, (min(ends) if ends else math.nan)


def _fig3(results, et: dict, *, setup, host: str) -> dict:
    """Evidence of the Fig. 3 claims: validation loss per seed at equal training time on the
    interleaved clock (:func:`fig3_runs`). Seed i is read on timing repetition i's clock
    (i modulo the repetitions), at its own budget (the shortest of its runs), so a bootstrap
    over seeds resamples the timing with the training: the claims' intervals hold both."""
    one, eq1, tb = fig3_runs(results, et, setup=setup)
    ev = {}
    if not math.isfinite(tb):
        nothing = "no 1-worker training run in this invocation"
        return {"fig3-bestQ": C.Evidence(None, kind="measured", host=host, reason=nothing),
                "fig3-early": C.Evidence(math.nan, kind="measured", host=host, reason=nothing)}
    nrep = len(timing_reps(et))
    seeds = sorted({s for d in one.values() for s in d})
    if nrep:
        rep_of = {s: i % nrep for i, s in enumerate(seeds)}
        clocks = {i: fig3_runs(results, et, setup=setup, rep=i) for i in sorted(set(rep_of.values()))}
        one = {k: {s: clocks[rep_of[s]][0][k][s] for s in d} for k, d in one.items()}
        eq1 = {s: clocks[rep_of[s]][1][s] for s in eq1}
    budget = {s: min(r[s]["time_s"][-1] for r in (*one.values(), eq1) if s in r) for s in seeds}
    rnd = one.get((1, "short_first"), {})
    options = {}
    if rnd:
        options[RANDOM_Q1] = {s: loss_at(r, budget[s]) for s, r in rnd.items()}
        if eq1:
            options[EQ1_Q1] = {s: loss_at(r, budget[s]) for s, r in eq1.items()}
    for q in sorted(q for q in setup.Qs if q != 1):
        if (q, "short_first") in one:
            options[q] = {s: loss_at(r, budget[s]) for s, r in one[(q, "short_first")].items()}
    n = min(len(d) for d in options.values())
    means = {o: float(np.mean(list(d.values()))) for o, d in options.items()}
    txt = "; ".join(f"Q = {o} {v:.1f}" for o, v in means.items())
    tb = float(np.median(list(budget.values())))
    clock = (f"each seed's own budget (median {tb:.3g} s), on timing repetition i's clock for seed i "
             f"(Fig. 4's interleaved epochs, {nrep} repetitions)" if nrep else
             f"{tb:.3g} s on each run's own clock (no Fig. 4 timing in this run)")
    if n >= 2:
        best, keep = C.indistinguishable(options, label=_label("fig3-bestQ"))
        est, glo, ghi = C.shortfall(options, BY_ID["fig3-bestQ"].reported, label=_label("fig3-bestQ"))
        ev["fig3-bestQ"] = C.Evidence(
            est, glo, ghi, n=n, kind="measured", host=host, candidates=keep, best=best,
            reason=(f"validation loss at equal training time, {clock}, mean of {n} seeds: {txt} nats; "
                    f"lowest Q = {best}; not told apart from it: " + ", ".join(map(str, keep))))
    else:  # one seed: nothing can be told apart (every option would stay a candidate)
        best = min(means, key=means.get)
        ev["fig3-bestQ"] = C.Evidence(
            None, n=n, kind="measured", host=host, best=best,
            reason=(f"only one seed per option, fewer than {C.MIN_N}: nothing can be told apart; "
                    f"validation loss at equal training time, {clock}: {txt} nats"))
    # faster convergence at the beginning: Q = 3 over random batches at a tenth of the budget

    def early(q, f=EARLY_FRACTION):
        d = one.get((q, "short_first"), {})
        return [loss_at(d[s], f * budget[s]) / loss_at(rnd[s], f * budget[s]) for s in sorted(set(d) & set(rnd))]
    r3 = early(3)
    e, elo, ehi = C.over_seeds(r3, _gm, label=_label("fig3-early"))
    beside = ", ".join(f"Q = {q} {C.gmean(early(q)):.2f}" for q in sorted(setup.Qs)
                       if q not in (1, 3) and early(q))
    ev["fig3-early"] = C.Evidence(
        e, elo, ehi, len(r3), kind="measured", host=host,
        beside=(f"same ratio for {beside}" if beside else ""),
        reason=(f"row fig3/val_loss_vs_random Q=3 at {EARLY_FRACTION:.0%} of {clock}: "
                f"{_fmt(e, elo, ehi)}; at the full budget {C.gmean(early(3, 1.0)):.2f}"))
    return ev


def reductions(results, *, P: int, kind: str, Q: int, name: str = "train") -> dict:
    """Fig. 5a per seed: 1 − loss_P/loss_1 against the 1-worker run of the same seed, at its
    training time or at the end of the P-worker run if that ended sooner (report.py)."""
    one = train_runs(results).get((Q, "short_first"), {})
    out = {}
    for t, r in results:
        p = t.params
        if (t.name == name and t.kind == kind and p.get("workers") == P and p.get("Q") == Q
                and p.get("order", "short_first") == "short_first" and p["seed"] in one):
            o = one[p["seed"]]
            tc = min(o["time_s"][-1], r["time_s"][-1])
            out[p["seed"]] = 1 - loss_at(r, tc) / loss_at(o, tc)
    return out


def _fig5(results, *, setup, host: str, profile_name: str) -> dict:
    Q = setup.fig5_Q
    measured = sorted({t.params["workers"] for t, _ in results if t.name == "train" and t.kind == "measured"
                       and t.params.get("workers", 1) > 1})
    emulated = sorted({t.params["workers"] for t, _ in results if t.name == "train" and t.kind == "emulated"})
    ev = {}

    def summary(P, kind, cid):
        red = reductions(results, P=P, kind=kind, Q=Q)
        m, lo, hi = C.mean(list(red.values()), label=_label(f"{cid} P={P} {kind}")) if red else (math.nan,) * 3
        return red, m, lo, hi

    where = f"profile {profile_name}"
    if GPUS in measured or GPUS in emulated:
        kind = "measured" if GPUS in measured else "emulated"
        red, m, lo, hi = summary(GPUS, kind, "fig5a-23pct")
        few = (f"; only {len(red)} seed(s), fewer than {C.MIN_N} (--quick, or --runs below 5)"
               if len(red) < C.MIN_N else "")
        bs = ""
        if measured:
            _, bm, blo, bhi = summary(max(measured), "measured", "fig5a-23pct")
            bs = f"{max(measured)} workers measured {_fmt(bm, blo, bhi, '+.1%')}"
        ev["fig5a-23pct"] = C.Evidence(
            m, lo, hi, len(red), kind=kind, host=host if kind == "measured" else where, beside=bs,
            reason=(f"row fig5a/val_loss_reduction_vs_1 workers={GPUS}: {m:+.1%} against the paper's "
                    "+23 %" + (f"; emulated beyond the measured P ≤ {max(measured, default=1)} (no "
                               "many-core host measured paper2)" if kind == "emulated" else "")
                    + few))
    else:
        ev["fig5a-23pct"] = C.Evidence(math.nan, kind="emulated", host=where,
                                       reason=f"no {GPUS}-worker run in this invocation (--quick emulates "
                                              f"only {max(emulated, default=0)} workers): fewer than "
                                              f"{C.MIN_N} seeds, none")
    if measured:
        P, kind = max(measured), "measured"
    elif emulated:
        P, kind = min(emulated), "emulated"
    else:
        ev["concl-dp"] = C.Evidence(math.nan, kind="measured", host=host,
                                    reason="no P-worker model-averaging run in this invocation")
        return ev
    red, m, lo, hi = summary(P, kind, "concl-dp")
    bs = ""
    if GPUS in emulated and not (P == GPUS and kind == "emulated"):
        _, bm, blo, bhi = summary(GPUS, "emulated", "concl-dp")
        bs = f"{GPUS} workers emulated {_fmt(bm, blo, bhi, '+.1%')}"
    ev["concl-dp"] = C.Evidence(
        m, lo, hi, len(red), kind=kind, host=host if kind == "measured" else where, beside=bs,
        reason=(f"row fig5a/val_loss_reduction_vs_1 workers={P}: {_fmt(m, lo, hi, '+.1%')} at equal "
                f"training time ({kind}; the paper's 6 GPUs are beyond our cores)"
                + ("; lower loss with more workers" if m > 0 else "; higher loss with more workers")))
    return ev


def _dp(lengths) -> C.Evidence:
    from engine.schedule import BUCKETINGS

    l = np.asarray(lengths)

    def cost(m):
        b = np.asarray(BUCKETINGS[m](l, 3))
        return float(b[np.searchsorted(b, l)].sum())  # eq. 2: each sequence padded to its bucket's bound
    other = {m: cost(m) for m in ("quantile", "equal_width")}
    x = cost("optimal") / min(other.values())
    return C.Evidence(x, n=1, kind="modeled",
                      reason=(f"eq. 2's cost of optimal Q = 3 buckets is {x:.3f}× the lower of quantile "
                              f"({cost('optimal') / other['quantile']:.3f}×) and equal-width "
                              f"({cost('optimal') / other['equal_width']:.3f}×) on our training lengths"))


def evidence(results, *, setup, lengths, host: str = "", profile_name: str = "here") -> dict:
    """Claim id → :class:`reproduce.claims.Evidence`, from the task results (``(Task, result)``
    pairs as report.write receives them) and the training lengths (the by-construction
    claim's figure). ``host``: the machine the measured tasks ran on; ``profile_name``: the
    profile behind the emulated runs."""
    from reproduce.paper2.timing_k import NAME as TIMING_K

    et = next((r for t, r in results if t.name == "epoch_times"), None)
    kres = {t.params["k"]: r for t, r in results if t.name == TIMING_K}
    ev = {}
    if et is not None:
        ev.update(_fig4(et, kres, host=host))
    else:
        for cid in ("abstract-speed", "fig4-4x", "fig4-longest", "fig4-Q", "fig4-4h"):
            ev[cid] = C.Evidence(math.nan, kind="measured", host=host, reason="no Fig. 4 timing in this run")
    ev.update(_fig3(results, et or {}, setup=setup, host=host))
    ev.update(_fig5(results, setup=setup, host=host, profile_name=profile_name))
    ev["dp-optimal"] = _dp(lengths)
    for cid, e in ev.items():  # a shrunk run (--quick, --runs, fewer timing repetitions) says so
        if cid != "dp-optimal" and 0 < e.n < C.MIN_N and "fewer than" not in e.reason:
            unit = "repetition(s)" if cid.startswith(("fig4", "abstract")) else "seed(s)"
            e.reason += f"; only {e.n} {unit}, fewer than {C.MIN_N} (a shrunk run: --quick or --runs)"
    return ev


def host_of(meta: dict) -> str:
    """The measured tasks' machine, from the run's metadata (``conditions.machine``)."""
    m = (meta.get("conditions") or {}).get("machine") or {}
    if not m:
        return ""
    return f"{m.get('host', '?')} ({m.get('cpu', '?')}, {m.get('cores', '?')} cores)"
