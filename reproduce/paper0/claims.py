"""paper0's claims as data and the evidence that judges them (issue 30; README.md, "How to read a verdict").

McCann & Kalman (1994): every claim of the abstract, §1 and §4 (Conclusion) and the main
message of §2.1, §3.1 (Figs 2–3) and §3.2 (Figs 4–5), quoted verbatim from the plain-text
paper (../shared/papers/paper0-mccann-kalman-1994-parallel-srn.txt; "…" joins two pieces).

Kinds, in the order the project prefers them: **measured** on the 16-core host ``xeon207x16``
(:data:`HOST_RUNS5`: its run of 2026-11-27 with 5 seeds, each seed's figures kept by
tools/host_runs.py), **measured** here (per-seed task results), **emulated** here under the
run's own profile (``here-best`` unless ``--profile``; beyond P = 2 outside its validated
range). A claim the host measured is judged on the host's seeds, paired by seed like our own
(a seed's serial and parallel times come from the same task), with its emulated twin beside:
this run's emulated tasks composed on the host's calibrated profile
(``engine/profiles/xeon207x16.json``, as the report's section 'Against many-core hosts'
composes them), at the host's configuration (overall-17-6 at 16 / 6, the host's, not the
paper's 17 / 6). With fewer than 5 host seeds (reproduce.claims.fall_back) the twin is
judged instead, the host's figure beside, and where the host's interval alone gives the
opposite verdict the claim is inconclusive. dip-7's emulated ratio is below 1 by the
model's construction, so it is judged on the host alone. Figures of our own runs are
percentile bootstraps over seeds (reproduce/claims.py), speedups paired by seed.

The corpus sizes (821 words, fixed by construction) are not a claim of the paper and are not
declared here; they stay in comparison.csv.
"""
from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from reproduce import claims as C
from reproduce.paper0 import compose as P0
from reproduce.paper0.setup import NAME, NETS, REPORTED

HOST = "xeon207x16"
# The host's per-seed figures (tools/host_runs.py from its task cache; README.md there;
# tests/papers/test_paper0_claims.py checks them against the folder's comparison.csv).
HOST_RUNS5 = "results/machines/xeon207x16/claims30/paper0_default_local16_runs5/runs.json"

RADIO_TOL_WHY = ("the paper gives whole hours: 21.5–22.5 h over 7.5–8.5 h spans 2.53–3.00, "
                 "within ±10 % of 22/8")
OVERALL_TOL_WHY = ("the project's standing 'close' band (reproduce/report.py DEFAULT_TOLERANCE, set "
                   "before this claim) for one number the paper gives from one run without a spread")

