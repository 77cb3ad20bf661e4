"""paper0's why (issue "The why behind every verdict"): the figures its claims rest on, each
split into factors that multiply to it (reproduce/why.py), per seed, with intervals:

- an epoch's emulated speed-up (§2.2, Figs 4–5), S(P) = P × work × balance × contention ×
  compute share: work = one worker's compute ÷ the P workers' total, balance = the workers'
  mean ÷ the slowest's, contention = the profile's compute scale at 1 ÷ at P, compute share =
  compute ÷ the emulated epoch time; that time itself taken apart into compute, straggler
  wait and each collective (``emulated_parts``); and S at our peak ÷ S at the paper's count,
  the same factors' ratios;
- the §2.1 loop's emulated speed-up, S(P) = units (H ÷ the largest block) × per-unit time
  (t(H)/H ÷ t(k)/k) × contention × compute share, and the loop's fixed cost: t(k) = a + b·k
  fitted over the block timings k = 1..H;
- §3.1's 22 h → 8 h by Amdahl, ours ÷ the paper's = (from our loop share) × (from our loop
  speed-up), the two orders of the swap averaged in logs;
- §3.2's 8.96, ours ÷ the paper's = (from the iteration's weights: the derivative epochs'
  share of a 1-worker iteration, ours against the paper's 417 s, 11 s, k = 10) × (from the
  epoch speed-ups at those weights);
- the same two splits of the host's measured figures, per host seed (``_overall_host``,
  ``_radio_host``): what the claims are judged on where the host ran 5 seeds;
- §2.1's loop share = (loop ÷ derivative epoch) × (derivative epoch ÷ CG iteration);
- training: the only speed-up the cache holds, one CG iteration measured on 1 and 2
  processes (the same iterations, so the passes ratio is 1 by construction).

``compute`` gives them and ``rows`` the comparison rows (table ``why``); why_text.py says
them in words: the report's Why section and the sentences each claim's reason takes."""
from __future__ import annotations

import math

import numpy as np

from reproduce.paper0.network_partition import split_even
from reproduce import claims as C
from reproduce import report as R
from reproduce import why as W
from reproduce.paper0 import claims as P0C
from reproduce.paper0 import compose as P0
from reproduce.paper0.setup import NAME, NETS, REPORTED

EPOCH = ("workers", "work", "balance", "contention", "compute_share", "speedup")
LOOP = ("units", "per_unit", "contention", "compute_share", "speedup")
AMDAHL = ("from_share", "from_part_speedup", "ratio_to_paper")
SHARE = ("loop_over_deriv", "deriv_share", "loop_share", "deriv_over_fwd", "from_loop_over_deriv",
         "from_deriv_over_fwd", "from_k", "ratio_to_paper")
FIG = {"fig4": ("deriv", "derivative"), "fig5": ("fwd", "forward")}
PAPER_DERIV_SHARE = REPORTED["deriv_epoch_s"] / (REPORTED["deriv_epoch_s"]
                                                 + REPORTED["evals_per_iter"] * REPORTED["fwd_epoch_s"])


def _lab(what: str) -> str:
    return f"{NAME} why {what}"


# ---- an emulated time taken apart ------------------------------------------------------------
def seqpart_parts(times: list, P: int, nbytes: int, prof, *, weight_bytes: int = 0) -> dict:
    """compose.seqpart_emulated's epoch time taken apart, in seconds: compute (the slowest
    worker, scaled), straggler_wait and one entry per synchronisation it charges (calibrated:
    broadcast, allreduce; α/β: barrier and reduction, the P − 1 vectors read at β)."""
    prof = P0.shared_memory(prof)
    if prof.calibrated:
        return W.emulated_parts(prof, P, max(times), [("broadcast", weight_bytes, 1), ("allreduce", nbytes, 1)],
                                kernel=P0.KERNEL)
    return {**W.emulated_parts(prof, P, max(times), [("barrier", 0, 2)], kernel=P0.KERNEL),
            "reduction": (P - 1) * nbytes / prof.bandwidth_Bps}


