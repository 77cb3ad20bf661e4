"""paper1's why (issue "The why behind every verdict"): the figures its claims rest on, taken
apart into named pieces or into factors that multiply to them (reproduce/why.py):

- every emulated bunch the speed claims use (§3.2's three and four slaves, §3.3's PP over NP,
  §4's speed-ups at two slaves), split into compute, transfers or collectives, host and
  straggler wait (report.py ``emulated_parts``), with 95 % intervals over the repeated step
  timings; §3.2's perf(4)/perf(3) = (compute, 3 ÷ 4) × (everything else per unit compute,
  3 ÷ 4), on the claim's own resamples;
- every measured training configuration beside its emulated twin: measured = emulated + the
  rest, and the rest split by what the run logged on rank 0 (compute, communication, neither);
- the warm-up ablation: a measured PP run's bunches timed one by one (first, second, steady),
  and how far the 3-bunch mean a perf run times lies above the steady bunch;
- the training claims (§3.5 Table 2's PP, Fig. 6's moderate bunches): updates per epoch
  (counted in the runs, beside the chunk arithmetic of the setup), the summed step η·B of an
  update, and CV frame error split into a factor at equal updates and one from the updates made.

``compute`` gives them; reproduce/paper1/why_text.py turns them into the comparison rows (table
``why``), the report's Why section and the sentences the claims' reasons take from them.
"""
from __future__ import annotations

import math

import numpy as np

from reproduce.paper1.spert import n_wts, spert_terms
from reproduce.paper1.bunch import BunchConfig
from reproduce import claims as C
from reproduce import why as W
from reproduce.paper1 import claims as P1C
from reproduce.paper1.perf import N_I, N_O
from reproduce.paper1.setup import NAME, TABLE1_HIDDEN

SPLIT = ("time_ratio", "compute_ratio", "overhead_ratio")  # perf(4)/perf(3) = compute × the rest
EQUAL = ("at_equal_updates", "from_updates", "error_ratio")  # B's error ÷ A's = at equal updates × …
PP_SPLIT = ("pp_over_sequential_same_bunch", "bunch_over_sequential_bunch", "pp_over_sequential")


