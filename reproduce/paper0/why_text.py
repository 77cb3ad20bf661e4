"""paper0's why in words (issue "The why behind every verdict"): the report's Why section and
the sentences each not-reproduced or inconclusive claim's reason takes, every figure from
the splits of reproduce/paper0/why.py ``compute``."""
from __future__ import annotations

import math

from reproduce import why as W
from reproduce.paper0.setup import REPORTED
from reproduce.paper0.why import FIG, PAPER_DERIV_SHARE


def _f(x: tuple, fmt: str = ".2f") -> str:
    return W.ci(*x, fmt=fmt)


def _ms(parts: dict) -> str:
    """compute + straggler wait + collectives, in ms (means over seeds)."""
    coll = sum(v[0] for p, v in parts.items() if p not in ("compute", "straggler_wait"))
    return f"{parts['compute'][0] * 1e3:.3g} + {parts['straggler_wait'][0] * 1e3:.3g} + {coll * 1e3:.2g}"


def _sync(e: dict) -> tuple[float, float]:
    """(synchronisation's share of the emulated time, the collectives' share), means over seeds."""
    tot = sum(v[0] for v in e["parts"].values())
    coll = sum(v[0] for p, v in e["parts"].items() if p not in ("compute", "straggler_wait"))
    return 1 - e["parts"]["compute"][0] / tot, coll / tot


def _epoch(w: dict, fig: str, profile: str, P: int) -> dict | None:
    return next((e for e in w["epochs"] if (e["fig"], e["profile"], e["P"]) == (fig, profile, P)), None)


def _rest(p: dict) -> tuple:
    """The factors other than P of a peak ratio: its speed-up ratio ÷ the P ratio."""
    q = p["workers"][0]
    return tuple(x / q for x in p["speedup"])


def _biggest(x: dict) -> str:
    """The factor other than P that moves its figure most (largest |log|)."""
    return max(("work", "balance", "contention", "compute_share"), key=lambda f: abs(math.log(x[f][0])))


def _words(f: str) -> str:
    return f.replace("_", " ")


def peak_sentence(p: dict, w: dict) -> str:
    """Why our peak is not the paper's count, in words, from the peak split."""
    rest, P, P0_ = _rest(p), p["P"], p["paper_P"]
    ep = FIG[p["fig"]][1]
    s = (f"our {ep} curve on {p['profile']} peaks at {P}, not {P0_}: from {P0_} to {P} workers the factors other "
         f"than P multiply to {_f(rest)}")
    if P > P0_:
        s += f"; for {P0_} to be the peak they would have to fall below {P0_}/{P} = {P0_ / P:.2f}"
    b = _biggest(p)
    s += f"; the one that moves most is {_words(b)}, ×{_f(p[b])}"
    at = [e for e in (_epoch(w, p["fig"], p["profile"], x) for x in (P0_, P)) if e]
    if at:
        sync = [_sync(e) for e in at]
        wait = any(e["parts"]["straggler_wait"][0] > 0 for e in at)
        s += (f". Synchronisation is {_pct(min(a for a, _ in sync), max(a for a, _ in sync))} of the emulated "
              f"epoch at {P0_} and {P} (" + (f"collectives {_pct(max(c for _, c in sync))} at most, the rest the "
                                             "straggler wait" if wait else "all of it collectives; the profile "
                                             "charges no straggler wait") + ")"
              + (": it does not dominate the computation there" if max(a for a, _ in sync) < 0.5 else ""))
    return s


def _pct(a: float, b: float | None = None) -> str:
    """a share as a percentage (one decimal below 10 %), or the range a–b where they differ."""
    fa, fb = (f"{x:.0%}" if x >= 0.1 else f"{x:.1%}" for x in (a, a if b is None else b))
    return fa if fa == fb else f"{fa}–{fb}"


def unexplained(p: dict) -> str:
    """What the peak split leaves unexplained."""
    if _biggest(p) == "work":
        return (f"why the workers' summed compute (each timed alone, every P timed separately) differs between "
                f"{p['paper_P']} and {p['P']} is unexplained (not profiled)")
    return (f"what placed the paper's peak at {p['paper_P']} is unexplained: the paper names synchronisation "
            "overhead and gives no synchronisation times")