CLAIMS = [
    C.Claim("seq-beats-net",
            "Fewer synchronization steps are required and more speedup can be obtained. … "
            "Our second algorithm is usually the more efficient.",
            "§1, §2.2, §4; Figs 3–4", "direction",
            "speedup of the sequence partition (Fig. 4, derivative epoch) over the network "
            "partition's (Fig. 3, parsing net loop) at the host's largest P",
            row="fig4/epoch_speedup/workers=16 ÷ fig3/loop_speedup/workers=16", threshold=1.0, sense=">",
            # deviation: the paper compares its figures; it names no P. Ours: the largest P both
            # curves were measured at on a real many-core host (16), nearest the paper's 17–18.
            reason="the paper's Fig. 3 is the loop alone, Fig. 4 the whole epoch: ours pairs them the same way"),
    C.Claim("overall-17-6",
            "Using 17 processors for each derivative epoch and 6 processors for each line search epoch "
            "gives us an overall speedup of 8.96, which includes all computation",
            "§3.2", "ratio", "overall speedup (D(1) + k·F(1)) / (D(P_D) + k·F(P_F)) of one CG iteration",
            row="sec3.2/overall_speedup/workers=17/6", reported=REPORTED["overall_speedup_17_6"],
            tolerance=0.10, tolerance_why=OVERALL_TOL_WHY,
            # deviation: measured at 16/6, the host has 16 cores (17 not measurable there); the
            # CG bookkeeping the paper's 8.96 includes is left out (a few vector ops).
            ),
    C.Claim("best-deriv-17",
            "so that we can take advantage of the best point on each of these curves to achieve maximal "
            "speedup. Using 17 processors for each derivative epoch",
            "§3.2, Fig. 4", "choice", "worker count of the highest derivative-epoch speedup, P = 1..18",
            row="fig4/best_workers", reported=REPORTED["best_deriv_workers"],
            # falls back to emulated: no host measured 17 processes (the host has 16 cores)
            ),
    C.Claim("best-fwd-6",
            "so that we can take advantage of the best point on each of these curves … and 6 processors "
            "for each line search epoch",
            "§3.2, Fig. 5", "choice", "worker count of the highest forward-epoch speedup",
            row="fig5/best_workers", reported=REPORTED["best_fwd_workers"]),
    C.Claim("radio-5",
            "The sequential version of our conjugate gradient trainer took 22 hours to train on this "
            "problem. The five processor version took eight.",
            "§3.1, Fig. 2", "ratio", "whole-iteration speedup of the radio net's CG on 5 processors, "
            "Amdahl with the §2.1 loop parallel: 1 / ((1 − f) + f / S_loop(5))",
            row="sec3.1/overall_speedup/workers=5;net=radio",
            reported=round(REPORTED["radio_hours_1"] / REPORTED["radio_hours_5"], 3), tolerance=0.10,
            tolerance_why=RADIO_TOL_WHY,
            # deviation: our radio data are synthetic sequences of the net's sizes (the paper's
            # audio recordings are not available); one CG iteration stands for the whole training
            ),
    C.Claim("dip-7",
            "The simplicity of the division of labor shows through in the data point for seven processors. "
            "… The additional overhead of the extra processor is enough to degrade performance.",
            "§3.1, Fig. 3", "direction", "loop speedup at 7 processors over 6, parsing net (24 hidden units)",
            row="fig3/speedup_7_over_6", threshold=1.0, sense="<"),
    C.Claim("netpart-some-speedup",
            "This allowed us to achieve some speedup, but it was limited by the size of the network "
            "architecture used",
            "§4; Figs 2–3", "direction",
            "the smallest loop speedup at the configurations the paper names for the network partition "
            "(radio net on 5, parsing net on 6 and 7 processors)",
            row="fig2/loop_speedup/workers=5, fig3/loop_speedup/workers=6,7", threshold=1.0, sense=">",
            # "limited" is tested against the sequence partition by seq-beats-net
            ),
    C.Claim("seq-upward",
            "The speedup curves, although they follow a general upward trend until peaking out when "
            "synchronization overhead starts to dominate the computation",
            "§3.2, Figs 4–5", "direction",
            "the smaller of the derivative- and forward-epoch speedups' growth S(P_max) / S(2)",
            row="fig4,fig5/epoch_speedup", threshold=1.0, sense=">",
            # the peaks' positions are best-deriv-17 and best-fwd-6
            ),
    C.Claim("loop-share",
            "Experimentally it was found that over eighty percent of the total computation time was spent "
            "in this loop.",
            "§2.1", "direction", "the §2.1 loop's share of one CG iteration (derivative epoch + k forward "
            "epochs), recurrent NETtalk, one process",
            row="sec2.1/loop_share", threshold=REPORTED["loop_share"], sense=">"),
    C.Claim("epoch-times",
            "A derivative calculation takes about 417 seconds when run on one processor. A forward "
            "propagation epoch takes about 11 seconds.",
            "§3.2", "ratio", "seconds of one derivative epoch on one process",
            row="sec3.2/deriv_epoch_time", reported=REPORTED["deriv_epoch_s"], rule="not-comparable",
            reason="absolute seconds of a 2026 core against a 1994 40 MHz SPARC"),
]


# ---- helpers -----------------------------------------------------------------------------------
def _f(x) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.3g}"


def _iv(est, lo, hi) -> str:
    return f"{_f(est)} [{_f(lo)}, {_f(hi)}]" if math.isfinite(lo) and math.isfinite(hi) else _f(est)


def host_runs(path=None) -> dict:
    """:data:`HOST_RUNS5` read (``path`` another such file): ``{"curves": {(curve, P): {seed:
    speedup}}, "single": {seed: {"deriv_s", "fwd_s", "loop_s"}}, "k": k}``; {} where absent."""
    from reproduce.manycore_data import ROOT
    f = Path(path) if path else ROOT / HOST_RUNS5
    if not f.is_file():
        return {}
    d = json.loads(f.read_text())
    curves = {}
    for r in d["rows"]:
        curves.setdefault((r["curve"], int(r["P"])), {})[int(r["seed"])] = float(r["speedup"])
    return {"curves": curves, "single": {int(r["seed"]): r for r in d["single"]}, "k": float(d["k"])}


