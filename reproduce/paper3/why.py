"""paper3's why (issue "The why behind every verdict"): every training speed-up over serial
batch training split into (serial passes ÷ PPT passes) × (time per pass, serial ÷ PPT), per
seed, with intervals, per nodes, local epoch and timing source. Used by report.py (the
comparison rows, table ``why``) and text.py (the report's Why section)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from reproduce import report as R
from reproduce import why as W
from reproduce.paper3 import claims as P3
from reproduce.paper3.setup import NAME


# ---- the why behind each speed-up: fewer passes × faster passes ------------------------------
# The issue "The why behind every verdict": split every training speed-up into (serial passes ÷
# parallel passes) × (time per pass, serial ÷ parallel), with intervals, per P. A pass is an
# epoch, n pattern presentations (the training set, §3): the serial run's batch epoch, and for
# PPT the presentations over all nodes / n (reproduce/paper3/ppt.py: epochs = rounds · P ·
# m / n), so a round of P nodes at local epoch m is P·m/n of a pass (one at 8 nodes, m = 32).
WHY = ("passes_ratio", "time_per_pass_ratio", "speedup")
WHY_PASS = ("a pass is an epoch, n pattern presentations (the whole training set): for PPT "
            "those over all nodes, so a round is P·m/n of one (reproduce/paper3/ppt.py)")


def paired_runs(runs: pd.DataFrame, P: int, m: int, source: str) -> tuple[dict, int]:
    """({seed: (c·T_serial, E_serial, T_PPT, E_PPT)}, seeds left out): the main study's PPT
    runs at (P, m) timed by ``source``, each beside the serial run of its seed
    (reproduce/paper3/tasks.py: serial and PPT run i share seed + i); T time, E epochs, c the
    source's ``serial_scale`` (the serial run put on the source's machine, as
    :func:`reproduce.paper3.claims.paired_speedup` does). A seed whose serial or PPT run hit
    the cap is left out (as the paper leaves out unsuccessful runs) and counted."""
    es, ts = P3.serial_by_seed(runs, "epochs"), P3.serial_by_seed(runs, "time_s")
    ep = P3.pattern_by_seed(runs, P, m, source=source, col="epochs")
    tp = P3.pattern_by_seed(runs, P, m, source=source, col="time_s")
    sc = runs[runs.source == source].serial_scale
    c = float(sc.iloc[0]) if len(sc) else 1.0
    both = sorted(set(ep) & set(es))
    ok = {s: (c * ts[s], es[s], tp[s], ep[s]) for s in both
          if all(math.isfinite(x) and x > 0 for x in (es[s], ts[s], ep[s], tp[s]))}
    return ok, len(both) - len(ok)


def why_records(runs: pd.DataFrame, P: int, m: int, source: str) -> tuple[dict, int]:
    """({seed: (passes_ratio, time_per_pass_ratio, speedup)}, seeds left out) of
    :func:`paired_runs`: passes_ratio = E_serial / E_PPT, time_per_pass_ratio =
    (c·T_serial / E_serial) / (T_PPT / E_PPT), speedup = c·T_serial / T_PPT, their product."""
    pairs, left = paired_runs(runs, P, m, source)
    return _ratios(pairs), left


def _ratios(pairs: dict) -> dict:
    return {s: (es / ep, (ts / es) / (tp / ep), ts / tp) for s, (ts, es, tp, ep) in pairs.items()}


def why_intervals(recs: dict, *, label: str) -> dict:
    """{quantity of :data:`WHY`: (geometric mean over seeds, low, high)}, the 95 % percentile
    bootstrap over seeds (:func:`reproduce.claims.over_seeds`). The records are per-seed
    tuples and all three draw from the same ``label``, so every resample takes the same
    seeds for the three: in each, gmean(passes) · gmean(time per pass) = gmean(speed-up)."""
    return W.factor_intervals([recs[s] for s in sorted(recs)], WHY, label=label)


def why_rows(runs: pd.DataFrame, *, over=None) -> list[dict]:
    """The ``why`` table: for every node count P, local epoch m and timing source with PPT
    runs, the speed-up over serial batch training and its two factors (:func:`why_records`),
    geometric means over the paired seeds with 95 % bootstrap intervals. No paper value: the
    paper gives no serial epoch count (§5 only says PPT needs "fewer total epochs")."""
    over = over or (lambda P: False)
    main = runs[(runs.study == "main") & (runs.name == "pattern")]
    rows = []
    for (P, src), g in main.groupby(["nodes", "source"], sort=True):
        kind, prof, sc = g.kind.iloc[0], g.profile.iloc[0] or None, float(g.serial_scale.iloc[0])
        scaled = f" × the profile's compute ratio {sc:.3g}" if sc != 1.0 else ""
        for m in sorted(int(x) for x in g.local_epoch.dropna().unique()):
            pairs, left = paired_runs(runs, int(P), m, src)
            recs = _ratios(pairs)
            cond = R.condition(nodes=int(P), local_epoch=m, profile=prof,
                               oversubscribed="yes" if kind == "measured" and over(int(P)) else None)
            iv = why_intervals(recs, label=f"{NAME} why {cond}")
            how = (f"geometric mean over {len(recs)} seeds paired by seed, 95 % percentile bootstrap over "
                   "seeds (the same resamples for the three why rows)"
                   + (f"; {left} seed{'s' * (left != 1)} left out (a run hit the cap)" if left else ""))
            per_pass = ""
            if pairs:
                t1 = np.median([ts / es for ts, es, _, _ in pairs.values()])
                t_ppt = np.median([tp / ep for _, _, tp, ep in pairs.values()])
                per_pass = (f"; median time per pass: serial {t1 * 1e6:,.0f} µs"
                            + (" (on the profile's machine)" if scaled else "") + f", PPT {t_ppt * 1e6:,.0f} µs")
            notes = {
                "passes_ratio": f"serial epochs / PPT epochs; {WHY_PASS}; {how}",
                "time_per_pass_ratio": (f"(serial time / serial epochs) / (PPT time / PPT epochs): {P} if each "
                                        "node's compute scaled with its patterns and communication were free"
                                        f"{per_pass}; {how}"),
                "speedup": f"serial time{scaled} / PPT time = passes_ratio × time_per_pass_ratio per seed; {how}"}
            for q in WHY:
                est, lo, hi = iv[q]
                rows.append(R.row(NAME, W.TABLE, q, cond, "x", ours=est, low=lo, high=hi, kind=kind,
                                  runs=len(recs), note=notes[q]))
    return rows


# ---- ablations: the summed update's step without the nodes, and combine=mean -----------------
# The issue "The why behind every verdict" asks for serial at η·P and PPT with combine=mean
# (tasks.py runs them on the first ablation_runs seeds). A P-node PPT round sums P nodes'
# updates (§4.1), a step about P times a batch step's, so part of "fewer passes" may be the
# larger step alone. Per seed, with the main serial run (time T_s over E_s passes), the
# serial run at f·η (E_f passes, timed at the main run's pace T_s/E_s, the same net and
# data: the learning rate does not change a pass's work) and the PPT run (T_PPT, E_PPT):
# speed-up T_s/T_PPT = (E_s/E_f: the step alone) × (E_f·T_s/E_s / T_PPT: PPT over serial at
# f·η); E_f/E_PPT the passes PPT saves beyond the step.
LR = ("lr_passes_ratio", "speedup_over_lr_serial", "speedup", "passes_beyond_lr")


def _study_epochs(runs: pd.DataFrame, study: str, name: str) -> dict:
    """{seed: epochs} of a study's converged runs (one timing source: epochs do not depend on it)."""
    g = runs[(runs.study == study) & (runs.name == name) & runs.converged]
    g = g[g.source == g.source.iloc[0]] if not g.empty else g
    return {int(s): float(e) for s, e in zip(g.seed, g.epochs)}