def radio_sentence(x: dict) -> str:
    return (f"ours ÷ the paper's 22/8 = {_f(x['ratio_to_paper'])} on {x['profile']} = {_f(x['from_share'])} from our "
            f"loop share ({_f(x['loop_share'])} against 0.8) × {_f(x['from_part_speedup'])} from our loop speed-up at "
            f"5 ({_f(x['loop_speedup'])} against the {x['implied']:.3g} the paper's figures imply at 0.8)")


def loop_sentence(x: dict, fx: dict | None) -> str:
    s = (f"the radio loop's {x['profile']} speed-up at {x['P']}, {_f(x['speedup'])}, = {x['units'][0]:.0f} units × "
         f"{_f(x['per_unit'])} per-unit time × {_f(x['contention'])} contention × {_f(x['compute_share'])} compute share")
    if fx:
        phi = fx["fixed_share"]
        s += (f"; a fit t(k) = a + b·k puts {_f(phi)} of the {fx['H']}-unit loop in a part fewer units do not shrink "
              f"({fx['fixed_us_per_step'][0]:.0f} µs per pattern step against {fx['unit_us_per_step'][0]:.1f} µs per "
              f"hidden unit), which caps the loop's compute-only speed-up at any P at 1/{phi[0]:.2f} = {1 / phi[0]:.2f}×")
    return s


def overall_sentence(o: dict) -> str:
    return (f"ours ÷ 8.96 = {_f(o['ratio_to_paper'])} = {_f(o['from_weights'])} from the iteration's weights (the "
            f"derivative epochs are {_f(o['deriv_share'])} of a 1-worker iteration here, {PAPER_DERIV_SHARE:.3f} by "
            f"the paper's 417 s, 11 s and k = 10) × {_f(o['from_epoch_speedups'])} from the epoch speed-ups "
            f"(S_D({o['Pd']}) = {_f(o['deriv_speedup'])}, S_F({o['Pf']}) = {_f(o['fwd_speedup'])} on {o['profile']})")


def share_sentence(s: dict, k: float) -> str:
    need = REPORTED["loop_share"] / PAPER_DERIV_SHARE
    return (f"ours ÷ 0.8 = {_f(s['ratio_to_paper'])} = {_f(s['from_loop_over_deriv'])} from the loop's share of a "
            f"derivative epoch ({_f(s['loop_over_deriv'])} against the {need:.3f} that 0.8 needs) × "
            f"{_f(s['from_deriv_over_fwd'])} from D ÷ F ({_f(s['deriv_over_fwd'], '.3g')} against 37.9) × "
            f"{_f(s['from_k'])} from k ({k:.3g} against 10). By §3.2's own NETtalk figures a derivative epoch is "
            f"{PAPER_DERIV_SHARE:.3f} of an iteration, so over 80 % of an iteration in the loop would need the loop "
            "to take longer than the whole derivative epoch; §2.1 names no net for its 80 %")