def _hs(host: dict, curve: str, P: int) -> dict:
    """{seed: speedup} the host measured for ``curve`` at P ({} if none)."""
    return host.get("curves", {}).get((curve, P), {})


def _hPs(host: dict, curve: str) -> list[int]:
    return sorted(P for c, P in host.get("curves", {}) if c == curve)


def _host_txt(d: dict) -> str:
    """A host point's per-seed values as 'median× (min–max)'."""
    v = list(d.values())
    return f"{np.median(v):.3g}× ({min(v):.3g}–{max(v):.3g})"


def _seeds(*ds: dict) -> list:
    """The seeds every dict holds."""
    return sorted(set.intersection(*(set(d) for d in ds))) if ds else []


def _per_run(sp, fig: str, P: int, profile: str) -> dict:
    g = sp[(sp.fig == fig) & (sp.P == P) & (sp.kind == "emulated") & (sp.profile == profile)]
    return {int(r): float(v) for r, v in zip(g.run, g.speedup)}


def _measured_here(sp, fig: str, P: int) -> dict:
    g = sp[(sp.fig == fig) & (sp.P == P) & (sp.kind == "measured")]
    return {int(r): float(v) for r, v in zip(g.run, g.speedup)}


def overall_from_speedups(r: float, k: float, s_deriv: float, s_fwd: float) -> float:
    """§3.2's overall speedup of one CG iteration from the two epochs' speedups: with
    D(1) = r·F(1), (D(1) + k·F(1)) / (D(1)/S_D + k·F(1)/S_F) = (r + k) / (r/S_D + k/S_F)."""
    return (r + k) / (r / s_deriv + k / s_fwd)


def amdahl(f: float, s: float) -> float:
    """§3.1: the whole iteration's speedup when a share ``f`` of it runs ``s`` times faster."""
    return 1.0 / ((1.0 - f) + f / s)


def implied_loop_speedup(overall: float, f: float) -> float:
    """:func:`amdahl` solved for the loop: the loop speedup that gives the whole iteration
    ``overall`` when the loop is a share ``f`` of it (nan where no loop speedup can: the
    rest alone, 1 − f, already takes longer than 1 / overall)."""
    d = 1.0 / overall - (1.0 - f)
    return f / d if d > 0 else math.nan


def k_of(results) -> float:
    """k, line-search Φ evaluations per CG iteration: the median over our training runs of
    their mean (as the comparison rows use it); the paper's 'about ten' without a run."""
    ev = [float(np.mean(r["evals"])) for t, r in results if t.name == "train" and r and r.get("evals")]
    return float(np.median(ev)) if ev else REPORTED["evals_per_iter"]