def netpart_parts(res: dict, P: int, H: int, prof) -> dict:
    """compose.netpart_emulated's loop time taken apart: compute (the largest block's loop),
    straggler_wait and barrier (one per pattern step)."""
    return W.emulated_parts(P0.shared_memory(prof), P, res["block_s"][str(_kmax(H, P))],
                            [("barrier", 0, res["steps"])], kernel=P0.KERNEL)


def _kmax(H: int, P: int) -> int:
    return max(b - a for a, b in split_even(H, P))


def epoch_record(res: dict, fig: str, P: int, prof) -> tuple:
    """(P, work, balance, contention, compute share, speed-up) of one seed's emulated epoch:
    the first five multiply to the sixth, T(1) / T(P) (compose.seqpart_emulated)."""
    key = FIG[fig][0]
    nb, w = P0._bytes(res)[fig]
    c, c1 = res[key][str(P)], res[key]["1"][0]
    parts = seqpart_parts(c, P, nb, prof, weight_bytes=w)
    t1 = P0.seqpart_emulated(res[key]["1"], 1, nb, prof, weight_bytes=w)
    sm = P0.shared_memory(prof)
    return (float(P), c1 / sum(c), float(np.mean(c)) / max(c), sm.compute_scale(1, P0.KERNEL) / sm.compute_scale(
        P, P0.KERNEL), parts["compute"] / sum(parts.values()), t1 / sum(parts.values()))


def loop_record(res: dict, H: int, P: int, prof) -> tuple:
    """(units, per-unit time, contention, compute share, speed-up) of one seed's emulated §2.1
    loop: the first four multiply to the fifth, t(1) / t(P) (compose.netpart_emulated)."""
    k = _kmax(H, P)
    b = res["block_s"]
    parts = netpart_parts(res, P, H, prof)
    sm = P0.shared_memory(prof)
    t1 = P0.netpart_emulated(res, 1, H, prof)
    return (H / k, (b[str(H)] / H) / (b[str(k)] / k), sm.compute_scale(1, P0.KERNEL) / sm.compute_scale(P, P0.KERNEL),
            parts["compute"] / sum(parts.values()), t1 / sum(parts.values()))


def fixed_cost(res: dict, H: int) -> tuple[float, float, float]:
    """The loop's fixed cost, t(k) = a + b·k fitted (least squares) over k = 1..H: (a ÷ t(H),
    the share of the whole loop that fewer units per worker do not shrink; a per pattern step
    in µs; b per pattern step in µs)."""
    k = np.arange(1, H + 1)
    b, a = np.polyfit(k, [res["block_s"][str(i)] for i in k], 1)
    return a / res["block_s"][str(H)], a / res["steps"] * 1e6, b / res["steps"] * 1e6


# ---- Amdahl: ours ÷ the paper's, one input swapped at a time -----------------------------------
def swap_split(fn, ours: tuple, paper: tuple) -> tuple[float, float, float]:
    """(from the first input, from the second, fn(ours) ÷ fn(paper)) for a figure ``fn`` of
    two inputs: each factor the figure's change when that input goes from the paper's value to
    ours, the two orders of the swap averaged in logs, so that the two multiply to the whole."""
    (a_o, b_o), (a_p, b_p) = ours, paper
    whole = fn(a_o, b_o) / fn(a_p, b_p)
    first = math.sqrt(fn(a_o, b_p) / fn(a_p, b_p) * fn(a_o, b_o) / fn(a_p, b_o))
    return first, whole / first, whole


