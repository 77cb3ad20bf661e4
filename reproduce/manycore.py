"""The papers' configurations measured on real many-core hosts, beside their emulated twins
(issue 12, item 4).

**Data** (:mod:`reproduce.manycore_data`, gathered from each paper's ``hosts.py``): the
numbers real runs gave on two 16-core hosts, as constants read once from their result
files by the paper's ``extract`` (a test checks the constants equal the files where the
folders exist), and each run's provenance: folder, command, date, commit. Hosts:
``xeon16`` (``../shared/machines/xeon16/``) and ``xeon207x16``
(``results/machines/xeon207x16/``), each with a README.md.

Each set is ``{"rows": [...], ...}``, a row a dict of ``P``, the configuration's keys
(:data:`CONFIG_KEYS`, :func:`config_of`) and the numbers: ``speedup`` the measured
(median, min, max) as the host's report gives it (where a set gives ``serial_s`` and the
row's ``time_s`` instead, derived from them by :func:`measured`), ``comm_share`` where
measured, ``time_ms`` where given.

**Composition.** The emulated twin of a measured configuration is composed from this
project's own compute-only emulated runs (measured here, one worker at a time) under the
host's shipped profile (:func:`host_profile`, ``engine/profiles/<host>.json``, built from
the host's microbenchmarks only; nothing is fitted to the speedups below):

    emulated time    = profile.emulate(P, Σ max compute here, collectives, kernel)  (compute + communication)
    emulated serial  = serial time here × profile.compute_scale(1, kernel)  (= × compute_ratio)
    emulated speedup = emulated serial / emulated time

(:func:`compose`, :func:`emulated_speedup`). A paper supplies a function
``emulate(profile) -> {key(P, **config): {"speedup", "comm_share", "runs"}}`` built on
them from its cached task results (its report's ``manycore_emulated``); :func:`compare`
runs it under each host's profile and under the profile with one effect switched off at
a time (:func:`effect_profiles`), and puts the result beside the measured rows (``target``
None where a paper sets no target: ``met`` None). :func:`csv_rows` and :func:`section`
turn that into comparison.csv rows and the report's "Against many-core hosts" section.

Also here, shared by the papers' reports and candidates for reproduce/report.py: the
validation on this machine (:func:`validation_section`, :func:`append_beyond_note`) and
the headline's sentences (:func:`validated_range`, :func:`against_hosts`).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from engine.perfmodel import FREE, MachineProfile
from reproduce import report as R

from reproduce.manycore_data import (HERE_PROFILE, HOSTS, ROOT, SEEDS, extract,  # noqa: F401
                                      measured_data, seeds_of, sources)


CONFIG_KEYS = ("local_epoch", "passes", "width", "curve", "net")


def config_of(row: dict) -> dict:
    """The configuration of a measured row (its keys other than P and the numbers)."""
    return {k: row[k] for k in CONFIG_KEYS if k in row}


def key(P: int, **config) -> tuple:
    """The key an ``emulate`` function's dict uses for one configuration at P."""
    return (int(P), tuple(sorted(config.items())))


def label(config: dict) -> str:
    """A configuration in words: "local epoch 32", "forward, width 2048", "fig2 (radio)"."""
    if "local_epoch" in config:
        return f"local epoch {config['local_epoch']}"
    if "passes" in config:
        return f"{config['passes'].replace('_', ' + ')}, width {config['width']}"
    return config.get("curve", "") + (f" ({config['net']})" if "net" in config else "")


def measured(paper: str, host: str) -> list[dict]:
    """The host's measured rows of ``paper`` with ``speedup`` on every row: where the set gives
    ``serial_s`` and ``time_s`` instead, derived as a report's speedup rows do it (serial
    median / median; min: serial min / max; max: serial max / min). Empty when the host has
    no data for the paper."""
    d = measured_data().get((paper, host))
    if d is None:
        return []
    out = []
    for r in d["rows"]:
        r = dict(r)
        if "speedup" not in r:
            s, t = d["serial_s"], r["time_s"]
            r["speedup"] = (s[0] / t[0], s[1] / t[2], s[2] / t[1])
        out.append(r)
    return out


PM20 = (0.8, 1.2, "±20 %")  # the usual target for emulated / measured speedup (a paper's report picks its own)