# ---- evidence ----------------------------------------------------------------------------------
def evidence(results, setup, profiles, *, cores: int, host: dict | None = None,
             sp=None, host_profile=None) -> dict:
    """{claim id: Evidence} from the run's task results (``results``: (Task, result) pairs as
    report.write receives them), the run's ``profiles`` (the first that is not the
    compute-only bound is the emulator's) and the host's per-seed figures (``host``, as
    :func:`host_runs` gives them, default :data:`HOST_RUNS5`; {} for none). A claim the host
    measured is judged on its seeds, paired by seed, with its emulated twin under the host's
    calibrated profile (``host_profile``, default ``reproduce.manycore.host_profile("xeon207x16")``)
    beside, at the host's configuration, over this run's seeds (module docstring)."""
    from reproduce import manycore

    H5 = host_runs() if host is None else host
    prof = next((p for p in profiles if p.name != P0.BOUND), profiles[0])
    here = f"profile {prof.name}"
    if sp is None:
        sp = P0.frames(results, setup, [prof])
    pairs = P0.validation_pairs(results, setup, profiles, cores)
    pmax_here = max((x["P"] for v in pairs.values() for x in v), default=1)
    beyond = (f"emulated beyond the validated range (measured here with a core each only at P ≤ {pmax_here})")
    k = k_of(results)
    lab = lambda cid: f"{NAME} {cid}"  # noqa: E731 - the bootstrap's stable label per claim
    runs = sorted({int(r) for r in sp[(sp.kind == "emulated") & (sp.profile == prof.name)].run}) if len(sp) else []
    ev = {}
    # the host's twin: this run's emulated tasks composed on the host's calibrated profile
    hprof = (host_profile or manycore.host_profile(HOST)) if H5 else prof
    sph = P0.frames(results, setup, [hprof]) if H5 else sp
    twin = f"profile {hprof.name}"
    tw = (f"emulated on {HOST}'s calibrated profile (compute measured here, scaled by its compute ratio; "
          f"its emulated-over-measured ratios are in the section 'Against many-core hosts')") if H5 else beyond

    def measured(est, lo, hi, n, reason, **kw):
        return C.Evidence(est, lo, hi, n=n, kind="measured", host=HOST, reason=reason, **kw)

    # -- seq-beats-net: Fig. 4 over Fig. 3 at the host's largest common P
    Ps = sorted(set(_hPs(H5, "fig4")) & set(_hPs(H5, "fig3")))
    Pe = Ps[-1] if Ps else min(16, setup.max_workers)
    e_est, e_lo, e_hi, e_n = C.paired_ratio(_per_run(sph, "fig4", Pe, hprof.name), _per_run(sph, "fig3", Pe, hprof.name),
                                            label=lab("seq-beats-net emulated"))
    m_est, m_lo, m_hi, m_n = C.paired_ratio(_measured_here(sp, "fig4", 2), _measured_here(sp, "fig3", 2),
                                            label=lab("seq-beats-net here"))
    em = C.Evidence(e_est, e_lo, e_hi, n=e_n, kind="emulated", host=twin,
                    beside=f"measured here at P = 2: {_iv(m_est, m_lo, m_hi)}, n = {m_n} paired by seed" if m_n else "",
                    reason=f"{tw}; fig4 over fig3 at P = {Pe}, paired by seed")
    if Ps:
        a, b = _hs(H5, "fig4", Pe), _hs(H5, "fig3", Pe)
        est, lo, hi, n = C.paired_ratio(a, b, label=lab("seq-beats-net host"))
        ev["seq-beats-net"] = C.fall_back(measured(
            est, lo, hi, n, f"{HOST} at P = {Pe}: derivative epoch {_host_txt(a)} against the parsing loop "
                            f"{_host_txt(b)}, {n} seeds, paired by seed"), em)
    else:
        ev["seq-beats-net"] = replace(em, reason=f"no host measurement; {em.reason}")

    # -- overall-17-6: composed per seed from the host's epoch speedups at 16 / 6
    d_ps = _hPs(H5, "fig4")
    f6 = _hs(H5, "fig5", REPORTED["best_fwd_workers"])
    Pd = min(REPORTED["best_deriv_workers"], d_ps[-1]) if d_ps and f6 else REPORTED["best_deriv_workers"]
    ov = []
    if setup.max_workers >= Pd:
        for t, res in results:
            if t.name == "seqpart" and t.kind == "emulated":
                (nd, w), (nf, _) = P0._bytes(res)["fig4"], P0._bytes(res)["fig5"]
                T1 = (P0.seqpart_emulated(res["deriv"]["1"], 1, nd, hprof, weight_bytes=w)
                      + k * P0.seqpart_emulated(res["fwd"]["1"], 1, nf, hprof, weight_bytes=w))
                TP = (P0.seqpart_emulated(res["deriv"][str(Pd)], Pd, nd, hprof, weight_bytes=w)
                      + k * P0.seqpart_emulated(res["fwd"]["6"], 6, nf, hprof, weight_bytes=w))
                ov.append(T1 / TP)
    o_est, o_lo, o_hi = C.over_seeds(ov, C.gmean, label=lab("overall-17-6 emulated")) if ov else (math.nan,) * 3
    em = C.Evidence(o_est, o_lo, o_hi, n=len(ov), kind="emulated", host=twin,
                    reason=(f"{tw}; {Pd} / 6" + (" (the host's; 17 / 6 is beyond its 16 cores)" if Pd != 17 else
                                                 " (the paper's)") + ", composed per seed with our D(1)/F(1)")
                    if ov else f"this run's emulated curves stop at P = {setup.max_workers} < {Pd}")
    single = H5.get("single", {})
    if d_ps and f6:
        d = _hs(H5, "fig4", Pd)
        r = {s: single[s]["deriv_s"] / single[s]["fwd_s"] for s in single}
        seeds = _seeds(d, f6, r)
        per = [overall_from_speedups(r[s], k, d[s], f6[s]) for s in seeds]
        est, lo, hi = C.over_seeds(per, C.gmean, label=lab("overall-17-6 host"))
        lin = C.gmean([overall_from_speedups(r[s], k, d[s] * REPORTED["best_deriv_workers"] / Pd, f6[s])
                       for s in seeds])
        e_d = _per_run(sp, "fig4", Pd, prof.name)
        gap = (f"; this run's emulator ({prof.name}) gives the derivative epoch {np.median(list(e_d.values())):.3g}× at "
               f"P = {Pd}, {np.median(list(e_d.values())) / np.median(list(d.values())):.2f}× the host's median, the "
               "gap the section 'Against many-core hosts' leaves unexplained (contention or real barriers, not "
               "established)" if e_d else "")
        rv = [r[s] for s in seeds]
        ev["overall-17-6"] = C.fall_back(measured(
            est, lo, hi, len(seeds),
            f"{HOST} measured the derivative epoch at P = {Pd} ({_host_txt(d)}; 17 not measured, the host has "
            f"16 cores) and the forward epoch at 6 ({_host_txt(f6)}); composed per seed "
            f"(r + k)/(r/S_D + k/S_F) with the seed's own D(1)/F(1) r ({np.median(rv):.3g}, {min(rv):.3g}–"
            f"{max(rv):.3g}) and our k = {k:.3g}; {len(seeds)} seeds; even linear scaling from {Pd} to 17 gives "
            f"{lin:.3g}; the host's is {est / REPORTED['overall_speedup_17_6']:.2f}× the paper's{gap}"), em)
    else:
        ev["overall-17-6"] = replace(em, reason=f"no host measurement; {em.reason}")

    # -- best-deriv-17: a choice over our emulated per-seed curve (no host measured 17)
    host_d = {P: _hs(H5, "fig4", P) for P in d_ps}
    hb = C.indistinguishable(prune(host_d), label=lab("best-deriv-17 host"), lower_is_better=False) if host_d else None
    hb_txt = (f"{HOST} measured P = {min(host_d)}..{max(host_d)} only: best {hb[0]}, not told apart from it "
              f"(paired by seed): {', '.join(map(str, hb[1]))}") if hb else ""
    ev["best-deriv-17"] = _choice(sp, "fig4", prof.name, REPORTED["best_deriv_workers"], setup, runs,
                                  label=lab("best-deriv-17"), here=here, beyond=beyond, beside=hb_txt,
                                  why_not_host=f"no host measured {REPORTED['best_deriv_workers']} processes "
                                               f"({HOST} has 16 cores)")

    # -- best-fwd-6: the host measured the forward epoch at 2..16
    host_f = {P: _hs(H5, "fig5", P) for P in _hPs(H5, "fig5")}
    em = _choice(sph, "fig5", hprof.name, REPORTED["best_fwd_workers"], setup, runs, label=lab("best-fwd-6"),
                 here=twin, beyond=tw, options=sorted(host_f) or None)
    if REPORTED["best_fwd_workers"] in host_f:
        hc = _choice_over(host_f, REPORTED["best_fwd_workers"], label=lab("best-fwd-6 host"), here=HOST,
                          kind="measured", beyond=f"{HOST} measured P = {min(host_f)}..{max(host_f)}, paired by seed")
        ev["best-fwd-6"] = C.fall_back(hc, em)
    else:
        ev["best-fwd-6"] = replace(em, reason=f"no host measured the forward epoch; {em.reason}")

    # -- radio-5: Amdahl with the loop share measured here and the loop speedup at 5 on the host
    Hn = NETS["radio"]["n_hidden"]
    radio = [(t, r) for t, r in results if t.name == "netpart" and t.kind == "emulated" and t.params["net"] == "radio"]
    fs = {t.params["seed"]: r["block_s"][str(Hn)] / (r["prep_s"] + k * r["fwd_s"] + r["block_s"][str(Hn)])
          for t, r in radio}
    f_est, f_lo, f_hi = C.mean(list(fs.values()), label=lab("radio-5 share")) if fs else (math.nan,) * 3
    em_r = {}
    if setup.max_workers >= 5:
        for t, r in radio:
            rest = (r["prep_s"] + k * r["fwd_s"]) * hprof.compute_scale(1, P0.KERNEL)
            em_r[t.params["run"]] = ((rest + P0.netpart_emulated(r, 1, Hn, hprof))
                                     / (rest + P0.netpart_emulated(r, 5, Hn, hprof)))
    r_est, r_lo, r_hi = C.over_seeds([em_r[s] for s in sorted(em_r)], C.gmean, label=lab("radio-5 emulated"))
    em = C.Evidence(r_est, r_lo, r_hi, n=len(em_r), kind="emulated", host=twin,
                    reason=f"{tw}; the radio loop emulated at 5 with the rest of the iteration measured, per seed")
    s5 = _hs(H5, "fig2", 5)
    rep = CLAIMS_BY_ID["radio-5"].reported
    seeds = _seeds(s5, fs)
    if seeds:
        est, lo, hi = C.over_seeds([amdahl(fs[s], s5[s]) for s in seeds], C.gmean, label=lab("radio-5 host"))
        ev["radio-5"] = C.fall_back(C.Evidence(
            est, lo, hi, n=len(seeds), kind="measured", host=f"{HOST} (loop speedup) + here (share)",
            method=f"{C.METHOD}; per seed, Amdahl of our loop share and {HOST}'s loop speedup of the same seed",
            reason=(f"{HOST} measured the radio loop at 5 processes {_host_txt(s5)}; the loop is "
                    f"{_iv(f_est, f_lo, f_hi)} of a CG iteration here (synthetic radio data, k = {k:.3g}); "
                    f"{len(seeds)} seeds; the host's is {est / rep:.2f}× the paper's; "
                    f"by the same law the paper's own figures imply a loop speedup at 5 of "
                    f"{implied_loop_speedup(rep, REPORTED['loop_share']):.3g}× with its loop share of "
                    f"{REPORTED['loop_share']:.0%} (why/implied_loop_speedup)"
                    + (f": even a loop share of 1 would give at most the loop's own speedup, {max(s5.values()):.3g}× "
                       "on the host's best seed, below the band"
                       if max(s5.values()) < C.band(CLAIMS_BY_ID["radio-5"])[0] else ""))), em)
    else:
        ev["radio-5"] = replace(em, reason=f"no host measurement; {em.reason}")

    # -- dip-7: S(7) / S(6) of the parsing loop
    d_est, d_lo, d_hi, d_n = C.paired_ratio(_per_run(sph, "fig3", 7, hprof.name), _per_run(sph, "fig3", 6, hprof.name),
                                            label=lab("dip-7 emulated"))
    construction = ("the emulated S(7)/S(6) is below 1 because the largest block is 4 units at 6 and at 7 "
                    "and 7 workers wait on one more peer at every barrier: the paper's own explanation, "
                    "restated")
    em = C.Evidence(d_est, d_lo, d_hi, n=d_n, kind="emulated", host=twin, construction=construction,
                    reason=f"{tw}; paired by seed; what would test the claim: at least {C.MIN_N} seeds measured "
                           "on a host with 7 or more cores")
    a, b = _hs(H5, "fig3", 7), _hs(H5, "fig3", 6)
    if a and b:
        est, lo, hi, n = C.paired_ratio(a, b, label=lab("dip-7 host"))
        ev["dip-7"] = C.fall_back(measured(
            est, lo, hi, n, f"{HOST} measured the parsing loop at 7 processes {_host_txt(a)} and at 6 "
                            f"{_host_txt(b)}; {n} seeds, paired by seed"), em)
    else:
        ev["dip-7"] = replace(em, reason=f"no host measurement; {em.reason}")

    # -- netpart-some-speedup: radio on 5, parsing on 6 and 7
    named = [("fig2", 5), ("fig3", 6), ("fig3", 7)]
    pts = [_hs(H5, c, P) for c, P in named]
    here2 = []
    for fig, net in (("fig2", "radio"), ("fig3", "parsing")):
        m = _measured_here(sp, fig, 2)
        est_, lo_, hi_ = C.over_seeds(list(m.values()), C.gmean, label=lab(f"netpart-some-speedup {fig}"))
        if m:
            here2.append(f"{net} {_iv(est_, lo_, hi_)}")
    per = [_per_run(sph, fig, P, hprof.name) for fig, P in named]
    both = _seeds(*per)  # seeds with all three configurations
    est_, lo_, hi_ = C.over_seeds([[d[s] for d in per] for s in both], C.least_gmean,
                                  label=lab("netpart-some-speedup emulated"))
    em = C.Evidence(est_, lo_, hi_, n=len(both), kind="emulated", host=twin,
                    beside=f"measured here at P = 2: {', '.join(here2)}" if here2 else "",
                    reason=f"{tw}; the smallest of the three speedups (each a geometric mean over seeds)")
    if all(pts):
        seeds = _seeds(*pts)
        est, lo, hi = C.over_seeds([[d[s] for d in pts] for s in seeds], C.least_gmean,
                                   label=lab("netpart-some-speedup host"))
        top = max(np.median(list(d.values())) for (c, P), d in H5["curves"].items() if c in ("fig2", "fig3"))
        ev["netpart-some-speedup"] = C.fall_back(measured(
            est, lo, hi, len(seeds),
            f"{HOST} measured the loop: " + ", ".join(f"{'radio' if c == 'fig2' else 'parsing'} on {P} {_host_txt(d)}"
                                                      for (c, P), d in zip(named, pts))
            + f"; {len(seeds)} seeds; the smallest of the three geometric means over seeds; 'limited': the host's "
            f"loop medians peak at {top:.3g}× (seq-beats-net sets them beside the sequence partition)"), em)
    else:
        ev["netpart-some-speedup"] = replace(em, reason=f"no host measurement; {em.reason}")

    # -- seq-upward: S(P_max) / S(2), the smaller of Figs 4 and 5, per seed
    tops = {f: _hPs(H5, f) for f in ("fig4", "fig5")}
    ok = all(ps and ps[0] == 2 and ps[-1] > 2 for ps in tops.values())
    Pm = {f: ps[-1] for f, ps in tops.items()} if ok else {"fig4": setup.max_workers, "fig5": setup.max_workers}
    gr = {}
    for f in ("fig4", "fig5"):
        top, two = _per_run(sph, f, Pm[f], hprof.name), _per_run(sph, f, 2, hprof.name)
        gr[f] = {s: top[s] / two[s] for s in top if s in two and two[s] > 0}
    seeds = _seeds(gr["fig4"], gr["fig5"])
    recs = [(gr["fig4"][s], gr["fig5"][s]) for s in seeds]
    u_est, u_lo, u_hi = (C.over_seeds(recs, C.least_gmean, label=lab("seq-upward emulated"))
                         if recs and min(Pm.values()) > 2 else (math.nan,) * 3)
    em = C.Evidence(u_est, u_lo, u_hi, n=len(recs) if min(Pm.values()) > 2 else 0, kind="emulated", host=twin,
                    reason=(f"{tw}; derivative epoch S({Pm['fig4']}) / S(2) and forward epoch S({Pm['fig5']}) / S(2), "
                            "each a geometric mean over seeds, the smaller"))
    if ok:
        hg = {f: {s: v / _hs(H5, f, 2)[s] for s, v in _hs(H5, f, Pm[f]).items() if s in _hs(H5, f, 2)}
              for f in ("fig4", "fig5")}
        seeds = _seeds(hg["fig4"], hg["fig5"])
        est, lo, hi = C.over_seeds([(hg["fig4"][s], hg["fig5"][s]) for s in seeds], C.least_gmean,
                                   label=lab("seq-upward host"))
        ev["seq-upward"] = C.fall_back(measured(
            est, lo, hi, len(seeds),
            f"{HOST}: " + "; ".join(f"{'derivative' if f == 'fig4' else 'forward'} epoch S({Pm[f]}) / S(2) "
                                    f"{C.gmean(list(hg[f].values())):.3g}" for f in ("fig4", "fig5"))
            + f" (geometric means over {len(seeds)} seeds, paired by seed), the smaller; where the curves peak: "
            "best-deriv-17, best-fwd-6"), em)
    else:
        ev["seq-upward"] = replace(em, reason=f"no host measurement; {em.reason}")

    # -- loop-share: measured here, per seed
    vec = [r for t, r in results if t.name == "vectorise" and r]
    c = str(setup.chunk)
    sh = [r["loop_s"] / (r["forward_deriv_s"][c] + k * r["fwd_s"]) for r in vec]
    sh10 = [r["loop_s"] / (r["forward_deriv_s"][c] + REPORTED["evals_per_iter"] * r["fwd_s"]) for r in vec]
    l_est, l_lo, l_hi = C.mean(sh, label=lab("loop-share")) if sh else (math.nan,) * 3
    hsh = [x["loop_s"] / (x["deriv_s"] + H5["k"] * x["fwd_s"]) for x in single.values()]
    h_txt = (f"{HOST} measured {_iv(*C.mean(hsh, label=lab('loop-share host')))}, {len(hsh)} seeds (its k = "
             f"{H5['k']:.3g})" if hsh else "")
    ev["loop-share"] = C.Evidence(
        l_est, l_lo, l_hi, n=len(sh), kind="measured", host="here", beside=h_txt,
        reason=(f"the loop over (derivative epoch + k = {k:.3g} forward epochs), row sec2.1/loop_share; ours is "
                f"{l_est / REPORTED['loop_share']:.2f}× 0.8; with the paper's k = 10 it would be {np.mean(sh10):.3g}")
        if sh else "no vectorise run")

    # -- epoch-times: not comparable, our seconds for the record
    dv = [r["forward_deriv_s"][c] for r in vec]
    t_est, t_lo, t_hi = C.mean(dv, label=lab("epoch-times")) if dv else (math.nan,) * 3
    fv = [r["fwd_s"] for r in vec]
    ev["epoch-times"] = C.Evidence(
        t_est, t_lo, t_hi, n=len(dv), kind="measured", host="here",
        reason=(f"ours {t_est:.3g} s and {np.mean(fv):.3g} s (forward) on one core here, numpy, one thread"
                if dv else "no vectorise run"))
    return ev


