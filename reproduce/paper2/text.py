"""report.md for paper2 (numbers are filled in from the run; nothing here is hard-coded)."""
from __future__ import annotations

import numpy as np

from reproduce import claims as C
from reproduce import report as R
from reproduce.paper2.setup import GPUS, LOSS_REDUCTION_6, SPEEDUP_Q3
from reproduce.paper2 import why as P2W
from reproduce.paper2.tasks import loss_at


def _get(df, table, quantity, contains=""):
    d = df[(df.table == table) & (df.quantity == quantity) & df.condition.str.contains(contains,
                                                                                       regex=False)]
    return d.iloc[0] if len(d) else None


def headline(cdf, *, setup) -> str | None:
    """The paper's ≈4× at Q = 3 against its stated baseline (random batches), from the claim
    fig4-4x: our interval over the interleaved repetitions and its verdict, with eq. 1's
    reading (the claim's ``beside``) after it."""
    c = cdf[cdf.claim == "fig4-4x"]
    if not len(c) or not np.isfinite(float(c.ours.iloc[0])):
        return None
    r = c.iloc[0]
    iv = (f" [95 % interval {r.ours_low:.2f}, {r.ours_high:.2f}]" if np.isfinite(r.ours_low)
          and np.isfinite(r.ours_high) else "")
    h = (f"Against the paper's stated baseline, a purely random split into mini-batches, optimal "
         f"Q = 3 buckets make a training epoch {r.ours:.2f}×{iv} faster at k = {setup.batch_size} "
         f"(measured, {int(r.n)} interleaved repetitions; paper ≈{SPEEDUP_Q3:g}×: {r.verdict})")
    if isinstance(r.beside, str) and r.beside:
        h += f"; {r.beside.split('; ')[0]}"
    return h + "."


def _ci(r, digits: int = 2) -> str:
    """A row's median with its bootstrap interval (in the note from 3 runs on) and min–max."""
    import re

    m = re.search(r"median 95% CI \[([^,]+), ([^\]]+)\]", r.note or "")
    ci = f" [95 % CI {float(m.group(1)):.{digits}f}, {float(m.group(2)):.{digits}f}]" if m else ""
    n = int(r.runs)
    if n == 1:
        return f"{r.ours:.{digits}f}× (one repetition)"
    return (f"{r.ours:.{digits}f}×{ci} (min–max {r.ours_low:.{digits}f}–{r.ours_high:.{digits}f}, "
            f"{n} repetitions)")


def timing_k_findings(df, ctx) -> list[str]:
    """Fig. 4 at k = 4 … 256, forward + backward epochs (reproduce/paper2/timing_k.py)."""
    tk = ctx.get("timing_k") or {}
    if not tk:
        return []
    parts, eq1 = [], []
    for kk in sorted(tk):
        r = _get(df, "fig4", "speedup_fwd_bwd_vs_random", f"bunch={kk};Q=3;method=optimal;")
        e = _get(df, "fig4", "speedup_fwd_bwd_vs_eq1", f"bunch={kk};Q=3;method=optimal;")
        bd = ctx.get("bound_by_k", {}).get(kk)
        if r is not None:
            parts.append(f"k = {kk}: {_ci(r)}" + (f", bound {bd[0]:.2f}×" if bd else ""))
        if e is not None:
            eq1.append(f"k = {kk}: {e.ours:.2f}×")
    if not parts:
        return []
    big = [kk for kk in sorted(tk) if (r := _get(df, "fig4", "speedup_fwd_bwd_vs_random",
                                                   f"bunch={kk};Q=3;method=optimal;")) is not None
           and abs(r.ours / SPEEDUP_Q3 - 1) <= R.DEFAULT_TOLERANCE]
    return ["- **Against random batches at other k (Fig. 4, measured, timing only)**: one full "
            "epoch of forward + backward passes, no update, per layout; optimal Q = 3 over random "
            "batches (the modeled padded-cell bound beside it): " + "; ".join(parts) + ". "
            + (f"The paper's ≈{SPEEDUP_Q3:g}× is within ±{R.DEFAULT_TOLERANCE:.0%} at k = "
               + ", ".join(map(str, big)) + "." if big else
               f"None of these k gives the paper's ≈{SPEEDUP_Q3:g}× within ±{R.DEFAULT_TOLERANCE:.0%}.")
            + (" Against eq. 1's baseline, the same passes: " + "; ".join(eq1) + "." if eq1 else "")]


