"""paper1's comparison rows, curves, plots and report.md (setup in reproduce/paper1/setup.py).

Emulated curves compose each slave's measured compute T_c and the host's T_h with a
machine profile (:func:`emulated_time`): the one ``--profile`` gives, else ``here``, the
α/β the calibrate task measured between two local processes. An α/β profile keeps the
§2.5 composition max(T_d + T_c, P·T_d + T_h) with T_d from its α and β; a calibrated
profile goes through ``MachineProfile.emulate`` (kernel "small"): compute × speed ratio ×
contention, the wait for the slowest of P, and the collectives our code runs per bunch
priced from its tables, then the host's work.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from engine.perfmodel import MachineProfile
from reproduce.paper1.spert import n_wts, spert_perf, spert_terms, spert_time
from reproduce import report as R
from reproduce.paper1.perf import N_I, N_O, here_model
from reproduce.paper1.tasks import emul_by_run, emul_medians
from reproduce.paper1.setup import (COMPRESSION_PAPER, HEADLINE_BOARDS, HEADLINE_CPS, HEADLINE_MCUPS,
                                    MULTISPERT_1997, NAME, RAW_MCUPS, TABLE1_BUNCH, TABLE1_HIDDEN,
                                    TABLE1_MCUPS, TABLE1_RELATIVE, TABLE2_WER)
from reproduce.store import atomic_write
from reproduce.why import emulated_parts as split_emulated

# Rows this paper's verdict rules take (reproduce.report.rules; first match wins).
RULES = [
    ("by-construction", "paper1 Table 1 constants",
     lambda r: (r.table == "table1" and r.kind == "modeled"
                and r.c.get("source", "") == "modeled (paper)"),
     "the model's constants were read from this Table 1, so agreement checks the formula's "
     "algebra, not a machine (the rows of the formula as printed are judged: where they "
     "differ, Table 1 does not follow from §2.5 as printed)"),
    ("by-construction", "paper1 transfer time behind the bunch",
     lambda r: r.quantity == "transfer_per_slave",
     "circular: Table 1's bunch of 48 was inferred from these same transfer times, so the "
     "model's transfer time at that bunch cannot differ by much"),
    ("not-comparable", "paper1 workstation baseline",
     lambda r: r.quantity == "over_ultrasparc",
     "compares Spert-II boards with a 1997 Ultra-Sparc; here the workers and the "
     "workstation are the same CPU core, so there is no such ratio to measure"),
]

TOL = R.DEFAULT_TOLERANCE


def _by(results, name):
    return [(t, r) for t, r in results if t.name == name and r is not None]


def nonneg_fits(cal: dict) -> dict:
    """c2 is a time and cannot be negative; where the free fit gives c2 < 0 (timings on a
    loaded machine), refit through the origin: c1 = Σ x·y / Σ x², c2 = 0 (flagged)."""
    cal = {**cal, "fits": {b: dict(f) for b, f in cal["fits"].items()}}
    for f in cal["fits"].values():
        x = np.asarray(f["hidden"], float)
        for c1, c2, ys in (("c1", "c2", "train_s_per_pattern"), ("c1_fwd", "c2_fwd", "fwd_s_per_pattern")):
            if f[c2] < 0:
                y = np.asarray(f[ys], float)
                f[c1], f[c2] = float(x @ y / (x @ x)), 0.0
                f[f"{c2}_constrained"] = True
    return cal


KERNEL = "small"  # the probe's cache-resident kernel (issue 12: paper0..paper3 use it)


def here_profile(cal: dict, profile=None) -> MachineProfile:
    """The machine behind the emulated rows: ``--profile``'s, else ``here``, the latency and
    bandwidth the calibrate task measured between two local processes."""
    if profile is not None:
        return profile
    return MachineProfile("here", cal["latency_s"], cal["bandwidth_Bps"], source=cal["profile_source"])


def emulated_label(prof) -> str:
    return "emulated (here)" if prof.name == "here" else f"emulated ({prof.name})"


def collectives(strategy: str, *, P: int, B: int, N_h: int, forward: bool) -> list:
    """The collectives of one bunch as our code runs them, (op, bytes per rank, count):
    NP trains with an allgather of the partial outputs and a broadcast of the error, and
    runs forward with the allgather alone; PP trains with one allreduce of the gradient
    sums (n_params + 2 values) and runs forward with an allgather of the shares' outputs."""
    out = B * N_O * 8
    if strategy == "NP":
        return [("allgather", out, 1)] + ([] if forward else [("broadcast", out, 1)])
    if forward:
        return [("allgather", math.ceil(B / P) * N_O * 8, 1)]
    n_params = N_h * (N_I + 1) + N_O * (N_h + 1)
    return [("allreduce", (n_params + 2) * 8, 1)]


def emulated_time(strategy: str, *, P: int, B: int, N_h: int, forward: bool, T_c: float, T_h: float,
                  prof, spert_here) -> tuple[float, float]:
    """(seconds of one bunch on P slaves, its communication seconds). α/β ``prof``: §2.5's
    max(T_d + T_c, P·T_d + T_h) with T_d from ``spert_here`` (the §2.5 model with this
    profile's α and β). Calibrated: ``prof.emulate`` of T_c with :func:`collectives`, then
    the host's T_h at the profile's speed (the slaves wait for it)."""
    if not prof.calibrated:
        T_d = spert_terms(strategy, P=P, B=B, N_i=N_I, N_h=N_h, N_o=N_O, m=spert_here, forward=forward)["T_d"]
        return spert_time(T_d, T_c, T_h, P), T_d
    c, comm = prof.emulate(P, T_c, collectives(strategy, P=P, B=B, N_h=N_h, forward=forward), kernel=KERNEL)
    return c + comm + T_h * prof.compute_scale(1, KERNEL), comm


