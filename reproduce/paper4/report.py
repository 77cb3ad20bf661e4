"""paper4's comparison rows, plots and report.md (setup in reproduce/paper4/setup.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.perfmodel import MachineProfile
from reproduce.paper4.model import LOG_BASES, NodeModel
from reproduce import claims, manycore
from reproduce import report as R
from reproduce import why as W
from reproduce.paper4.setup import NAME, PASSES, TABLE1, TABLE1_N, TABLE2, TABLE3, TYPICAL_OUTPUTS
from reproduce.paper4 import claims as paper_claims
from reproduce.paper4 import why as P4W
from reproduce.paper4.why_text import cite as why_cite
from reproduce.paper4.blocked import blocked_time
from reproduce.paper4.tasks import calibrated, emulation_profile, models_for
from reproduce.store import atomic_write

# Rows this paper's verdict rules take (reproduce.report.rules; first match wins).
RULES = [
    ("by-construction", "paper4 Table 1 at n = 32,000",
     lambda r: r.table == "table1" and r.c.get("n") == "32000",
     "at n = 32,000 the log P terms of §6.2 are negligible beside n²: the formula gives this "
     "cell in any log base, so it checks the transcription, not the model"),
    ("not-comparable", "paper4 §5 outputs",
     lambda r: r.table == "sec5",
     "the outputs of a net from random weights and a random pattern, the paper's and ours "
     "drawn differently: they can only agree in kind, not in value"),
]

TOL = R.DEFAULT_TOLERANCE  # Tables 2–3, §5
TOL_TABLE1 = 0.01  # Table 1: the 1 %
PAPER_TABLE = {"forward": ("table2", TABLE2), "forward_backward": ("table3", TABLE3)}
UNIT = NodeModel(1.0, 1.0, 1.0, "e", source="§6.2's assumption t_startup = t_data = t_a = 1")
KERNEL = "gemv"  # the reference kernel whose contention and straggler factors apply (matrix–vector layers)


# ---- emulated time: compute-only runs composed with a machine profile ------------------------
def emulated_time_per_pass(res: dict, P: int, profile: MachineProfile) -> float:
    """Σ_phases max_p compute + Σ_exchanges allgather(P, bytes), for one pass, composed by
    ``profile.emulate`` (:func:`reproduce.manycore.compose`): with an α/β profile exactly that
    sum with allgather_time; a calibrated one also scales compute (speed ratio, contention)
    and adds the straggler wait.

    The compute part is Σ_phases max_p (median over the timed passes of worker p's
    compute in that phase), and the serial time it is divided by is Σ_layers median
    over passes (reproduce/paper4/tasks.py ``_serial_passes``). On this shared machine a
    time slice lost to another job lands in one of the P·phases timings of a pass; taken
    pass by pass it would become that phase's maximum and charge P emulated workers with
    what one real process suffered. The median per (phase, worker) drops it; the
    minimum would instead pick the luckiest of many timings and overstate speedup.
    """
    t, _ = manycore.compose(profile, P, res["compute_per_pass_s"],
                            [("allgather", int(b), c) for b, c in res["exchanges"].items()],
                            kernel=KERNEL)
    return t


def emulated_share(res: dict, P: int, profile: MachineProfile, t: float) -> float:
    """Communication share (collectives and straggler wait) of an emulated pass of time ``t``."""
    return 1 - res["compute_per_pass_s"] * profile.compute_scale(P, KERNEL) / t if t > 0 else 0.0


def validation_pairs(results, profile: MachineProfile, over) -> list[dict]:
    """Every measured node-parallel pass time (P ≥ 2, not ``over(P)``) beside its emulated twin
    on ``profile`` (same width, passes and seed): dicts for :func:`reproduce.report.validation_rows`."""
    em, me = {}, []
    for t, res in results:
        p = t.params
        if t.name == "sweep" and res is not None:
            base = (p["width"], p["passes"], p["seed"])
            em.update({(*base, int(P)): r for P, r in res["emulated"].items()})
            me += [((*base, int(P)), r) for P, r in res["measured"].items()]
        elif t.name == "node_mpi" and res is not None:
            me.append(((p["width"], p["passes"], p["seed"], p["nodes"]), res))
    pairs = []
    for k, r in me:
        P = k[3]
        if P < 2 or over(P) or k not in em:
            continue
        pairs.append({"P": P, "config": f"{k[1].replace('_', ' + ')}, width {k[0]}",
                      "emulated_s": emulated_time_per_pass(em[k], P, profile),
                      "measured_s": r["time_per_pass_s"]})
    return pairs


def manycore_emulated(results, profile: MachineProfile, *, seeds=manycore.SEEDS) -> dict:
    """The emulated twins of the many-core hosts' node-parallel runs on ``profile``, from this
    run's compute-only emulated passes of ``seeds``: {manycore.key(P, passes=, width=):
    {"speedup", "time_s", "comm_share", "runs"}}, speedup = the median over runs of serial
    here × the profile's compute ratio / emulated time per pass (as the hosts' reports take
    it: the median over runs of serial / node-parallel time), time_s the median time per pass."""
    by: dict = {}
    for t, res in results:
        p = t.params
        if t.name != "sweep" or res is None or p["seed"] not in seeds:
            continue
        for P, e in res["emulated"].items():
            P = int(P)
            ts = emulated_time_per_pass(e, P, profile)
            by.setdefault((P, p["passes"], p["width"]), []).append(
                (e["serial_s"] * profile.compute_scale(1, KERNEL) / ts, emulated_share(e, P, profile, ts), ts))
    return {manycore.key(P, passes=ps, width=w): {"speedup": float(np.median([a for a, _, _ in v])),
                                                  "comm_share": float(np.median([b for _, b, _ in v])),
                                                  "time_s": float(np.median([c for _, _, c in v])),
                                                  "runs": len(v)}
            for (P, ps, w), v in sorted(by.items())}


def manycore_target(config: dict):
    """The issue's target for emulated ÷ measured speedup against the many-core hosts (issue 12):
    ±20 % at width 2,048, within 2× at 512 (where a pass is short and noisy); none elsewhere."""
    return {2048: manycore.PM20, 512: (0.5, 2.0, "within 2×")}.get(config.get("width"))


# ---- Table 1 ------------------------------------------------------------------
def table1_cause(base: str, n: int, P: int, ours: float, rep: float) -> str:
    if abs(ours / rep - 1) <= TOL_TABLE1:
        return ""
    if P == 1:
        return ("at P = 1 log P = 0 in every base and the printed formula gives "
                "(2n+2+9L/(n(L−1)))/(2n+2+9/(L−1)) < 1 whenever n > L; the paper's value > 1 "
                "cannot come from it")
    if base == "e":
        return ("cause not found: with ln every cell of the n = 132 column for P ≥ 2 is "
                "3.0–3.2 % below the paper's, a nearly constant factor that no log base or "
                "reading of the garbled 9L/(n(L−1)) we checked explains")
    return ("the base of log P as well: with base " + base + " the gap grows with P; ln comes "
            "closest, and still leaves a constant ~3 % (see the log=e rows)")


def table1_rows() -> list[dict]:
    rows = []
    for base in LOG_BASES:
        m = NodeModel(1.0, 1.0, 1.0, base)
        for P, s132, s32k in TABLE1:
            for n, rep in zip(TABLE1_N, (s132, s32k)):
                ours = m.aggregate_speedup(n, P, 7)
                cause = table1_cause(base, n, P, ours, rep)
                rows.append(R.row(NAME, "table1", "aggregate_speedup",
                                  R.condition(nodes=P, n=n, L=7, log=base), "x", reported=rep,
                                  ours=ours, kind="modeled", runs=1, tolerance=TOL_TABLE1,
                                  note=("§6.2 formula as printed, t_startup = t_data = t_a = 1"
                                        + (f"; FLAG >1 % off: {cause}" if cause else ""))))
    return rows


# ---- Tables 2–3 -----------------------------------------------------------------
def runs_frame(results, setup, profile) -> pd.DataFrame:
    """One row per run, P and kind: node time per pass, the serial time taken just before
    it in the same run, their ratio (the speedup) and the communication share."""
    rows = []
    for t, res in results:
        if t.name not in ("sweep", "node_mpi") or res is None:
            continue
        p = t.params
        base = {"width": p["width"], "passes": p["passes"], "run": p["run"], "seed": p["seed"]}
        items = ([("measured", int(P), r) for P, r in res["measured"].items()]
                 + [("emulated", int(P), r) for P, r in res["emulated"].items()]
                 if t.name == "sweep" else [("measured", p["nodes"], res)])
        for kind, P, r in items:
            if kind == "measured":
                ts, share = r["time_per_pass_s"], r["comm_share"]
            else:
                ts = emulated_time_per_pass(r, P, profile)
                share = emulated_share(r, P, profile, ts)
            # the serial time put on the profile's machine (its compute ratio; 1 if measured or α/β)
            serial = r["serial_s"] * (profile.compute_scale(1, KERNEL) if kind == "emulated" else 1.0)
            rows.append({**base, "kind": kind, "nodes": P, "time_s": ts, "serial_s": serial,
                         "speedup": serial / ts, "comm_share": share,
                         "load1": r["loadavg"][0]})
    return pd.DataFrame(rows)


def speedups(runs: pd.DataFrame) -> pd.DataFrame:
    return runs


def _spread(v):
    v = np.asarray(v, dtype=float)
    return float(np.median(v)), float(v.min()), float(v.max())


def tables23_rows(sp: pd.DataFrame, setup, cal, profile, backend: str, *, over=None
                  ) -> tuple[list[dict], list]:
    """Tables 2–3: measured and emulated speedups and the models. ``over(P)``: True for a
    measured run that was oversubscribed; its condition says ``oversubscribed=yes``."""
    over = over or (lambda P: False)
    rows, curves = [], []
    for passes in PASSES:
        table, paper = PAPER_TABLE[passes]
        rep = dict(paper)
        for (w, kind, P), g in sp[sp.passes == passes].groupby(["width", "kind", "nodes"]):
            med, lo, hi = _spread(g.speedup)
            prof = profile.name if kind == "emulated" else None
            cond = R.condition(nodes=P, width=w, layers=setup.layers, backend=backend if kind ==
                               "measured" and P > 1 else None, profile=prof,
                               oversubscribed="yes" if kind == "measured" and over(P) else None)
            tmed = float(np.median(g.time_s))
            rows.append(R.spread_row(NAME, table, "speedup", cond, "x", g.speedup, reported=rep.get(P),
                                     kind=kind,
                              note=(f"paper at width {setup.paper_width:,}; ours: serial MLP time / "
                                    f"node-parallel time per pass (median over runs {tmed * 1e3:.3g} ms), "
                                    f"one pattern, fastest of {setup.passes_timed} passes per run, "
                                    f"serial timed just before in the same run; communication "
                                    f"{np.median(g.comm_share):.0%} of the time; load average "
                                    f"{g.load1.min():.1f}–{g.load1.max():.1f}")))
            curves.append({"passes": passes, "nodes": P, "speedup": med, "lo": lo, "hi": hi,
                           "source": f"ours {kind}, width {w}"})
        for w in tuple(setup.widths) + (setup.paper_width,):
            mods = models_for(cal, w, setup)
            m = mods.get(backend) or mods["inprocess"]
            sizes = setup.sizes(w)
            t1 = blocked_time(sizes, 1, passes, t_a=m.t_a, t_startup=0, t_data=0)
            for P in setup.procs:
                f = m.forward_speedup if passes == "forward" else m.forward_backward_speedup
                s6 = f(w, P, setup.layers)
                tp = blocked_time(sizes, P, passes, t_a=m.t_a, t_startup=m.t_startup, t_data=m.t_data)
                fu = UNIT.forward_speedup if passes == "forward" else UNIT.forward_backward_speedup
                for key, lab, val, note in (
                    ("s6_calibrated", "§6 model, calibrated", s6,
                     f"§6.1 formula as printed (n = {w}, L = {setup.layers}, log base "
                     f"{m.log_base}), t_a = {m.t_a:.3g} s, t_startup = {m.t_startup:.3g} s, "
                     f"t_data = {m.t_data:.3g} s ({backend}); it charges one broadcast per node"),
                    ("blocked_calibrated", "blocked model, calibrated", t1 / tp,
                     "our implementation's model: slowest worker's operations · t_a + one "
                     "recursive-doubling allgather per layer, same calibrated parameters"),
                    ("s6_t1", "§6 model, t=1 (Table 1's assumption)", fu(w, P, setup.layers),
                     "§6.1 formula as printed with t_startup = t_data = t_a = 1, natural log")):
                    if key == "s6_t1" and w != setup.paper_width:
                        continue
                    rows.append(R.row(NAME, table, "speedup",
                                      R.condition(nodes=P, width=w, layers=setup.layers, model=key),
                                      "x", reported=rep.get(P), ours=val, kind="modeled", runs=1,
                                      note=note))
                    curves.append({"passes": passes, "nodes": P, "speedup": val, "lo": np.nan,
                                   "hi": np.nan, "source": f"{lab}, width {w}"})
    return rows, curves


def crosscheck_rows(runs: pd.DataFrame, backend: str, *, over=None) -> list[dict]:
    """Emulated / measured time for the same configuration (P ≤ cores); ``over(P)`` labels
    the oversubscribed measured runs."""
    over = over or (lambda P: False)
    rows = []
    for (w, passes, P), g in runs.groupby(["width", "passes", "nodes"]):
        me, em = g[g.kind == "measured"], g[g.kind == "emulated"]
        if me.empty or em.empty or P == 1:
            continue
        r = float(np.median(em.time_s) / np.median(me.time_s))
        rows.append(R.row(NAME, "extra", "emulated_over_measured_time",
                          R.condition(nodes=P, width=w, passes=passes, backend=backend,
                                      oversubscribed="yes" if over(P) else None), "ratio",
                          ours=r, kind="emulated", runs=len(g) // 2,
                          note="median emulated time / median measured time per pass; "
                               "1 means the emulation's composition (max compute + modeled "
                               "exchange per layer) predicts the real run"))
    return rows


def calibration_rows(cal, setup) -> list[dict]:
    rows = []
    for w, r in sorted(cal["t_a"].items()):
        rows.append(R.row(NAME, "calibration", "t_a", R.condition(width=w, layers=setup.layers), "s",
                          ours=r["t_a"], low=r["forward_s_min"] / r["ops"],
                          high=r["forward_s_max"] / r["ops"], kind="measured", runs=r["reps"],
                          note="serial forward pass of one pattern / (Σ N(l−1)·N(l) + Σ N(l)); "
                               "the paper assumes t_a = 1 in Table 1"))
    for name, e in sorted(cal["exchange"].items()):
        for q in ("t_startup", "t_data"):
            rows.append(R.row(NAME, "calibration", q, R.condition(workers=e["P"], backend=name), "s",
                              ours=e[q], kind="measured", runs=e["reps"],
                              note=("fit of ⌈log2 P⌉·t_startup + (P−1)·m·t_data to allgathers of m = "
                                    f"{', '.join(map(str, e['sizes']))} float64 per rank"
                                    + ("; size-1 communicator: an allgather is a copy" if e["P"] == 1
                                       else ""))))
    return rows


def typical_rows(res: dict, setup) -> list[dict]:
    """§5's outputs against ours. The paper's "output after the first epoch with random
    weights" can be read two ways: the first forward pass (before any update, the
    ``epoch=1`` rows) or the output once the first epoch's update is done (the
    ``epoch=1;updates=1`` rows, paired with the same paper values). Both are given so
    that the reading is visible instead of chosen; the second needs two epochs."""
    rows = []
    outs = {(1, None): res["epoch1_output"]}
    if res.get("after_1_update") is not None:
        outs[(1, 1)] = res["after_1_update"]
    if res["epochs"] >= 10_000:
        outs[(10_000, None)] = res["after_all_updates"]
    for (e, upd), o in outs.items():
        if upd is not None:
            what = ("output after one update (the forward pass of epoch 2), the other reading of "
                    "the paper's output after the first epoch")
        elif e == 1:
            what = "output of the first forward pass, with the random weights"
        else:
            what = f"output after {e:,} updates"
        for k in range(2):
            rows.append(R.row(
                NAME, "sec5", f"output_{k + 1}", R.condition(nodes=res["workers"], epoch=e, updates=upd),
                "value", reported=TYPICAL_OUTPUTS[e][k], ours=o[k], kind="measured", runs=1,
                note=(f"target {[1, -1][k]}; net {'-'.join(map(str, setup.typical_sizes))}, "
                      f"η = {setup.typical_lr}, init ±{setup.typical_init}, random weights and "
                      "pattern (the paper's are not given, so values can only agree in kind); "
                      + what +
                      f"; node-parallel equals serial to {res['max_abs_diff_vs_serial_outputs']:.1g}")))
    return rows


# ---- plots --------------------------------------------------------------------
def _host_n() -> int:
    """The repetitions behind the claims' host (reproduce/paper4/claims.py)."""
    return min((paper_claims.n_runs(r) for r in paper_claims.host_table(paper_claims.HOST).values()), default=0)


