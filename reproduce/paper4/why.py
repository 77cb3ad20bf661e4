"""paper4's why (issue "The why behind every verdict"): the figures its claims rest on, each
split into factors that multiply to it (reproduce/why.py), per timing repetition or seed:

- a measured speedup at P (the 16-core host's runs behind the Table 2–3 claims; this
  machine's own at P ≤ its cores) = (serial time ÷ time outside the collectives) × (share of
  the pass time outside the collectives): how far compute alone scales, and what the exchange
  (with its wait for the slowest worker) takes. The time outside is the pass time ×
  (1 − the communication share that tasks.py ``node_measured`` records);
- an emulated speedup (this run's profile, and the claims' host's) the same way, its time
  taken apart into compute, straggler wait and allgather (:func:`reproduce.why.emulated_parts`);
- the gap to the paper at P = 16, paper ÷ ours, = (a model at the paper's width 64,000 ÷ at
  ours, 2,048) × the rest: how much the width alone explains by the §6 formula (and by our
  implementation's blocked model, blocked.py), with the host's calibrated
  constants; every model value is modeled, none measured;
- the widest-net ablation (setup.py ``wide_width``): the emulated split at P = 16 at the widest
  width this machine holds, beside the sweep's at 2,048 on the same profiles;
- the §3 width claim's ratio S(2,048) ÷ S(132) at P = 2 = compute-alone ratio × share ratio;
- Table 1's n = 132 column term by term: what the paper's printed values imply for the §6.2
  formula's terms (the communication term; the P-independent numerator).

``compute`` gives them and ``rows`` the comparison rows (table ``why``); why_text.py the report's
Why section and the sentences each claim's reason takes from them."""
from __future__ import annotations

import json
import math
from pathlib import Path

from reproduce.paper4.model import NodeModel
from reproduce import claims as C
from reproduce import manycore_data
from reproduce import report as R
from reproduce import why as W
from reproduce.paper4 import claims as P4C
from reproduce.paper4.blocked import blocked_time
from reproduce.paper4.setup import NAME, PASSES, TABLE1, TABLE1_N
from reproduce.paper4.tasks import models_for

SPLIT = ("compute_speedup", "compute_share", "speedup")
GAP = ("gap", "width_factor", "rest")
WIDTH = ("compute_speedup_ratio", "compute_share_ratio", "speedup_ratio")
PARTS = ("compute", "straggler_wait", "allgather")
P_CLAIM = 16  # the P of the Table 2–3 claims and of conclusion-linear
CLAIM_OF = {"forward": "table2-p16", "forward_backward": "table3-p16"}
KERNEL = "gemv"  # report.py KERNEL: the emulations' reference kernel


# ---- measured: compute speedup × share outside the collectives --------------------------------
def split_record(serial_s: float, time_s: float, comm_share: float) -> tuple:
    """(serial ÷ time outside the collectives, share outside, serial ÷ time): the first two
    multiply to the third."""
    inside = 1.0 - comm_share
    return serial_s / (time_s * inside), inside, serial_s / time_s


def host_run_rows(path=None) -> dict | None:
    """{(passes, width, P): the host's runs in run order} from :data:`claims.HOST_RUNS5`
    (serial_s, time_per_pass_s, comm_share per run); None where the file is absent."""
    f = Path(path) if path else manycore_data.ROOT / P4C.HOST_RUNS5
    if not f.exists():
        return None
    out: dict = {}
    for r in json.loads(f.read_text())["rows"]:
        out.setdefault((r["passes"], int(r["width"]), int(r["P"])), []).append(r)
    return {k: sorted(v, key=lambda r: r["run"]) for k, v in out.items()}


def host_calibration(path=None) -> dict | None:
    """The calibration (t_a per width, t_startup and t_data per communicator) of the host run
    behind :data:`claims.HOST_RUNS5`, from the summary.json beside it; None where absent."""
    f = (Path(path) if path else manycore_data.ROOT / P4C.HOST_RUNS5).with_name("summary.json")
    if not f.exists():
        return None
    cal = json.loads(f.read_text())["meta"]["calibration"]
    return {"exchange": cal["exchange"], "t_a": {int(k): v for k, v in cal["t_a"].items()}}


