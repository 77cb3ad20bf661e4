"""paper2's why (issue "The why behind every verdict"): the figures its claims rest on, each
split into factors that multiply to it (reproduce/why.py), per timing repetition or seed:

- Fig. 4, bucketing's speed-up over random batches = (padded cells, random ÷ bucketed) ×
  (time per padded cell, random ÷ bucketed), at the run's k over its interleaved
  repetitions and at the other k timed (timing_k.py), with the CTC lattice's cells (random
  ÷ bucketed) beside: the bound where the CTC's recursions, which run over T·S, dominate;
- Fig. 3 and 5a, a validation-loss ratio at equal training time, B ÷ A, = (B's loss ÷ A's at
  equal passes) × (B's loss at its own passes in that time ÷ at A's), beside the passes each
  makes in that time; a pass is one sweep over the training set (a 1-worker epoch, a round
  of P workers on 1/P each: tasks.py);
- where the runs stop: the validation character error rate at the end of every Q's runs.

``compute`` gives them, ``rows`` the comparison rows (table ``why``), ``section`` the
report's Why section and ``cite`` the sentences each claim's reason takes from them."""
from __future__ import annotations

import math

import numpy as np

from reproduce import claims as C
from reproduce import report as R
from reproduce import why as W
from reproduce.paper2 import claims as P2C
from reproduce.paper2.setup import GPUS, NAME
from reproduce.paper2.tasks import loss_at

CELLS = ("cells_ratio", "time_per_cell_ratio", "speedup")
LATTICE = "lattice_ratio"  # beside the product: the CTC lattice's cells, random ÷ this layout
MARGIN = 0.05  # a time per cell within 5 % of 1, or a speed-up within 5 % of a bound, counts as at it
EQUAL_TIME = ("loss_ratio_equal_passes", "loss_ratio_more_passes", "loss_ratio_equal_time", "passes_ratio")


# ---- Fig. 4: padded cells × time per cell -----------------------------------------------
def cell_records(et: dict, config: str) -> list[tuple]:
    """One (cells ratio, time-per-cell ratio, speed-up[, lattice ratio]) per repetition:
    random batches over ``config`` ("method:Q") in the same repetition; the CTC lattice's
    cells where the timing recorded them (tasks.lattice_cells)."""
    r, c = et["random:1"], et[config]
    lat = [lr / lc for lr, lc in zip(r.get("lattice") or [], c.get("lattice") or [])]
    if len(lat) != len(r["time_s"]):
        lat = []  # older timings recorded no lattice cells
    out = []
    for i, (tr, cr, tc, cc) in enumerate(zip(r["time_s"], r["cells"], c["time_s"], c["cells"])):
        cells, speed = cr / cc, tr / tc
        out.append((cells, speed / cells, speed) + ((lat[i],) if lat else ()))
    return out


def _cell_label(config: str) -> str:
    # Q = 3's speed-up is claim abstract-speed's (paired_ratio over the same repetitions, the
    # same label): its interval here is the claim's, draw for draw
    return (P2C._label("fig4 speedup Q=3 vs random") if config == "optimal:3"
            else P2C._label(f"why fig4 {config}"))


def cells(et: dict, kres: dict) -> list[dict]:
    """Per k and configuration: {k, config, reps, fwd_bwd, factor: (est, low, high)};
    ``fwd_bwd``: from timing_k.py's epochs of forward + backward passes (no update), else
    the training epochs of tasks.epoch_times at the run's k."""
    out = []
    for k, res, fb in [(P2C.K, et, False)] + [(k, r, True) for k, r in sorted(kres.items())]:
        for config in (c for c in res if not c.startswith("_") and c != "random:1"):
            recs = cell_records(res, config)
            label = _cell_label(config) + (f" k={k} fwd+bwd" if fb else "")
            names = CELLS + ((LATTICE,) if recs and len(recs[0]) > len(CELLS) else ())
            out.append({"k": k, "config": config, "reps": len(recs), "fwd_bwd": fb,
                        **W.factor_intervals(recs, names, label=label)})
    return out