def section(w: dict) -> list[str]:
    """The report's "## Why" section (issue "The why behind every verdict")."""
    if not (w["epochs"] or w["loops"] or w["share"]):
        return []
    L = W.heading(W.FACTORS.format(per="seed", over=" over seeds") + " (reproduce/paper0/why.py).")
    if w["epochs"]:
        L += ["**An epoch's emulated speed-up = P × work × balance × contention × compute share** (§2.2, Figs 4–5). "
              "Work: one worker's compute ÷ the P workers' total, each timed alone; balance: the workers' mean "
              "÷ the slowest's; contention: the profile's compute scale at 1 ÷ at P; compute share: compute ÷ the "
              "emulated epoch time, whose parts follow (means over seeds).", ""]
        L += W.table(["epoch", "profile", "P", "speed-up", "= P", "× work", "× balance", "× contention",
                      "× compute share", "ms: compute + straggler wait + collectives", "seeds"],
                     [[FIG[e["fig"]][1], e["profile"], f"{e['P']} ({e['role']})", _f(e["speedup"]), e["P"],
                       _f(e["work"]), _f(e["balance"]), _f(e["contention"]), _f(e["compute_share"]),
                       _ms(e["parts"]), e["seeds"]] for e in w["epochs"]]) + [""]
    if w["peaks"]:
        L += ["**Our peak ÷ the paper's count**: each factor at our peak over at the paper's P, per seed.", ""]
        L += W.table(["epoch", "profile", "P ÷ paper's", "speed-up ratio", "= P ratio", "× work", "× balance",
                      "× contention", "× compute share", "seeds"],
                     [[FIG[p["fig"]][1], p["profile"], f"{p['P']} ÷ {p['paper_P']}", _f(p["speedup"]),
                       f"{p['workers'][0]:.3g}", _f(p["work"]), _f(p["balance"]), _f(p["contention"]),
                       _f(p["compute_share"]), p["seeds"]] for p in w["peaks"]])
        L += ["", " ".join(_cap(peak_sentence(p, w)) + "." for p in w["peaks"]), ""]
    if w["loops"] or w["fixed"]:
        L += ["**The §2.1 loop's emulated speed-up = units × per-unit time × contention × compute share.** Units: "
              "H ÷ the largest block; per-unit time: (t(H) ÷ H) ÷ (t(k) ÷ k) of the measured block timings "
              "(below 1: a cost fewer units do not shrink).", ""]
        if w["loops"]:
            L += W.table(["net", "profile", "P", "speed-up", "= units", "× per-unit time", "× contention",
                          "× compute share", "ms: compute + straggler wait + barriers", "seeds"],
                         [[x["net"], x["profile"], x["P"], _f(x["speedup"]), f"{x['units'][0]:.3g}", _f(x["per_unit"]),
                           _f(x["contention"]), _f(x["compute_share"]), _ms(x["parts"]), x["seeds"]]
                          for x in w["loops"]]) + [""]
        if w["fixed"]:
            L += W.table(["net", "fixed share of the whole loop", "fixed µs per pattern step",
                          "µs per hidden unit per step", "seeds"],
                         [[f["net"], _f(f["fixed_share"]), _f(f["fixed_us_per_step"], ".3g"),
                           _f(f["unit_us_per_step"], ".3g"), f["seeds"]] for f in w["fixed"]]) + [""]
        fx = next((f for f in w["fixed"] if f["net"] == "radio"), None)
        if w["loops"]:
            L += [_cap(loop_sentence(w["loops"][0], fx)) + ". What the fixed part is made of was not profiled "
                  "(numpy's per-call cost per pattern step is our reading, not measured).", ""]
    if w["radio"]:
        L += ["**§3.1's 22 h → 8 h by Amdahl**, 1 / ((1 − f) + f / S_loop(5)): ours ÷ the paper's = (from our loop "
              "share f) × (from our loop speed-up), each the change when that input alone goes from the paper's to "
              "ours, the two orders averaged in logs.", ""]
        L += W.table(["profile", "loop share f", "loop speed-up at 5", "overall", "÷ paper's 2.75",
                      "= from our share", "× from our loop speed-up", "seeds"],
                     [[x["profile"], _f(x["loop_share"]), _f(x["loop_speedup"]), _f(x["overall"]),
                       _f(x["ratio_to_paper"]), _f(x["from_share"]), _f(x["from_part_speedup"]), x["seeds"]]
                      for x in w["radio"]]
                     + [["paper (§2.1, §3.1)", "0.8", f"{w['radio'][0]['implied']:.3g} (implied)", "2.75", "1", "–",
                         "–", "–"]])
        L += ["", _cap(radio_sentence(w["radio"][0])) + ".", ""]
    if w["overall"] or w.get("overall_host"):
        both = [o for o in (w.get("overall_host"), w["overall"]) if o]
        L += [f"**§3.2's 8.96 = 1 / (w/S_D + (1 − w)/S_F)**, w the derivative epochs' share of a 1-worker iteration; "
              "ours ÷ the paper's = (from our w) × (from our epoch speed-ups at the paper's w). One order only: the "
              "paper gives neither epoch's speed-up.", ""]
        L += W.table(["profile", "P_D / P_F", "w", "S_D", "S_F", "÷ 8.96", "= from w", "× from S_D, S_F", "seeds"],
                     [[o["profile"], f"{o['Pd']} / {o['Pf']}", _f(o["deriv_share"]), _f(o["deriv_speedup"]),
                       _f(o["fwd_speedup"]), _f(o["ratio_to_paper"]), _f(o["from_weights"]),
                       _f(o["from_epoch_speedups"]), o["seeds"]] for o in both]
                     + [["paper (§3.2)", "17 / 6", f"{PAPER_DERIV_SHARE:.3f}", "–", "–", "1", "–", "–", "–"]])
        L += ["", " ".join(_cap(overall_sentence(o)) + "." for o in both), ""]
    if w["share"]:
        s = w["share"]
        L += ["**§2.1's loop share = (loop ÷ derivative epoch) × (derivative epoch ÷ CG iteration)**, NETtalk, one "
              "process; ours ÷ 0.8 split into the loop's part of a derivative epoch and the derivative epoch's weight "
              "r / (r + k), r = D ÷ F.", ""]
        L += W.table(["", "loop ÷ D", "× D ÷ iteration", "= loop share", "D ÷ F", "k", "seeds"],
                     [["ours", _f(s["loop_over_deriv"]), _f(s["deriv_share"]), _f(s["loop_share"]),
                       _f(s["deriv_over_fwd"], ".3g"), f"{w['k']:.3g}", s["seeds"]],
                      ["paper (§2.1, §3.2)", f"≥ {REPORTED['loop_share'] / PAPER_DERIV_SHARE:.3f} (needed)",
                       f"{PAPER_DERIV_SHARE:.3f}", "> 0.8", "37.9", "10", "–"]])
        L += ["", _cap(share_sentence(s, w["k"])) + ".", ""]
    L += ["**Training.** " + iteration_sentence(w), ""]
    return L