def _host_label(passes: str, width: int, P: int) -> str:
    # at the claims' width and P the speedup's interval is the claim's, draw for draw
    if width == P4C.HOST_WIDTH and P == P_CLAIM:
        return f"{NAME} {CLAIM_OF[passes]}"
    return f"{NAME} why host {passes} {width} {P}"


def host_splits(raw: dict, width: int = P4C.HOST_WIDTH) -> list[dict]:
    """Per passes and P: the host's measured speedup split, over its runs at ``width``."""
    out = []
    for (ps, w, P), rs in sorted(raw.items()):
        if w != width:
            continue
        recs = [split_record(r["serial_s"], r["time_per_pass_s"], r["comm_share"]) for r in rs]
        out.append({"source": P4C.HOST, "kind": "measured", "passes": ps, "width": w, "P": P,
                    "runs": len(recs), **W.factor_intervals(recs, SPLIT, label=_host_label(ps, w, P))})
    return out


def here_splits(runs) -> list[dict]:
    """The same split of this machine's measured runs (report.py ``runs_frame``), per width,
    passes and P."""
    if runs is None or len(runs) == 0:
        return []
    me = runs[runs.kind == "measured"]
    out = []
    for (w, ps, P), g in me.groupby(["width", "passes", "nodes"]):
        recs = [split_record(r.serial_s, r.time_s, r.comm_share) for r in g.itertuples()]
        out.append({"source": "here", "kind": "measured", "passes": ps, "width": int(w), "P": int(P),
                    "runs": len(recs),
                    **W.factor_intervals(recs, SPLIT, label=f"{NAME} why here {ps} {w} {P}")})
    return out


# ---- emulated: the same split, the time taken apart ------------------------------------------
def emulated_record(e: dict, P: int, profile) -> tuple[tuple, dict]:
    """(split record, {part: seconds}) of one emulated run (tasks.py ``node_emulated``) on
    ``profile``: the parts sum to report.py ``emulated_time_per_pass``; the serial time is put
    on the profile's machine as runs_frame puts it."""
    parts = W.emulated_parts(profile, P, e["compute_per_pass_s"],
                             [("allgather", int(b), c) for b, c in e["exchanges"].items()], kernel=KERNEL)
    t = sum(parts.values())
    s1 = e["serial_s"] * profile.compute_scale(1, KERNEL)
    return (s1 / parts["compute"], parts["compute"] / t, s1 / t), parts


def emulated_splits(results, profiles: dict, width: int = P4C.HOST_WIDTH, task: str = "sweep") -> list[dict]:
    """Per profile ({name: MachineProfile}), passes and P ≥ 2: the emulated speedup split, and
    the mean over runs of each part of the emulated time (s), over this run's emulated runs at
    ``width`` in task order (seeds ascending); ``task``: the sweep's, or the widest-net
    ablation's ("wide", tasks.py)."""
    by: dict = {}
    for t, res in results:
        if t.name != task or res is None or t.params["width"] != width:
            continue
        for P, e in res["emulated"].items():
            if int(P) > 1:
                by.setdefault((t.params["passes"], int(P)), []).append(e)
    out = []
    for name, prof in profiles.items():
        for (ps, P), es in sorted(by.items()):
            recs, parts = zip(*(emulated_record(e, P, prof) for e in es))
            here = name == "here"
            label = (f"{NAME} here-emulated {ps} {width} {P}" if here  # claims._here_emulated's
                     else f"{NAME} why {name} {ps} {width} {P}")
            out.append({"source": prof.name, "kind": "emulated", "passes": ps, "width": width, "P": P,
                        "runs": len(recs), **W.factor_intervals(recs, SPLIT, label=label),
                        "parts": {k: C.mean([p.get(k, 0.0) for p in parts], label=f"{label} {k}")
                                  for k in PARTS}})
    return out