def label_correlation(setup) -> float:
    """Pearson's r between a training sequence's length and its label's (why bucketing by
    length shrinks the CTC lattice, T·S, more than the padded cells, T)."""
    from reproduce.paper2.tasks import _seq

    d, data = _seq(setup)
    tr = np.asarray(d.train)
    return float(np.corrcoef(data.lengths[tr], data.label_lengths[tr])[0, 1])


# ---- loss at equal time: at equal passes × from the passes made ----------------------------
def passes_at(res: dict, t: float) -> float:
    """Passes over the training set made by training time t (linear within a pass)."""
    ts = np.concatenate([[0.0], np.asarray(res["time_s"], dtype=float)])
    return float(np.interp(t, ts, np.arange(len(ts)))) if t <= ts[-1] * (1 + 1e-9) else math.nan


def loss_at_passes(res: dict, n: float) -> float:
    """Validation loss after n passes (linear between passes; NaN past the run's end)."""
    v = np.concatenate([[res["val_loss0"]], np.asarray(res["val_loss"], dtype=float)])
    return float(np.interp(n, np.arange(len(v)), v)) if n <= len(v) - 1 + 1e-9 else math.nan


def equal_time_record(a: dict, b: dict, t: float) -> tuple:
    """(B's loss ÷ A's at A's passes by t, B's loss at t ÷ at A's passes, B ÷ A at t, B's
    passes ÷ A's by t): the first two multiply to the third."""
    na, nb = passes_at(a, t), passes_at(b, t)
    la, lb, lb_na = loss_at(a, t), loss_at(b, t), loss_at_passes(b, na)
    return lb_na / la, lb / lb_na, lb / la, nb / na


def equal_time(a: dict, b: dict, *, t: float | None, label: str) -> dict:
    """{seeds, factor: (est, low, high)} over the seeds both hold; t None: per seed the end
    of the shorter run (as claims.reductions compares them)."""
    seeds = sorted(set(a) & set(b))
    recs = [equal_time_record(a[s], b[s], t if t is not None else min(a[s]["time_s"][-1], b[s]["time_s"][-1]))
            for s in seeds]
    recs = [r for r in recs if all(math.isfinite(x) and x > 0 for x in r)]
    return {"seeds": len(recs), **W.factor_intervals(recs, EQUAL_TIME, label=label)}


def workers_runs(results, *, P: int, kind: str, Q: int) -> dict:
    """{seed: result} of the P-worker model-averaging runs (short-first order)."""
    return {t.params["seed"]: r for t, r in results
            if t.name == "train" and t.kind == kind and t.params.get("workers") == P
            and t.params.get("Q") == Q and t.params.get("order", "short_first") == "short_first"}


def comm_share(runs: dict) -> tuple[float, float, float]:
    """Mean over seeds of the communication share of a P-worker run's training time
    (allreduce and the wait for it: measured, or the profile's model when emulated)."""
    shares = [float(np.sum(r["comm_s"]) / r["time_s"][-1]) for _, r in sorted(runs.items())]
    return C.mean(shares, label=P2C._label("why comm share")) if shares else (math.nan,) * 3