def lr_records(runs: pd.DataFrame, P: int, m: int, source: str, f: float) -> tuple[dict, int]:
    """({seed: the four :data:`LR` values}, seeds left out) for PPT at (P, m) from ``source``
    against the serial runs at η and at f·η of the same seed (see above)."""
    pairs, _ = paired_runs(runs, P, m, source)
    e_f = _study_epochs(runs, f"lr×{f:g}", "serial")
    seeds = sorted(set(e_f) | set(pairs))
    recs = {s: (es / e_f[s], (e_f[s] * ts / es) / tp, ts / tp, e_f[s] / ep)
            for s, (ts, es, tp, ep) in pairs.items() if s in e_f}
    return recs, len(seeds) - len(recs)


def ablation_rows(runs: pd.DataFrame, setup, *, source_for) -> list[dict]:
    """Table ``why`` rows of the ablations: for each f in setup.lr_scales, PPT at P = f nodes
    and local epoch 32 (§5's best at 8 nodes) split by :func:`lr_records`, from the timing
    ``source_for(P)`` gives; and the passes of serial over PPT with combine=mean (8 nodes,
    local epoch 32), against the main study's combine=sum."""
    rows = []
    for f in setup.lr_scales:
        P, m = int(f), 32
        src = source_for(P)
        if src is None:
            continue
        recs, left = lr_records(runs, P, m, src, f)
        if not recs:
            continue
        prof = runs[runs.source == src].profile.iloc[0] or None
        kind = "measured" if prof is None else "emulated"
        cond = R.condition(nodes=P, local_epoch=m, profile=prof, baseline=f"serial lr×{f:g}")
        iv = W.factor_intervals([recs[s] for s in sorted(recs)], LR, label=f"{NAME} why lr {cond}")
        how = (f"geometric mean over {len(recs)} seeds paired by seed, 95 % bootstrap over seeds, one resample "
               "for the four" + (f"; {left} seed(s) left out (a run hit the cap, or no ablation run)" if left else ""))
        notes = {"lr_passes_ratio": f"serial passes at η / at {f:g}·η: what the larger step alone saves",
                 "speedup_over_lr_serial": (f"serial at {f:g}·η (its passes × the main serial run's time per "
                                            "pass, same seed) / PPT time: the speed-up left to the nodes"),
                 "speedup": "serial time at η / PPT time = the two factors' product",
                 "passes_beyond_lr": f"serial passes at {f:g}·η / PPT passes"}
        for q in LR:
            est, lo, hi = iv[q]
            rows.append(R.row(NAME, W.TABLE, q, cond, "x", ours=est, low=lo, high=hi, kind=kind,
                              runs=len(recs), note=f"{notes[q]}; {how}"))
    es, em = serial_epochs(runs), _study_epochs(runs, "mean", "pattern")
    both = sorted(set(es) & set(em))
    if both:
        est, lo, hi = W.factor_intervals([(es[s] / em[s],) for s in both], ("passes_ratio",),
                                         label=f"{NAME} why combine=mean")["passes_ratio"]
        rows.append(R.row(NAME, W.TABLE, "passes_ratio", R.condition(nodes=8, local_epoch=32, combine="mean"),
                          "x", ours=est, low=lo, high=hi, kind="emulated", runs=len(both),
                          note="serial passes / PPT passes with the nodes' updates averaged (combine=mean) "
                               "instead of summed; geometric mean over seeds paired by seed, 95 % bootstrap"))
    return rows


