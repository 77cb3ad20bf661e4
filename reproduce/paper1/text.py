"""report.md for paper1: setup, the rows, and what explains the gaps.

Every number in the text comes from this run's rows, curves or calibration.
"""
from __future__ import annotations

from datasets.speech import N_INPUTS, class_coverage
from reproduce import report as R
from reproduce import why as W
from reproduce.claims import report_lines as claims_report_lines
from reproduce.paper1 import why_text as P1WT
from reproduce.paper1.setup import MULTISPERT_1997, TABLE1_BUNCH
from reproduce.paper1.why import updates_per_epoch


def _get(df, table, quantity, contains=""):
    g = df[(df.table == table) & (df.quantity == quantity) & df.condition.str.contains(contains, regex=False)]
    return g


def validation_section(facts: dict, *, setup) -> list[str]:
    """The headline sentence about the emulated figures (validated range, emulator error),
    the emulator paragraph and the per-P table emulated / measured."""
    pairs, prof, src = facts.get("pairs") or [], facts.get("profile"), facts.get("emulated_label")
    L = ["## The emulated figures and their validation", "", R.EMULATOR_PARAGRAPH, ""]
    name = prof.name if prof is not None else "here"
    how = (f"Here the emulated rows (`{src}`) use the calibrated profile `{name}`: each slave's compute × "
           f"its speed ratio ({prof.compute_ratio:.2f}) × contention, the expected wait for the slowest of P, "
           "and per bunch the collectives our code runs (NP: allgather of the partial outputs, broadcast of "
           "the error; PP: allreduce of the gradient sums; forward: one allgather) from its tables, then the "
           "host's work." if prof is not None and prof.calibrated else
           f"Here the emulated rows (`{src}`) use the α/β profile `{name}` in §2.5's composition "
           "max(T_d + T_c, P·T_d + T_h): T_c each slave's compute measured alone, T_h the host's, T_d the "
           "bunch's transfers at that α and β.")
    L += [how, ""]
    slaves = max(setup.slaves)
    if not pairs:
        L += [f"**The emulated figures (P = 1..{slaves}) are not validated in this run**: no configuration "
              "was measured with a core per worker beside an emulated twin.", ""]
        return L
    Pmax = max(x["P"] for x in pairs)
    err = R.emulator_error(pairs)
    L += [f"**The emulated figures are validated only for P ≤ {Pmax}**, the most slaves measured here with a "
          f"core each; the emulated curves run to P = {slaves}, so every figure beyond P = {Pmax} (the "
          f"paper's 3, 4 and 5 boards included) is extrapolated. At the measured P the emulator error "
          f"(emulated / measured time per bunch, the configuration median furthest from 1) was {err:.2f}×. Every measured "
          "configuration beside its emulated twin (measured: median of the repeated runs; runs on more "
          "workers than cores are left out, they are not measured scaling)"
          + ("" if name == "here" else f". The measured runs are this machine's: the ratios validate "
             f"`{name}` only as far as it describes this machine") + ":", ""]
    return L + R.pair_table(pairs, unit="ms / bunch", scale=1e3) + R.validation_footer(pairs)