def overall_split(w: float, s_d: float, s_f: float) -> tuple[float, float, float]:
    """§3.2's overall speed-up 1 / (w/S_D + (1 − w)/S_F), w the derivative epochs' share of a
    1-worker iteration, ÷ the paper's 8.96 = (ours ÷ the same speed-ups at the paper's weight
    417 / (417 + 10·11)) × (those at the paper's weight ÷ 8.96). One order only: the paper
    gives neither epoch's speed-up at 17 / 6."""
    def a(x: float) -> float:
        return 1.0 / (x / s_d + (1.0 - x) / s_f)
    return a(w) / a(PAPER_DERIV_SHARE), a(PAPER_DERIV_SHARE) / REPORTED["overall_speedup_17_6"], \
        a(w) / REPORTED["overall_speedup_17_6"]


def share_record(loop_s: float, d_s: float, f_s: float, k: float) -> tuple:
    """§2.1's loop share of a CG iteration = (loop ÷ derivative epoch D) × (D ÷ (D + k·F)),
    beside D ÷ F; and ours ÷ the paper's 0.8 = (our loop ÷ D over the 0.8 ÷ 0.791 that 0.8
    needs at the paper's weight) × (from our D ÷ F instead of its 417/11) × (from our k
    instead of its 10), the last two a :func:`swap_split` of D's weight r / (r + k)."""
    lod, r = loop_s / d_s, d_s / f_s
    paper_r = REPORTED["deriv_epoch_s"] / REPORTED["fwd_epoch_s"]
    from_r, from_k, _ = swap_split(lambda a, b: a / (a + b), (r, k), (paper_r, REPORTED["evals_per_iter"]))
    share = lod * r / (r + k)
    return (lod, r / (r + k), share, r, lod / (REPORTED["loop_share"] / PAPER_DERIV_SHARE), from_r, from_k,
            share / REPORTED["loop_share"])


# ---- compute ------------------------------------------------------------------------------------
def _tasks(results, name: str, kind: str, **params) -> list[tuple]:
    """The (task, result) pairs of task ``name``/``kind`` with ``params``, in the claims' order."""
    return [(t, r) for t, r in results if t.name == name and t.kind == kind
            and all(t.params.get(k) == v for k, v in params.items())]


def _records(results, name: str, kind: str, **params) -> list[dict]:
    """The results of task ``name``/``kind`` with ``params``, in the order the claims read them."""
    return [r for t, r in results if t.name == name and t.kind == kind
            and all(t.params.get(k) == v for k, v in params.items())]


def _intervals(recs: list, names, *, label: str) -> dict:
    """reproduce.why.factor_intervals, but a factor equal on every record (P, a profile's
    contention) is (it, it, it) without a bootstrap, which would give it on every resample; the
    other factors' resamples are the same (one label)."""
    same = {i for i in range(len(names)) if len(recs) > 1 and all(r[i] == recs[0][i] for r in recs)}
    vary = [i for i in range(len(names)) if i not in same]
    out = W.factor_intervals([tuple(r[i] for i in vary) for r in recs], [names[i] for i in vary], label=label)
    return {names[i]: out[names[i]] if i in vary else (recs[0][i],) * 3 for i in range(len(names))}


def _parts(parts: list[dict], *, label: str) -> dict:
    """{part: (mean seconds over seeds, low, high)}, one resample for all parts (their means
    add up to the mean time in every resample)."""
    return {q: C.over_seeds([p[q] for p in parts], C.mean_of, label=label) for q in parts[0]}


def _epochs(seq: list, fig: str, prof, options: list, named: dict, paper_P: int | None) -> tuple[list, list]:
    """The epoch splits of one curve on one profile at the named P and at our peak (the best
    mean speed-up over ``options``), and the peak over the paper's count."""
    recs = {P: [epoch_record(r, fig, P, prof) for r in seq] for P in options}
    best = max(options, key=lambda P: np.mean([x[-1] for x in recs[P]]))
    roles = {**{P: role for P, role in named.items() if P in recs}, best: "our peak"}
    out = []
    for P in sorted(roles):
        lab = _lab(f"{fig} P={P} {prof.name}")
        nb, w = P0._bytes(seq[0])[fig]
        parts = [seqpart_parts(r[FIG[fig][0]][str(P)], P, nb, prof, weight_bytes=w) for r in seq]
        out.append({"fig": fig, "profile": prof.name, "P": P, "role": roles[P], "seeds": len(seq),
                    "parts": _parts(parts, label=lab + " parts"), **_intervals(recs[P], EPOCH, label=lab)})
    peaks = []
    if paper_P in recs and paper_P != best:
        ratio = [tuple(b / a for a, b in zip(x, y)) for x, y in zip(recs[paper_P], recs[best])]
        peaks.append({"fig": fig, "profile": prof.name, "P": best, "paper_P": paper_P, "seeds": len(seq),
                      **_intervals(ratio, EPOCH, label=_lab(f"{fig} peak {best}/{paper_P} {prof.name}"))})
    return out, peaks