def host_curves(hosts=None) -> list[dict]:
    """The 16-core hosts' measured speedups at the claims' width (reproduce/paper4/claims.py
    ``HOST_WIDTH``) as plot curves: per P the geometric mean of the host's runs and its 95 %
    bootstrap interval, as the claims take them (source "measured on 16-core host (<host>), width <w>";
    the host in parentheses gives the colour, reproduce/plotstyle.py)."""
    out = []
    for host in (paper_claims.HOST, paper_claims.OTHER_HOST):
        for (passes, w, P), r in sorted(paper_claims.host_table(host, hosts).items()):
            if w != paper_claims.HOST_WIDTH:
                continue
            est, lo, hi = claims.over_seeds(paper_claims.host_runs(r), claims.gmean,
                                            label=f"{NAME} plot {host} {passes} {w} {P}")
            out.append({"passes": passes, "nodes": P, "speedup": est, "lo": lo, "hi": hi,
                        "source": f"measured on 16-core host ({host}), width {w}"})
    return out


def plots(out, curves: list, setup, *, profile: str | None = None, quick: bool = False) -> list[str]:
    """Tables 2–3 faceted by width (rows: forward, forward + backward; one column per width,
    the paper's values in the paper-width column) and Table 1 (last column, one n per row).
    Colours: reproduce.plotstyle (one per profile/kind); ``profile``: the emulation profile."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    from reproduce import plotstyle as S

    sns.set_theme(style="whitegrid", context="notebook")
    d = pd.DataFrame(curves)
    d["width"] = [int(s.rsplit(", width ", 1)[1]) for s in d.source]  # "<what>, width <w>"
    d["what"] = [s.rsplit(", width ", 1)[0] for s in d.source]
    widths = sorted(d.width.unique())
    emu = f"ours emulated ({profile})" if profile else "ours emulated"
    look = {"ours measured": S.style("measured"), "ours emulated": S.style(emu),
            "§6 model, calibrated": dict(color=S.COLORS["formula"], ls="--", marker=None),
            "blocked model, calibrated": dict(color=S.COLORS["formula"], ls=":", marker=None, lw=2),
            "§6 model, t=1 (Table 1's assumption)": dict(color=S.COLORS["formula"], ls="-.", marker=None)}
    fig, axes = plt.subplots(2, len(widths) + 1, figsize=(4.2 * (len(widths) + 1), 8.2), sharey=False)
    for i, passes in enumerate(PASSES):
        table, paper = PAPER_TABLE[passes]
        for j, w in enumerate(widths):
            ax = axes[i, j]
            for what, h in d[(d.passes == passes) & (d.width == w)].groupby("what", sort=False):
                h = h.sort_values("nodes")
                st = look.get(what, S.style(what))
                lab = emu if what == "ours emulated" else what
                ax.plot(h.nodes, h.speedup, label=lab, alpha=0.95, ms=5, **st)
                if h.lo.notna().any():
                    ax.fill_between(h.nodes, h.lo, h.hi, color=st["color"], alpha=0.15, lw=0)
            if w == setup.paper_width:
                S.paper_points(ax, [p for p, _ in paper], [s for _, s in paper], ls="-", lw=1.5,
                               label="paper (its Table 2 / Table 3)")
            elif w == paper_claims.HOST_WIDTH:  # where the claims pair the paper with the hosts
                S.paper_points(ax, [p for p, _ in paper], [s for _, s in paper], ls="-", lw=1.5,
                               label="paper (its Table 2 / Table 3)")
            ax.plot([1, 16], [1, 16], color="grey", lw=0.8, ls=":", label="linear")
            ticks = [p for p, _ in paper]
            ax.set(xscale="log", yscale="log", xticks=ticks, xticklabels=[str(p) for p in ticks],
                   ylim=(0.05, 40), xlabel="processors P" if i == 1 else "",
                   ylabel=("forward" if passes == "forward" else "forward + backward") + " speedup"
                   if j == 0 else "",
                   title=f"{table.replace('table', 'Table ')}, width {w:,}"
                         + (" (the paper's)" if w == setup.paper_width else
                            " (claims: paper's values here)" if w == paper_claims.HOST_WIDTH else ""))
            S.log_ticks(ax, "y")
    Ps = [p for p, *_ in TABLE1]
    for i, n in enumerate(TABLE1_N):
        ax = axes[i, -1]
        S.paper_points(ax, Ps, [r[1 + i] for r in TABLE1], ls="-", lw=1.5, label="paper, Table 1")
        for base, ls in zip(LOG_BASES, ("--", "-.", ":")):
            m = NodeModel(1, 1, 1, base)
            ax.plot(Ps, [m.aggregate_speedup(n, P, 7) for P in Ps], ls=ls, color=S.COLORS["formula"],
                    label=f"§6.2 formula, log base {base}")
        ax.plot([1, 16], [1, 16], color="grey", lw=0.8, ls=":")
        ax.set(xscale="log", yscale="log", xticks=Ps, xticklabels=[str(p) for p in Ps],
               xlabel="processors P" if i == 1 else "", title=f"Table 1: n = {n:,} (L = 7, t = 1)")
        S.log_ticks(ax, "y")
        ax.legend(fontsize=7, loc="upper left")
    seen = {}
    for ax in axes[:, :-1].ravel():
        for hnd, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, hnd)
    y = S.finish(fig, quick=quick, reserve=0.75, note=(
        "Columns: the net's width (ours: widths this machine holds; the paper's Tables 2–3 are at "
        f"width {setup.paper_width:,}, black stars, drawn again at width {paper_claims.HOST_WIDTH:,} "
        "where the claims pair them with the 16-core hosts' measurements: geometric mean of their runs "
        f"({paper_claims.HOST} {_host_n()}, {paper_claims.OTHER_HOST} 3) "
        "and its 95 % bootstrap band). Other bands: min–max of the speedup over this run's repeated "
        "runs (line: median). Grey lines: models (dashed §6 calibrated here, dotted our blocked "
        "model, dash-dot §6 with t = 1). Last column: Table 1 against the §6.2 formula in three log "
        "bases. Dotted grey diagonal: linear speedup."))
    fig.legend(list(seen.values()), list(seen), loc="lower center", ncol=min(4, len(seen)), fontsize=9,
               bbox_to_anchor=(0.5, y), frameon=False)
    S.save(fig, out / "speedup_vs_processors.png", quick=quick, dpi=100)
    return ["speedup_vs_processors.png"]


def write(run, results, meta) -> dict:
    """claims.csv (reproduce/paper4/claims.py, judged on intervals), comparison.csv,
    summary.json, the plot and report.md (opening with the claims) under ``run.out``; the summary.
    The emulation profile is ``--profile``'s (``run.profile``), else the allgather profile
    calibrated by this run's tasks; the §6 models come from the calibration tasks."""
    from reproduce.paper4.text import report_markdown

    out, setup, backend, quick_shrunk = run.out, run.setup, run.backend, run.quick_shrunk
    cores = meta.get("cpu_count")

    def over(P):  # more workers than cores, or an MPI world larger than the cores
        return R.oversubscribed(P, cores) or (backend == "mpi" and R.oversubscribed(run.workers, cores))

    cal = calibrated(results, setup)
    profile = run.profile if run.profile is not None else emulation_profile(cal, backend)
    meta = {**meta, "profile": profile.as_dict(), "calibration": cal}
    runs = runs_frame(results, setup, profile)
    sp = speedups(runs)
    rows = table1_rows()
    r23, curves = tables23_rows(sp, setup, cal, profile, backend, over=over)
    pairs = validation_pairs(results, profile, over)
    manycore.append_beyond_note(r23, profile.name, pairs)
    rows += r23
    typ = next((res for t, res in results if t.name == "typical"), None)
    if typ is not None:
        rows += typical_rows(typ, setup)
    rows += calibration_rows(cal, setup)
    rows += crosscheck_rows(runs, backend, over=over)
    rows += R.validation_rows(NAME, pairs, profile=profile.name)
    hosts = {h: manycore.host_profile(h) for h in manycore.HOSTS}
    many = manycore.compare(NAME, lambda prof: manycore_emulated(results, prof), profiles=hosts,
                            target=manycore_target)
    rows += manycore.csv_rows(NAME, many)
    figs = plots(out, curves + host_curves(), setup, profile=profile.name, quick=run.mode == "quick")
    # the why behind the verdicts (issue 34): its rows, its section and the claims' reasons
    why = P4W.compute(results, setup=setup, runs=runs, cal=cal, profile=profile,
                      host_profile=hosts.get(paper_claims.HOST))
    rows += P4W.rows(why)
    rows += W.cost_rows(NAME, results, lambda t: "wide" if t.name == "wide" else "main")  # the ablation's cost
    ev = paper_claims.evidence(results, runs=runs, many=many, profile=profile.name,
                               here=f"this machine, {cores or '?'} cores")
    why_cite(ev, why)
    cdf = claims.evaluate(NAME, paper_claims.CLAIMS, ev)
    claims.write(out, cdf)
    meta = {**meta, "fidelity": R.fidelity(R.frame(rows)), "figures": figs,
            "tolerance": {"table1": TOL_TABLE1, "other": TOL}, "typical_run": typ,
            "manycore_profiles": {h: p.as_dict() for h, p in hosts.items()}}
    df = R.write_tables(out, rows, meta)
    atomic_write(out / "report.md", report_markdown(df, sp, setup=setup, cal=cal, profile=profile,
                                                    meta=meta, figs=figs, typical=typ,
                                                    quick_shrunk=quick_shrunk, pairs=pairs,
                                                    manycore_records=many, manycore_profiles=hosts,
                                                    over=over, claims_df=cdf, why=why))
    return {"meta": meta, "rows": df.to_dict(orient="records")}


if __name__ == "__main__":  # not a command: say so (exit 2) rather than import and exit 0
    raise SystemExit(R.not_a_program(f"reproduce.{NAME}.report"))