# ---- composition -------------------------------------------------------------------------------
def compose(profile: MachineProfile, P: int, compute_s: float, collectives=(), *,
            kernel: str = "small") -> tuple[float, float]:
    """(time s, communication s) of P workers on ``profile``: ``compute_s`` is the slowest
    worker's compute measured here, summed over the synchronised steps; ``collectives`` are
    ``(op, nbytes, count)`` triples. Compute is scaled by the profile's speed ratio and
    contention for ``kernel``; communication is the collectives' cost plus the straggler wait
    (:meth:`MachineProfile.emulate`). With an α/β profile: compute_s + Σ count·α/β cost."""
    c, comm = profile.emulate(P, compute_s, collectives, kernel=kernel)
    return c + comm, comm


def emulated_speedup(profile: MachineProfile, P: int, serial_s: float, compute_s: float,
                     collectives=(), *, kernel: str = "small") -> float:
    """Emulated speedup on ``profile``: the serial time measured here scaled to that machine
    (× ``profile.compute_scale(1, kernel)``, i.e. its compute ratio) over :func:`compose`'s
    time. Under :data:`engine.perfmodel.FREE` it is serial_s / compute_s, the compute-only
    composition."""
    t, _ = compose(profile, P, compute_s, collectives, kernel=kernel)
    return serial_s * profile.compute_scale(1, kernel) / t


# One effect switched off at a time, to measure what each contributes to the emulated speedup.
EFFECTS = {
    "model": "the profile as calibrated (every effect)",
    "alpha_beta": "collectives priced by the profile's α/β formulas instead of its measured table",
    "no_contention": "no contention: compute not slowed by P workers running at once",
    "no_straggler": "no straggler wait at synchronisations",
    "ratio_1": "compute ratio 1: compute as fast as here",
    "compute_only": "compute only (engine.perfmodel.FREE): serial / Σ max compute, the old composition",
}


def effect_profiles(profile: MachineProfile) -> dict:
    """{effect: profile} for :data:`EFFECTS`: the profile, and the profile with one effect off."""
    return {"model": profile,
            "alpha_beta": replace(profile, coll={}),
            "no_contention": replace(profile, contention={}),
            "no_straggler": replace(profile, straggler={}),
            "ratio_1": replace(profile, compute_ratio=1.0),
            "compute_only": FREE}


def here_kernels() -> dict:
    """The reference kernels' seconds per call here (:data:`HERE_PROFILE`'s probe)."""
    return MachineProfile.load(ROOT / "engine" / "profiles" / f"{HERE_PROFILE}.json").kernels


def host_profile(host: str, here: dict | None = None) -> MachineProfile:
    """The host's shipped profile (``reproduce.profiles.resolve(host)``) with its compute ratio
    taken against ``here`` (reference kernels' s per call; default :func:`here_kernels`)."""
    from reproduce.profiles import resolve

    return resolve(host, here_kernels=here if here is not None else here_kernels())


def append_beyond_note(rows: list[dict], profile: str, pairs: list[dict], *,
                       p_key: str = "nodes") -> None:
    """Append :func:`reproduce.report.beyond_measured_note` to the note of every emulated row
    on ``profile`` whose ``p_key`` in its condition exceeds the largest P of ``pairs`` (the P
    measured and validated here; 1 without pairs). Shared by the papers' reports (it could
    live in reproduce/report.py beside the other validation helpers)."""
    p_max = max((p["P"] for p in pairs), default=1)
    note = R.beyond_measured_note(pairs, profile=profile)
    for r in rows:
        c = dict(kv.split("=", 1) for kv in r["condition"].split(";") if "=" in kv)
        if r["kind"] == "emulated" and c.get("profile") == profile and int(c.get(p_key, 0)) > p_max:
            r["note"] = f"{r['note']}; {note}" if r["note"] else note


def validated_range(P: int, pairs: list[dict]) -> str:
    """A headline's sentence on whether an emulated figure at P lies within the validated range
    (P ≤ the largest P of ``pairs``, the runs measured here) and the emulator error there."""
    p_max = max((p["P"] for p in pairs), default=1)
    err = R.emulator_error(pairs)
    if P <= p_max:
        return (f"That is within the validated range (measured here up to P = {p_max}; emulator error "
                f"{err:.2f}× emulated / measured time). ")
    return (f"That is extrapolated: runs were measured here only up to P = {p_max}"
            + (f", where the emulator error was {err:.2f}× (emulated / measured time)" if err else
               ", so nothing validates it here") + ". ")