def compute(results, *, setup) -> dict:
    """Every decomposition of this run (see the module docstring)."""
    et = next((r for t, r in results if t.name == "epoch_times"), None)
    from reproduce.paper2.timing_k import NAME as TIMING_K

    kres = {t.params["k"]: r for t, r in results if t.name == TIMING_K}
    w = {"cells": cells(et, kres) if et is not None else [], "fig3": [], "fig5": [], "ends": [],
         "label_r": label_correlation(setup) if et is not None else math.nan}
    one, _, tb = P2C.fig3_runs(results, et or {}, setup=setup)
    w["budget"] = tb
    rnd = one.get((1, "short_first"), {})
    for q in sorted(q for q in setup.Qs if q != 1 and (q, "short_first") in one):
        if rnd and math.isfinite(tb):
            w["fig3"].append({"Q": q, **equal_time(rnd, one[(q, "short_first")], t=tb,
                                                   label=P2C._label(f"why fig3 Q={q}"))})
    for (q, order), d in sorted(one.items()):
        if order == "short_first":
            ends = [float(r["val_cer"][-1]) for _, r in sorted(d.items())]
            w["ends"].append({"Q": q, "seeds": len(ends), "passes": len(next(iter(d.values()))["val_loss"]),
                              "cer": C.mean(ends, label=P2C._label(f"why end cer Q={q}"))})
    Q = setup.fig5_Q
    base = P2C.train_runs(results).get((Q, "short_first"), {})  # own clocks, as claims.reductions
    for kind in ("measured", "emulated"):
        for P in sorted({t.params["workers"] for t, _ in results if t.name == "train" and t.kind == kind
                         and t.params.get("workers", 1) > 1}):
            runs = workers_runs(results, P=P, kind=kind, Q=Q)
            if base and runs:
                w["fig5"].append({"P": P, "kind": kind, "Q": Q, "comm_share": comm_share(runs),
                                  "profile": next(iter(runs.values()))["profile"] or None,
                                  **equal_time(base, runs, t=None,
                                               label=P2C._label(f"why fig5 P={P} {kind}"))})
    return w


# ---- comparison rows, report section, claim reasons -----------------------------------------
def rows(w: dict) -> list[dict]:
    """Table ``why`` of comparison.csv: no paper values (the paper decomposes nothing)."""
    out = []
    for c in w["cells"]:
        m, q = c["config"].split(":")
        cond = R.condition(Q=int(q), method=m, bunch=c["k"], timing="fwd+bwd" if c["fwd_bwd"] else None)
        for f in (f for f in CELLS + (LATTICE,) if f in c):
            est, lo, hi = c[f]
            out.append(R.row(NAME, W.TABLE, f, cond, "x", ours=est, low=lo, high=hi, kind="measured",
                             runs=c["reps"], note=_CELL_NOTES[f] + f"; geometric mean over {c['reps']} "
                             "interleaved repetition(s), 95 % bootstrap over them, one resample for the three"))
    for x in w["fig3"]:
        cond = R.condition(workers=1, Q=x["Q"], method="optimal", bunch=P2C.K) + f";time_s={w['budget']:.0f}"
        out += _equal_rows(x, cond, "measured", "Q ÷ random batches (Q = 1), same seed, at Fig. 3's budget")
    for x in w["fig5"]:
        cond = R.condition(workers=x["P"], Q=x["Q"], method="optimal", bunch=P2C.K, profile=x["profile"])
        out += _equal_rows(x, cond, x["kind"], f"{x['P']} workers ÷ 1, same seed, at the shorter run's end")
        est, lo, hi = x["comm_share"]
        out.append(R.row(NAME, W.TABLE, "comm_share", cond, "fraction", ours=est, low=lo, high=hi,
                         kind=x["kind"], runs=x["seeds"], note="allreduce (and its wait) over training "
                         "time, mean over seeds"))
    for e in w["ends"]:
        est, lo, hi = e["cer"]
        out.append(R.row(NAME, W.TABLE, "val_cer_at_end", R.condition(workers=1, Q=e["Q"], bunch=P2C.K)
                         + f";epoch={e['passes']}", "fraction", ours=est, low=lo, high=hi, kind="measured",
                         runs=e["seeds"], note="validation character error rate after the last epoch, "
                         "mean over seeds"))
    return out


_CELL_NOTES = {
    "cells_ratio": "padded cells of random batches / of this layout (Fig. 4's bound)",
    "time_per_cell_ratio": "(random batches' epoch time / cells) / (this layout's time / cells)",
    "speedup": "random batches' epoch time / this layout's = cells_ratio × time_per_cell_ratio",
    LATTICE: "CTC lattice cells Σ k_b·T_pad·S_pad (S_pad = 2·longest label + 1) of random batches / "
             "of this layout: the bound for the CTC's α/β recursions, which run over the lattice"}
