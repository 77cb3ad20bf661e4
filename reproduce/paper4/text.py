"""report.md for paper4: setup, every reported number beside ours, and what explains the gaps.

Every number in the text is computed from this run's rows.
"""
from __future__ import annotations

import numpy as np

from reproduce import claims, manycore
from reproduce import report as R
from reproduce import why as W
from reproduce.paper4.why_text import section as why_section
from reproduce.paper4.setup import PASSES, TABLE1, TABLE2, TABLE3, TYPICAL_OUTPUTS


def _med(df, **kv):
    g = df
    for k, v in kv.items():
        g = g[g[k] == v]
    return float(np.median(g.speedup)) if len(g) else float("nan")


def headline(sp, *, setup, profile, pairs, records) -> list[str]:
    """The headline about the emulated figures: the widest net's forward speedup at the most
    workers on ``profile``, whether it is within the validated range (P ≤ the largest P
    measured here) and the emulator error there, and the same configuration against the
    many-core hosts' real runs."""
    w, P = max(setup.widths), max(setup.procs)
    e = _med(sp, width=w, passes="forward", kind="emulated", nodes=P)
    if e != e:
        return []
    s = (f"**Headline.** Width {w:,}, forward pass, {P} workers: the emulated speedup on profile "
         f"`{profile.name}` is {e:.3g}× (the paper's Table 2 at width {setup.paper_width:,}: "
         f"{dict(TABLE2)[P]}×). " + manycore.validated_range(P, pairs)
         + manycore.against_hosts([c for c in records
                                   if c["P"] == P and c["config"] == {"passes": "forward", "width": w}]))
    return [s, ""]