def equal_time_findings(df, lines, *, t_budget: float, noise: float, plateau: bool) -> list[str]:
    """Whether random batches beat Q = 2 and Q = 3 at equal training time (issue 13 asks the
    report to say so from the numbers), and §IV.B's "faster convergence especially at the
    beginning" (rows ``val_loss_vs_random``)."""
    rnd = next((ln for ln in lines if ln["Q"] == 1 and not ln["paper_Q"]), None)
    if rnd is None:
        return []
    L = []
    v0 = float(np.median([loss_at(r, t_budget) for r in rnd["runs"]]))
    cmp = []  # (Q, its loss, random minus it, resolved: the gap exceeds the epoch-to-epoch movement)
    for q in (2, 3):
        ln = next((x for x in lines if x["paper_Q"] and x["Q"] == q), None)
        if ln is not None:
            v = float(np.median([loss_at(r, t_budget) for r in ln["runs"]]))
            cmp.append((q, v, v0 - v, bool(np.isfinite(noise) and abs(v0 - v) > noise)))
    if cmp:
        parts = [f"Q = {q}: random batches {v0:.1f} vs {v:.1f} nats, "
                 + ("lower (better)" if d < 0 else "higher (worse)") + f" by {abs(d):.1f}"
                 + ("" if res else (f" (within the {noise:.1f}-nat epoch-to-epoch movement)"
                                    if np.isfinite(noise) else " (no estimate of the epoch-to-epoch "
                                                               "movement: too few epochs)"))
                 for q, v, d, res in cmp]
        beat = [q for q, v, d, res in cmp if d < 0 and res]
        if len(beat) == len(cmp):
            said = ("In this run random batches beat " + " and ".join(f"Q = {q}" for q in beat)
                    + " at equal training time, by more than the epoch-to-epoch movement.")
        elif beat:
            said = (f"In this run random batches beat only Q = {beat[0]} at equal training time by "
                    "more than the epoch-to-epoch movement.")
        else:
            said = ("In this run random batches do not beat Q = 2 or Q = 3 at equal training time "
                    "by more than the epoch-to-epoch movement.")
        L.append(f"- **Equal training time, random batches against Q = 2 and Q = 3** (Fig. 3, "
                 f"{t_budget:.3g} s, k = {_k(lines)}, medians over seeds): " + "; ".join(parts) + ". "
                 + said + (" (On the CTC blank plateau: the ranking means nothing.)" if plateau else ""))
    ev = df[(df.table == "fig3") & (df.quantity == "val_loss_vs_random")]
    if len(ev):
        by_q = {}
        for _, r in ev.iterrows():
            kv = R.parse_condition(r.condition)
            by_q.setdefault(int(kv["Q"]), []).append((float(kv["time_fraction"]), r.ours))
        txt = "; ".join(f"Q = {q}: " + ", ".join(f"{f:.0%} {v:.2f}" for f, v in sorted(fs))
                        for q, fs in sorted(by_q.items()))
        first = [q for q, fs in by_q.items() if min(fs)[1] < 1]
        most = [q for q, fs in by_q.items() if min(fs)[1] < 1 and min(fs)[1] < max(fs)[1]]
        L.append("- **\"Faster convergence especially at the beginning\" (§IV.B)**: validation loss "
                 "with optimal buckets / with random batches, same seed, at a fraction of the "
                 f"{t_budget:.3g}-s budget (< 1: the buckets ahead): " + txt + ". "
                 + ("At the earliest point the buckets are ahead for Q = "
                    + ", ".join(map(str, sorted(first))) + (
                        "; further ahead there than at the end of the budget for Q = "
                        + ", ".join(map(str, sorted(most))) if most else
                        "; not further ahead there than at the end of the budget") + "."
                    if first else
                    "At the earliest point no Q is ahead of random batches, so in our run the "
                    "buckets do not converge faster at the beginning."))
    return L


def _k(lines) -> str:
    import re

    m = re.search(r"bunch=(\d+)", lines[0]["cond"]) if lines else None
    return m.group(1) if m else "?"