def against_hosts(records: list[dict]) -> str:
    """A headline's sentence: ``records`` (one configuration at one P) measured and emulated."""
    if not records:
        return ""
    return ("Against real runs on 16-core hosts (section \"Against many-core hosts\"): "
            + "; ".join(f"{c['host']} measured {c['measured'][0]:.3g}×, emulated under its profile "
                        f"{c['emulated']:.3g}× ({c['ratio']:.2f})" for c in records) + ". ")


def validation_section(pairs: list[dict], *, profile: MachineProfile, what: str, same: str,
                       over_note: str = "") -> list[str]:
    """The report's "Emulator validation" section: emulated / measured time of ``pairs`` (see
    :func:`reproduce.report.validation_rows`) per P and configuration; ``what`` names the runs
    (e.g. "training run"), ``same`` what makes an emulated run the twin of a measured one."""
    L = ["## Emulator validation (emulated / measured, this machine)", ""]
    if not pairs:
        return L + [f"No {what} was measured here at P ≥ 2 with a core per worker, so no emulated row "
                    "is validated on this machine." + over_note, ""]
    L += [f"Every measured {what} beside its emulated twin on profile `{profile.name}` ({same}), per P "
          "and configuration: median (min–max) over runs of emulated time / measured time. The "
          "`emulator` rows of comparison.csv give it per P.", "",
          "| P | configuration | runs | emulated / measured |", "|---|---|---|---|"]
    order = {c: i for i, c in enumerate(dict.fromkeys(p["config"] for p in pairs))}
    for P, cfg in sorted({(p["P"], p["config"]) for p in pairs}, key=lambda x: (x[0], order[x[1]])):
        rs = sorted(p["emulated_s"] / p["measured_s"] for p in pairs if p["P"] == P and p["config"] == cfg)
        L.append(f"| {P} | {cfg} | {len(rs)} | {np.median(rs):.2f} ({rs[0]:.2f}–{rs[-1]:.2f}) |")
    if profile.calibrated:
        L += ["", f"Profile `{profile.name}` is a calibrated profile ({profile.description or 'no description'}; "
              f"compute ratio {profile.compute_ratio:.3g} against this machine): where it describes "
              "another machine, this table sets that machine's emulated times beside runs measured on "
              "this one and validates nothing about it."]
    return L + ["", "Emulated rows at more workers than measured here carry, in their note, the largest "
                "emulator error seen at measured P." + over_note, ""]


# ---- comparison --------------------------------------------------------------------------------
def compare(paper: str, emulate, *, hosts=HOSTS, profiles: dict | None = None, target=None) -> list[dict]:
    """Measured beside emulated speedups for every configuration ``paper`` measured on each
    host. ``emulate(profile)`` returns ``{key(P, **config): {"speedup", "comm_share", "runs"}}``
    composed from the paper's own cached compute-only runs; it is called under the host's
    profile (``profiles[host]``, default :func:`host_profile`) and under each of
    :func:`effect_profiles`. ``target(config)``: the paper's target for emulated ÷ measured
    speedup, (low, high, words) or None (e.g. :data:`PM20`); None: no target anywhere. One
    record per host, configuration and P that both have."""
    out = []
    for host in hosts:
        rows = measured(paper, host)
        if not rows:
            continue
        prof = (profiles or {}).get(host) or host_profile(host)
        em = {name: emulate(p) for name, p in effect_profiles(prof).items()}
        for r in rows:
            cfg = config_of(r)
            k = key(r["P"], **cfg)
            e = em["model"].get(k)
            if e is None:
                continue
            ratio = e["speedup"] / r["speedup"][0]
            tg = None if target is None else target(cfg)
            out.append({"paper": paper, "host": host, "profile": prof.name,
                        "compute_ratio": prof.compute_ratio, "P": r["P"], "config": cfg,
                        "measured": r["speedup"], "measured_comm_share": r.get("comm_share"),
                        "measured_time_s": (r["time_s"][0] if "time_s" in r else
                                            r["time_ms"] * 1e-3 if "time_ms" in r else None),
                        "emulated": e["speedup"], "emulated_comm_share": e["comm_share"],
                        "emulated_time_s": e.get("time_s"),
                        "runs": e["runs"], "ratio": ratio, "target": tg,
                        "met": None if tg is None else bool(tg[0] <= ratio <= tg[1]),
                        "effects": {n: em[n][k]["speedup"] for n in EFFECTS if k in em[n]}})
    return out


