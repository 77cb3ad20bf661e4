"""paper0's emulated and measured speedups composed from the task results: the network
partition's and the sequence partition's emulated times under a profile (§2.1, §2.2), the
per-run speedup frames, and the emulator's validation pairs. Shared by the report
(reproduce/paper0/report.py) and the claims (reproduce/paper0/claims.py), which neither
imports the other."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from reproduce.paper0.network_partition import split_even
from reproduce import report as R
from reproduce.paper0.setup import NAME, NETS

TOL = R.DEFAULT_TOLERANCE


KERNEL = "small"  # the probe's cache-resident kernel: paper0's nets are small (issue 12)
BOUND = "compute-only"  # the bound with free synchronisation: not a machine, never validated


def shared_memory(prof):
    """``prof`` as paper0 prices it: an α/β profile's barrier is the local backend's spin
    on the flags of P − 1 peers, (P − 1)·α (``barrier_model="linear"``); a calibrated
    profile's measured barrier table stands."""
    return prof if prof.calibrated or prof.barrier_model == "linear" else replace(prof, barrier_model="linear")


def netpart_emulated(res: dict, P: int, H: int, prof) -> float:
    """The §2.1 loop on P workers: the largest block's loop alone, one barrier per pattern."""
    kmax = max(b - a for a, b in split_even(H, P))
    c, comm = shared_memory(prof).emulate(P, res["block_s"][str(kmax)], [("barrier", 0, res["steps"])],
                                          kernel=KERNEL)
    return c + comm


def seqpart_emulated(times: list, P: int, nbytes: int, prof, *, weight_bytes: int = 0) -> float:
    """One epoch of the sequence partition on P workers: the slowest worker's compute
    plus synchronisation. α/β: paper0's shared-memory model, a barrier to start and one
    in the sum, which reads P − 1 vectors of ``nbytes`` at β. Calibrated: the broadcast of
    [kind, weights] (``weight_bytes``) and the allreduce of ``nbytes`` our code runs."""
    prof = shared_memory(prof)
    if prof.calibrated:
        c, comm = prof.emulate(P, max(times), [("broadcast", weight_bytes, 1), ("allreduce", nbytes, 1)],
                               kernel=KERNEL)
        return c + comm
    c, comm = prof.emulate(P, max(times), [("barrier", 0, 2)], kernel=KERNEL)
    return c + comm + (P - 1) * nbytes / prof.bandwidth_Bps


def _bytes(res: dict) -> dict:
    """Per figure: (bytes reduced, bytes broadcast) of one epoch."""
    w = (res["n_params"] + 1) * 8
    return {"fig4": (w, w), "fig5": (8, w)}


