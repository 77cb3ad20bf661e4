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
# PPT the presentations over all nodes / n (engine/strategies/pattern.py: epochs = rounds · P ·
# m / n), so a round of P nodes at local epoch m is P·m/n of a pass (one at 8 nodes, m = 32).
WHY = ("passes_ratio", "time_per_pass_ratio", "speedup")
WHY_PASS = ("a pass is an epoch, n pattern presentations (the whole training set): for PPT "
            "those over all nodes, so a round is P·m/n of one (engine/strategies/pattern.py)")


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


# ---- the claims' reasons cite the split -------------------------------------------------------
def _cells(rows: list[dict], table: str, P: int, profile: str | None) -> dict:
    """{local epoch: {quantity: row}} of ``table`` at P nodes for one timing source (profile
    None: measured)."""
    out: dict = {}
    for r in rows:
        if r["table"] != table:
            continue
        c = dict(x.split("=", 1) for x in r["condition"].split(";"))
        if c.get("nodes") == str(P) and c.get("profile") == profile and "oversubscribed" not in c:
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