_EQUAL_NOTES = {
    "loss_ratio_equal_passes": "B's validation loss / A's, B taken at A's passes in that time",
    "loss_ratio_more_passes": "B's loss at its own passes / at A's passes (below 1: its extra passes help)",
    "loss_ratio_equal_time": "B's loss / A's at equal training time = the two factors' product",
    "passes_ratio": "B's passes over the training set / A's in that time"}


def _equal_rows(x: dict, cond: str, kind: str, what: str) -> list[dict]:
    return [R.row(NAME, W.TABLE, f, cond, "x", ours=x[f][0], low=x[f][1], high=x[f][2], kind=kind,
                  runs=x["seeds"], note=f"{what}: {_EQUAL_NOTES[f]}; geometric mean over seeds, 95 % "
                  "bootstrap over seeds, one resample for the four") for f in EQUAL_TIME]


def _cfg_words(config: str) -> str:
    m, q = config.split(":")
    return {"random": "random batches", "megabatch": "megabatches"}.get(m, f"{m.replace('_', ' ')} Q = {q}"
                                                                      if m != "optimal" or q != "1" else "eq. 1")


def _f(x: tuple, fmt: str = ".2f") -> str:
    return W.ci(*x, fmt=fmt)


def _epoch_cells(w: dict) -> list[dict]:
    """The cell splits of the training epochs at the run's k (the claims' timing)."""
    return [c for c in w["cells"] if not c["fwd_bwd"]]


def _q3(w: dict) -> dict | None:
    return next((c for c in _epoch_cells(w) if c["config"] == "optimal:3"), None)


def cells_sentences(w: dict) -> list[str]:
    """What the cell split says, computed from it: at the run's k, how far the time per cell
    strays from 1 among the bucketed layouts; at the other k, where Q = 3's measured speed-up
    beats its cell bound (a time-per-cell ratio above 1 + MARGIN), whether it stays within its
    CTC lattice bound (up to MARGIN above it) or exceeds that too."""
    at_k = [c for c in _epoch_cells(w) if c["config"].startswith("optimal:") and c["config"] != "optimal:1"]
    out = []
    if at_k:
        lo = min(c["time_per_cell_ratio"][0] for c in at_k)
        hi = max(c["time_per_cell_ratio"][0] for c in at_k)
        out.append(f"At k = {P2C.K} the bucketed layouts' time per cell is {lo:.2f}–{hi:.2f}× random "
                   "batches': the speed-up follows the padded cells, so the cell bound is what bucketing "
                   "can give at this k, and the paper's 4× needs a k at which random batches pad far more.")
    above = [c for c in w["cells"] if c["fwd_bwd"] and c["config"] == "optimal:3"
             and c["time_per_cell_ratio"][0] > 1 + MARGIN]
    if above:
        s = ("Where the measured speed-up of Q = 3 exceeds its cell bound ("
             + ", ".join(f"k = {c['k']}: {c['cells_ratio'][0]:.2f}× fewer cells × "
                         f"{c['time_per_cell_ratio'][0]:.2f}× per cell = {c['speedup'][0]:.2f}×"
                         + (f", against {c[LATTICE][0]:.2f}× fewer CTC lattice cells" if LATTICE in c else "")
                         for c in above)
             + f"; forward + backward passes, {above[0]['reps']} repetition each), a bucketed cell "
             "costs less than a random batch's. ")
        lat = [c for c in above if LATTICE in c]
        within = [c for c in lat if c["speedup"][0] <= c[LATTICE][0] * (1 + MARGIN)]
        beyond = [c for c in lat if c not in within]
        ks = lambda cs: ", ".join(f"k = {c['k']}" for c in cs)  # noqa: E731
        if within:
            s += (f"At {ks(within)} it lies between its cell bound and its CTC lattice bound, as it "
                  "would if the LSTM's time followed the padded cells and the CTC's the lattices its α "
                  f"and β run over (T_pad·S_pad): a label's length follows its sequence's (r = "
                  f"{w['label_r']:.2f} over the training set), so bucketing by length shrinks the "
                  "lattices more than the cells. ")
        if beyond:
            s += (f"At {ks(beyond)} it exceeds even the CTC lattice bound: what else makes a bucketed "
                  "cell cheaper is unexplained. ")
        if not lat:
            s += "This run's timings recorded no lattice cells: the cause is not traced here."
        s = s.rstrip()
        out.append(s)
    return out