def csv_rows(paper: str, records: list[dict], *, p_key: str = "nodes") -> list[dict]:
    """comparison.csv rows: table ``manycore``, quantity ``speedup_emulated_over_measured``
    (kind emulated, no paper value), one per host, configuration and P; condition
    ``<p_key>=P;<config>;profile=<profile>;host=<host>``; ours = emulated / measured speedup,
    low–high = emulated over the measured max and min; the note gives both speedups, the
    target and whether it is met, and the speedup with each effect off."""
    rows = []
    for c in records:
        m, lo, hi = c["measured"]
        eff = c["effects"]
        tg = c["target"]
        note = (f"{c['host']} measured {m:.3g}× ({lo:.3g}–{hi:.3g}), emulated {c['emulated']:.3g}× "
                f"under profile {c['profile']} (compute ratio {c['compute_ratio']:.3g}) from this "
                f"run's compute-only emulated runs of the same seeds; "
                + (f"target {tg[2]}: {'met' if c['met'] else 'NOT met'}; " if tg else "")
                + "emulated speedup with one effect off: "
                + ", ".join(f"{n} {eff[n]:.3g}" for n in EFFECTS if n != "model" and n in eff)
                + f"; measured data: {sources()[(c['paper'], c['host'])]['folder']}")
        cond = R.condition(**{p_key: c["P"]}, **c["config"], profile=c["profile"], host=c["host"])
        rows.append(R.row(c["paper"], "manycore", "speedup_emulated_over_measured", cond, "ratio",
                          ours=c["ratio"], low=c["emulated"] / hi, high=c["emulated"] / lo,
                          kind="emulated", runs=c["runs"], note=note))
    return rows


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0%}"


def _t(x) -> str:
    """Seconds in words: ms below 1 s."""
    return "–" if x is None else f"{x * 1e3:.3g} ms" if x < 1 else f"{x:.3g} s"


def _split(c: dict) -> str:
    """The measured and the model's time, split into compute and communication (+ wait)
    where the host measured a communication share."""
    mt, et = c.get("measured_time_s"), c.get("emulated_time_s")
    if mt is None or et is None:
        return ""
    ms, es = c["measured_comm_share"], c["emulated_comm_share"]
    if ms is None:
        return f"; time measured {_t(mt)} against the model's {_t(et)}"
    return (f"; time measured {_t(mt)} (compute {_t(mt * (1 - ms))}, communication {_t(mt * ms)}) "
            f"against the model's {_t(et)} (compute {_t(et * (1 - es))}, communication and straggler "
            f"wait {_t(et * es)}); the model's absolute times carry its compute ratio's error")


def missed_sentence(c: dict) -> str:
    """For a record whose target is missed: which way the model errs, and what each effect
    contributes, from the speedups with one effect off (measured, not guessed)."""
    m, e = c["measured"][0], c["emulated"]
    eff = {n: v for n, v in c["effects"].items() if n not in ("model", "compute_only")}
    head = (f"{label(c['config'])}, P = {c['P']} on {c['host']}: emulated {e:.3g}× against "
            f"measured {m:.3g}× ({c['ratio']:.2f}, target {c['target'][2]})")
    share = _split(c)
    if c["ratio"] < 1:
        gap = {n: abs(math.log(v / m)) for n, v in eff.items()}
        best = [n for n in eff if gap[n] <= min(gap.values()) + 0.01]
        return (head + ": the model is pessimistic. Switched off one at a time, "
                + ", ".join(f"{n} gives {v:.3g}× ({v / m:.2f})" for n, v in eff.items())
                + f"; closest to the measurement: {' and '.join(best)}. "
                + ("That effect" if len(best) == 1 else "Each of these effects")
                + ", as calibrated, costs more in the model than in this run (it lowers the "
                "emulated speedup by " + " and ".join(f"{eff[n] / e:.2f}×" for n in best) + ")"
                + share + ".")
    co = c["effects"].get("compute_only")
    return (head + ": the model is optimistic. Every effect it has already lowers the speedup "
            f"(compute only {co:.3g}×), so the measured run lost time to something the model "
            f"does not charge: it took {c['ratio']:.2f}× the model's time" + share + ".")


