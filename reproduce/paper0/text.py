"""report.md for paper0: setup, the rows, and what explains the gaps.
Every number in the text comes from this run's rows, runs and metadata."""
from __future__ import annotations

import numpy as np

from reproduce import report as R
from reproduce.paper0.setup import MACHINE


def _profile_line(p) -> str:
    if p.calibrated:
        return (f"Machine profile `{p.name}` (calibrated: collectives measured at P = "
                f"{', '.join(map(str, p.measured_P()))}, contention, straggler, compute ratio "
                f"{p.compute_ratio:.2f}): {p.description or p.source}.")
    return (f"Machine profile `{p.name}`: α = {p.latency_s * 1e6:.2f} µs, β = {p.bandwidth_Bps / 1e9:.2f} GB/s "
            f"({p.source}).")


def validation_section(pairs: dict, *, setup, meta) -> list[str]:
    """The headline sentence about the emulated figures (validated range, emulator error)
    and the per-P table emulated / measured."""
    allp = [x for v in pairs.values() for x in v]
    Pmax = max((x["P"] for x in allp), default=None)
    L = ["## The emulated figures and their validation", "", R.EMULATOR_PARAGRAPH, ""]
    if Pmax is None:
        L += [f"**The emulated figures (P = 1..{setup.max_workers}) are not validated in this run**: no "
              "configuration was measured on more than one worker with a core each here, so every "
              "emulated figure past P = 1 is extrapolated.", ""]
        return L
    errs = "; ".join(f"`{n}` {R.emulator_error(v):.2f}×" for n, v in pairs.items() if v)
    L += [f"**The emulated figures are validated only for P ≤ {Pmax}**, the most workers measured here "
          f"with a core each; the emulated curves run to P = {setup.max_workers}, so every figure beyond "
          f"P = {Pmax} (the paper's 6, 7, 17 and 18 processors included) is extrapolated. At the measured "
          f"P the emulator error (emulated / measured time, the value furthest from 1 over the "
          f"configurations) was {errs}. The table gives every measured configuration beside its "
          "emulated twin: the same net, data and seed, composed under each profile (medians over the "
          "runs; measured runs on more workers than cores are left out: they are not measured scaling)."
          + "".join(f" The measured runs are this machine's: the ratios validate `{n}` only as far as it "
                    "describes this machine." for n in pairs if not n.startswith("here")), ""]
    for name, v in pairs.items():
        L += R.pair_table(v, unit="s", profile=name) + [""]
    return L + R.validation_footer(allp)[1:]


BAND = (0.8, 1.25)  # within 20 % either way: the yardstick the issue sets paper3 (paper0 has none)
EFFECT_WORDS = {"alpha_beta": "collective table off (α/β formulas)", "no_contention": "contention off",
                "no_straggler": "straggler wait off"}