# ---- the gap to the paper: the width by a model × the rest -----------------------------------
def model_speedups(cal: dict, setup, passes: str, P: int, width: int, backend: str = "local") -> dict:
    """{model: (speedup, communication share or nan)} at ``width`` and P, modeled with ``cal``'s
    constants (t_a at that width, or the widest calibrated): ``s6`` the §6 formula as printed
    (forward, or forward + backward), ``blocked`` our implementation's model."""
    mods = models_for(cal, width, setup)
    m = mods.get(backend) or mods["inprocess"]
    f = m.forward_speedup if passes == "forward" else m.forward_backward_speedup
    sizes = setup.sizes(width)
    t1 = blocked_time(sizes, 1, passes, t_a=m.t_a, t_startup=0, t_data=0)
    tp = blocked_time(sizes, P, passes, t_a=m.t_a, t_startup=m.t_startup, t_data=m.t_data)
    tc = blocked_time(sizes, P, passes, t_a=m.t_a, t_startup=0, t_data=0)
    return {"s6": (f(width, P, setup.layers), math.nan), "blocked": (t1 / tp, 1 - tc / tp)}


def gap_splits(raw: dict, cal: dict, setup, *, cal_source: str) -> list[dict]:
    """Per passes and model at P = 16: (paper ÷ ours) = (model at the paper's width ÷ at ours)
    × the rest, per host run (the claims' label: the gap's interval is the claim's, inverted)."""
    out = []
    for ps in PASSES:
        rs = raw.get((ps, P4C.HOST_WIDTH, P_CLAIM))
        if not rs:
            continue
        rep = P4C.PAPER[ps][P_CLAIM]
        at = {w: model_speedups(cal, setup, ps, P_CLAIM, w) for w in (P4C.HOST_WIDTH, setup.paper_width)}
        for model in ("s6", "blocked"):
            ours_m, paper_m = at[P4C.HOST_WIDTH][model], at[setup.paper_width][model]
            wf = paper_m[0] / ours_m[0]
            recs = [(rep * r["time_per_pass_s"] / r["serial_s"], wf,
                     rep * r["time_per_pass_s"] / r["serial_s"] / wf) for r in rs]
            out.append({"claim": CLAIM_OF[ps], "passes": ps, "P": P_CLAIM, "model": model, "runs": len(recs),
                        "reported": rep, "at_ours": ours_m, "at_paper": paper_m, "cal_source": cal_source,
                        **W.factor_intervals(recs, GAP, label=f"{NAME} {CLAIM_OF[ps]}")})
    return out


# ---- §3: the wide net over the narrow at P = 2, here ------------------------------------------
def width_split(runs, cal: dict, setup) -> dict | None:
    """S(widest) ÷ S(narrowest) at P = 2, measured here, per seed (claims._width's pairing and
    label, so its interval is the claim's) = compute-speedup ratio × share ratio, each the
    geometric mean over both passes; with the §6 and blocked models' ratio (this run's constants)."""
    if runs is None or len(runs) == 0:
        return None
    me = runs[(runs.kind == "measured") & (runs.nodes == 2)]
    if me.empty or me.width.nunique() < 2:
        return None
    wide, narrow = int(me.width.max()), int(me.width.min())
    recs = []
    for _, g in me.groupby("seed"):
        per = []
        for ps in PASSES:
            a, b = g[(g.passes == ps) & (g.width == wide)], g[(g.passes == ps) & (g.width == narrow)]
            if len(a) and len(b):
                x, y = (split_record(r.serial_s, r.time_s, r.comm_share) for r in (a.iloc[0], b.iloc[0]))
                per.append(tuple(u / v for u, v in zip(x, y)))
        if per:
            recs.append(tuple(C.gmean([p[k] for p in per]) for k in range(3)))
    models = {}
    for model in ("s6", "blocked"):
        models[model] = C.gmean([model_speedups(cal, setup, ps, 2, wide, backend="local")[model][0]
                                 / model_speedups(cal, setup, ps, 2, narrow, backend="local")[model][0]
                                 for ps in PASSES])
    return {"wide": wide, "narrow": narrow, "seeds": len(recs), "models": models,
            **W.factor_intervals(recs, WIDTH, label=f"{NAME} sec3-width")}