def _curves(rows: list, twin, prof, Pmax: int) -> list[tuple]:
    """(fig, profile, {P: its role}, the paper's P or None, the P to choose the peak from) of
    the curves the claims read (reproduce/paper0/claims.py): best-fwd-6's and overall-17-6's
    on the host's twin over the P the host measured, best-deriv-17's on the run's profile."""
    host_P = {c: sorted(r["P"] for r in rows if r["curve"] == c) for c in ("fig4", "fig5")}
    Pd, Pf, Pb = _Pd(rows), REPORTED["best_fwd_workers"], REPORTED["best_deriv_workers"]

    def opts(fig: str, p) -> list:
        return [P for P in (host_P[fig] if p is twin and rows else range(1, Pmax + 1)) if P <= Pmax]
    out = [("fig5", twin, {Pf: "the paper's", max(host_P["fig5"] or [Pmax]): "largest"}, Pf, opts("fig5", twin))]
    if prof is twin:
        return out + [("fig4", prof, {Pd: "§3.2's overall", Pb: "the paper's"}, Pb, opts("fig4", prof))]
    return out + [("fig4", twin, {Pd: "§3.2's overall"}, None, opts("fig4", twin)),
                  ("fig4", prof, {Pb: "the paper's"}, Pb, opts("fig4", prof))]


def _Pd(rows: list) -> int:
    """overall-17-6's derivative P: the paper's 17, or the host's largest below it."""
    d = [r["P"] for r in rows if r["curve"] == "fig4"]
    return min(REPORTED["best_deriv_workers"], max(d)) if d else REPORTED["best_deriv_workers"]


def _overall(seq: list, twin, rows: list, k: float) -> dict:
    """§3.2's overall split on the twin at overall-17-6's P_D / 6, per seed."""
    Pd, Pf = _Pd(rows), REPORTED["best_fwd_workers"]
    recs = []
    for r in seq:
        s_d, s_f = epoch_record(r, "fig4", Pd, twin)[-1], epoch_record(r, "fig5", Pf, twin)[-1]
        wd = r["deriv"]["1"][0] / (r["deriv"]["1"][0] + k * r["fwd"]["1"][0])
        recs.append((wd, s_d, s_f, *overall_split(wd, s_d, s_f)))
    # the claim's label: its interval ÷ 8.96 is ratio_to_paper's, draw for draw
    return {"profile": twin.name, "Pd": Pd, "Pf": Pf, "seeds": len(recs), **_intervals(
        recs, ("deriv_share", "deriv_speedup", "fwd_speedup", "from_weights", "from_epoch_speedups",
               "ratio_to_paper"), label=f"{NAME} overall-17-6 emulated")}