def manycore_section(records: list, hosts: dict, here: dict | None = None, here_name: str = "",
                     steps: dict | None = None) -> list[str]:
    """"Against many-core hosts": reproduce.manycore's table, then per curve how often the
    emulated speedup lies within 20 % of the measured one and within the measured seeds'
    range, and where it misses, the effects switched off one at a time at the worst P.
    ``here``: {(curve, P): emulated speedup} under ``here_name``, this run's own profile (the
    uncalibrated emulator by default), for comparison; ``steps``: {(curve, P): compute seconds
    per synchronised step here}."""
    from reproduce import manycore

    if not records:
        return []
    L = [x for x in manycore.section("paper0", records, profiles=hosts)
         if not x.startswith("Target met at 0 of 0")]  # the issue sets paper0 no target
    lab = {"fig3": "Fig. 3 loop (parsing net, one barrier per pattern)", "fig4": "Fig. 4 derivative epoch"}
    L += [f"**Where the model misses.** The issue sets paper0 no target; we read emulated / measured within "
          f"{BAND[0]}–{BAND[1]} as a hit (±20 %, paper3's target). An effect's size is the emulated speedup "
          "with it switched off over the speedup with every effect on (above 1: the effect lowers the "
          "emulated speedup by that factor; below 1: as calibrated, it raises it).", ""]
    for host in dict.fromkeys(c["host"] for c in records):
        for curve in dict.fromkeys(c["config"]["curve"] for c in records if c["host"] == host):
            rs = [c for c in records if c["host"] == host and c["config"]["curve"] == curve]
            out = [c for c in rs if not BAND[0] <= c["ratio"] <= BAND[1]]
            inside = sum(c["measured"][1] <= c["emulated"] <= c["measured"][2] for c in rs)
            Pm = max(c["P"] for c in rs)
            last = next(c for c in rs if c["P"] == Pm)
            h = (here or {}).get((curve, Pm))
            head = (f"- {lab.get(curve, curve)} on {host}: emulated / measured "
                    f"{min(c['ratio'] for c in rs):.2f}–{max(c['ratio'] for c in rs):.2f} over P = "
                    f"{min(c['P'] for c in rs)}..{Pm}, within ±20 % at {len(rs) - len(out)} of {len(rs)} P, "
                    f"inside the measured seeds' min–max at {inside}. At P = {Pm}: {last['emulated']:.3g}× "
                    f"against {last['measured'][0]:.3g}× ({last['ratio']:.2f})"
                    + (f"; this run's profile `{here_name}` gives {h:.3g}× "
                       f"({h / last['measured'][0]:.2f})" if h else "") + ".")
            if not out:
                L.append(head)
                continue
            w = max(out, key=lambda c: abs(np.log(c["ratio"])))
            e, m = w["effects"], w["measured"][0]
            parts = "; ".join(f"{EFFECT_WORDS[n]} {e[n]:.3g}× (×{e[n] / w['emulated']:.2f})"
                              for n in EFFECT_WORDS if n in e)
            if w["ratio"] > 1:
                why = (f"The model is optimistic there: its effects together move compute-only "
                       f"{e['compute_only']:.3g}× to {w['emulated']:.3g}×, and the run lost a further "
                       f"{w['ratio']:.2f}× that none of them charges.")
                raise_ = {n: e[n] / w["emulated"] for n in ("alpha_beta", "no_contention")
                          if n in e and e[n] < w["emulated"]}
                if raise_:
                    n = min(raise_, key=raise_.get)
                    what = {"alpha_beta": "the measured collective table charges less than the α/β formulas "
                                          "with the profile's α and β",
                            "no_contention": f"contention as calibrated is below 1 near P = {w['P']} (the "
                                             "probe's small kernel ran faster with P workers at once than "
                                             "alone)"}[n]
                    why += (f" The effect that raises the emulated speedup most: {what}, ×{1 / raise_[n]:.2f}; "
                            f"without it the model gives {e[n]:.3g}× ({e[n] / m:.2f} of measured).")
                prof = hosts.get(host)
                if (curve, w["P"]) in (steps or {}) and prof is not None and "small" in prof.kernels:
                    why += (f" A pattern step there holds {steps[(curve, w['P'])] * prof.compute_ratio * 1e6:.0f} µs "
                            "of compute on that host (here × compute ratio) between two barriers; the straggler "
                            f"factor was measured on steps of ten small-kernel calls ({10 * prof.kernels['small'] * 1e6:.0f} "
                            "µs there). A per-step cost that only such short steps see (timer and scheduler noise, "
                            "the spin barrier's cache-line traffic) would be uncharged: our reading, not measured.")
            else:
                best = min((n for n in EFFECT_WORDS if n in e), key=lambda n: abs(np.log(e[n] / m)))
                why = (f"The model is pessimistic there; switching off {EFFECT_WORDS[best].split(' off')[0]} "
                       f"comes closest ({e[best]:.3g}×, {e[best] / m:.2f} of measured): as calibrated it "
                       "costs more in the model than in this run.")
            L.append(head + f" Worst miss at P = {w['P']}: {w['emulated']:.3g}× against {m:.3g}× "
                     f"({w['ratio']:.2f}); switched off one at a time: {parts}. {why}")
    return L + [""]