def serial_epochs(runs: pd.DataFrame) -> dict:
    return _study_epochs(runs, "main", "serial")


def ablation_lines(df: pd.DataFrame) -> list[str]:
    """The Why section's ablation paragraph, from the rows of :func:`ablation_rows`."""
    w = df[(df.table == W.TABLE) & df.condition.str.contains("baseline=serial lr")]
    L = []
    if not w.empty:
        L += ["", "**Ablation: serial batch training at P·η.** A PPT round sums P nodes' updates (§4.1), a step "
              "about P times a batch step's. Serial runs at P·η (the same seeds) take the larger step apart from "
              "the nodes: speed-up = (serial passes at η ÷ at P·η: the step alone) × (serial at P·η ÷ PPT, time: "
              "what the nodes add). Serial at P·η is timed at the main serial run's pace per pass.", ""]
        cells: dict = {}
        for r in w.itertuples():
            cells.setdefault(r.condition, {})[r.quantity] = r
        body = []
        for cond, q in cells.items():
            c = dict(x.split("=", 1) for x in cond.split(";"))
            if all(k in q for k in LR):
                body.append([c["nodes"], c["local_epoch"], f"emulated ({c['profile']})" if "profile" in c else "measured"]
                            + [W.ci(q[k].ours, q[k].ours_low, q[k].ours_high) for k in LR] + [q["speedup"].runs])
        L += W.table(["nodes", "local epoch", "timing", "the step alone (passes, η ÷ P·η)",
                      "× the nodes (time, serial at P·η ÷ PPT)", "= speed-up", "PPT's passes beyond the step",
                      "seeds"], body)
    mean = df[(df.table == W.TABLE) & df.condition.str.contains("combine=mean")]
    if not mean.empty:
        r = mean.iloc[0]
        said = ("its interval holds 1: without the summed step PPT saves no passes" if r.ours_low <= 1 <= r.ours_high
                else "fewer than with the summed updates" if r.ours_high < 1 or r.ours < 2 else "")
        L += ["", f"**Ablation: combine=mean.** With the 8 nodes' updates averaged instead of summed, serial "
              f"needs {W.ci(r.ours, r.ours_low, r.ours_high)}× the passes of PPT at local epoch 32 "
              f"({int(r.runs)} seeds paired)" + (f": {said}." if said else "."), ""]
    return L