def emulated_parts(strategy: str, *, P: int, B: int, N_h: int, forward: bool, T_c: float, T_h: float,
                   prof, spert_here) -> dict:
    """:func:`emulated_time`'s bunch taken apart (the issue "The why behind every verdict"),
    {name: seconds} summing to its time. α/β ``prof``: the branch of §2.5's
    max(T_d + T_c, P·T_d + T_h) that binds, "compute" T_c and "transfers" T_d where the
    slaves bind (the host's T_h hides behind them), "transfers" P·T_d and "host" T_h where
    the host binds (the slaves' compute hides); "straggler_wait" 0 (§2.5 has none).
    Calibrated: :func:`reproduce.why.emulated_parts` (``split_emulated``: compute, straggler
    wait, each collective of :func:`collectives`) and "host", the host's T_h at the profile's
    speed."""
    if not prof.calibrated:
        T_d = spert_terms(strategy, P=P, B=B, N_i=N_I, N_h=N_h, N_o=N_O, m=spert_here, forward=forward)["T_d"]
        slaves = T_d + T_c >= P * T_d + T_h
        return {"compute": T_c if slaves else 0.0, "transfers": T_d if slaves else P * T_d,
                "host": 0.0 if slaves else T_h, "straggler_wait": 0.0}
    parts = split_emulated(prof, P, T_c, collectives(strategy, P=P, B=B, N_h=N_h, forward=forward),
                           kernel=KERNEL)
    return {**parts, "host": T_h * prof.compute_scale(1, KERNEL)}