def report_markdown(df, curves, tf, *, setup, meta, figs, facts, cal, quick_shrunk, claims_df=None) -> str:
    L = ["# paper1 — Färber (1997): Quicknet on MultiSpert", ""]
    L += R.quick_banner(quick_shrunk)
    if claims_df is not None:  # the claims first (issue 30), judged on intervals (claims.csv)
        L += claims_report_lines(claims_df)
    la, lb = meta["loadavg_start"], meta["loadavg_end"]
    L += [f"Run: {meta['date_utc']}, mode `{meta['mode']}`, backend `{meta['backend']}`, "
          f"{meta['workers']} worker(s) measured on {meta['cpu_count']} cores ({meta['machine']}), "
          f"seed {meta['seed']} (training runs use seeds {meta['seeds']}), wall time {meta['wall_s']:.0f} s, "
          f"load average {la[0]:.2f} at the start and {lb[0]:.2f} at the end (other jobs shared the "
          f"machine: timings are ratios within this run). `close` means within ±{R.DEFAULT_TOLERANCE:.0%}.", ""]
    L += R.origin_line(meta)
    L += R.jobs_line(meta)
    if meta.get("history"):
        L += [f"History of these files: {meta['history']}", ""]
    L += (P1WT.section(facts["why"]) + W.cost_line(df)) if "why" in facts else []  # first after the claims
    n_cov, missing = class_coverage()
    ntr = int(tf.n_train.iloc[0]) if not tf.empty else 0
    ncv = int(tf.n_cv.iloc[0]) if not tf.empty else 0
    c = setup.corpus
    L += ["## Setup", "", "| item | ours | paper |", "|---|---|---|",
          f"| data | synthetic connected numbers (datasets/speech.py): {c.n_speakers} speakers × "
          f"{c.utts_per_speaker} utterances of {c.words[0]}–{c.words[1]} number words; {ntr:,} training and "
          f"{ncv:,} CV frames, CV speakers unseen in training | numbers95 (not redistributable), far larger |",
          f"| classes | 56 (TIMIT's 61 without ax-h, eng, hv, nx, q); {n_cov} occur in our lexicon | 56 |",
          f"| inputs | {N_INPUTS} = 13 statics × 9 frames + 13 deltas × 3 centre frames, computed from the "
          "13-value frames inside the window | 156 from a 9-frame window; the make-up is not given |",
          f"| nets | 156:N_h:56, logistic hidden and output units, E = ½Σ(y−t)², error (y−t)·y(1−y) "
          "| §2: sigmoid, error scaled by the activation's derivative |",
          f"| training | bunch mode, the bunch's updates summed (Quicknet), η = {setup.lr} per pattern; "
          f"bunches ≥ 1000: η·{setup.lr_ref_bunch}/B; no momentum; init uniform ±{setup.init_scale}; "
          f"{setup.epochs} epochs; chunks of {setup.chunk:,} frames, chunk order and frames within a chunk "
          "shuffled each epoch | η not given; reduced for large bunches by an amount not given |",
          f"| NP | hidden units split over the slaves, partial sums gathered and summed by the master, "
          "error broadcast; pipelined per §2.3 (update k after forward k+1, exact gradient at the stale "
          "weights) | §2.1, §2.3 |",
          f"| PP | bunch split in P contiguous shares, gradient sums gathered, summed in rank order, step "
          "applied by all | §2.2 |", ""]
    L += ["### The performance model's constants", "",
          "| constant | paper (MultiSpert, Sparc-2 host) | here (calibrated) |", "|---|---|---|"]
    here = meta["profiles"][1]
    m = MULTISPERT_1997
    L += [f"| write / read bandwidth | {m.bw_write_Bps / 1e6:.1f} / {m.bw_read_Bps / 1e6:.1f} MB/s | "
          f"{here['bw_write_Bps'] / 1e9:.2f} GB/s shared memory, latency {here['latency_s'] * 1e6:.1f} µs |",
          f"| c1 (per hidden unit and pattern, training) | {m.c1_s * 1e9:.0f} ns (115 MCUPS raw) | "
          f"{here['c1_s'] * 1e9:.0f} ns at B = {setup.np_bunch_perf} |",
          f"| c2 (per pattern) | 0 (not given) | {here['c2_s'] * 1e6:.2f} µs"
          + (" (the free fit gave c2 < 0; refitted with c2 = 0)" if any(
              f.get("c2_constrained") for f in cal["fits"].values()) else "") + " |",
          f"| c_h (host, per pattern) | {m.c_h_s * 1e6:.0f} µs (22 ms at B = {TABLE1_BUNCH}) | "
          f"{here['c_h_s'] * 1e6:.2f} µs |",
          f"| bytes per value | errors 4, outputs 2 (Table 1); inputs 2, weights 4 (assumed) | 8 (float64) |", "",
          f"Sources: {m.source}. Here: {here['source']}.", ""]
    L += validation_section(facts, setup=setup)
    # Findings
    L += ["## Findings", ""]
    t1 = _get(df, "table1", "relative_performance")
    def rel(src, P):
        g = t1[t1.condition.str.contains(f"nodes={P};") & t1.condition.str.contains(f"source={src}", regex=False)]
        return float(g.ours.iloc[0]) if len(g) else float("nan")
    pr = [rel("modeled (paper, printed formula)", P) for P in (1, 2, 3, 4)]
    mx = [rel("modeled (paper)", P) for P in (1, 2, 3, 4)]
    L += ["1. **Table 1 is not what §2.5 prints.** With the paper's own constants (B = 48 implied by "
          "Table 1's transfer times), the model as printed gives relative performances "
          + ", ".join(f"{100 * v:.0f} %" for v in pr) + " for 1–4 slaves against the reported 97, 178, "
          "235, 205 %: its host-bound branch T = P·T_d drops the host's 22 ms, so performance *rises* "
          "past 3 slaves. With max(T_d + T_c, P·T_d + T_h), the same constants give "
          + ", ".join(f"{100 * v:.0f} %" for v in mx) + ": the peak at 3 slaves and the drop at 4 come "
          "back, within ~10 % of Table 1.", "",
          "2. **Table 1's loop labels and §2.3's table disagree on the pipeline depth.** §2.3 updates with "
          "the error of bunch k after the forward pass of bunch k+1; Table 1's loop calls "
          "`train(error0, input2)` while the host computes `comp_err(output1)`, i.e. the error of bunch k "
          "is applied with the forward pass of bunch k+2. We implement §2.3 as the issue asks.", ""]
    raw = facts.get("raw_here_mcups", float("nan"))
    em = [rel(facts.get("emulated_label", "emulated (here)"), P) for P in (1, 2, 3, 4)]
    eb = [rel("emulated (MultiSpert bus)", P) for P in (1, 2, 3, 4)]
    me = [rel("measured", P) for P in (1, 2)]
    L += [f"3. **This machine as a MultiSpert.** One slave's raw speed on "
          f"156:{facts.get('table1_hidden')}:56 at B = {setup.np_bunch_perf} is {raw:,.0f} MCUPS (one core, "
          f"numpy float64, median step; the Spert-II board: 115). Our transfer model measured "
          f"α = {here['latency_s'] * 1e6:.0f} µs per message and β = {here['bw_write_Bps'] / 1e9:.1f} GB/s "
          "between two local processes (a spin barrier that yields its core when the peer is "
          "descheduled; on an idle machine α is a few µs). "
          + ("With it" if facts.get("emulated_label", "emulated (here)") == "emulated (here)" else
             f"Under the profile `{facts['profile'].name}`") + ", emulated NP gives "
          + ", ".join(f"{v:.2f}" for v in em) + " × raw for 1–4 slaves; the same compute over the paper's "
          "4.0/2.7 MB/s bus gives " + ", ".join(f"{v:.2f}" for v in eb) +
          f": a slave {raw / 115:.0f}× faster than a Spert board is starved by that bus at any P. "
          "Measured on this machine (local processes, "
          "master co-located with slave 0): " + ", ".join(f"{v:.2f}" for v in me) + " × raw for 1–2. "
          f"The measured runs ran at a 1-minute load average of {facts['perf_load'][0]:.1f}–"
          f"{facts['perf_load'][1]:.1f} on {meta['cpu_count']} cores"
          + (": other jobs held the cores, so a measured run (hundreds of milliseconds, "
             "time-sliced) is slower than the median step behind the emulated figures, and a "
             "second worker finds no free core. The measured P = 2 figures show that contention, "
             "not the method." if facts["perf_load"][0] >= meta["cpu_count"] - 1 else
             "."), ""]
    ir = _get(df, "sec2.4", "input_reduction")
    if len(ir):
        L += [f"4. **Compressed input.** Input bytes per pattern per slave fall {ir.ours.iloc[0]:.1f}× "
              f"(paper: 9×): a 156-value window is built from 13-value frames, so the reduction is "
              f"156/13 = 12 less the chunk margins, not the paper's 9 (its windows are 9 whole frames). "
              f"All NP bytes per pattern (errors and partial outputs too) fall "
              f"{_get(df, 'sec2.4', 'total_reduction', 'strategy=NP').ours.iloc[0]:.2f}×.", ""]
    t2 = _get(df, "table2", "cv_frame_error")
    if len(t2):
        L += ["5. **Table 2 analog** (CV frame error, best epoch; the paper gives word error): "
              + "; ".join(f"{r.condition.split(';mode=')[1]} N_h = {r.condition.split('hidden=')[1].split(';')[0]}: "
                          f"{r.ours:.1f} %" for r in t2.itertuples()) +
              ". Pipelined NP (B = 12, 4 slaves) tracks sequential training; PP at B = "
              f"{setup.pp_bunch} with the reduced learning rate takes only "
              f"{updates_per_epoch(ntr, setup.pp_bunch, setup.chunk)} steps an epoch on our scaled-down data and "
              "trails far behind — §3.5's caveat that very large bunches need much more data.", ""]
    wr = _get(df, "table2", "word_error_rate")
    if len(wr):
        L += ["5b. **Table 2 as word error** (hybrid HMM/ANN Viterbi over a word loop of the numbers lexicon, "
              "one state per phone, posteriors / training priors, insertion penalty chosen on dev speakers, "
              "WER on other unseen test speakers; `reproduce/paper1/decode.py`): "
              + "; ".join(f"{r.condition.split(';mode=')[1]} N_h = {r.condition.split('hidden=')[1].split(';')[0]}: "
                          f"{r.ours:.1f} %" + (f" (paper {r.reported:g} %)" if r.reported == r.reported else "")
                          for r in wr.itertuples()) +
              ". Our corpus is synthetic and far smaller than numbers95, so the absolute WER says little; "
              "the ratios to sequential training (rows `wer_over_sequential`) are the comparison.", ""]
    f4 = curves[curves.figure == "fig4"] if "figure" in curves else curves.iloc[0:0]
    if len(f4):
        g4 = f4[f4.hidden == 1000] if (f4.hidden == 1000).any() else f4[f4.hidden == f4.hidden.min()]

        def peak(src):
            g = g4[g4.source == src].set_index("P").perf
            return f"{g.max() / 1e6:.0f} MCUPS at P = {int(g.idxmax())}"
        base = g4[g4.host_speedup == 1].set_index("P").perf
        parts = []
        for src in [x for x in g4.source.unique() if "Sparc-2" not in x]:
            g = g4[g4.source == src].set_index("P").perf
            gain = "/".join(f"{g[P] / base[P]:.2f}" for P in (2, 3) if P in g.index and P in base.index)
            parts.append(f"{src.removeprefix('modeled (').removesuffix(')')}: {peak(src)}, "
                         f"P = 2/3 at {gain} × the Sparc-2 host")
        host_only_flat = all(abs(g4[(g4.source == src) & (g4.P == P)].perf.iloc[0] / base[P] - 1) < 1e-9
                             for src in g4.source.unique() if src.startswith("modeled (host ") and "bus" not in src
                             for P in (2, 3) if P in base.index)
        L += ["6. **Fig. 4 (NP with a SUN Ultra-1 host) cannot be reproduced**: the paper prints no "
              "constants for that host (its host time, its bus rates), and we do not fit the figure. "
              "What the §2.5 model (max form, Table 1's constants otherwise) says under ASSUMED host "
              f"speed-ups, for 156:{int(g4.hidden.iloc[0])}:56 at B = {TABLE1_BUNCH}: the Sparc-2 host of "
              f"Table 1 peaks at {peak('modeled (Sparc-2 host, Table 1)')}; " + "; ".join(parts) +
              ". The paper says only that 2 and 3 slaves 'slightly exceed' Fig. 3 and that scalability "
              "increases to four nodes; compare the peak slave counts above (rows `fig4`, plot "
              "`fig4_fast_host_model.png`)." + (
                  " In the model a faster host alone leaves 2 and 3 slaves where they were (those loops are "
                  "slave-bound: T_d + T_c > P·T_d + T_h); only a faster host-driven bus raises them."
                  if host_only_flat else ""), ""]
    fw = _get(df, "fig5", "forward_mcps", "source=measured")
    if len(fw):
        by = {}
        for r in fw.itertuples():
            k = r.condition.split(";", 2)[2]  # bunch, hidden, strategy, ... without nodes/workers
            by.setdefault(k.split(";load=")[0], {})[r.condition.split("nodes=")[1].split(";")[0]] = r.ours
        pairs = [v for v in by.values() if "1" in v and "2" in v]
        two_over_one = (sum(v["2"] > v["1"] for v in pairs), len(pairs))
        L += ["7. **Measured forward pass (Fig. 5).** Forward only, NP (B = "
              f"{setup.np_bunch_perf}) and PP (B = {', '.join(map(str, setup.pp_bunches))}) on 1 and 2 local "
              "processes, each timed in the same task as the serial forward pass of the same weights "
              f"(medians of {setup.perf_repeats}): "
              + "; ".join(f"{r.condition.split('strategy=')[1].split(';')[0]} N_h = "
                          f"{r.condition.split('hidden=')[1].split(';')[0]} B = "
                          f"{r.condition.split('bunch=')[1].split(';')[0]} P = "
                          f"{r.condition.split('nodes=')[1].split(';')[0]}: {r.ours:,.0f} MCPS "
                          f"({r.note.split('ours/serial = ')[1].split(';')[0]} × serial)"
                          for r in fw.itertuples()) +
              f". 1-min load average {facts['fwd_load'][0]:.1f}–{facts['fwd_load'][1]:.1f} on "
              f"{meta['cpu_count']} shared cores; the slowest and fastest of the {setup.perf_repeats} "
              f"runs lie at {(fw.ours_low / fw.ours).min():.2f}–{(fw.ours_high / fw.ours).max():.2f} × "
              "the median (spread in the rows), so single ratios differ by noise. P = 2 beat P = 1 in "
              f"{two_over_one[0]} of {two_over_one[1]} configurations (no free second core at that load). "
              "The outputs equal the serial forward pass (tests/equivalence/test_forward_parallel.py).", ""]
    L += ["## Every row", "", R.comparison_markdown(df), ""]
    L += ["## Figures", ""] + [f"![{x}]({x})" for x in figs] + [""]
    L += ["Curves behind Figs. 3, 4 (modeled only) and 5: `curves.csv`; per-epoch accuracies: `training.csv`.", ""]
    L += ["## How to run", "", "```", "python -m reproduce paper1            # default (scaled-down data)",
          "python -m reproduce paper1 --quick    # under a minute, shrunk", "```", ""]
    return "\n".join(L)