# ---- the claims' reasons cite the split -------------------------------------------------------
def _cells(rows: list[dict], table: str, P: int, profile: str | None) -> dict:
    """{local epoch: {quantity: row}} of ``table`` at P nodes for one timing source (profile
    None: measured)."""
    out: dict = {}
    for r in rows:
        if r["table"] != table:
            continue
        c = dict(x.split("=", 1) for x in r["condition"].split(";"))
        if (c.get("nodes") == str(P) and c.get("profile") == profile
                and not {"oversubscribed", "baseline", "combine"} & set(c)):  # the main study's rows
            out.setdefault(int(c["local_epoch"]), {})[r["quantity"]] = r
    return out


def cite(ev: dict, rows: list[dict], *, here: str) -> None:
    """Add to the reasons of the best-local-epoch and communication-share claims the split
    behind them (the why rows and table 2's emulated shares), in place."""
    for P in (2, 4, 8):
        e = ev.get(f"best-local-epoch-{P}")
        if e is None or e.ours is None:
            continue
        cells = _cells(rows, W.TABLE, P, None if e.kind == "measured" else here)
        per = {m: q for m, q in sorted(cells.items()) if all(k in q and math.isfinite(q[k]["ours"]) for k in WHY)}
        if len(per) < 2:
            continue
        txt = ", ".join(f"{m}: {q['passes_ratio']['ours']:.3g}× fewer passes × {q['time_per_pass_ratio']['ours']:.3g}× "
                        f"per pass = {q['speedup']['ours']:.3g}×" for m, q in per.items())
        ms = list(per)
        passes = [per[m]["passes_ratio"]["ours"] for m in ms]
        pace = [per[m]["time_per_pass_ratio"]["ours"] for m in ms]
        trend = ""
        if passes == sorted(passes, reverse=True) and pace == sorted(pace):
            fall, rise = passes[0] / passes[-1], pace[-1] / pace[0]
            how = ("the passes fall faster than the pace rises" if fall > 1.05 * rise else
                   "the pace rises faster than the passes fall" if rise > 1.05 * fall else
                   "the two move about alike")
            trend = (f": a smaller local epoch needs fewer passes (256/m batch-sized steps a pass, "
                     f"combine=sum), a larger one makes faster passes; from {ms[0]} to {ms[-1]} the passes "
                     f"needed grow {fall:.3g}× and the pace {rise:.3g}×: {how}")
        e.reason += f"; why (section Why), speed-up over serial by local epoch (geometric means) {txt}{trend}"
    e = ev.get("speedup-8-nodes")
    lr8 = [r for r in rows if r["table"] == W.TABLE and "baseline=serial lr×8" in r["condition"]]
    if e is not None and lr8:
        q = {r["quantity"]: r for r in lr8}
        f = {k: W.ci(q[k]["ours"], q[k]["ours_low"], q[k]["ours_high"]) for k in LR if k in q}
        if len(f) == len(LR):
            e.reason += (f"; why (section Why, ablation, {lr8[0]['kind']}"
                         + (f" on {dict(x.split('=', 1) for x in lr8[0]['condition'].split(';')).get('profile')}"
                            if lr8[0]["kind"] == "emulated" else "")
                         + f", {lr8[0]['runs']} seeds): serial batch at 8·η needs {f['lr_passes_ratio']}× fewer "
                         f"passes than at η, and PPT {f['passes_beyond_lr']}× fewer than that; over serial at 8·η "
                         f"PPT's speed-up is {f['speedup_over_lr_serial']}×, the part the nodes add to the step's "
                         f"{f['lr_passes_ratio']}×")
    e = ev.get("comm-share-falls-with-local-epoch")
    if e is not None:
        parts = []
        for prof in ("gige2008", here):
            cells = _cells(rows, "table2", 8, prof)
            s = {m: q["comm_share"]["ours"] for m, q in sorted(cells.items()) if "comm_share" in q}
            if len(s) >= 2:
                lo_m, hi_m = min(s), max(s)
                parts.append(f"emulated on {prof} {s[lo_m]:.0%} at {lo_m} and {s[hi_m]:.0%} at {hi_m}")
        if parts:
            e.reason += ("; why (table 2's emulated shares: per round the same allgather against compute "
                         "that grows with the local epoch): " + ", ".join(parts)
                         + ": the share falls on every profile, and how far from 1 it starts is the network's "
                           "allgather time against the round's compute")