def prune(opts: dict) -> dict:
    """``opts`` (option → {seed: value}, higher is better) without the options below the best
    on every seed they share with it (two or more): every bootstrap resample of such paired
    differences is negative, so reproduce.claims.indistinguishable tells them apart anyway.
    Leaving them out skips their (slow) bootstrap; the best and every other option's interval
    stay exactly what it gives on ``opts`` (its labels name the pair only)."""
    means = {P: float(np.mean(list(d.values()))) for P, d in opts.items()}
    top = max(means, key=means.get)
    out = {}
    for P, d in opts.items():
        shared = set(d) & set(opts[top])
        if P == top or len(shared) < 2 or any(d[s] >= opts[top][s] for s in shared):
            out[P] = d
    return out


def _choice(sp, fig: str, profile: str, choice: int, setup, runs, *, label: str, here: str, beyond: str,
            beside: str = "", why_not_host: str = "", options=None) -> C.Evidence:
    """A best-worker-count choice over our emulated per-seed curve, P = 1..max_workers (or
    the worker counts ``options``): :func:`_choice_over` on it. Without the paper's choice
    among our options, no estimate (inconclusive), and the reason says why."""
    opts = {P: _per_run(sp, fig, P, profile) for P in (options or range(1, setup.max_workers + 1))}
    opts = {P: d for P, d in opts.items() if d}
    runs = sorted(set().union(*(set(d) for d in opts.values()))) if opts else runs
    pre = f"{why_not_host}; " if why_not_host else ""
    if choice not in opts:
        return C.Evidence(None, n=len(runs), kind="emulated", host=here, beside=beside,
                          best=max(opts, key=lambda P: np.mean(list(opts[P].values()))) if opts else None,
                          reason=f"{pre}this run's emulated curve stops at P = {setup.max_workers} < {choice}")
    return _choice_over(opts, choice, label=label, here=here, beyond=f"{pre}{beyond}", beside=beside)