def report_markdown(df, sp, *, setup, cal, profile, meta, figs, typical, quick_shrunk, pairs,
                    manycore_records, manycore_profiles, over, claims_df, why=None) -> str:
    f = R.fmt
    L = ["# paper4 — Hlynsson & Schmitz (2016): node-parallel MLP training and its speedup model", ""]
    L += R.quick_banner(quick_shrunk)
    # the claims first (issue 30), each judged on an interval; the old point-estimate screen is gone
    L += claims.report_lines(claims_df)
    L += (why_section(why) + W.cost_line(df)) if why else []  # the why behind the verdicts, below the claims
    L += headline(sp, setup=setup, profile=profile, pairs=pairs, records=manycore_records)
    la = meta.get("loadavg_end")
    L += [f"Run: {meta['date_utc']}, mode `{meta['mode']}`, backend `{meta['backend']}`, "
          f"{meta['workers']} worker(s) measured on {meta['cpu_count']} cores ({meta['machine']}), "
          f"seeds {meta['seeds']}, wall time {meta['wall_s']:.0f} s"
          + (f" ({meta['tasks_from_cache']} of {meta['tasks']} runs taken from the cache of an "
             "earlier invocation; each row's note gives the load average while it ran)"
             if meta.get("tasks_from_cache") else "") + ", load average at the end "
          f"{', '.join(f'{x:.2f}' for x in la) if la else '–'} (the machine is shared: measured "
          "speedups are ratios taken within one run). Verdicts: Table 1 cells `close` within "
          "±1 % of the paper's, everything else within ±10 %.", ""]
    L += R.origin_line(meta)
    L += R.jobs_line(meta)
    widths = ", ".join(f"{w:,}" for w in setup.widths)
    L += ["## Setup", "",
          "| item | ours | paper |", "|---|---|---|",
          f"| net (Tables 2–3) | {setup.layers} layers: input {setup.n_input}, then "
          f"{setup.layers - 1} layers of width {widths} (measured/emulated) and "
          f"{setup.paper_width:,} (modeled); biases present | §7: depth 7, input 132, width 64,000 |",
          "| activation | φ(x) = 2/(1+e^(−x)) − 1 (= tanh(x/2)), every layer | §2 |",
          "| distribution | linear data distribution, `engine/schedule.py`; the printed I_{p,l} "
          "= ⌊(N+P+p−1)/P⌋ over-counts, we use ⌊(N+P−p−1)/P⌋ | §3 |",
          "| exchange | one allgather per layer of every worker's block (padded to ⌈N/P⌉) | "
          "§4: one broadcast per node |",
          "| weights held | each worker: incoming weights of its nodes and outgoing weights of its "
          "nodes (2/P of all), both updated locally | §6.1.3: 'each processor holds all the "
          "weights'; §4.3 updates the incoming ones |",
          f"| timed work | one pattern per pass (online, as §5); a pass's time is Σ over layers of "
          f"the median over {setup.passes_timed} passes (see below); {setup.runs} runs; one BLAS "
          f"thread per worker | not stated |",
          "| speedup | serial MLP (engine/nets/mlp.py) time / node-parallel time, same run index | "
          "not stated |",
          f"| emulated | every worker's compute per layer timed alone, the layer takes "
          f"the slowest worker plus the modeled allgather (profile `{profile.name}`: "
          f"α = {profile.latency_s:.3g} s, β = {profile.bandwidth_Bps:.3g} B/s"
          + (f"; calibrated tables at P = {', '.join(map(str, profile.measured_P()))}, compute ratio "
             f"{profile.compute_ratio:.3g}, kernel `gemv`" if profile.calibrated else "")
          + ") | – |", ""]

    L += ["## Calibration (this machine)", "",
          "| parameter | value | how |", "|---|---|---|"]
    for w, r in sorted(cal["t_a"].items()):
        L.append(f"| t_a, width {w:,} | {r['t_a']:.3g} s | serial forward pass "
                 f"({r['forward_s'] * 1e3:.3g} ms) / {r['ops']:,} operations |")
    for name, e in sorted(cal["exchange"].items()):
        L.append(f"| t_startup, t_data ({name}, {e['P']} ranks) | {e['t_startup']:.3g} s, "
                 f"{e['t_data']:.3g} s per float64 | allgather fit |")
        if name != "inprocess" and cal["t_a"]:
            ta = cal["t_a"][max(cal["t_a"])]["t_a"]
            L.append(f"| (t_startup + t_data)/t_a ({name}) | {(e['t_startup'] + e['t_data']) / ta:,.0f} | "
                     "Table 1 assumes 1 |")
    if "mpi" not in cal["exchange"]:
        L.append("| MPI | – | not calibrated in this run (no mpiexec beside Python, or it failed) |")
    L.append("")

    t1 = df[df.table == "table1"]
    L += ["## Table 1: the aggregate formula as printed", "",
          "Computed from §6.2 with L = 7, t_startup = t_data = t_a = 1, for each base of log P. "
          "`FLAG` marks a cell more than 1 % off the paper's.", "",
          "| P | paper n=132 | log2 | ln | log10 | paper n=32k | log2 | ln | log10 |",
          "|---|---|---|---|---|---|---|---|---|"]
    for P, a, b in TABLE1:
        cells = [str(P)]
        for n, rep in ((132, a), (32000, b)):
            cells.append(f"{rep:.2f}")
            for base in ("2", "e", "10"):
                r = t1[t1.condition == R.condition(nodes=P, n=n, L=7, log=base)].iloc[0]
                cells.append(f"{r.ours:.2f}" + (" FLAG" if r.verdict == "differs" else ""))
        L.append("| " + " | ".join(cells) + " |")
    flagged = t1[t1.verdict == "differs"]
    c32 = t1[t1.condition.str.contains("n=32000")]
    L += ["", f"- {len(flagged)} of {len(t1)} cells are flagged. The n = 32k column is within 1 % "
          f"in every base ({int((c32.verdict == 'close').sum())}/{len(c32)} cells, at most "
          f"{(c32.ratio - 1).abs().max():.1%} off): at that width communication hardly counts, so "
          "it cannot tell the bases apart. The n = 132 column matches no base: log2 (the "
          "binomial-tree broadcast the derivation describes) falls further behind as P grows, "
          "log10 overshoots, ln comes closest.",
          "- The paper's P = 1 entry for n = 132 (1.02) cannot come from the printed formula in any "
          "base: log 1 = 0 leaves (2n+2+9L/(n(L−1)))/(2n+2+9/(L−1)) = 0.995.",
          "- With ln the n = 132 column is 3.0–3.2 % below the paper's at every P ≥ 2, an almost "
          "constant factor we could not trace to a base or to a reading of the garbled 9L/(n(L−1)).",
          "- The aggregate's numerator (L−1)·n·(2n+2) is twice the forward pass's work; forward + "
          "backward + update as §6.1 counts them would be (L−1)·(3n² + n) + 9L. We print the "
          "formula as it is.", ""]

    L += ["## Tables 2 and 3: speedup vs processors", "", R.EMULATOR_PARAGRAPH, "",
          "How the times are taken. Every layer's compute, per worker, and every exchange is "
          "timed on its own; a pass takes Σ over layers of the median over the timed passes "
          "(of the slowest worker's compute, plus the exchange), and the serial MLP, timed just "
          "before in the same run, is taken the same way layer by layer. On this machine (2 cores "
          "shared with four other people's jobs) a process loses time slices to other jobs; the "
          "per-layer median drops them where a per-pass total would charge one lost slice to a "
          "whole emulated phase. Measured runs keep what the machine does: two processes "
          "spinning on a shared-memory barrier, one of them often descheduled while the other "
          "waits, so their exchanges cost far more than the calibrated t_startup (the fastest "
          "call) and the emulation's exchange model. Emulated runs assume every worker owns a "
          "core.", ""]
    for passes in PASSES:
        tab = "table2" if passes == "forward" else "table3"
        d = df[(df.table == tab)]
        L += [f"### {tab} ({'forward pass' if passes == 'forward' else 'forward + backward'})", "",
              R.comparison_markdown(d.drop(columns=["note"]).assign(note="")), ""]
    big = max(setup.widths)
    g = sp[(sp.width == big)]
    L += ["Highlights (median of runs):", ""]
    for passes in PASSES:
        m2 = _med(g, passes=passes, kind="measured", nodes=2)
        e2 = _med(g, passes=passes, kind="emulated", nodes=2)
        e16 = _med(g, passes=passes, kind="emulated", nodes=16)
        paper = dict(TABLE2 if passes == "forward" else TABLE3)
        L.append(f"- width {big:,}, {passes.replace('_', ' + ')}: measured 2 workers {f(m2)}× "
                 f"(paper {paper[2]}×), emulated 2 {f(e2)}×, emulated 16 {f(e16)}× "
                 f"(paper at width 64,000: {paper[16]}×).")
    for r in df[(df.table == "extra") & (df.quantity == "emulated_over_measured_time")].itertuples():
        L.append(f"- emulated / measured time, {r.condition}: {f(r.ours)}")
    L += ["- The §6 model charges (t_startup + t_data)·log P for every node of every layer "
          "(§4's per-node broadcast). With this machine's calibrated t_startup being thousands of "
          "t_a, it predicts a slowdown at every width we can hold; our implementation sends one "
          "message per layer, and the blocked model (same parameters) tracks it instead.",
          "- Table 2's paper values are superlinear (2.78 at P = 2); the paper gives no cause. "
          "Ours are bounded by P up to cache effects.", ""]

    over_ps = sorted({int(P) for P in sp[sp.kind == "measured"].nodes.unique() if over(int(P))})
    over_note = (f" Measured runs at P = {', '.join(map(str, over_ps))} had more workers than the "
                 f"{meta['cpu_count']} cores here (or an MPI world larger than them): their rows say "
                 "`oversubscribed=yes`, they are not measured scaling, and they validate nothing."
                 if over_ps else "")
    L += manycore.validation_section(pairs, profile=profile, what="node-parallel pass time",
                                     same="same width, passes and seed", over_note=over_note)
    L += manycore.section("paper4", manycore_records, profiles=manycore_profiles)
    if typical:
        L += ["## §5 typical run", "",
              f"One pattern, targets [1, −1], net {'-'.join(map(str, setup.typical_sizes))}, "
              f"η = {setup.typical_lr}, initial weights uniform ±{setup.typical_init}, "
              f"{typical['workers']} node-parallel workers ({typical['backend']}), "
              f"{typical['epochs']:,} epochs ({typical['wall_s']:.1f} s). The paper's net, η, "
              "weights and pattern are not given, so only the kind of behaviour can agree.", "",
              "| epoch | ours | paper |", "|---|---|---|"]
        paper = TYPICAL_OUTPUTS
        for e, o in typical["epoch_outputs"].items():
            p = paper.get(int(e))
            L.append(f"| {int(e):,} (forward pass of that epoch) | [{o[0]:.6f}, {o[1]:.6f}] | "
                     f"{f'[{p[0]:.6f}, {p[1]:.6f}]' if p and int(e) == 1 else '–'} |")
        a = typical["after_all_updates"]
        p = paper.get(typical["epochs"])
        L.append(f"| after {typical['epochs']:,} updates | [{a[0]:.6f}, {a[1]:.6f}] | "
                 f"{f'[{p[0]:.6f}, {p[1]:.6f}]' if p else '–'} |")
        L += ["", f"Node-parallel outputs equal the serial MLP's to "
              f"{typical['max_abs_diff_vs_serial_outputs']:.1g} and the final weights to "
              f"{typical['max_abs_diff_vs_serial_params']:.1g}. After thresholding at 0, both "
              f"outputs {'match' if a[0] > 0 > a[1] else 'do not match'} the targets.", ""]

    L += ["## Every row", "", R.comparison_markdown(df), ""]
    L += ["## Figures", ""] + [f"![{x}]({x})" for x in figs] + [""]
    return "\n".join(L)