def validation_section(ctx, *, setup, profile) -> list[str]:
    """The headline sentence about the emulated runs (validated range, emulator error), the
    emulator paragraph and the table of every measured run beside its emulated twin."""
    pairs = ctx.get("pairs") or []
    emP = sorted({P for P in setup.fig5_workers + setup.allreduce_workers})
    L = ["## The emulated runs and their validation", "", R.EMULATOR_PARAGRAPH, ""]
    if profile.calibrated:
        L += [f"The emulated runs here use the calibrated profile `{profile.name}` inside the run: each "
              f"worker's compute × its speed ratio ({profile.compute_ratio:.2f}) × contention, the expected "
              "wait for the slowest of P and the allreduce's measured time at every synchronisation.", ""]
    if not pairs:
        L += [f"**The emulated runs (P = {', '.join(map(str, emP))}) are not validated in this run**: no "
              "P-worker run was measured with a core per worker beside its emulated twin.", ""]
        return L
    Pmax = max(x["P"] for x in pairs)
    beyond = [P for P in emP if P > Pmax]
    L += [f"**The emulated runs are validated only for P ≤ {Pmax}**, the most workers measured here with a core "
          "each" + (f"; the emulated runs at P = {', '.join(map(str, beyond))} (the paper's {GPUS} GPUs "
                    "included) are extrapolated" if beyond else "")
          + f". At the measured P the emulator error (emulated / measured training time per pass over the "
          f"data, the configuration median furthest from 1) was {R.emulator_error(pairs):.2f}×. Every measured P-worker run "
          "beside its emulated twin (the same seed, the same updates; runs on more workers than cores are "
          "left out, they are not measured scaling):", ""]
    return L + R.pair_table(pairs, unit="s / pass") + R.validation_footer(pairs)