def _choice_over(opts: dict, choice: int, *, label: str, here: str, beyond: str, beside: str = "",
                 kind: str = "emulated") -> C.Evidence:
    """The paper's option ``choice`` against our best of ``opts`` (P → {seed: speedup}, higher
    is better): its shortfall (reproduce.claims.shortfall, paired by seed) and the options
    not told apart from the best. With one run, no estimate (inconclusive)."""
    runs = sorted(set().union(*(set(d) for d in opts.values())))
    if len(runs) < 2:
        best = max(opts, key=lambda P: np.mean(list(opts[P].values())))
        return C.Evidence(None, n=len(runs), kind=kind, host=here, beside=beside, best=best,
                          reason=f"{beyond}; one run: no interval to tell options apart")
    best, cands = C.indistinguishable(prune(opts), label=label, lower_is_better=False)
    est, glo, ghi = C.shortfall(opts, choice, label=label, lower_is_better=False)
    return C.Evidence(est, glo, ghi, n=len(runs), kind=kind, host=here, candidates=cands, beside=beside,
                      best=best, method=f"{C.METHOD}; the shortfall of the paper's option from our best is "
                                        "a ratio of means paired by seed",
                      reason=(f"{beyond}; best {best} at {np.mean(list(opts[best].values())):.3g}×, "
                              f"{choice} at {np.mean(list(opts[choice].values())):.3g}×; difference to the "
                              f"best holds 0 for: {', '.join(map(str, cands))}"))


CLAIMS_BY_ID = {c.id: c for c in CLAIMS}