def report_markdown(df, cdf, *, setup, profiles, meta, figs, stats, quick_shrunk, train, pairs=None,
                    manycore=None, why=()) -> str:
    """report.md: the title, the quick banner, the claims table (``cdf``, reproduce/claims.py;
    issue 30: it replaces the old point-estimate screen), the Why section's lines ``why``
    (reproduce/paper0/why_text.py ``section``), then the run, the detail rows of comparison.csv
    (``df``) and what explains them."""
    from reproduce import claims

    L = [f"# paper0: McCann & Kalman (1994), parallel training of simple recurrent networks", ""]
    L += R.quick_banner(quick_shrunk)
    L += claims.report_lines(cdf)  # the claims first, judged on intervals (issue 30)
    L += list(why)  # the why behind them, directly below (issue 34)
    lo = meta.get("loadavg_1min_during_tasks") or {}
    L += [f"Run: mode {meta['mode']}, seeds {meta['seeds']}, {meta['workers']} local workers on "
          f"{meta['cpu_count']} cores ({meta['platform']}), 1-min load average {lo.get('min', '–')}–{lo.get('max', '–')} "
          f"during the tasks, wall {meta['wall_s']:.0f} s. Paper: {MACHINE}.", ""]
    L += R.origin_line(meta)
    L += R.jobs_line(meta)
    L += [_profile_line(p) for p in profiles]
    L += ["",
          "Kinds: **measured** (timed here; a run with more workers than cores is labelled "
          "`oversubscribed=yes` and is not measured scaling), **emulated** (each worker's compute measured alone, "
          "composed as the slowest worker plus the synchronisation model below), **reported** (the paper). "
          f"Verdict `close` within {R.DEFAULT_TOLERANCE:.0%} relative.", ""]
    L += validation_section(pairs or {}, setup=setup, meta=meta)
    L += [
          "## What is compared", "",
          "* Figs 2–3 (network partition, §2.1): only the derivative loop is timed, as in the paper. "
          "Emulated T(P) = t_loop(⌈H/P⌉ hidden units) + steps·(P−1)·α: the loop of the largest block "
          "(uneven splits give the first H mod P workers one unit more, §3.1) plus one barrier per pattern step, "
          "whose cost grows with the peers each rank polls. The data are synthetic sequences of the nets' sizes "
          f"({setup.synth_seqs} sequences of {setup.synth_len[0]}–{setup.synth_len[1]} patterns, presented one "
          "after another, one barrier per pattern as in the paper).",
          "* Figs 4–5 (sequence partition, §2.2): longest-first assignment of the 821 word sequences; "
          "T(P) = max_w c_w + 2·(P−1)·α + (P−1)·bytes/β.",
          "* Under a calibrated profile (`--profile`) the same compositions go through "
          "`MachineProfile.emulate` with the small reference kernel: compute × speed ratio × contention, "
          "plus the expected wait for the slowest of P at each synchronisation, plus the measured "
          "collectives our code runs (a barrier per pattern step; per epoch a broadcast of [kind, weights] "
          "and an allreduce of [∂Φ/∂Y, Φ] or Φ).",
          "* The paper's figures carry no numbers in the text; its numbers are 417 s, 11 s, 8.96 (17/6), "
          "22 h vs 8 h, 'over eighty percent', 'about ten', the best counts 17 and 6, and the dip at 7.", "",
          "## Comparison", "", R.comparison_markdown(df), ""]
    here = [p.name for p in profiles if not p.calibrated and p.name.startswith("here")]
    cal = [p.name for p in profiles if p.calibrated]
    L += ["## Reading the rows", ""]
    if len(here) == 2:
        L.append("* Three synchronisation profiles are shown because this 2-core machine is shared: a spin barrier "
                 "between two processes costs a fraction of a µs when both hold a core (`here-best`) and about a "
                 "scheduler time slice when one is descheduled (`here-median` on a loaded machine); `compute-only` is "
                 "the bound with free synchronisation. Which one resembles the SPARCcenter is not known; the "
                 "paper's curve shapes (forward epochs peaking near 6 processors, the dip at 7) appear when the "
                 "per-pattern and per-epoch synchronisation is expensive relative to the compute.")
    else:
        L.append("* The emulated rows use the profile given by `--profile` ("
                 + ", ".join(f"`{p.name}`" for p in profiles if p.name != "compute-only")
                 + ") and `compute-only`, the bound with free synchronisation.")
    L += ["* Emulated per-worker times are measured one worker at a time with a warm cache; a worker whose "
          "share fits its cache runs faster per pattern, which gives superlinear emulated forward-epoch "
          "speedups. "
          + ("Contention for the shared cache and memory bus among simultaneous workers is not "
             "modeled by an α/β profile (the paper blames its own irregularities on exactly that)"
             + (f"; the calibrated profile {', '.join(f'`{c}`' for c in cal)} scales compute by its measured "
                "contention for the small reference kernel" if cal else "") + ". ")
          + "The one-worker time and "
          "the per-worker times are also separate best-of-repeats timings, so timing noise alone can put "
          "an emulated 2-worker speedup slightly above 2 (see the fig4/fig5 rows at 2 workers).",
          "* The network-partition loop presents one pattern at a time; each worker pays a fixed numpy "
          "dispatch cost per pattern, so the loop speedup saturates long before 18 processors.",
          f"* Measured rows ({meta['workers']} processes at most) ran at the load average above; with more "
          "runnable processes than cores, a barrier per pattern or per epoch waits for the scheduler.", ""]
    L += manycore_section(*(manycore or ([], {})))
    L += ["## Corpus", "",
          f"Ours: {stats['words']} words, {stats['patterns']} patterns (paper 821 / 4535), word length "
          f"{stats['min_len']}–{stats['max_len']} (mean {stats['mean_len']:.2f}), {stats['inputs']} inputs, "
          f"{stats['outputs']} outputs. Source: `{meta.get('nettalk_source')}`.", ""]
    if train:
        L += ["## Training", "",
              "Iterations: those that lowered Φ / those run / the cap; CG stops when two iterations in a "
              "row find no decrease (every later one would repeat the second exactly).", "",
              "| run | iterations | Φ start | Φ end | phoneme | stress | both | mean evals | restarts | wall s |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for i, r in enumerate(train):
            a = r["accuracy"]
            its = (f"{r['useful']} / {r['iterations_run']} / {r['iterations']} ({r['stopped']})"
                   if "useful" in r else str(r["iterations"]))
            L.append(f"| {i} | {its} | {r['phi'][0]:.1f} | {r['final_phi']:.1f} | {a['phoneme']:.3f} | "
                     f"{a['stress']:.3f} | {a['both']:.3f} | {np.mean(r['evals']):.2f} | {r['restarts']} | "
                     f"{r['wall_s']:.0f} |")
        L.append("")
    L += ["## Our choices where the paper is silent", "",
          "* CG: Polak–Ribière⁺ β, restart every n iterations, on β⁺ = 0 or a non-descent direction; "
          "golden-section line search on Φ only (bracket by ×1.618, width tolerance "
          f"{setup.cg_tol}, at most {setup.cg_max_evals} Φ evaluations).",
          f"* Weights uniform in ±{setup.init_scale}; targets ±1; Kalman–Kwasny error with 1 − a² floored at 1e-12.",
          "* Second hidden layer fed by the first hidden layer only; skip connections from input and context "
          "to the outputs; the first 10 hidden units are fed back.",
          "* NETtalk encoding and phoneme features: our own (datasets/nettalk.py).",
          f"* Derivative loop vectorised over {setup.chunk} sequences at a time (see the perf rows for other sizes).",
          "", "## Figures", ""] + [f"![{f}]({f})" for f in figs] + [""]
    return "\n".join(L)