# ---- Table 1, n = 132, term by term ------------------------------------------------------------
def table1_terms(base: str, n: int = TABLE1_N[0], L: int = 7) -> list[dict]:
    """Per P: the §6.2 formula (t = 1), its value with free communication (log P term 0, the
    most any communication term allows) and the numerator offset X the paper's printed value
    implies with the formula's denominator: S = P·(2n+2+X)/den, X ∈ [lo, hi] over the
    paper's rounding (±0.005); the formula's X is 9L/(n(L−1))."""
    m = NodeModel(1.0, 1.0, 1.0, base)
    col = 1 + TABLE1_N.index(n)
    num = 2 * n + 2 + 9 * L / (n * (L - 1))  # §6.2's numerator (reproduce/paper4/model.py)
    out = []
    for r in TABLE1:
        P, s = r[0], r[col]
        f = m.aggregate_speedup(n, P, L)
        den = P * num / f
        lo, hi = ((x * den / P - (2 * n + 2)) for x in (s - 0.005, s + 0.005))
        out.append({"P": P, "paper": s, "formula": f, "free_comm": P * num / (2 * n + 2 + 9 / (L - 1)),
                    "offset": (s * den / P - (2 * n + 2), lo, hi), "formula_offset": 9 * L / (n * (L - 1))})
    return out


def table1_split() -> dict:
    """The n = 132 column term by term in every base, the claim's base first; ``common``: the
    offsets every P ≥ 2 allows (None if none), ``p1``: P = 1's."""
    best = P4C.table1_gap(TABLE1_N[0])[1]
    out = {"base": best, "bases": {}}
    for base in [best] + [b for b in ("2", "e", "10") if b != best]:
        t = table1_terms(base)
        lo = max(x["offset"][1] for x in t if x["P"] > 1)
        hi = min(x["offset"][2] for x in t if x["P"] > 1)
        out["bases"][base] = {"terms": t, "common": (lo, hi) if lo <= hi else None, "p1": t[0]["offset"]}
    return out


# ---- all of it -----------------------------------------------------------------------------------
def compute(results, *, setup, runs, cal: dict, profile, host_profile=None, raw=None,
            host_cal=None) -> dict:
    """Every decomposition of this run (see the module docstring). ``profile``: this run's
    emulation profile; ``host_profile``: the claims' host's (manycore.host_profile);
    ``raw``/``host_cal``: the host's runs and calibration (default: the committed files)."""
    raw = host_run_rows() if raw is None else raw
    hc = host_calibration() if host_cal is None else host_cal
    profs = {"here": profile, **({P4C.HOST: host_profile} if host_profile is not None else {})}
    return {"host": host_splits(raw) if raw else [], "here": here_splits(runs),
            "emulated": emulated_splits(results, profs),
            # the widest-net ablation beside the sweep's width (setup.py wide_width)
            "wide": emulated_splits(results, profs, width=setup.wide_width, task="wide")
            if setup.wide_width else [],
            "gap": gap_splits(raw, hc or cal, setup, cal_source=f"{P4C.HOST}'s run" if hc else "this run's")
            if raw and (hc or cal.get("t_a")) else [],
            "width": width_split(runs, cal, setup) if cal.get("t_a") else None,
            "table1": table1_split(), "paper_width": setup.paper_width, "wide_width": setup.wide_width}


# ---- comparison rows ------------------------------------------------------------------------------
_SPLIT_NOTES = {
    "compute_speedup": "serial time / time outside the collectives (pass time × (1 − communication "
                       "share); waiting inside the allgather counts as communication)",
    "compute_share": "share of the pass time outside the collectives",
    "speedup": "serial / node-parallel time per pass = compute_speedup × compute_share"}
_GAP_NOTES = {
    "gap": "the paper's speedup (width 64,000) / ours (width 2,048), per host run",
    "width_factor": "the model's speedup at width 64,000 / at 2,048, calibrated constants (modeled)",
    "rest": "gap / width_factor: what the model's width effect leaves"}
_WIDTH_NOTES = {
    "compute_speedup_ratio": "compute speedup, wide / narrow net",
    "compute_share_ratio": "share of the pass time outside the collectives, wide / narrow",
    "speedup_ratio": "speedup, wide / narrow = the two factors' product (the sec3-width claim)"}
_ALL = "geometric mean over {n} run(s), 95 % bootstrap over them, one resample for the three"