def _radio(radio: list, p, k: float, *, claim_label: bool) -> tuple[dict, dict]:
    """The radio loop's split at 5 on profile ``p`` and §3.1's Amdahl split, per seed
    (``claim_label``: radio-5's bootstrap label, so that its interval is the claim's)."""
    H, P5 = NETS["radio"]["n_hidden"], 5
    implied = P0C.implied_loop_speedup(REPORTED["radio_hours_1"] / REPORTED["radio_hours_5"], REPORTED["loop_share"])
    lab = _lab(f"radio loop P={P5} {p.name}")
    loop = {"net": "radio", "P": P5, "profile": p.name, "seeds": len(radio),
            "parts": _parts([netpart_parts(r, P5, H, p) for r in radio], label=lab + " parts"),
            **_intervals([loop_record(r, H, P5, p) for r in radio], LOOP, label=lab)}
    recs = []
    for r in radio:
        f = r["block_s"][str(H)] / (r["prep_s"] + k * r["fwd_s"] + r["block_s"][str(H)])
        s = loop_record(r, H, P5, p)[-1]
        recs.append((f, s, P0C.amdahl(f, s), *swap_split(P0C.amdahl, (f, s), (REPORTED["loop_share"], implied))))
    amd = {"profile": p.name, "P": P5, "seeds": len(recs), "implied": implied,
           **_intervals(recs, ("loop_share", "loop_speedup", "overall") + AMDAHL,
                        label=f"{NAME} radio-5 emulated" if claim_label else _lab(f"radio-5 {p.name}"))}
    return loop, amd


def _fixed(em: list, net: str) -> dict:
    """The loop's fixed cost (:func:`fixed_cost`) of ``net``, means over seeds."""
    H = NETS[net]["n_hidden"]
    fits = [fixed_cost(r, H) for r in em]
    return {"net": net, "H": H, "seeds": len(fits),
            **{q: C.over_seeds([x[i] for x in fits], C.mean_of, label=_lab(f"fixed cost {net}"))
               for i, q in enumerate(("fixed_share", "fixed_us_per_step", "unit_us_per_step"))}}


def _iterations(results, k: float) -> list[dict]:
    """The measured CG iteration on 1 and P processes (seqpart measured), per P."""
    meas = {}
    for t, r in results:
        if t.name == "seqpart" and t.kind == "measured":
            P = t.params["workers"]
            s = (r["1"]["deriv_s"] + k * r["1"]["fwd_s"]) / (r[str(P)]["deriv_s"] + k * r[str(P)]["fwd_s"])
            meas.setdefault(P, []).append((1.0, s, s))
    return [{"P": P, "seeds": len(recs), **_intervals(recs, ("passes_ratio", "time_per_iteration_ratio", "speedup"),
                                                      label=_lab(f"iteration P={P}"))}
            for P, recs in sorted(meas.items())]


def _host_label() -> str:
    return f"{P0C.HOST} (measured)"


def _overall_host(host: dict, k: float) -> dict | None:
    """§3.2's overall split of the host's measured epochs at overall-17-6's P_D / 6, per host
    seed, with the seed's own D(1)/F(1) and our k (reproduce/paper0/claims.py ``evidence``:
    the same seeds in the same order and its label, so ratio_to_paper × 8.96 is the claim's)."""
    Pd, Pf = _Pd(host_rows(host)), REPORTED["best_fwd_workers"]
    d, f = P0C._hs(host, "fig4", Pd), P0C._hs(host, "fig5", Pf)
    single = host.get("single", {})
    seeds = P0C._seeds(d, f, single)
    if not seeds:
        return None
    recs = []
    for s in seeds:
        r = single[s]["deriv_s"] / single[s]["fwd_s"]
        wd = r / (r + k)
        recs.append((wd, d[s], f[s], *overall_split(wd, d[s], f[s])))
    return {"profile": _host_label(), "kind": "measured", "Pd": Pd, "Pf": Pf, "seeds": len(recs), **_intervals(
        recs, ("deriv_share", "deriv_speedup", "fwd_speedup", "from_weights", "from_epoch_speedups",
               "ratio_to_paper"), label=f"{NAME} overall-17-6 host")}