def _equal_words(x: dict, b: str, a: str) -> str:
    a_s = a + ("'" if a.endswith("s") else "'s")  # "random batches'", "1 worker's"
    return (f"{b} end{'s' * (not b.endswith('workers'))} at {_f(x['loss_ratio_equal_time'])}× "
            f"{a_s} loss: "
            f"{_f(x['loss_ratio_equal_passes'])}× at equal passes, × {_f(x['loss_ratio_more_passes'])} from "
            f"making {_f(x['passes_ratio'])}× the passes")


def fig5_sentence(x: dict) -> str:
    """One model-averaging comparison in words, with what its factors say."""
    P, kind = x["P"], x["kind"]
    s = (_equal_words(x, f"{P} {kind} workers", "1 worker") + f" (ideal: {P}×; communication "
         f"{x['comm_share'][0]:.0%} of their time)")
    lo = x["loss_ratio_equal_passes"][1]
    if math.isfinite(lo) and lo > 1:
        s += (": at equal passes the averaged model (eq. 3) is worse than one worker's over the whole "
              "interval, and its extra passes do not make that up")
    return s


def fig3_sentence(w: dict) -> str:
    if not w["fig3"]:
        return ""
    best = min(w["fig3"], key=lambda x: x["loss_ratio_equal_time"][0])
    parts = [_equal_words(best, f"Q = {best['Q']}", "random batches")]
    q3 = next((x for x in w["fig3"] if x["Q"] == 3 and x is not best), None)
    if q3:
        parts.append(_equal_words(q3, "Q = 3", "random batches"))
    lo, hi = best["loss_ratio_equal_passes"][1:]
    same = (f": per pass Q = {best['Q']} is no better than random batches (its interval at equal passes "
            "holds 1), so its lead is the passes its fewer padded cells buy in the budget"
            if lo <= 1 <= hi else "")
    return f"at Fig. 3's budget ({w['budget']:.3g} s), " + "; ".join(parts) + same


def ends_sentence(w: dict) -> str:
    if not w["ends"]:
        return ""
    cer = [e["cer"][0] for e in w["ends"]]
    return (f"every 1-worker run stops at a validation character error rate of {min(cer):.2f}–{max(cer):.2f} "
            f"(mean per Q, after {w['ends'][0]['passes']} passes): the claims of Fig. 3 (the best Q, faster "
            "early) are judged in early training. Whether they hold later needs longer runs, an ablation "
            "not run yet.")