def updates_per_epoch(n: int, B: int, chunk: int) -> int:
    """Weight updates an epoch (reproduce.paper1.bunch.epoch_chunks): bunches of B cut from
    chunks of B·⌈chunk/B⌉ frames, whole bunches but for the epoch's last chunk (so ⌈n/B⌉)."""
    c = BunchConfig(bunch=B, lr=0.0, chunk=chunk).chunk_frames
    return sum(-(-min(c, n - lo) // B) for lo in range(0, n, c))


# ---- 1. emulated bunches taken apart --------------------------------------------------------
def four_configs(setup) -> tuple:
    """§3.2's configurations as four_over_three emulates them: NP on Table 1's net at 3 and 4."""
    h = TABLE1_HIDDEN if TABLE1_HIDDEN in setup.perf_hidden else setup.perf_hidden[0]
    return ("NP", h, setup.np_bunch_perf, 3), ("NP", h, setup.np_bunch_perf, 4)


def claim_configs(setup) -> dict:
    """{claim id: the emulated configurations (strategy, N_h, B, P) it is judged on}."""
    return {"four-below-three": four_configs(setup), "pp-small-nets": P1C.PP_SMALL_NETS,
            "good-speedups": tuple(c for pair in P1C.GOOD_SPEEDUPS for c in pair)}


def _composer(results, ctx: dict, configs):
    """reproduce/paper1/claims.py ``emulated_composer`` whose time_of gives, per config,
    (its parts, the composition's arguments)."""
    parts = ctx["parts"]
    return P1C.emulated_composer(results, prof=ctx["prof"], cal=ctx["cal"], configs=configs,
                                 emulate=lambda s, **kw: ((parts(s, **kw), kw),))


def over_reps(recs, time_of, stats: dict, *, label: str) -> dict:
    """{name: (estimate, low, high)} of several statistics ``f(time_of(groups))`` of the same
    records (emulated runs) on the same resamples: :func:`reproduce.claims.over_groups` for the
    first, whose draws the others ride along (each resample's values kept as it computes
    them), with its percentile interval over their finite values."""
    seen, first = [], next(iter(stats))

    def stat(gs):
        T = time_of(gs)
        seen.append({k: f(T) for k, f in stats.items()})
        return seen[-1][first]

    out = {first: C.over_groups(recs, stat, label=label)}
    a = (1 - C.CONFIDENCE) / 2
    for k in list(stats)[1:]:
        v = np.array([x[k] for x in seen[1:]], dtype=float)
        v = v[np.isfinite(v)]
        lo, hi = (np.quantile(v, [a, 1 - a]) if len(seen) > 1 and v.size >= (len(seen) - 1) / 2
                  else (math.nan, math.nan))
        out[k] = (float(seen[0][k]), float(lo), float(hi))
    return out


def split_config(results, ctx: dict, c: tuple, *, intervals: bool = True) -> dict | None:
    """One emulated bunch: {config, reps, total, parts: {name: (est, low, high) s}, shares,
    binds, …}; intervals (unless ``intervals`` is False: the estimates alone): 95 % bootstrap
    over the emulated runs, one resample for all."""
    got = _composer(results, ctx, (c,))
    if got is None:
        return None
    recs, time_of = got
    parts0, kw = time_of(recs)[c]
    names = list(parts0)
    stats = {"total": lambda T: sum(T[c][0].values())}
    for k in names:
        stats[k] = lambda T, k=k: T[c][0][k]
        stats[f"share {k}"] = lambda T, k=k: T[c][0][k] / sum(T[c][0].values())
    T0 = time_of(recs)
    iv = (over_reps(recs, time_of, stats, label=P1C._label(f"why emulated {c}")) if intervals else
          {k: (f(T0), math.nan, math.nan) for k, f in stats.items()})
    return {"config": c, "runs": min(len(g) for g in recs), "total": iv["total"],
            "parts": {k: iv[k] for k in names}, "shares": {k: iv[f"share {k}"] for k in names},
            "binds": None if ctx["prof"].calibrated else ("slaves" if parts0["compute"] > 0 else "host"),
            "point": parts0, "T_c": kw["T_c"], "T_h": kw["T_h"],
            "T_d": None if ctx["prof"].calibrated else _T_d(c, kw)}


def _T_d(c: tuple, kw: dict) -> float:
    return spert_terms(c[0], P=c[3], B=c[2], N_i=N_I, N_h=c[1], N_o=N_O, m=kw["spert_here"])["T_d"]


def _first(f, lo: float, hi: float) -> float:
    """The smallest x in (0, hi] with f(x) ≥ 0 (f(0) < 0), on a log grid from ``lo`` refined
    by bisection; NaN where none."""
    xs = np.geomspace(lo, hi, 1501)
    hit = next((i for i, x in enumerate(xs) if f(x) >= 0), None)
    if hit is None:
        return math.nan
    a, b = (xs[hit - 1] if hit else 0.0), xs[hit]
    for _ in range(100):
        m = 0.5 * (a + b)
        a, b = (a, m) if f(m) >= 0 else (m, b)
    return float(b)


def drop_factor(T_d: float, tc3: float, th3: float, tc4: float, th4: float) -> float:
    """Modeled (§2.5, max form): the factor k on the transfers T_d at which four slaves are no
    faster than three, max(k·T_d + T_c4, 4k·T_d + T_h4) ≥ max(k·T_d + T_c3, 3k·T_d + T_h3)
    (0 where they already are; NaN where no k up to 1e9 gives it)."""
    def f(k):
        return max(k * T_d + tc4, 4 * k * T_d + th4) - max(k * T_d + tc3, 3 * k * T_d + th3)
    return 0.0 if f(0.0) >= 0 else (_first(f, 1e-6, 1e9) if T_d > 0 else math.nan)


def drop_host(T_d: float, tc3: float, th3: float, tc4: float, th4: float) -> float:
    """Modeled (§2.5, max form): the serial host time Δ (s a bunch) that, added to T_h at 3 and
    at 4 slaves, makes four no faster than three: max(T_d + T_c4, 4·T_d + T_h4 + Δ) ≥
    max(T_d + T_c3, 3·T_d + T_h3 + Δ) (0 where they already are; NaN where none up to 1000 s)."""
    def f(x):
        return max(T_d + tc4, 4 * T_d + th4 + x) - max(T_d + tc3, 3 * T_d + th3 + x)
    return 0.0 if f(0.0) >= 0 else _first(f, 1e-9, 1e3)


def four_split(results, ctx: dict, setup, df=None) -> dict | None:
    """perf(4)/perf(3) of four_over_three = (T_c(3) ÷ T_c(4)) × ((T(3)/T_c(3)) ÷ (T(4)/T_c(4))),
    each on the claim's resamples (its label); with an α/β profile also the host branch over
    the slave branch at P = 4 (< 1: slave-bound) and the transfer factor at which four slaves
    would fall to three's speed (modeled); and, from the report's curves, the same ratio with
    our compute and the paper's bus ("emulated (MultiSpert bus)")."""
    c3, c4 = four_configs(setup)
    got = _composer(results, ctx, (c3, c4))
    if got is None:
        return None
    recs, time_of = got
    label = P1C._label("four-below-three")  # four_over_three's: its interval, draw for draw

    def tot(T, c):
        return sum(T[c][0].values())

    stats = {"time_ratio": lambda T: tot(T, c3) / tot(T, c4),
             "compute_ratio": lambda T: T[c3][1]["T_c"] / T[c4][1]["T_c"],
             "overhead_ratio": lambda T: (tot(T, c3) / T[c3][1]["T_c"]) / (tot(T, c4) / T[c4][1]["T_c"])}
    out = {"configs": (c3, c4), "runs": min(len(g) for g in recs),
           **over_reps(recs, time_of, stats, label=label)}
    if not ctx["prof"].calibrated:
        T = time_of(recs)
        kw3, kw4 = T[c3][1], T[c4][1]
        d = _T_d(c4, kw4)
        out["host_over_slave_branch"] = (4 * d + kw4["T_h"]) / (d + kw4["T_c"])
        out["drop_factor"] = drop_factor(d, kw3["T_c"], kw3["T_h"], kw4["T_c"], kw4["T_h"])
        out["drop_host"] = drop_host(d, kw3["T_c"], kw3["T_h"], kw4["T_c"], kw4["T_h"])
        out["T_d"] = d
    if df is not None and len(df):
        g = df[(df.figure == "fig3") & (df.source == "emulated (MultiSpert bus)") & (df.strategy == "NP")
               & (df.hidden == c3[1]) & (df.bunch == c3[2])].set_index("P")
        if {3, 4} <= set(g.index):
            out["bus_perf_ratio"] = float(g.perf[4] / g.perf[3])
            out["bus_T_d"] = float(g.T_d[4])
            out["bus_peak_P"] = int(g.perf.idxmax())
            host = [P for P, r in g.iterrows() if P * r.T_d + r.T_h > r.T_d + r.T_c]
            out["bus_host_from"] = min(host) if host else None
    return out


# ---- 2. measured = emulated + the rest ------------------------------------------------------
def measured_rest(results, ctx: dict, pairs) -> list[dict]:
    """Every measured training configuration (report.validation_pairs, Fig. 3) beside its
    emulated twin, per bunch: measured = emulated + rest; the rest's range over the repeated
    runs (their walls, min–max); the rest split by the median run's log on rank 0 into its
    compute beyond the emulated compute and host, its communication beyond the emulated
    transfers, collectives and wait, and wall time outside both ("unlogged")."""
    keep = {(x["P"], x["config"]) for x in pairs}
    out = []
    for t, r in results:
        p = t.params
        if t.name != "perf" or r is None or p["pipelined"] != (p["strategy"] == "NP") \
                or p["compressed"] != (p["strategy"] == "NP"):
            continue
        cfg = f"{p['strategy']} training 156:{p['hidden']}:56 B={p['bunch']}"
        if (p["P"], cfg) not in keep:
            continue
        c = (p["strategy"], p["hidden"], p["bunch"], p["P"])
        sp = split_config(results, ctx, c, intervals=False)
        if sp is None:
            continue
        nb, W_ = r["bunches"], p["bunch"] * n_wts(N_I, p["hidden"], N_O)
        meas = r["wall"] / nb
        lo, hi = W_ / (r["mcups_high"] * 1e6), W_ / (r["mcups_low"] * 1e6)  # a bunch's time, fastest … slowest run
        em = sp["total"][0]
        comp = sp["point"].get("compute", 0.0) + sp["point"].get("host", 0.0)
        comm = em - comp
        out.append({"config": c, "label": cfg, "runs": r["repeats"], "measured": (meas, lo, hi), "emulated": em,
                    "rest": (meas - em, lo - em, hi - em), "rest_share": (meas - em) / meas,
                    "measured_compute": r["compute_s"] / nb, "measured_comm": r["comm_s"] / nb,
                    "rest_compute": r["compute_s"] / nb - comp, "rest_comm": r["comm_s"] / nb - comm,
                    "rest_unlogged": (r["wall"] - r["compute_s"] - r["comm_s"]) / nb})
    return sorted(out, key=lambda x: (x["config"][0], x["config"][2], x["config"][3], x["config"][1]))


def rest_fit(xs: list[dict]) -> tuple[float, float]:
    """(intercept ms, slope) of the least-squares line rest ≈ a + b × emulated bunch time over
    configurations ``xs`` (:func:`measured_rest`): b near 0, a cost per bunch the work does not
    change; b near 1, a second copy of the emulated work. NaN with fewer than 3."""
    if len(xs) < 3:
        return math.nan, math.nan
    b, a = np.polyfit([x["emulated"] for x in xs], [x["rest"][0] for x in xs], 1)
    return float(a) * 1e3, float(b)


def rest_groups(w: dict) -> dict:
    """{(strategy, B): the measured-rest records of that strategy and bunch}."""
    out = {}
    for x in w["rest"]:
        out.setdefault((x["config"][0], x["config"][2]), []).append(x)
    return out


# ---- 2b. the ablation: a measured PP bunch warms up ---------------------------------------------
WARM = ("first_ms", "second_ms", "steady_ms", "three_mean_ms", "three_over_steady")
STEADY_FROM = 3  # bunches from the 4th on are the steady ones (the 3 a perf run times are not)


def warmup_split(results, w_rest: list[dict]) -> list[dict]:
    """Per (hidden, B, P) of the warm-up runs (tasks.py ``_warmup``): the first and second
    bunch, the steady bunch (median of the bunches from the 4th on) and the mean of the first 3
    (what a perf run times: its wall ÷ 3), each bunch the slowest rank's compute +
    communication, in ms; and the 3-bunch mean over the steady bunch. Geometric means over
    runs (seeds), 95 % bootstrap, one resample for the five. ``excess_ms``: 3-bunch mean −
    steady, set beside the same configuration's rest (:func:`measured_rest`) in ``rest_ms``."""
    by: dict = {}
    for t, r in results:
        if t.name != "warmup" or r is None:
            continue
        b = np.asarray(r["compute_s"]) + np.asarray(r["comm_s"])
        if b.size <= STEADY_FROM:
            continue
        steady = float(np.median(b[STEADY_FROM:]))
        three = float(b[:3].mean())
        rec = (b[0] * 1e3, b[1] * 1e3, steady * 1e3, three * 1e3, three / steady)
        by.setdefault((t.params["hidden"], t.params["bunch"], t.params["P"]), []).append((t.params["seed"], rec))
    rest = {x["config"][1:]: x for x in w_rest if x["config"][0] == "PP"}
    out = []
    for (h, B, P), v in sorted(by.items()):
        recs = [r for _, r in sorted(v)]
        iv = W.factor_intervals(recs, WARM, label=f"{NAME} why warmup {h} {B} {P}")
        x = {"config": ("PP", h, B, P), "runs": len(recs), **iv,
             "excess_ms": iv["three_mean_ms"][0] - iv["steady_ms"][0]}
        r = rest.get((h, B, P))
        x["rest_ms"] = r["rest"][0] * 1e3 if r else math.nan
        out.append(x)
    return out


# ---- 3. training: updates, step sizes, error at equal updates --------------------------------
def _runs(results) -> dict:
    """(mode, hidden, B) → {seed: training result}."""
    out = {}
    for t, r in results:
        if t.name == "train" and r is not None:
            p = t.params
            out.setdefault((p["mode"], p["hidden"], p["bunch"]), {})[p["seed"]] = r
    return out


def best_so_far(r: dict) -> np.ndarray:
    """CV frame error (%) after each epoch, the best epoch so far (the claims' best epoch at the end)."""
    return np.minimum.accumulate(100 * (1 - np.asarray(r["cv_acc"], dtype=float)))


def error_at_updates(r: dict, u: float) -> float:
    """Best-so-far CV frame error after u updates, linear between epoch ends; NaN before
    the first epoch's end (no error before training is kept) or past the run's end."""
    e = best_so_far(r)
    per = r["bunches"] / len(e)
    x = per * np.arange(1, len(e) + 1)
    return float(np.interp(u, x, e)) if x[0] - 1e-9 <= u <= x[-1] + 1e-9 else math.nan


def equal_updates_record(a: dict, b: dict) -> tuple:
    """(B's error ÷ A's at equal updates, from the updates B made beyond or short of A's, B ÷ A
    at the end): the first two multiply to the third; errors best-so-far (:func:`best_so_far`).
    Equal updates are the fewer of the two runs': where B made fewer, A is read at B's total
    (A(u_B) ÷ A's end is what A's extra updates bought it, here B's shortfall); where B made
    more, B is read at A's total (B's end ÷ B(u_A) is what its extra updates bought)."""
    ea, eb = best_so_far(a)[-1], best_so_far(b)[-1]
    if b["bunches"] <= a["bunches"]:
        at = error_at_updates(a, b["bunches"])
        return eb / at, at / ea, eb / ea
    at = error_at_updates(b, a["bunches"])
    return at / ea, eb / at, eb / ea


def updates_table(results, setup) -> list[dict]:
    """Per trained (mode, hidden, B): updates per epoch counted in the runs (bunches ÷ epochs)
    beside :func:`updates_per_epoch`, η per pattern and the summed step of an update, η·B."""
    out = []
    for (mode, h, B), runs in sorted(_runs(results).items(), key=lambda x: (x[0][1], x[0][2], x[0][0])):
        r = next(iter(runs.values()))
        counted = {s: x["bunches"] / len(x["cv_acc"]) for s, x in runs.items()}
        lr = setup.lr_for(B)
        out.append({"mode": mode, "hidden": h, "bunch": B, "seeds": len(runs), "n_train": r["n_train"],
                    "counted": float(np.median(list(counted.values()))),
                    "arithmetic": updates_per_epoch(r["n_train"], B, setup.chunk), "lr": lr, "step": lr * B,
                    "epoch_step": lr * r["n_train"]})
    return out


def fig6_split(results, setup) -> list[dict]:
    """Each moderate bunch (≤ 200, the seeds every one has) against the best (lowest mean
    best-epoch error): per seed :func:`equal_updates_record`, geometric means with intervals."""
    runs = _runs(results)
    h = setup.fig6_hidden
    mod = {B: runs[("sequential", h, B)] for B in setup.fig6_bunches
           if B <= P1C.MODERATE_MAX and ("sequential", h, B) in runs}
    most = max((len(v) for v in mod.values()), default=0)
    mod = {B: v for B, v in mod.items() if len(v) == most and most > 1}
    if len(mod) < 2:
        return []
    best = min(mod, key=lambda B: np.mean([best_so_far(r)[-1] for r in mod[B].values()]))
    out = []
    for B in sorted(mod):
        if B == best:
            continue
        seeds = sorted(set(mod[B]) & set(mod[best]))
        recs = [equal_updates_record(mod[best][s], mod[B][s]) for s in seeds]
        ok = [x for x in recs if all(math.isfinite(v) and v > 0 for v in x)]
        if not ok:
            continue  # one run's last epoch ends before the other's first: no error at equal updates
        u = np.median([mod[B][s]["bunches"] / mod[best][s]["bunches"] for s in seeds])
        out.append({"bunch": B, "best": best, "hidden": h, "seeds": len(ok), "updates_ratio": float(u),
                    **W.factor_intervals(ok, EQUAL, label=P1C._label(f"why fig6 B={B}"))})
    return out


def pp_split(results, setup) -> list[dict]:
    """Table 2's PP (B = pp_bunch) over sequential (B = np_bunch), CV frame error (best epoch)
    per seed, = (PP ÷ sequential at PP's bunch) × (sequential at PP's bunch ÷ at its own),
    on every net where the three ran; on the others only the product."""
    runs = _runs(results)
    out = []
    for h in setup.nets:
        pp, seq = runs.get(("PP", h, setup.pp_bunch), {}), runs.get(("sequential", h, setup.np_bunch), {})
        same = runs.get(("sequential", h, setup.pp_bunch), {})
        seeds = sorted(set(pp) & set(seq) & (set(same) if same else set(pp)))
        if not seeds:
            continue
        e = {k: {s: best_so_far(d[s])[-1] for s in seeds} for k, d in (("pp", pp), ("seq", seq))}
        lab = P1C._label(f"why table2 pp N_h={h}")
        if same:
            e["same"] = {s: best_so_far(same[s])[-1] for s in seeds}
            recs = [(e["pp"][s] / e["same"][s], e["same"][s] / e["seq"][s], e["pp"][s] / e["seq"][s]) for s in seeds]
            iv = W.factor_intervals(recs, PP_SPLIT, label=lab)
        else:
            iv = {PP_SPLIT[0]: (math.nan,) * 3, PP_SPLIT[1]: (math.nan,) * 3,
                  PP_SPLIT[2]: W.factor_intervals([(e["pp"][s] / e["seq"][s],) for s in seeds], PP_SPLIT[2:],
                                                  label=lab)[PP_SPLIT[2]]}
        out.append({"hidden": h, "seeds": len(seeds), "same_bunch_run": bool(same),
                    "pp_error": C.mean(list(e["pp"].values()), label=lab + " pp"),
                    "identical_seeds": sum(np.array_equal(pp[s]["cv_acc"], same[s]["cv_acc"]) for s in seeds)
                    if same else 0, **iv})
    return out


def lr_split(results, setup) -> list[dict]:
    """The η sweep at PP's bunch (setup.py ``lr_sweep``): per multiple of η, sequential training
    on fig6_hidden at pp_bunch, CV frame error (best epoch) per seed, its ratio to the same
    seed's run at the setup's η (Fig. 6's) and to its sequential B = np_bunch run; means and
    geometric means with 95 % bootstrap intervals over seeds."""
    h, B = setup.fig6_hidden, setup.pp_bunch
    runs = _runs(results)
    base, ref = runs.get(("sequential", h, B), {}), runs.get(("sequential", h, setup.np_bunch), {})
    sweep: dict = {}
    for t, r in results:
        if t.name == "lr_sweep" and r is not None:
            sweep.setdefault(t.params["lr_times"], {})[t.params["seed"]] = r
    out = []
    for m in sorted(sweep):
        seeds = sorted(set(sweep[m]) & set(base) & set(ref))
        if not seeds:
            continue
        e = {s: best_so_far(sweep[m][s])[-1] for s in seeds}
        lab = P1C._label(f"why lr x{m:g}")
        out.append({"times": m, "lr": setup.lr_for(B) * m, "hidden": h, "bunch": B, "seeds": len(seeds),
                    "error": C.mean(list(e.values()), label=lab),
                    "over_base": C.over_seeds([e[s] / best_so_far(base[s])[-1] for s in seeds], C.gmean,
                                              label=lab + " base"),
                    "over_np": C.over_seeds([e[s] / best_so_far(ref[s])[-1] for s in seeds], C.gmean,
                                            label=lab + " np")})
    return out


def compute(results, setup, *, ctx: dict | None = None, pairs=(), df=None) -> dict:
    """Every decomposition of this run (see the module docstring). ``ctx``: {prof, cal,
    parts}: the emulated rows' profile, the calibration and the report's ``emulated_parts``
    (None: no emulated splits)."""
    w = {"emulated": [], "four": None, "rest": [], "updates": updates_table(results, setup),
         "fig6": fig6_split(results, setup), "pp": pp_split(results, setup), "lr": lr_split(results, setup),
         "setup": setup}
    if ctx is not None:
        seen = []
        for cs in claim_configs(setup).values():
            seen += [c for c in cs if c not in seen]
        w["emulated"] = [x for x in (split_config(results, ctx, c) for c in seen) if x is not None]
        w["four"] = four_split(results, ctx, setup, df)
        w["rest"] = measured_rest(results, ctx, pairs)
        w["profile"] = ctx["prof"].name
    w["warmup"] = warmup_split(results, w["rest"])  # the ablation (no emulation needed)
    return w