def _radio_host(radio: list, host: dict, k: float) -> dict | None:
    """§3.1's Amdahl split with our loop share and the host's measured loop speed-up at 5 of
    the same seed (radio-5's host figure: its seeds, order and label)."""
    H, P5 = NETS["radio"]["n_hidden"], 5
    s5 = P0C._hs(host, "fig2", P5)
    fs = {t.params["seed"]: r["block_s"][str(H)] / (r["prep_s"] + k * r["fwd_s"] + r["block_s"][str(H)])
          for t, r in radio}
    seeds = P0C._seeds(s5, fs)
    if not seeds:
        return None
    implied = P0C.implied_loop_speedup(REPORTED["radio_hours_1"] / REPORTED["radio_hours_5"], REPORTED["loop_share"])
    recs = [(fs[s], s5[s], P0C.amdahl(fs[s], s5[s]),
             *swap_split(P0C.amdahl, (fs[s], s5[s]), (REPORTED["loop_share"], implied))) for s in seeds]
    return {"profile": _host_label(), "kind": "measured", "P": P5, "seeds": len(recs), "implied": implied,
            **_intervals(recs, ("loop_share", "loop_speedup", "overall") + AMDAHL, label=f"{NAME} radio-5 host")}


def host_rows(host: dict) -> list[dict]:
    """The host's per-seed figures as reproduce.manycore.measured's rows: (median, min, max)."""
    return [{"P": P, "curve": c, "speedup": (float(np.median(list(d.values()))), min(d.values()), max(d.values()))}
            for (c, P), d in sorted(host.get("curves", {}).items())]


def compute(results, setup, profiles, *, host: dict | None = None, host_profile=None) -> dict:
    """Every decomposition of this run (module docstring). The host's twin (its calibrated
    profile over our compute) as reproduce/paper0/claims.py ``evidence`` takes it: where the
    host measured paper0 (``host``, as reproduce/paper0/claims.py ``host_runs`` gives it,
    default its file), else the run's own profile; with the host's own figures split where
    it has them."""
    from reproduce import manycore

    host = P0C.host_runs() if host is None else host
    rows = host_rows(host)
    prof = next((p for p in profiles if p.name != P0.BOUND), profiles[0])
    bound = next((p for p in profiles if p.name == P0.BOUND), None)
    twin = (host_profile or manycore.host_profile(P0C.HOST)) if rows else prof
    k, Pmax = P0C.k_of(results), setup.max_workers
    w = {"k": k, "twin": twin.name, "profile": prof.name, "epochs": [], "peaks": [], "loops": [],
         "fixed": [], "radio": [], "overall": None, "share": None, "iteration": _iterations(results, k)}
    seq = _records(results, "seqpart", "emulated")
    if seq:
        for fig, p, named, paper_P, opts in _curves(rows, twin, prof, Pmax):
            if opts:
                e, pk = _epochs(seq, fig, p, opts, named, paper_P)
                w["epochs"] += e
                w["peaks"] += pk
        if max(_Pd(rows), REPORTED["best_fwd_workers"]) <= Pmax:
            w["overall"] = _overall(seq, twin, rows, k)
    w["overall_host"] = _overall_host(host, k) if rows else None
    radio = _records(results, "netpart", "emulated", net="radio")
    if radio and rows and (rh := _radio_host(_tasks(results, "netpart", "emulated", net="radio"), host, k)):
        w["radio"].append(rh)
    if radio and Pmax >= 5:  # §3.1's five processors
        for p in [twin] + ([bound] if bound is not None else []):
            loop, amd = _radio(radio, p, k, claim_label=p is twin)
            w["loops"].append(loop)
            w["radio"].append(amd)
    w["fixed"] = [_fixed(em, net) for net in NETS if (em := _records(results, "netpart", "emulated", net=net))]
    vec = [r for r in _records(results, "vectorise", "measured") if r]
    if vec:
        c = str(setup.chunk)
        recs = [share_record(r["loop_s"], r["forward_deriv_s"][c], r["fwd_s"], k) for r in vec]
        w["share"] = {"seeds": len(recs), **_intervals(recs, SHARE, label=_lab("loop share"))}
    return w