def section(w: dict) -> list[str]:
    """The report's "## Why" section (issue "The why behind every verdict")."""
    if not (w["cells"] or w["fig3"] or w["fig5"]):
        return []
    L = W.heading(W.FACTORS.format(per="timing repetition or seed", over="") + " (reproduce/paper2/why.py).")
    if w["cells"]:
        L += ["**Bucketing's speed-up over random batches (Fig. 4) = fewer padded cells × time per cell.** "
              "Training epochs at the run's k; epochs of forward + backward passes only (no update) at "
              "every k timed by timing_k.py.", ""]
        L += W.table(["k", "epoch", "layout", "speed-up", "= padded cells, random ÷ this",
                      "× time per cell, random ÷ this", "beside: CTC lattice cells, random ÷ this",
                      "repetitions"],
                     [[c["k"], "fwd + bwd" if c["fwd_bwd"] else "training", _cfg_words(c["config"]),
                       _f(c["speedup"]), _f(c["cells_ratio"]), _f(c["time_per_cell_ratio"]),
                       _f(c.get(LATTICE, (math.nan,) * 3)), c["reps"]]
                      for c in w["cells"] if not c["fwd_bwd"] or c["config"] == "optimal:3"]) + [""]
        L += [" ".join(cells_sentences(w)), ""]
    if w["fig5"] or w["fig3"]:
        L += ["**Validation loss at equal training time = at equal passes × from the passes made.** B ÷ A, "
              "per seed: B's loss over A's with B taken at A's passes in that time, times B's loss at its "
              "own passes over at A's. A pass is one sweep over the training set (one round of P workers "
              "on 1/P each).", ""]
        L += W.table(["B ÷ A", "timing", "loss at equal time", "= at equal passes", "× from the passes made",
                      "passes made, B ÷ A", "seeds"],
                     [[f"{x['P']} workers ÷ 1 (Q = {x['Q']})", x["kind"], _f(x["loss_ratio_equal_time"]),
                       _f(x["loss_ratio_equal_passes"]), _f(x["loss_ratio_more_passes"]), _f(x["passes_ratio"]),
                       x["seeds"]] for x in w["fig5"]]
                     + [[f"Q = {x['Q']} ÷ random batches, at {w['budget']:.3g} s", "measured",
                         _f(x["loss_ratio_equal_time"]), _f(x["loss_ratio_equal_passes"]),
                         _f(x["loss_ratio_more_passes"]), _f(x["passes_ratio"]), x["seeds"]] for x in w["fig3"]])
        said = [fig5_sentence(x) for x in w["fig5"]] + ([fig3_sentence(w)] if w["fig3"] else [])
        L += ["", " ".join(x[0].upper() + x[1:] + "." for x in said), ""]
    if w["ends"]:
        e = ends_sentence(w)
        L += ["**Where the runs stop.** " + e[0].upper() + e[1:], ""]
        L += W.table(["Q", "validation CER at the end", "passes", "seeds"],
                     [[e["Q"], _f(e["cer"]), e["passes"], e["seeds"]] for e in w["ends"]]) + [""]
    return L


def cite(ev: dict, w: dict) -> None:
    """Add to each not-reproduced or inconclusive claim's reason the decomposition that
    explains it (the Why section's figures), in place."""
    def add(cid: str, text: str) -> None:
        if cid in ev and text:
            ev[cid].reason += "; why (section Why): " + text
    q3 = _q3(w)
    if q3:
        split = (f"{_f(q3['cells_ratio'])}× fewer padded cells × {_f(q3['time_per_cell_ratio'])}× "
                 f"time per cell at k = {P2C.K}")
        add("fig4-4x", split)
        lo, hi = q3["time_per_cell_ratio"][1:]
        add("abstract-speed", split + (": per cell neither faster nor slower (its interval holds 1), so "
                                       "the speed-up is the padded-cell bound, what bucketing can give at "
                                       "this k" if lo <= 1 <= hi else ""))
    early = next((x for x in w["fig3"] if x["Q"] == 3), None)
    if early:
        add("fig3-early", f"at the full budget {_equal_words(early, 'Q = 3', 'random batches')}; at a "
                          "tenth of it (the claim's point) the ratio is not taken apart: unexplained there")
    at_k = [c for c in _epoch_cells(w) if c["config"].startswith("optimal:") and c["config"] != "optimal:1"]
    if at_k:
        worst = min(at_k, key=lambda c: c["speedup"][0])
        add("fig4-longest", f"{_cfg_words(worst['config'])} pads {_f(worst['cells_ratio'])}× random "
                            f"batches' cells (below 1: more cells) × {_f(worst['time_per_cell_ratio'])}× per cell")
    add("fig3-bestQ", "; ".join(s for s in (fig3_sentence(w), ends_sentence(w).split(":")[0]) if s))
    by = {(x["P"], x["kind"]): x for x in w["fig5"]}
    if "fig5a-23pct" in ev and (GPUS, ev["fig5a-23pct"].kind) in by:
        add("fig5a-23pct", fig5_sentence(by[(GPUS, ev["fig5a-23pct"].kind)]))
    if "concl-dp" in ev:  # the P the claim is judged at (claims._fig5): most measured, else fewest emulated
        kind = ev["concl-dp"].kind
        Ps = [p for p, k in by if k == kind]
        if Ps:
            add("concl-dp", fig5_sentence(by[(max(Ps) if kind == "measured" else min(Ps), kind)]))