def iteration_sentence(w: dict) -> str:
    it = ", ".join(f"{_f(x['speedup'])} on {x['P']} processes ({x['seeds']} seeds)" for x in w["iteration"])
    return ("The cache holds no training speed-up: every training run uses 2 derivative and 1 forward worker, with "
            "no 1-worker run beside it. The sequence partition computes the same Φ and gradient on any P, so its "
            "passes ratio is 1 by construction and a training speed-up is the CG iteration's, (D + k·F) on 1 "
            "process ÷ on P" + (f": measured here {it}." if it else "; none was measured."))


def _cap(s: str) -> str:
    return s[0].upper() + s[1:] if s else s


HOST_NOT_SPLIT = ("the host's measured curve is not split into factors: its runs keep each seed's 1-worker and "
                  "P-worker seconds, not each worker's compute")


def cite(ev: dict, w: dict) -> None:
    """Add to each not-reproduced or inconclusive claim's reason the decomposition that
    explains it (the Why section's figures), in place."""
    def add(cid: str, text: str) -> None:
        if cid in ev and text:
            ev[cid].reason += "; why (section Why): " + text
    measured = lambda cid: cid in ev and ev[cid].kind == "measured"  # noqa: E731 - judged on the host's seeds
    o = w.get("overall_host") if measured("overall-17-6") else w["overall"]
    if o:
        add("overall-17-6", overall_sentence(o))
    for p in w["peaks"]:
        cid = {"fig5": "best-fwd-6", "fig4": "best-deriv-17"}[p["fig"]]
        if cid in ev and ev[cid].host == f"profile {p['profile']}":
            add(cid, peak_sentence(p, w) + "; " + unexplained(p))
        elif measured(cid) and p["profile"] == w["twin"]:
            add(cid, f"{HOST_NOT_SPLIT}, so where it peaks is unexplained; its emulated twin's split: "
                     + peak_sentence(p, w))
    if measured("dip-7"):
        add("dip-7", f"{HOST_NOT_SPLIT}, so whether a seventh worker's extra wait shows on it is unexplained; the "
                     "emulated twin puts S(7)/S(6) below 1 by construction (the largest block is 4 units at 6 and at "
                     "7, and 7 workers wait on one more peer at every barrier)")
    twin = next((x for x in w["radio"] if x.get("kind") == "measured"), None) if measured("radio-5") else \
        next((x for x in w["radio"] if x["profile"] == w["twin"]), None)
    if twin:
        loop = next((x for x in w["loops"] if x["profile"] == w["twin"]), None)
        fx = next((f for f in w["fixed"] if f["net"] == "radio"), None)
        add("radio-5", radio_sentence(twin) + (f"; {loop_sentence(loop, fx)}" if loop else ""))
    if w["share"]:
        add("loop-share", share_sentence(w["share"], w["k"]))