# ---- comparison rows ------------------------------------------------------------------------------
_NOTES = {
    "workers": "P, the ideal speed-up", "units": "H ÷ the largest block's hidden units, the ideal speed-up",
    "work": "one worker's compute ÷ the P workers' total, each timed alone (above 1: less work per worker in all)",
    "balance": "the workers' mean compute ÷ the slowest worker's",
    "per_unit": "(t(H) ÷ H) ÷ (t(k) ÷ k), the loop's time per hidden unit, all units over the largest block's "
                "k (below 1: a cost that fewer units do not shrink)",
    "contention": "the profile's compute scale at 1 ÷ at P (its contention factor; 1 for an α/β profile)",
    "compute_share": "compute ÷ the emulated time (the rest: straggler wait and collectives)",
    "speedup": "the emulated speed-up T(1) ÷ T(P) = the product of the factors above"}
_GEO = "geometric mean over seeds, 95 % bootstrap over seeds, one resample for every factor of the row"


def _r(q: str, cond: str, unit: str, x: tuple, kind: str, runs: int, note: str) -> dict:
    return R.row(NAME, W.TABLE, q, cond, unit, ours=x[0], low=x[1], high=x[2], kind=kind, runs=runs, note=note)


def _factor_rows(prefix: str, x: dict, names, cond: str, extra: str = "") -> list:
    return [_r(f"{prefix}_{f}", cond, "fraction" if f.endswith("share") else "x", x[f], "emulated", x["seeds"],
               f"{_NOTES[f]}; {_GEO}{extra}") for f in names]


def _part_rows(prefix: str, x: dict, cond: str) -> list:
    return [_r(f"{prefix}_time_{p}", cond, "s", v, "emulated", x["seeds"],
               "the emulated time's part " + p.replace("_", " ") + " (reproduce/why.py emulated_parts); mean over "
               "seeds, 95 % bootstrap, one resample for all parts") for p, v in x["parts"].items()]