def section(paper: str, records: list[dict], *, profiles: dict | None = None) -> list[str]:
    """The report's "Against many-core hosts" section (markdown lines) for ``records``."""
    if not records:
        return []
    L = ["## Against many-core hosts", "",
         "Real runs of this paper's configurations on 16-core hosts (issue 12), beside their "
         "emulated twins. The twin is composed from this run's own compute-only emulated runs of "
         "the same seeds (each host's, named under it), timed here one worker at a time, under the host's shipped "
         "profile (`engine/profiles/<host>.json`), which was built from that host's "
         "microbenchmarks only; nothing here is fitted to these speedups. Emulated speedup = "
         "serial time here × the profile's compute ratio / emulated time, the emulated time being "
         "`profile.emulate` (compute × compute ratio × contention, plus the measured collectives "
         "and the straggler wait). The compute ratio is taken against this machine's reference "
         f"kernels as its probe recorded them (`engine/profiles/{HERE_PROFILE}.json`, "
         "results/machines/dev2/). The last columns give the emulated speedup with one effect "
         "switched off at a time, which measures what each effect contributes: "
         + "; ".join(f"`{n}`: {d}" for n, d in EFFECTS.items() if n != "model") + ". The hosts ran "
         "the project at the commits named below and the twins come from this run's code: where the "
         "engine's speed changed in between, the comparison mixes the two (xeon16's README says so).",
         ""]
    for host in dict.fromkeys(c["host"] for c in records):
        rs = [c for c in records if c["host"] == host]
        src = sources()[(paper, host)]
        prof = (profiles or {}).get(host)
        L += [f"### {host}", "",
              f"Measured: `{src['folder']}` ({', '.join(src['files'])}), `{src['command']}`, "
              f"{src['date']}, project at `{src['commit']}`"
              + (f" ({src['commit_note']})" if "commit_note" in src else "") + f": {src['what']}. Its twins: "
              f"this run's seeds {min(seeds_of(paper, host))}..{max(seeds_of(paper, host))}.", ""]
        if prof is not None:
            L += [f"Profile `{prof.name}`: {prof.description.rstrip('.')}. Measured {prof.date}; compute ratio "
                  f"{prof.compute_ratio:.3g} (geometric mean of its reference kernels' time over "
                  f"this machine's). Source: {prof.source.split('. Derived')[0]}.", ""]
        effs = [n for n in EFFECTS if n != "model"]
        L += ["| configuration | P | measured (min–max) | emulated | emulated / measured | target "
              "| met | time measured / model | comm share measured / model | " + " | ".join(effs) + " |",
              "|" + "---|" * (10 + len(effs))]
        for c in rs:
            m, lo, hi = c["measured"]
            tg = c["target"]
            L.append(f"| {label(c['config'])} | {c['P']} | {m:.3g} ({lo:.3g}–{hi:.3g}) | "
                     f"{c['emulated']:.3g} | {c['ratio']:.2f} | {tg[2] if tg else '–'} | "
                     f"{'–' if c['met'] is None else 'yes' if c['met'] else '**no**'} | "
                     f"{_t(c.get('measured_time_s'))} / {_t(c.get('emulated_time_s'))} | "
                     f"{_pct(c['measured_comm_share'])} / {_pct(c['emulated_comm_share'])} | "
                     + " | ".join(f"{c['effects'][n]:.3g}" for n in effs) + " |")
        L.append("")
    withtg = [c for c in records if c["target"] is not None]
    missed = [c for c in withtg if not c["met"]]
    L += [f"Target met at {len(withtg) - len(missed)} of {len(withtg)} host, configuration and P "
          "combinations." + (" Where it is missed:" if missed else ""), ""]
    L += [f"- {missed_sentence(c)}" for c in missed]
    return L + [""]