def report_markdown(df, ctx, *, setup, profile, meta, figs, quick_shrunk, data, cdf) -> str:
    lengths = data.lengths[np.asarray(data.train)]
    L = []
    L += ["# paper2: Khomenko, Shyshkov, Radyvonenko & Bokhan (2016)", "",
          "*Accelerating Recurrent Neural Network Training using Sequence Bucketing and Multi-GPU "
          "Data Parallelization*, IEEE DSMP 2016. LSTM + CTC on online handwriting; optimal "
          "sequence bucketing by dynamic programming (§III.A); data-parallel model averaging, "
          "eq. (3) (§III.B).", ""]
    L += R.quick_banner(quick_shrunk)
    L += C.report_lines(cdf)  # the claims first, judged on intervals (issue 30)
    hl = headline(cdf, setup=setup)
    L += [R.HEADLINE_MARK + hl, ""] if hl else []
    L += R.origin_line(meta)
    L += R.jobs_line(meta)
    L += P2W.section(ctx["why"]) if "why" in ctx else []  # the first section after the claims
    L += ["## Conditions", "",
          f"- Data: {len(data.seqs):,} synthetic pen trajectories (datasets/handwriting.py: Hershey "
          f"fonts, CMU-dictionary words, {setup.n_writers} writers with their own slant, size, "
          f"jitter, speed and smoothness), {len(data.train):,} training / {len(data.val):,} "
          "validation (5 %, §IV.A); data seed fixed, run seeds vary the model and the order. "
          "The paper used 1 GB of real S-Note pen data.",
          f"- Model: one LSTM layer of {setup.n_hidden} cells (no peepholes), linear output over "
          "28 classes (blank, space, a–z), CTC in log space; ADADELTA (ρ = 0.95, ε = 1e−6, lr 1, "
          f"Lasagne's defaults); mini-batch k = {setup.batch_size}; β = {setup.beta:g} in eq. (3); "
          f"{setup.epochs} epochs per 1-worker run. The paper gives none of these values. k = "
          f"{setup.batch_size} was chosen because it is the k that gets past the CTC blank plateau "
          "in this budget (reproduce/paper2/setup.py says what was measured), not to move any number "
          "towards the paper's.",
          "- Buckets: optimal (DYNAMICBUCKETING) bounds from the whole training set, sequences "
          "padded to their bucket's bound (the paper's \"Q models\", §III.B step 2), shortest "
          "bucket first, shuffled inside buckets. The paper's baseline (Q = 1) has two readings, "
          "and both are timed: the text's \"purely random split of sequences on mini-batches\" "
          "(here: random batches, each padded to its own longest sequence) and eq. 1, "
          "T(S) = O(n/k · max_i l_i), one model for the longest length (every batch padded to "
          "the longest sequence of the data set).",
          f"- Machine: {meta.get('cpu_count')} cores shared with other jobs; 1-minute load "
          f"average {_task_loads(ctx)} over the training tasks (the Fig. 4 timings ended at "
          f"{_fmt_load(ctx.get('timing_load'))}); one BLAS thread per worker. "
          f"Speedups are ratios within one run. Seeds {meta.get('seeds')}, runs per configuration "
          f"{setup.runs}; {meta.get('workers')} workers measured, more emulated.",
          f"- Emulated runs: every worker's epoch is timed one after another on this machine; "
          f"the epoch's time is the slowest worker plus one parameter allreduce modelled with "
          f"profile `{profile.name}`, {profile.source}: here α = {profile.latency_s * 1e6:.1f} µs, "
          f"β = {profile.bandwidth_Bps / 1e9:.2f} GB/s"
          + (("; the emulated runs used " + ", ".join(f"α = {a * 1e6:.1f} µs, β = {b / 1e9:.2f} GB/s"
                                                      for a, b in ctx["fig5_profiles"])
              + " (measured when each ran)") if ctx.get("fig5_profiles") else "") + ".",
          f"- Wall time of this invocation: {meta.get('wall_s', 0) / 60:.1f} min (tasks found in "
          "the run cache are not re-run).", ""]

    L += validation_section(ctx, setup=setup, profile=profile)
    L += ["## Findings", ""]
    sk = _get(df, "fig2", "skewness")
    pm = _get(df, "fig2", "p99_over_median")
    if sk is not None:
        L.append(f"- **Length distribution (Fig. 2)**: median {np.median(lengths):.0f} points, "
                 f"99th percentile {pm.ours:.1f}× the median, longest {lengths.max()}, skewness "
                 f"{sk.ours:.2f}. Optimal Q = 6 bounds: "
                 + ", ".join(map(str, ctx["bounds6"])) + ".")
    s3 = _get(df, "fig4", "speedup_vs_random", "Q=3;method=optimal")
    b3 = _get(df, "fig4", "padded_cell_bound", "Q=3;method=optimal")
    r3 = _get(df, "fig4", "speedup_over_bound", "Q=3;method=optimal")
    e3 = _get(df, "fig4", "speedup_vs_eq1_baseline", "Q=3;method=optimal")
    c3 = _get(df, "fig4", "eq1_cell_bound", "Q=3;method=optimal")
    if s3 is not None:
        bk = ctx.get("bound_by_k", {})
        sv = df[(df.table == "fig4") & (df.quantity == "speedup_vs_random")
                & df.condition.str.contains("method=optimal") & ~df.condition.str.contains("Q=1;")]
        slower = [c.split(";")[1] for c, v in zip(sv.condition, sv.ours) if v < 1]
        L.append(f"- **Epoch time at Q = 3 against the paper's baseline (Fig. 4, primary)**: "
                 "§IV.B ties both its 4 h per epoch and its ≈4× to a \"purely random split of "
                 "sequences on mini-batches\". Against random batches (each padded to its own "
                 f"longest) Q = 3 is {_ci(s3)} faster, measured, at k = {setup.batch_size}; paper "
                 f"≈{SPEEDUP_Q3:g}× ({s3.ours / SPEEDUP_Q3 - 1:+.0%}). The padded cells of our "
                 f"layout predict {b3.ours:.2f}×, "
                 f"so we get {r3.ours:.0%} of that bound. This baseline pads less the smaller k "
                 "is, so the bound grows with k (modeled, optimal Q = 3: "
                 + ", ".join(f"k = {kk}: {v[0]:.2f}×" for kk, v in sorted(bk.items()))
                 + ")" + (f"; at k = {setup.batch_size} padding to the bucket's bound is even "
                          "slower than random batches for " + ", ".join(slower) if slower else "")
                 + ". Which baseline the paper timed, and its k, are not stated.")
    if e3 is not None:
        L.append(f"- **Against eq. 1's baseline (Fig. 4, secondary reading)**: {_ci(e3)} "
                 f"faster, measured, than one bucket with every batch padded to the longest "
                 f"sequence; against the paper's ≈{SPEEDUP_Q3:g}× that would be "
                 f"{e3.ours / SPEEDUP_Q3 - 1:+.0%}. The paper's own cost model, eq. 1 over eq. 2 "
                 f"on our training lengths, predicts {c3.ours:.2f}× (modeled). That ratio is "
                 "count × bound summed over the buckets against n × the longest length: it does "
                 "not depend on k, only on the length distribution, so on a distribution as skewed "
                 "as ours eq. 1–2 alone give about the paper's 4×. The data generator was fixed "
                 "before this comparison was first computed.")
    L += timing_k_findings(df, ctx)
    tf = ctx["timing"]
    worst = tf.groupby("config").ratio_to_bound.median().drop(["random:1", "optimal:1"],
                                                              errors="ignore")
    if len(worst):
        L.append(f"- **Speedup / padded-cell bound** over all methods and Q: median "
                 f"{worst.median():.0%}, lowest {worst.min():.0%} ({worst.idxmin()}), target ≥ 90 %. "
                 "Both LSTM and CTC here compute every padded step, so time follows the cells; "
                 "CTC's cost per step also grows with the longest label in the batch, which "
                 "bucketing shortens too, so a ratio above 100 % is possible: in CTC lattice "
                 "cells, Σ k·T_pad·(2·L_max + 1), optimal Q = 3 would give "
                 f"{ctx['ctc_bounds'].get(('optimal', 3), float('nan')):.2f}× "
                 "(rows `ctc_cell_bound`). The min–max spread of the repetitions reflects the "
                 "machine's shared load; read the medians.")
    lines = ctx["fig3"]
    own = [ln for ln in lines if not ln["note"]]
    cers = {ln["label"]: float(np.median([r["val_cer"][-1] for r in ln["runs"]])) for ln in own}
    steps = [abs(d) for ln in own for r in ln["runs"]
             for d in np.diff(r["val_loss"][len(r["val_loss"]) // 2:])]
    noise = float(np.median(steps)) if steps else float("nan")
    at_t = {ln["label"]: float(np.median([loss_at(r, ctx["t_budget"]) for r in ln["runs"]]))
            for ln in lines}
    bq = _get(df, "fig3", "best_Q")
    plateau = bool(cers) and min(cers.values()) > 0.9
    if bq is not None and cers:
        n_upd = setup.epochs * len(data.train) // setup.batch_size
        L.append(f"- **Fig. 3**: at {ctx['t_budget']:.0f} s of training (when the fastest "
                 f"configuration ends its {setup.epochs} epochs; every epoch priced at its configuration's "
                 "seconds per padded cell in Fig. 4's interleaved timing, not at the task's own "
                 f"clock, which drifts between tasks) the lowest validation loss among "
                 f"the paper's Q is reached with Q = {int(bq.ours)} (paper: Q = 3). Validation "
                 "loss at that time: " + "; ".join(f"{k} {v:.1f}" for k, v in at_t.items())
                 + " nats per sequence" + (f" (median of {setup.runs} seeds). " if setup.runs > 1
                                           else " (one seed). ")
                 + f"One run's loss moves by a median {noise:.1f} nats "
                 "from one epoch to the next in the second half of training, so differences "
                 "smaller than that are not resolved. Best-path CER after "
                 f"{setup.epochs} epochs (~{n_upd:,} updates): "
                 + "; ".join(f"{k} {v:.2f}" for k, v in cers.items()) + ". "
                 + ("**The nets are still on the CTC blank plateau, so this ranking means "
                    "nothing.**" if plateau else
                    "The nets have left the CTC blank plateau (they emit characters), so the "
                    "curves compare learning, not noise around a plateau."))
    L += equal_time_findings(df, lines, t_budget=ctx["t_budget"], noise=noise, plateau=plateau)
    ro = next((ln for ln in own if "order=random" in ln["cond"]), None)
    sf = next((ln for ln in own if ln["paper_Q"] and ro is not None and ln["Q"] == ro["Q"]), None)
    if ro is not None and sf is not None:
        def end(ln, key):
            return float(np.median([r[key][-1] for r in ln["runs"]]))
        L.append(f"- **Bucket order (§IV.B credits Fig. 5's gain to it)**: Q = {ro['Q']}, 1 worker, "
                 f"after {setup.epochs} epochs shortest-first reaches validation loss "
                 f"{end(sf, 'val_loss'):.1f} (CER {end(sf, 'val_cer'):.2f}), random bucket order "
                 f"{end(ro, 'val_loss'):.1f} (CER {end(ro, 'val_cer'):.2f}); "
                 + (f"median of {len(ro['runs'])} seeds, " if len(ro["runs"]) > 1 else "one seed, ")
                 + f"compare with the {noise:.1f}-nat epoch-to-epoch movement. Shortest-first also "
                 "ends every epoch on the longest bucket, which is the model that is validated "
                 "(and, with several workers, averaged).")
    red = df[(df.table == "fig5a") & (df.quantity == "val_loss_reduction_vs_1")]
    for _, r in red.iterrows():
        spread = (f", min–max over {int(r.runs)} runs {-r.ours_high:+.1%} to {-r.ours_low:+.1%}"
                  if r.runs > 1 else ", one run")
        L.append(f"- **Fig. 5a, {r.condition}**: validation loss {-r.ours:+.1%} relative to 1 worker "
                 f"at the same training time ({r.kind}{spread}"
                 + (f"; paper: {LOSS_REDUCTION_6:.0%} lower at 30 h with {GPUS} GPUs" if r.reported == r.reported
                    and r.reported is not None else "") + ")."
                 + (" Same plateau caveat as Fig. 3." if plateau else ""))
    if len(red) and not plateau:
        L.append("- **Why more workers do not help here**: measured in the section Why, where each "
                 "comparison is split into the loss at equal passes (the averaging's cost) and the gain "
                 "from the passes P workers make in the same time. A mechanism for the averaging's cost, "
                 "not measured separately: every worker makes as many ADADELTA updates as the single "
                 "worker, but on its own 1/P of the data, and eq. (3) then averages P models that "
                 "moved in different directions. The paper credits its 23 % to shortest-bucket-first order "
                 "within an epoch; our 1-worker runs use that order too (its effect alone is the "
                 "bucket-order finding above), so it cannot favour the P-worker runs here.")
    for P, (cb, sb) in sorted(ctx.get("steps_bound", {}).items()):
        m = df[(df.table == "fig5b") & (df.quantity == "time_per_pass_speedup")
               & df.condition.str.startswith(f"workers={P};")]
        got = f"{m.ours.iloc[0]:.2f}× ({m.kind.iloc[0]})" if len(m) else "–"
        val = m.ours.iloc[0] if len(m) else float("nan")
        if val > cb:
            where = "above both bounds, so costs other than the steps and cells shrink too"
        elif abs(val / sb - 1) <= 0.03:
            where = ("at the step bound (within 3 %): time follows the slowest worker's steps, so "
                     "a batch costs about the same however full it is")
        elif val >= sb:
            where = ("between the two: time per worker falls by more than its steps but less "
                     "than its cells")
        else:
            where = ("below both: costs we did not analyse (per-batch fixed costs; for measured "
                     "runs also the machine's load, which takes cores from the workers)")
        L.append(f"- **Fig. 5b, {P} workers**: one pass over the data (epoch) is {got} faster "
                 f"than with 1 worker. The slowest worker's padded cells predict {cb:.2f}×, its "
                 f"time steps (Σ padded lengths) {sb:.2f}×: with Q = {setup.fig5_Q} buckets and "
                 f"k = {setup.batch_size} each worker's share of a bucket fills fewer, partly "
                 "empty batches, and the longest bucket costs every worker its full length. Where "
                 "a step costs the same however full the batch (a GPU at these sizes), time "
                 f"follows steps. Ours is {where}.")
    L += ["", "## Comparison rows", "",
          f"Verdict `close` within ±{R.DEFAULT_TOLERANCE:.0%} of the paper's value (exact for best_Q). "
          "Kinds: measured (timed here), emulated (measured compute + modelled allreduce), modeled "
          "(computed from the bucket layout), reported (the paper).", "",
          R.comparison_markdown(df), ""]
    L += ["## Figures", ""] + [f"![{f}]({f})" for f in figs] + [""]
    L += ["## What differs from the paper, and why", "",
          "- Data: synthetic Hershey-font trajectories instead of 1 GB of real pen input; "
          "far fewer and shorter sequences, so absolute times (seconds here vs 4 h/epoch) and "
          "loss levels are not comparable; only ratios are.",
          "- Hardware: CPU cores with numpy instead of K40 GPUs with Theano. On a GPU a padded "
          "batch also costs its longest sequence, so the cost model (eq. 1–2) is the same.",
          "- Model size, batch size, β and ADADELTA settings are not given in the paper; ours are "
          "listed above and were not tuned to match any number.",
          "- Data parallelism: P workers train n/P sequences per epoch, so to compare at equal "
          "training time the P-worker runs run P× the epochs. Emulated runs are numerically the "
          "same as measured ones (tested), only their time is composed.", ""]
    return "\n".join(L)


def _task_loads(ctx) -> str:
    loads = [x for _, r in ctx.get("train1", []) + ctx.get("fig5", []) for x in r.get("load", [])]
    return f"{min(loads):.1f}–{max(loads):.1f}" if loads else "–"


def _fmt_load(v):
    if not v:
        return "–"
    return "/".join(f"{x:.2f}" for x in v)