def rows(w: dict) -> list[dict]:
    """Table ``why`` of comparison.csv (no paper values but the paper's own figures, kind
    modeled, where a split sets ours beside them)."""
    out = []
    for e in w["epochs"]:
        cond = R.condition(workers=e["P"], epoch=FIG[e["fig"]][1], profile=e["profile"])
        out += _factor_rows("epoch", e, EPOCH, cond, extra=f"; P = {e['P']}: {e['role']}") + _part_rows("epoch", e, cond)
    for p in w["peaks"]:
        cond = R.condition(workers=p["P"], vs_workers=p["paper_P"], epoch=FIG[p["fig"]][1], profile=p["profile"])
        out += _factor_rows("peak", p, EPOCH, cond, extra=f"; each factor at our peak P = {p['P']} ÷ at the paper's "
                                                          f"{p['paper_P']}, per seed")
    for x in w["loops"]:
        cond = R.condition(workers=x["P"], net=x["net"], profile=x["profile"])
        out += _factor_rows("loop", x, LOOP, cond) + _part_rows("loop", x, cond)
    for f in w["fixed"]:
        cond = R.condition(net=f["net"], workers=1)
        fit = (f"least-squares fit t(k) = a + b·k over the block timings k = 1..{f['H']}, per seed; mean over "
               "seeds, 95 % bootstrap")
        out += [_r("loop_fixed_share", cond, "fraction", f["fixed_share"], "measured", f["seeds"],
                   f"a ÷ t({f['H']}): the share of the whole loop that fewer units per worker do not shrink; {fit}"),
                _r("loop_fixed_us_per_step", cond, "µs", f["fixed_us_per_step"], "measured", f["seeds"],
                   f"a per pattern step; {fit}"),
                _r("loop_unit_us_per_step", cond, "µs", f["unit_us_per_step"], "measured", f["seeds"],
                   f"b (one hidden unit) per pattern step; {fit}")]
    amd = {"loop_share": ("fraction", "measured", "the radio loop's share of a 1-worker CG iteration (radio-5's f)"),
           "loop_speedup": ("x", "emulated", "the loop's emulated speed-up at 5"),
           "overall": ("x", "emulated", "Amdahl 1 / ((1 − f) + f / S_loop), radio-5's figure"),
           "from_share": ("x", "emulated", "from our loop share instead of the paper's 0.8"),
           "from_part_speedup": ("x", "emulated", "from our loop speed-up instead of the one 22 h → 8 h implies at 0.8"),
           "ratio_to_paper": ("x", "emulated", "ours ÷ the paper's 22/8 = from_share × from_part_speedup")}
    for x in w["radio"]:
        cond = R.condition(workers=x["P"], net="radio", profile=x["profile"])
        out += [_r(f"radio_{q}", cond, u, x[q], x.get("kind", k), x["seeds"],
                   f"{n}; the swap's two orders averaged in logs; {_GEO}") for q, (u, k, n) in amd.items()]
    for o in (w["overall"], w.get("overall_host")):
        if not o:
            continue
        cond = R.condition(workers=f"{o['Pd']}/{o['Pf']}", profile=o["profile"])
        ov = {"deriv_share": ("fraction", "measured", "D(1) ÷ (D(1) + k·F(1)), the derivative epochs' weight"),
              "deriv_speedup": ("x", "emulated", f"S_D({o['Pd']})"), "fwd_speedup": ("x", "emulated", f"S_F({o['Pf']})"),
              "from_weights": ("x", "emulated", f"our weight instead of the paper's {PAPER_DERIV_SHARE:.3f}"),
              "from_epoch_speedups": ("x", "emulated", "our epoch speed-ups at the paper's weight ÷ its 8.96"),
              "ratio_to_paper": ("x", "emulated", "ours ÷ 8.96 = from_weights × from_epoch_speedups")}
        out += [_r(f"overall_{q}", cond, u, o[q], o.get("kind", k), o["seeds"], f"{n}; {_GEO}")
                for q, (u, k, n) in ov.items()]
    out.append(R.row(NAME, W.TABLE, "paper_deriv_share", R.condition(workers=1), "fraction",
                     ours=round(PAPER_DERIV_SHARE, 4), kind="modeled",
                     note="the derivative epochs' share of a CG iteration by the paper's own figures: 417 s / "
                          "(417 s + 10 × 11 s), §3.2 ('about' each)"))
    if w["share"]:
        s = w["share"]
        sn = {"loop_over_deriv": "the §2.1 loop ÷ the derivative epoch D", "deriv_share": "D ÷ (D + k·F), k = "
              f"{w['k']:.3g} forward epochs F", "loop_share": "their product, loop-share's figure",
              "deriv_over_fwd": "D ÷ F (the paper's 417 s / 11 s: 37.9)",
              "from_loop_over_deriv": f"loop ÷ D over the {REPORTED['loop_share'] / PAPER_DERIV_SHARE:.3f} that 0.8 "
                                      f"needs at the paper's weight {PAPER_DERIV_SHARE:.3f}",
              "from_deriv_over_fwd": "D's weight with our D ÷ F instead of 37.9 (the swap's two orders averaged in logs)",
              "from_k": "D's weight with our k instead of 10 (likewise)",
              "ratio_to_paper": "ours ÷ 0.8 = the three factors above"}
        out += [_r(q, R.condition(workers=1, net="nettalk"), "fraction" if q.endswith("share") else "x", s[q],
                   "measured", s["seeds"], f"{sn[q]}; {_GEO}") for q in sn]
    for it in w["iteration"]:
        out += [_r(f"iteration_{q}", R.condition(workers=it["P"]), "x", it[q], "measured", it["seeds"],
                   n + f"; {_GEO}") for q, n in (
            ("passes_ratio", "CG iterations, 1 process ÷ P: the same iterations (tasks.py), 1 by construction"),
            ("time_per_iteration_ratio", "(D + k·F) on 1 process ÷ on P, measured here"),
            ("speedup", "the product: a CG iteration's measured speed-up"))]
    return out