def validation_pairs(results, setup, profiles, cores: int) -> dict:
    """{profile name: pairs} for R.validation_rows: every measured loop or epoch (workers ≤
    cores: an oversubscribed run is not measured scaling) beside its emulated twin, the same
    net, data and seed composed under each machine profile (not the compute-only bound);
    medians over the runs per configuration and P."""
    em_net = {(t.params["net"], t.params["run"]): r for t, r in results
              if t.name == "netpart" and t.kind == "emulated"}
    em_seq = {t.params["run"]: r for t, r in results if t.name == "seqpart" and t.kind == "emulated"}
    raw = {}  # (profile, config, P) -> [(emulated s, measured s)]
    for t, res in results:
        if t.kind != "measured" or t.name not in ("netpart", "seqpart"):
            continue
        P, i = t.params["workers"], t.params["run"]
        if P > setup.max_workers or R.oversubscribed(P, cores):
            continue
        for prof in profiles:
            if prof.name == BOUND:
                continue
            if t.name == "netpart" and (t.params["net"], i) in em_net:
                net = t.params["net"]
                em = netpart_emulated(em_net[(net, i)], P, NETS[net]["n_hidden"], prof)
                cfg = ("fig2 radio loop" if net == "radio" else "fig3 parsing loop")
                raw.setdefault((prof.name, cfg, P), []).append((em, res["parallel_s"]))
            elif t.name == "seqpart" and i in em_seq:
                e = em_seq[i]
                for fig, key, label in (("fig4", "deriv", "fig4 derivative epoch"),
                                        ("fig5", "fwd", "fig5 forward epoch")):
                    nb, w = _bytes(e)[fig]
                    em = seqpart_emulated(e[key][str(P)], P, nb, prof, weight_bytes=w)
                    raw.setdefault((prof.name, label, P), []).append((em, res[str(P)][f"{key}_s"]))
    out = {p.name: [] for p in profiles if p.name != BOUND}
    for (name, cfg, P), v in sorted(raw.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
        out[name].append({"P": P, "config": cfg, "emulated_s": float(np.median([a for a, _ in v])),
                          "measured_s": float(np.median([b for _, b in v])), "runs": len(v)})
    return out


def _row_P(r: dict, setup) -> int | None:
    """The largest worker count an emulated row's figure stands for (None: none)."""
    if r["quantity"] == "best_workers":
        return setup.max_workers
    if r["quantity"] == "speedup_7_over_6":
        return 7
    kv = dict(x.split("=", 1) for x in r["condition"].split(";") if "=" in x)
    if "workers" not in kv:
        return None
    return max(int(x) for x in kv["workers"].split("/"))


def validation_notes(rows: list[dict], pairs: dict, setup) -> None:
    """Append to the note of every emulated row beyond the largest measured P what its
    validation says (R.beyond_measured_note); the bound's rows say they are a bound."""
    Pmax = max((p["P"] for v in pairs.values() for p in v), default=1)
    for r in rows:
        kv = dict(x.split("=", 1) for x in r["condition"].split(";") if "=" in x)
        if r["kind"] != "emulated" or "profile" not in kv:
            continue
        P = _row_P(r, setup)
        if P is None or P <= Pmax:
            continue
        name = kv["profile"]
        extra = ("compute-only is a bound (free synchronisation), not a machine: not validated"
                 if name == BOUND else R.beyond_measured_note(pairs.get(name, []), profile=name))
        r["note"] = f"{r['note']}; {extra}" if r["note"] else extra


MANYCORE_CURVES = (("fig3", "parsing"), ("fig4", None))  # network partition (parsing), derivative epoch


def manycore_emulated(results, setup, profile) -> dict:
    """paper0's emulated twins of the many-core hosts' measured curves (reproduce.manycore):
    ``{key(P, curve=, net=): {"speedup", "comm_share", "runs"}}`` for the parsing net's loop
    (Fig. 3) and the derivative epoch (Fig. 4), composed from this run's cached emulated
    tasks under ``profile`` exactly as the emulated rows are (medians over the runs)."""
    from reproduce.manycore import key
    from reproduce.manycore_data import seeds_of

    # the twins use the runs the host ran (manycore_data.seeds_of: runs 0..4 of seed 1 for
    # xeon207x16's paper0 run), whatever setup.runs says
    n = len(seeds_of(NAME, "xeon207x16"))
    net = [r for t, r in results if t.name == "netpart" and t.kind == "emulated" and t.params["net"] == "parsing"
           and t.params["run"] < n]
    seq = [r for t, r in results if t.name == "seqpart" and t.kind == "emulated" and t.params["run"] < n]
    H = NETS["parsing"]["n_hidden"]
    out = {}
    for P in range(2, setup.max_workers + 1):
        for curve, runs in (("fig3", net), ("fig4", seq)):
            sp, share = [], []
            for r in runs:
                if curve == "fig3":
                    t1, tp = netpart_emulated(r, 1, H, profile), netpart_emulated(r, P, H, profile)
                    c = r["block_s"][str(max(b - a for a, b in split_even(H, P)))]
                else:
                    nb, w = _bytes(r)["fig4"]
                    t1 = seqpart_emulated(r["deriv"]["1"], 1, nb, profile, weight_bytes=w)
                    tp = seqpart_emulated(r["deriv"][str(P)], P, nb, profile, weight_bytes=w)
                    c = max(r["deriv"][str(P)])
                sp.append(t1 / tp)
                share.append(1 - c * profile.compute_scale(P, KERNEL) / tp)  # the rest is synchronisation
            if sp:
                cfg = {"curve": curve, **({"net": "parsing"} if curve == "fig3" else {})}
                out[key(P, **cfg)] = {"speedup": float(np.median(sp)), "comm_share": float(np.median(share)),
                                      "runs": len(sp)}
    return out


def frames(results, setup, profiles):
    """Long table: speedup per (figure, P, run, kind, profile); measured rows have profile ""."""
    rows = []
    for t, res in results:
        p = t.params
        if t.name == "netpart":
            H = NETS[p["net"]]["n_hidden"]
            fig = "fig2" if p["net"] == "radio" else "fig3"
            if t.kind == "emulated":
                for prof in profiles:
                    t1 = netpart_emulated(res, 1, H, prof)  # the loop alone (× the speed ratio)
                    for P in range(1, setup.max_workers + 1):
                        tp = netpart_emulated(res, P, H, prof)
                        rows.append({"fig": fig, "P": P, "run": p["run"], "kind": "emulated",
                                     "profile": prof.name, "speedup": t1 / tp, "time_s": tp})
            else:
                rows.append({"fig": fig, "P": p["workers"], "run": p["run"], "kind": "measured",
                             "profile": "", "speedup": res["serial_s"] / res["parallel_s"],
                             "time_s": res["parallel_s"]})
        elif t.name == "seqpart":
            if t.kind == "emulated":
                nb = _bytes(res)
                for prof in profiles:
                    for fig, key in (("fig4", "deriv"), ("fig5", "fwd")):
                        t1 = seqpart_emulated(res[key]["1"], 1, nb[fig][0], prof, weight_bytes=nb[fig][1])
                        for P in range(1, setup.max_workers + 1):
                            tp = seqpart_emulated(res[key][str(P)], P, nb[fig][0], prof,
                                                  weight_bytes=nb[fig][1])
                            rows.append({"fig": fig, "P": P, "run": p["run"], "kind": "emulated",
                                         "profile": prof.name, "speedup": t1 / tp, "time_s": tp})
            else:
                P = p["workers"]
                for fig, key in (("fig4", "deriv_s"), ("fig5", "fwd_s")):
                    rows.append({"fig": fig, "P": P, "run": p["run"], "kind": "measured", "profile": "",
                                 "speedup": res["1"][key] / res[str(P)][key], "time_s": res[str(P)][key]})
    return pd.DataFrame(rows)