def _cond(x: dict) -> str:
    return R.condition(nodes=x["P"], width=x["width"], passes=x["passes"],
                       host=x["source"] if x["kind"] == "measured" and x["source"] != "here" else None,
                       profile=x["source"] if x["kind"] == "emulated" else None)


def rows(w: dict) -> list[dict]:
    """Table ``why`` of comparison.csv: no paper values (the paper decomposes nothing; Table 1's
    printed values appear in the notes)."""
    out = []
    for x in w["host"] + w["here"] + w["emulated"] + w.get("wide", []):
        cond = _cond(x)
        for f in SPLIT:
            out.append(R.row(NAME, W.TABLE, f, cond, "x" if f != "compute_share" else "fraction",
                             ours=x[f][0], low=x[f][1], high=x[f][2], kind=x["kind"], runs=x["runs"],
                             note=f"{_SPLIT_NOTES[f]}; {_ALL.format(n=x['runs'])}"))
        for k, (est, lo, hi) in x.get("parts", {}).items():
            out.append(R.row(NAME, W.TABLE, f"emulated_{k}_s", cond, "s", ours=est, low=lo, high=hi,
                             kind="emulated", runs=x["runs"],
                             note=f"mean over runs of the emulated pass's {k.replace('_', ' ')} "
                                  "(reproduce/why.py emulated_parts; the parts sum to the emulated time)"))
    for g in w["gap"]:
        cond = R.condition(nodes=g["P"], passes=g["passes"], model=g["model"], width=P4C.HOST_WIDTH,
                           host=P4C.HOST)
        for f in GAP:
            out.append(R.row(NAME, W.TABLE, f, cond, "x", ours=g[f][0], low=g[f][1], high=g[f][2],
                             kind="modeled" if f == "width_factor" else "measured", runs=g["runs"],
                             note=f"{_GAP_NOTES[f]}; model {_MODELS[g['model']]}, constants from "
                                  f"{g['cal_source']} calibration; {_ALL.format(n=g['runs'])} ({P4C.HOST})"))
        for wd, v in ((P4C.HOST_WIDTH, g["at_ours"]), (w["paper_width"], g["at_paper"])):
            out.append(R.row(NAME, W.TABLE, "model_speedup", R.condition(
                nodes=g["P"], passes=g["passes"], model=g["model"], width=wd), "x", ours=v[0],
                kind="modeled", note=f"{_MODELS[g['model']]}, constants from {g['cal_source']} calibration"
                + (f"; communication share {v[1]:.0%}" if math.isfinite(v[1]) else "")))
    x = w["width"]
    if x:
        cond = R.condition(nodes=2, width=f"{x['wide']}/{x['narrow']}")
        for f in WIDTH:
            out.append(R.row(NAME, W.TABLE, f, cond, "x", ours=x[f][0], low=x[f][1], high=x[f][2],
                             kind="measured", runs=x["seeds"],
                             note=f"{_WIDTH_NOTES[f]}; geometric mean over both passes and {x['seeds']} "
                                  "seed(s) paired, 95 % bootstrap over seeds, one resample for the three"))
        for model, v in x["models"].items():
            out.append(R.row(NAME, W.TABLE, "speedup_ratio", cond + f";model={model}", "x", ours=v,
                             kind="modeled", note=f"{_MODELS[model]}, this run's constants; geometric "
                                                  "mean over both passes"))
    for base, b in w["table1"]["bases"].items():
        for t in b["terms"]:
            est, lo, hi = t["offset"]
            out.append(R.row(NAME, W.TABLE, "table1_numerator_offset",
                             R.condition(nodes=t["P"], n=TABLE1_N[0], L=7, log=base), "value",
                             ours=est, low=lo, high=hi, kind="modeled",
                             note=f"X in S = P·(2n+2+X)/den that gives the paper's {t['paper']:.2f} with "
                                  f"the formula's denominator (interval: the paper's rounding ±0.005); the "
                                  f"formula's X = 9L/(n(L−1)) = {t['formula_offset']:.3f}; with free "
                                  f"communication the formula gives {t['free_comm']:.3f}"))
    return out


_MODELS = {"s6": "§6 formula as printed (reproduce/paper4/model.py NodeModel; log base of setup.py)",
           "blocked": "our implementation's blocked model (reproduce/paper4/blocked.py)"}