def curves(results, setup, profile=None) -> tuple[pd.DataFrame, dict]:
    """Every performance point: (figure, strategy, hidden, bunch, P, source, kind, perf).
    ``profile``: the machine of the emulated rows (None: ``here``, :func:`here_profile`)."""
    cal = nonneg_fits(_by(results, "calibrate")[0][1])
    prof = here_profile(cal, profile)
    # the §2.5 model's transfers at the profile's α and β (with ``here``: exactly the calibration's)
    cal_ab = cal if profile is None else {**cal, "latency_s": prof.latency_s, "bandwidth_Bps": prof.bandwidth_Bps,
                                          "profile_source": prof.source}
    label = emulated_label(prof)
    rows = []
    hidden = sorted(set(setup.perf_hidden) | {TABLE1_HIDDEN})
    for (s, h, B, fwd), runs in emul_by_run(results).items():  # medians over an emul task's runs
        fig = "fig5" if fwd else "fig3"
        W = B * n_wts(N_I, h, N_O)
        here = here_model(cal, B=B if s == "NP" else max(B // 4, 1))
        here_ab = here_model(cal_ab, B=B if s == "NP" else max(B // 4, 1))
        for e in emul_medians(runs).values():
            P = e["P"]
            T, T_d = emulated_time(s, P=P, B=B, N_h=h, forward=fwd, T_c=e["T_c"], T_h=e["T_h"], prof=prof,
                                   spert_here=here_ab)
            rows.append(dict(figure=fig, strategy=s, hidden=h, bunch=B, P=P, source=label,
                             kind="emulated", perf=W / T, T_c=e["T_c"], T_h=e["T_h"], T_d=T_d, runs=e["runs"]))
            T_d = spert_terms(s, P=P, B=B, N_i=N_I, N_h=h, N_o=N_O, m=MULTISPERT_1997, forward=fwd)["T_d"]
            T = spert_time(T_d, e["T_c"], e["T_h"], P)
            rows.append(dict(figure=fig, strategy=s, hidden=h, bunch=B, P=P, source="emulated (MultiSpert bus)",
                             kind="emulated", perf=W / T, T_c=e["T_c"], T_h=e["T_h"], T_d=T_d, runs=e["runs"]))
            for m, lab, f in ((here, "modeled (here)", "max"), (MULTISPERT_1997, "modeled (paper)", "max"),
                              (MULTISPERT_1997, "modeled (paper, printed formula)", "printed")):
                rows.append(dict(figure=fig, strategy=s, hidden=h, bunch=B, P=P, source=lab,
                                 kind="modeled", perf=spert_perf(s, P=P, B=B, N_i=N_I, N_h=h, N_o=N_O,
                                                                 m=m, forward=fwd, formula=f)))
    for t, r in _by(results, "perf"):
        p = t.params
        if p["compressed"] != (p["strategy"] == "NP") or p["pipelined"] != (p["strategy"] == "NP"):
            continue  # the on/off checks are reported separately
        rows.append(dict(figure="fig3", strategy=p["strategy"], hidden=p["hidden"], bunch=p["bunch"],
                         P=p["P"], source="measured", kind="measured", perf=r["mcups"] * 1e6,
                         perf_low=r["mcups_low"] * 1e6, perf_high=r["mcups_high"] * 1e6,
                         runs=r["repeats"]))
    for t, r in _by(results, "fwd"):  # measured forward pass (Fig. 5), beside the serial one
        p = t.params
        rows.append(dict(figure="fig5", strategy=p["strategy"], hidden=p["hidden"], bunch=p["bunch"],
                         P=p["P"], source="measured", kind="measured", perf=r["mcps"] * 1e6,
                         perf_low=r["mcps_low"] * 1e6, perf_high=r["mcps_high"] * 1e6,
                         runs=r["repeats"], serial_perf=r["serial_mcps"] * 1e6,
                         over_serial=r["over_serial"], workers=p["P"], loadavg=r["loadavg"][0]))
    rows += fig4_curves(setup)
    del hidden
    return pd.DataFrame(rows), cal


# Fig. 4 (NP with a SUN Ultra-1 host): the paper prints no constants for that host. We do
# not fit the figure; we state host speed-ups k and run §2.5 (max form) with the paper's
# Sparc-2 constants, the host's error time T_h = c_h·B divided by k ("host"), or T_h and
# the host-driven bus bandwidths both scaled by k ("host and bus"). An assumption, not data.
FIG4_HOST_SPEEDUPS = (1, 2, 4)
FIG4_VARIANTS = ("host", "host and bus")


def fig4_model(k: float, variant: str):
    m = MULTISPERT_1997
    bw = k if variant == "host and bus" else 1.0
    return replace(m, name=f"multispert1997, host {k}x ({variant})", c_h_s=m.c_h_s / k,
                   bw_write_Bps=m.bw_write_Bps * bw, bw_read_Bps=m.bw_read_Bps * bw,
                   source=f"ASSUMPTION: Table 1 constants with T_h / {k}"
                          + (f" and bus bandwidth × {k}" if bw != 1 else ""))


def fig4_curves(setup) -> list[dict]:
    rows = []
    for h in sorted(set(setup.perf_hidden) | {TABLE1_HIDDEN}):
        for k in FIG4_HOST_SPEEDUPS:
            for v in FIG4_VARIANTS:
                if k == 1 and v != "host":
                    continue  # k = 1 is the Sparc-2 host of Table 1 either way
                lab = "modeled (Sparc-2 host, Table 1)" if k == 1 else f"modeled ({v} {k}x faster)"
                for P in setup.slaves:
                    rows.append(dict(figure="fig4", strategy="NP", hidden=h, bunch=TABLE1_BUNCH, P=P,
                                     source=lab, kind="modeled", host_speedup=k,
                                     perf=spert_perf("NP", P=P, B=TABLE1_BUNCH, N_i=N_I, N_h=h, N_o=N_O,
                                                     m=fig4_model(k, v))))
    return rows


def _raw(df, s, h, B, fig="fig3"):
    """One slave's raw speed here: its measured compute alone at P = 1."""
    g = df[(df.figure == fig) & (df.strategy == s) & (df.hidden == h) & (df.bunch == B) &
           (df.source == "emulated (MultiSpert bus)") & (df.P == 1)]
    return float(B * n_wts(N_I, h, N_O) / g.T_c.iloc[0]) if len(g) else math.nan


def comparison_rows(df: pd.DataFrame, results, setup, cal, *,
                    here_src: str = "emulated (here)") -> tuple[list[dict], dict]:
    """The rows; ``here_src``: the source label of the emulated rows under the run's profile."""
    rows, facts = [], {}
    facts["emulated_label"] = here_src
    B, h = setup.np_bunch_perf, TABLE1_HIDDEN if TABLE1_HIDDEN in setup.perf_hidden else setup.perf_hidden[0]
    np_ = df[(df.figure == "fig3") & (df.strategy == "NP") & (df.hidden == h) & (df.bunch == B)]
    raw_here = _raw(df, "NP", h, B)
    facts["raw_here_mcups"] = raw_here / 1e6
    facts["table1_hidden"] = h
    # Table 1 transfer check: the paper's constants give T_d per slave.
    td = spert_terms("NP", P=1, B=TABLE1_BUNCH, N_i=N_I, N_h=1000, N_o=N_O, m=MULTISPERT_1997)
    rows.append(R.row(NAME, "table1", "transfer_per_slave", R.condition(hidden=1000, bunch=48), "ms",
                      reported=2.7 + 2.0, ours=td["T_d"] * 1e3, kind="modeled",
                      note="paper: write 2.7 ms + read 2.0 ms; ours: §2.5 T_d with the paper's constants "
                           "at the implied B = 48"))
    for P, rel in TABLE1_RELATIVE.items():
        # The paper's model at Table 1's own configuration, whatever our grid.
        for f, lab in (("printed", "§2.5 as printed: P·T_d when host-bound"),
                       ("max", "§2.5 with max(T_d + T_c, P·T_d + T_h)")):
            v = spert_perf("NP", P=P, B=TABLE1_BUNCH, N_i=N_I, N_h=1000, N_o=N_O, m=MULTISPERT_1997,
                           formula=f) / (RAW_MCUPS * 1e6)
            src = "modeled (paper, printed formula)" if f == "printed" else "modeled (paper)"
            rows.append(R.row(NAME, "table1", "relative_performance",
                              R.condition(nodes=P, bunch=TABLE1_BUNCH, hidden=1000) + f";source={src}",
                              "x raw", reported=rel, ours=v, kind="modeled",
                              note=lab + "; of the 115 MCUPS raw board"))
        cond = R.condition(nodes=P, bunch=B, hidden=h)
        for src, kind in (("modeled (here)", "modeled"), (here_src, "emulated"),
                          ("emulated (MultiSpert bus)", "emulated"), ("measured", "measured")):
            g = np_[(np_.P == P) & (np_.source == src)]
            if g.empty:
                continue
            v = float(g.perf.iloc[0]) / raw_here
            note = {"modeled (here)": "§2.5 (max) with constants calibrated here",
                    here_src: "measured slave compute + shared-memory transfer model"
                              + ("" if here_src == "emulated (here)" else f" (profile {here_src[10:-1]})"),
                    "emulated (MultiSpert bus)": "measured slave compute + the paper's 4.0/2.7 MB/s bus",
                    "measured": "local processes, master on rank 0 with slave 0; the loop also "
                                "builds windows and targets"}[src]
            rows.append(R.row(NAME, "table1", "relative_performance", cond + f";source={src}", "x raw",
                              reported=rel, ours=v, kind=kind,
                              note=note + f"; of one slave's raw speed here ({raw_here / 1e6:,.0f} MCUPS)"))
    for P, mc in TABLE1_MCUPS.items():
        v = spert_perf("NP", P=P, B=TABLE1_BUNCH, N_i=N_I, N_h=1000, N_o=N_O, m=MULTISPERT_1997) / 1e6
        rows.append(R.row(NAME, "table1", "training_mcups",
                          R.condition(nodes=P, bunch=TABLE1_BUNCH, hidden=1000) + ";source=modeled (paper)",
                          "MCUPS", reported=mc, ours=v, kind="modeled", note="B·N_h(N_i+N_o)/T per bunch"))
        for src, kind in (("measured", "measured"), (here_src, "emulated")):
            g = np_[(np_.P == P) & (np_.source == src)]
            if not g.empty:
                lo, hi, n = (g.perf_low.iloc[0] / 1e6, g.perf_high.iloc[0] / 1e6, int(g.runs.iloc[0])) \
                    if src == "measured" else (None, None, int(g.runs.iloc[0]))
                rows.append(R.row(NAME, "table1", "training_mcups",
                                  R.condition(nodes=P, bunch=B, hidden=h) + f";source={src}", "MCUPS",
                                  reported=mc, ours=float(g.perf.iloc[0]) / 1e6, low=lo, high=hi,
                                  kind=kind, runs=n, note="B·N_h(N_i+N_o)/T per bunch; measured: median (min–max) "
                                                          "of the repeated runs; emulated: T composed from "
                                                          "the median over the emulated runs"))
    # Figs. 3 and 5: the peak of every curve (the figures themselves carry no numbers).
    for fig, unit in (("fig3", "MCUPS"), ("fig5", "MCPS")):
        for (s, hh, bb, src), g in df[df.figure == fig].groupby(["strategy", "hidden", "bunch", "source"]):
            i = g.perf.idxmax()
            rows.append(R.row(NAME, fig, "peak_perf", R.condition(bunch=int(bb), hidden=int(hh))
                              + f";strategy={s};source={src}", unit, ours=float(g.perf.max()) / 1e6,
                              kind=g.kind.iloc[0], note=f"at P = {int(g.P[i])} of {sorted(int(x) for x in g.P.unique())}"))
    # Headline (§4): five boards.
    for fig, rep, unit, q in (("fig3", HEADLINE_MCUPS, "MCUPS", "training_mcups"),
                              ("fig5", HEADLINE_CPS / 1e6, "MCPS", "forward_mcps")):
        for src, kind in (("modeled (paper)", "modeled"), (here_src, "emulated")):
            g = df[(df.figure == fig) & (df.source == src) & (df.P == HEADLINE_BOARDS)]
            if g.empty:
                continue
            i = g.perf.idxmax()
            rows.append(R.row(NAME, "headline", q, R.condition(nodes=HEADLINE_BOARDS) + f";source={src}",
                              unit, reported=rep, ours=float(g.perf.max()) / 1e6, kind=kind,
                              note=f"best of our grid: {g.strategy[i]} N_h = {int(g.hidden[i])}, "
                                   f"B = {int(g.bunch[i])}"))
    meas = df[(df.source == "measured") & (df.figure == "fig3")]
    if not meas.empty:
        i = meas.perf.idxmax()
        rows.append(R.row(NAME, "headline", "training_mcups", R.condition(nodes=int(meas.P[i]))
                          + ";source=measured", "MCUPS", reported=HEADLINE_MCUPS,
                          ours=float(meas.perf.max()) / 1e6, kind="measured",
                          note=f"best measured here: {meas.strategy[i]} N_h = {int(meas.hidden[i])}, "
                               f"B = {int(meas.bunch[i])}; the paper's is 5 boards"))
    fm = df[(df.source == "measured") & (df.figure == "fig5")]
    for r in fm.sort_values(["strategy", "hidden", "bunch", "P"]).itertuples():
        rows.append(R.row(NAME, "fig5", "forward_mcps", R.condition(nodes=int(r.P), workers=int(r.workers),
                                                                     bunch=int(r.bunch), hidden=int(r.hidden))
                          + f";strategy={r.strategy};source=measured;load={r.loadavg:.1f}", "MCPS",
                          ours=r.perf / 1e6, low=r.perf_low / 1e6, high=r.perf_high / 1e6, kind="measured",
                          runs=int(r.runs),
                          note=f"forward only, local processes ("
                               + ("rank 0 master and slave 0" if r.strategy == "NP" else
                                  "rank 0 gathers the shares' outputs") + "); the serial "
                               f"forward of the same weights in the same task: {r.serial_perf / 1e6:,.0f} "
                               f"MCPS, ours/serial = {r.over_serial:.2f}; 1-min load average "
                               f"{r.loadavg:.1f} on 2 shared cores"))
    if not fm.empty:
        i = fm.perf.idxmax()
        facts["fwd_load"] = (float(fm.loadavg.min()), float(fm.loadavg.max()))
        rows.append(R.row(NAME, "headline", "forward_mcps", R.condition(nodes=int(fm.P[i]))
                          + ";source=measured", "MCPS", reported=HEADLINE_CPS / 1e6,
                          ours=float(fm.perf[i]) / 1e6, kind="measured",
                          note=f"best measured forward pass here: {fm.strategy[i]} N_h = {int(fm.hidden[i])}, "
                               f"B = {int(fm.bunch[i])}; the paper's is 5 boards"))
    rows += fig4_rows(df)
    # Compressed input (§2.4) and pipelining on/off, measured.
    perf = [(t.params, r) for t, r in _by(results, "perf")]
    loads = [r["loadavg"][0] for _, r in perf]
    facts["perf_load"] = (min(loads), max(loads)) if loads else (math.nan, math.nan)
    for P in (1, 2):
        sel = {(p["strategy"], p["pipelined"], p["compressed"]): r for p, r in perf
               if p["P"] == P and p["hidden"] == h and p["bunch"] in (B, setup.pp_bunches[0])}
        a, b = sel.get(("NP", True, False)), sel.get(("NP", True, True))
        if a and b:
            err = 2 * N_O * 8  # error written + partials read per pattern, float64
            ia, ib = a["bytes_per_pattern_per_slave"] - err, b["bytes_per_pattern_per_slave"] - err
            facts[f"np_bytes_{P}"] = (a["bytes_per_pattern_per_slave"], b["bytes_per_pattern_per_slave"])
            rows.append(R.row(NAME, "sec2.4", "input_reduction", R.condition(nodes=P, bunch=B, hidden=h)
                              + ";strategy=NP", "x", reported=COMPRESSION_PAPER, ours=ia / ib,
                              kind="measured", note=f"input bytes per pattern per slave {ia:.0f} → "
                                                    f"{ib:.1f} (counted in the run)"))
            rows.append(R.row(NAME, "sec2.4", "total_reduction", R.condition(nodes=P, bunch=B, hidden=h)
                              + ";strategy=NP", "x", ours=a["bytes_per_pattern_per_slave"] /
                              b["bytes_per_pattern_per_slave"], kind="measured",
                              note="all bytes per pattern per slave, errors and partial outputs included"))
            rows.append(R.row(NAME, "sec2.4", "mcups_compressed_over_uncompressed",
                              R.condition(nodes=P, bunch=B, hidden=h) + ";strategy=NP", "x",
                              ours=b["mcups"] / a["mcups"], kind="measured",
                              note=f"separate runs one after another, load average "
                                   f"{a['loadavg'][0]:.1f} and {b['loadavg'][0]:.1f}"))
        c, d = sel.get(("NP", False, True)), sel.get(("NP", True, True))
        if c and d:
            rows.append(R.row(NAME, "sec2.3", "mcups_pipelined_over_not", R.condition(nodes=P, bunch=B, hidden=h)
                              + ";strategy=NP", "x", ours=d["mcups"] / c["mcups"], kind="measured",
                              note="no separate host here: pipelining can only save the wait, "
                                   "not overlap the host's error computation; separate runs one after "
                                   "another, not interleaved: at P = 1 both do the same work, so that "
                                   "ratio shows the run-to-run noise"))
        e, f = sel.get(("PP", False, False)), sel.get(("PP", False, True))
        if e and f:
            rows.append(R.row(NAME, "sec2.4", "total_reduction", R.condition(nodes=P, bunch=setup.pp_bunches[0],
                                                                              hidden=h) + ";strategy=PP",
                              "x", ours=e["bytes_per_pattern_per_slave"] / f["bytes_per_pattern_per_slave"],
                              kind="measured", note="PP: the weights dominate the bytes"))
    return rows, facts


def fig4_rows(df: pd.DataFrame) -> list[dict]:
    """Fig. 4 under stated host speed-ups: the best slave count and, for N_h = 1000, the
    gain at 2 and 3 slaves over the Sparc-2 host (the paper: "the performance values for
    two and three slaves slightly exceed those shown in figure 3, and scalability
    increases to four nodes")."""
    rows = []
    d = df[df.figure == "fig4"]
    for (h, src), g in d.groupby(["hidden", "source"]):
        g = g.set_index("P").perf
        base = d[(d.hidden == h) & (d.host_speedup == 1)].set_index("P").perf
        cond = R.condition(hidden=int(h), bunch=TABLE1_BUNCH) + f";strategy=NP;source={src}"
        note = ("ASSUMED host speed-up, not the paper's constants (it prints none for the Ultra-1); "
                "§2.5 max form with Table 1's constants otherwise")
        rows.append(R.row(NAME, "fig4", "best_slaves", cond, "slaves",
                          reported=4 if h == TABLE1_HIDDEN and "Sparc-2" not in src else None,
                          ours=int(g.idxmax()), kind="modeled",
                          note=note + ("; paper (§3.3 text, for the Ultra-1 host): scalability increases "
                                       "to four nodes; the figure's values are not in the text"
                                       if h == TABLE1_HIDDEN and "Sparc-2" not in src else "")))
        rows.append(R.row(NAME, "fig4", "peak_mcups", cond, "MCUPS", ours=float(g.max()) / 1e6,
                          kind="modeled", note=note + f"; at P = {int(g.idxmax())}"))
        if h == TABLE1_HIDDEN:
            for P in (2, 3, 4):
                if P in g.index and P in base.index:
                    rows.append(R.row(NAME, "fig4", "over_sparc2_host",
                                      R.condition(nodes=P, hidden=int(h), bunch=TABLE1_BUNCH)
                                      + f";strategy=NP;source={src}", "x", ours=float(g[P] / base[P]),
                                      kind="modeled", note=note + "; paper: 2 and 3 slaves 'slightly "
                                                                  "exceed' Fig. 3 (no number)"))
    return rows


def training_frame(results, setup) -> pd.DataFrame:
    rows = []
    for t, r in _by(results, "train"):
        p = t.params
        for e, a in enumerate(r["cv_acc"], 1):
            rows.append({"mode": p["mode"], "hidden": p["hidden"], "bunch": p["bunch"], "lr": p["lr"],
                         "seed": p["seed"], "kind": t.kind, "epoch": e, "cv_acc": a,
                         "train_acc": r["train_acc"][e - 1], "n_train": r["n_train"], "n_cv": r["n_cv"]})
    return pd.DataFrame(rows)


def training_rows(tf: pd.DataFrame, setup) -> list[dict]:
    rows = []
    if tf.empty:
        return rows
    best = tf.groupby(["mode", "hidden", "bunch", "seed", "kind"]).cv_acc.max().reset_index()
    f6 = best[(best["mode"] == "sequential") & (best.hidden == setup.fig6_hidden)]
    for B, g in f6.groupby("bunch"):
        v = 100 * (1 - g.cv_acc.to_numpy())
        last = tf[(tf["mode"] == "sequential") & (tf.hidden == setup.fig6_hidden) & (tf.bunch == B)]
        last = last[last.epoch == last.epoch.max()]
        rows.append(R.spread_row(NAME, "fig6", "cv_frame_error_best_epoch",
                                 R.condition(bunch=int(B), hidden=setup.fig6_hidden), "%", v,
                                 kind="measured",
                          note=f"η = {setup.lr_for(int(B)):.3g}; after the last epoch: "
                               f"{100 * (1 - last.cv_acc.median()):.1f} %"))
    seq = {}
    for (h, mode), g in best.groupby(["hidden", "mode"]):
        g = g[g.bunch == {"sequential": setup.np_bunch, "NP": setup.np_bunch, "PP": setup.pp_bunch}[mode]]
        if g.empty or h not in setup.nets:
            continue
        v = 100 * (1 - g.cv_acc.to_numpy())
        seq[(h, mode)] = float(np.median(v))
        wer = TABLE2_WER.get((h, mode))
        cond = {"sequential": f"bunch={setup.np_bunch}", "NP": f"nodes={setup.np_slaves};bunch={setup.np_bunch};pipelined=1",
                "PP": f"nodes={setup.pp_slaves};bunch={setup.pp_bunch}"}[mode]
        rows.append(R.spread_row(NAME, "table2", "cv_frame_error", f"{cond};hidden={h};mode={mode}", "%", v,
                                 kind=g.kind.iloc[0],
                          note=(f"paper: word error rate {wer} % (a different measure; ours as word error: row word_error_rate)"
                                if wer is not None else "paper: no value") +
                               f"; best CV epoch of {setup.epochs}; η = {setup.lr_for(int(g.bunch.iloc[0])):.3g}"))
    for (h, mode), v in seq.items():
        if mode == "sequential" or (h, "sequential") not in seq:
            continue
        rep, base = TABLE2_WER.get((h, mode)), TABLE2_WER.get((h, "sequential"))
        rows.append(R.row(NAME, "table2", "frame_error_over_sequential", f"hidden={h};mode={mode}", "x",
                          ours=v / seq[(h, "sequential")], kind="emulated",
                          note=(f"CV frame error ratio (the paper's WER ratio: {rep / base:.3f}" if rep else
                                "CV frame error ratio (the paper gives no value")
                          + "; word error ratio: row wer_over_sequential)"))
    return rows


def validation_pairs(df: pd.DataFrame, here_src: str, cores: int) -> list[dict]:
    """Every measured configuration (training, Fig. 3; forward, Fig. 5) beside its emulated
    twin under the run's profile, as seconds per bunch (B·N_wts / performance); measured
    runs on more workers than cores are left out (not measured scaling)."""
    key = ["figure", "strategy", "hidden", "bunch", "P"]
    meas = df[(df.kind == "measured") & df.figure.isin(["fig3", "fig5"])]
    em = df[df.source == here_src].set_index(key).perf
    pairs = []
    for r in meas.itertuples():
        k = (r.figure, r.strategy, r.hidden, r.bunch, r.P)
        if k not in em.index or R.oversubscribed(int(r.P), cores):
            continue
        W = r.bunch * n_wts(N_I, r.hidden, N_O)
        what = "training" if r.figure == "fig3" else "forward"
        pairs.append({"P": int(r.P), "config": f"{r.strategy} {what} 156:{r.hidden}:56 B={r.bunch}",
                      "emulated_s": W / float(em[k]), "measured_s": W / r.perf})
    return sorted(pairs, key=lambda x: (x["P"], x["config"]))


def label_rows(rows: list[dict], pairs: list[dict], here_src: str, cores: int) -> None:
    """Measured rows with more slaves than cores get ``oversubscribed=yes``; emulated rows
    under the run's profile beyond the largest measured P get what their validation says."""
    Pmax = max((x["P"] for x in pairs), default=1)
    prof = here_src[len("emulated ("):-1]
    for r in rows:
        kv = dict(x.split("=", 1) for x in r["condition"].split(";") if "=" in x)
        P = int(kv["nodes"]) if kv.get("nodes", "").isdigit() else None
        if r["kind"] == "measured" and P is not None and R.oversubscribed(P, cores):
            r["condition"] += ";oversubscribed=yes"
        if r["kind"] == "emulated" and kv.get("source") == here_src:
            at = r["note"].split("at P = ")[1].split(" ")[0] if "at P = " in r["note"] else None
            P = int(at) if P is None and at is not None else P
            if P is not None and P > Pmax:
                note = R.beyond_measured_note(pairs, profile=prof)
                r["note"] = f"{r['note']}; {note}" if r["note"] else note


def plots(out, df: pd.DataFrame, tf: pd.DataFrame, setup, *, quick: bool = False) -> list[str]:
    """Figs. 3–6 analogs. Colour = machine (reproduce.plotstyle: the MultiSpert bus brown,
    here orange, measured red), line = kind (solid measured/emulated, dashed/dotted models);
    one legend per figure. Fig. 3's NP 156:1000:56 panel carries Table 1 (111 and 205 MCUPS
    on one and two slaves; §3.2's relative performance × the 115 MCUPS raw board), and the
    §4 headlines (over 500 MCUPS training, about 1 GCPS forward, five boards) sit at P = 5."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    from reproduce import plotstyle as S

    sns.set_theme(style="whitegrid", context="notebook")
    figs = []
    spert = S.colors()["multispert1997"]
    looks = {"measured": S.style("measured"),
             "emulated (MultiSpert bus)": dict(color=spert, ls="-", marker="^"),
             "modeled (here)": dict(color=S.COLORS["here"], ls="--", marker=None),
             "modeled (paper)": dict(color=spert, ls=":", marker=None, lw=2),
             "modeled (paper, printed formula)": dict(color=spert, ls="-.", marker=None)}
    looks |= {src: S.style(src) for src in df.source.unique() if src not in looks}  # the run's profile
    headline = {"fig3": (HEADLINE_MCUPS, "paper §4: over 500 MCUPS, 5 boards (best net)"),
                "fig5": (HEADLINE_CPS / 1e6, "paper §4: about 1 GCPS forward, 5 boards (best net)")}
    for fig, unit, fname, title in (("fig3", "MCUPS", "fig3_training.png", "Fig. 3 analog: training"),
                                    ("fig5", "MCPS", "fig5_forward.png", "Fig. 5 analog: forward pass")):
        d = df[df.figure == fig]
        if d.empty:
            continue
        nets = sorted(d.hidden.unique())
        f, axes = plt.subplots(2, len(nets), figsize=(max(5 * len(nets), 11), 8.4), squeeze=False,
                             sharey="row")
        for j, hh in enumerate(nets):
            for i, s in enumerate(("NP", "PP")):
                ax = axes[i, j]
                bunches = sorted(d[(d.strategy == s) & (d.hidden == hh)].bunch.unique())
                for bb in bunches:
                    pale = len(bunches) > 1 and bb != bunches[-1]
                    for src, g in d[(d.strategy == s) & (d.hidden == hh) & (d.bunch == bb)].groupby("source"):
                        g = g.sort_values("P")
                        ax.plot(g.P, g.perf / 1e6, alpha=0.45 if pale else 1.0, ms=5, label=src, **looks[src])
                        if src == "measured" and g.perf_low.notna().any():
                            ax.fill_between(g.P, g.perf_low / 1e6, g.perf_high / 1e6, color=looks[src]["color"],
                                            alpha=0.15, lw=0)
                rep, lab = headline[fig]
                S.paper_points(ax, [HEADLINE_BOARDS], [rep], marker="^", ms=10, label=lab)
                if fig == "fig3" and s == "NP" and hh == TABLE1_HIDDEN and TABLE1_BUNCH in bunches:
                    S.paper_points(ax, list(TABLE1_RELATIVE), [r * RAW_MCUPS for r in TABLE1_RELATIVE.values()],
                                   marker="D", ms=6, ls="--", lw=1,
                                   label=f"paper §3.2: relative performance × {RAW_MCUPS:.0f} MCUPS raw")
                    S.paper_points(ax, list(TABLE1_MCUPS), list(TABLE1_MCUPS.values()), ms=17, mfc="none",
                                   mec=S.PAPER_COLOR, mew=1.4, label="paper Table 1: overall MCUPS")
                bl = "B = " + ", ".join(f"{b}" + (" (pale)" if b != bunches[-1] else "") for b in bunches)
                ax.set(yscale="log", xlabel="slaves P" if i == 1 else "", ylabel=unit if j == 0 else "",
                       title=f"{s}, 156:{hh}:56, {bl}", xticks=sorted(set(d.P) | {HEADLINE_BOARDS}))
                S.log_ticks(ax, "y")
        seen = {}
        for ax in axes.ravel():
            for hnd, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, hnd)
        f.suptitle(title + " performance vs slaves (ours beside the paper's model)")
        y = S.finish(f, quick=quick, reserve=0.95, note=(
            "Colour: the machine (brown: the paper's MultiSpert, with its 4.0/2.7 MB/s bus; orange: this "
            "machine; red: measured here). Line: solid = measured or emulated, dashed = §2.5 model with "
            "constants calibrated here, dotted / dash-dot = §2.5 with the paper's constants (max form / as "
            "printed). Black: the paper's own values. Band: min–max of the measured runs (line: median)."))
        f.legend(list(seen.values()), list(seen), loc="lower center", ncol=3, fontsize=8,
                 bbox_to_anchor=(0.5, y), frameon=False)
        S.save(f, out / fname, quick=quick, dpi=100)
        figs.append(fname)
    d = df[df.figure == "fig4"]
    if not d.empty:
        nets = sorted(d.hidden.unique())
        f, axes = plt.subplots(1, len(nets), figsize=(max(5 * len(nets), 9), 4.8), squeeze=False)
        for j, hh in enumerate(nets):
            ax = axes[0, j]
            srcs = list(dict.fromkeys(d[d.hidden == hh].source))
            ramp = dict(zip(srcs, sns.color_palette("viridis", len(srcs))))  # assumed hosts: an ordered ramp
            for src, g in d[d.hidden == hh].groupby("source", sort=False):
                g = g.sort_values("P")
                base = "Sparc-2" in src
                ax.plot(g.P, g.perf / 1e6, marker="o", ms=3, color=spert if base else ramp[src],
                        ls="-" if base else ("--" if "bus" in src else ":"), label=src)
            ax.set(xlabel="slaves P", ylabel="MCUPS", title=f"NP, 156:{hh}:56, B = {TABLE1_BUNCH}",
                   xticks=sorted(d.P.unique()))
            ax.legend(fontsize=6)
        f.suptitle("Fig. 4 analog: NP training with a faster host — §2.5 model under ASSUMED host "
                   "speed-ups (the paper gives no Ultra-1 constants)", fontsize=9)
        S.finish(f, quick=quick, note="All lines are the §2.5 model with the paper's MultiSpert constants "
                 "(brown: Table 1's Sparc-2 host); the faster hosts are assumptions, not the paper's values.")
        S.save(f, out / "fig4_fast_host_model.png", quick=quick, dpi=100)
        figs.append("fig4_fast_host_model.png")
    if not tf.empty:
        f6 = tf[(tf["mode"] == "sequential") & (tf.hidden == setup.fig6_hidden)]
        f, ax = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
        for a, bset, ttl in ((ax[0], setup.fig6_bunches, "moderate bunches, η"),
                             (ax[1], setup.fig6_big, "large bunches, η·200/B")):
            for B in bset:
                g = f6[f6.bunch == B].groupby("epoch").cv_acc
                if len(g.median()):
                    line, = a.plot(g.median().index, 100 * g.median().values, marker="o", label=f"B = {B}")
                    if g.size().max() > 1:
                        a.fill_between(g.min().index, 100 * g.min().values, 100 * g.max().values,
                                       color=line.get_color(), alpha=0.15, lw=0)
            a.set(xlabel="epoch", ylabel="CV frames correct (%)", title=f"Fig. 6 analog: {ttl}")
            a.legend()
        S.finish(f, quick=quick, note="Lines: median over the training runs; bands (where there are several "
                 "runs): min–max. The paper's Fig. 6 carries no numbers in its text.")
        S.save(f, out / "fig6_convergence.png", quick=quick, dpi=100)
        figs.append("fig6_convergence.png")
    return figs


def claims_plot(out, cdf: pd.DataFrame, *, quick: bool = False) -> list[str]:
    """The judged claims on one axis: ours with its interval (red) beside the paper's value
    or the claim's threshold (black), at the condition each claim pairs (claims.csv)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from reproduce import plotstyle as S

    d = cdf[cdf.test.isin(["ratio", "direction"]) & cdf.verdict.isin(["reproduced", "not-reproduced",
                                                                     "inconclusive"])]
    d = d[pd.to_numeric(d.ours, errors="coerce").notna()]
    if d.empty:
        return []
    f, ax = plt.subplots(figsize=(9, 0.55 * len(d) + 2.2))
    for i, r in enumerate(d.itertuples()):
        x, lo, hi = float(r.ours), float(r.ours_low), float(r.ours_high)
        ax.errorbar([x], [i], xerr=[[x - lo], [hi - x]] if lo == lo and hi == hi else None, fmt="o",
                    color=S.COLORS.get("measured", "tab:red"), capsize=4, label="ours [95 % interval]" if i == 0 else None)
        ref = r.reported if r.test == "ratio" else float(r.tolerance.split()[-1])
        ax.plot([float(ref)], [i], marker="D", color=S.PAPER_COLOR, ls="none",
                label="paper's value (ratio) / threshold (direction)" if i == 0 else None)
        ax.annotate(r.verdict, (1.01, i), xycoords=("axes fraction", "data"), fontsize=7, va="center")
    ax.set(yticks=range(len(d)), yticklabels=[f"{r.claim} ({r.test})" for r in d.itertuples()], xscale="log",
           xlabel="ratio (the claim's quantity)", title="paper1 claims: ours beside the paper")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    S.finish(f, quick=quick, note="Each claim at the condition it pairs (claims.csv, column quantity); "
             "intervals per reproduce/claims.py; log axis.")
    S.save(f, out / "claims.png", quick=quick, dpi=100)
    return ["claims.png"]


def write(run, results, meta) -> dict:
    """comparison.csv, summary.json, curves.csv, training.csv, the plots and report.md under
    ``run.out``; the summary."""
    out, setup, quick_shrunk = run.out, run.setup, run.quick_shrunk
    df, cal = curves(results, setup, run.profile)
    prof = here_profile(cal, run.profile)
    here_src, cores = emulated_label(prof), meta["cpu_count"]
    rows, facts = comparison_rows(df, results, setup, cal, here_src=here_src)
    pairs = validation_pairs(df, here_src, cores)
    label_rows(rows, pairs, here_src, cores)
    rows += R.validation_rows(NAME, pairs, profile=prof.name)
    facts["pairs"], facts["profile"] = pairs, prof
    tf = training_frame(results, setup)
    rows += training_rows(tf, setup)
    from reproduce.paper1 import extra_rows

    h1 = TABLE1_HIDDEN if TABLE1_HIDDEN in setup.perf_hidden else setup.perf_hidden[0]
    rows += extra_rows.table1_rows(df, here_src=here_src, hidden=h1, bunch=setup.np_bunch_perf)
    rows += extra_rows.headline_rows(df, here_src=here_src) + extra_rows.bunch_rows(tf, setup)
    rows += extra_rows.wer_rows(results, setup)
    from reproduce import claims as C
    from reproduce import why as W
    from reproduce.paper1 import why as P1W
    from reproduce.paper1 import why_text as P1WT
    from reproduce.paper1.claims import CLAIMS, evidence

    ev = evidence(results, setup, rows=rows, df=df, prof=prof, cal=cal, pairs=pairs, emulate=emulated_time)
    # the why behind each verdict (issue "The why behind every verdict"): rows, section, reasons
    facts["why"] = P1W.compute(results, setup, ctx={"prof": prof, "cal": cal, "parts": emulated_parts},
                               pairs=pairs, df=df)
    P1WT.cite(ev, facts["why"])
    rows += P1WT.rows(facts["why"])
    rows += W.cost_rows(NAME, results, lambda t: _study(t, setup))  # what each ablation cost
    cdf = C.evaluate(NAME, CLAIMS, ev)
    C.write(out, cdf)
    figs = plots(out, df, tf, setup, quick=run.mode == "quick") + claims_plot(out, cdf, quick=run.mode == "quick")
    atomic_write(out / "curves.csv", df.to_csv(index=False, float_format="%.6g"))
    atomic_write(out / "training.csv", tf.to_csv(index=False, float_format="%.6g"))
    meta = {**meta, "fidelity": R.fidelity(R.frame(rows)), "figures": figs, "tolerance": TOL,
            "calibration": cal, "profiles": [MULTISPERT_1997.as_dict(),
                                             here_model(cal, B=setup.np_bunch_perf).as_dict()],
            "emulated_profile": prof.as_dict()}
    table = R.write_tables(out, rows, meta)
    from reproduce.paper1.text import report_markdown

    atomic_write(out / "report.md", report_markdown(table, df, tf, setup=setup, meta=meta, figs=figs,
                                                    facts=facts, cal=cal, quick_shrunk=quick_shrunk,
                                                    claims_df=cdf))
    return {"meta": meta, "rows": table.to_dict(orient="records")}


if __name__ == "__main__":  # not a command: say so (exit 2) rather than import and exit 0
    raise SystemExit(R.not_a_program(f"reproduce.{NAME}.report"))


def _study(t, setup) -> str:
    """The study a task belongs to (why.cost_rows): the paper's setup, or an ablation of issue 34."""
    p = t.params
    if t.name in ("warmup", "lr_sweep"):
        return t.name
    if (t.name == "train" and p.get("mode") == "sequential" and p.get("bunch") == setup.pp_bunch
            and p.get("hidden") != setup.fig6_hidden):
        return "pp_bunch_sequential"  # Fig. 6's run on fig6_hidden is the paper's own
    return "main"
