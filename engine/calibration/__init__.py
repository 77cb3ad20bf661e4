"""Machine calibration (issue 12): a probe of the machine, and the profile built from it.

The probe (:mod:`engine.calibration.probe`; CLI ``benchmarks/machines/probe.py``)
gives a JSON dict: ``nproc``; ``coll[P]["op:n"]``, µs per collective of n float64
(slowest rank, best of 5 batches); ``work[kind][P] = [median, max]`` seconds of
one worker's fixed kernel run while P workers run it at once (P = 1: alone);
optionally ``jitter[kind][P]`` (per-step times), ``alone[kind]`` (the kernels on
one worker), ``method`` and ``meta``. :func:`profile_from_probe` turns it into a
calibrated :class:`engine.perfmodel.MachineProfile`; :func:`calibrate` measures
and builds in one go (``python -m reproduce calibrate``);
:func:`with_compute_ratio` scales a profile's compute to this machine.
"""
from __future__ import annotations

import math
import os
import socket
from dataclasses import replace

import numpy as np

from engine.calibration.probe import (JITTER, MAX_ELEMS, REPS, SIZES, WORK, alone, coll,  # noqa: F401
                                      jitter, jitter_summary, kernels_alone, measure, meta, work)
from engine.perfmodel import MachineProfile


# ---- probe dict -> MachineProfile -----------------------------------------------------------
def _int_keys(d) -> dict:
    return {int(k): v for k, v in (d or {}).items()}


def _coll_tables(probe) -> dict:
    """{op: {P: [[nbytes, s], ...]}} from ``coll[P]["op:n"]`` µs: nbytes = 8n, s = µs·1e-6;
    the barrier's points (timed beside each size) all at 0 bytes."""
    out: dict = {}
    for P, row in _int_keys(probe.get("coll")).items():
        for key, us in row.items():
            op, n = key.split(":")
            nbytes = 0.0 if op == "barrier" else 8.0 * int(n)
            out.setdefault(op, {}).setdefault(P, []).append([nbytes, us * 1e-6])
    return {op: {P: sorted(pts) for P, pts in t.items()} for op, t in out.items()}


def _alpha_beta(coll) -> tuple[float, float, str]:
    """α, β from the allgather at its smallest measured P (2 on every probe so far), read as
    T(s) = ⌈log2 P⌉·α + (P − 1)·s/β (:meth:`MachineProfile.allgather_time`): β from the
    slope between the two largest sizes; α from the smallest size, T − (P − 1)·s/β,
    floored at that P's barrier (the zero-byte point)."""
    ag = coll.get("allgather")
    if not ag:
        raise ValueError("the probe has no allgather: cannot set α and β")
    P = min(ag)
    pts = ag[P]
    if len(pts) < 2:
        raise ValueError(f"allgather at P = {P} has {len(pts)} size(s): α/β needs two")
    (s1, t1), (s2, t2) = pts[-2], pts[-1]
    if t2 <= t1:
        raise ValueError(f"allgather at P = {P}: {s2:.0f} B took no longer than {s1:.0f} B "
                         f"({t2:.3g} s vs {t1:.3g} s): no bandwidth can be read")
    beta = (P - 1) * (s2 - s1) / (t2 - t1)
    s0, t0 = pts[0]
    steps = max(1, math.ceil(math.log2(P)))
    barrier = float(np.median([s for _, s in coll.get("barrier", {}).get(P, [[0, 0.0]])]))
    alpha = max((t0 - (P - 1) * s0 / beta) / steps, barrier)
    how = (f"α = {alpha * 1e6:.3g} µs, β = {beta / 1e9:.3g} GB/s from the P = {P} allgather read as "
           f"⌈log2 P⌉·α + (P − 1)·s/β: β from the slope between its two largest sizes "
           f"({s1:.0f} and {s2:.0f} B), α from its smallest ({s0:.0f} B) less (P − 1)·s/β, "
           f"floored at the P = {P} barrier ({barrier * 1e6:.3g} µs); α and β price only collectives "
           f"the tables lack")
    return alpha, beta, how


def _which(pairs) -> str:
    """[(kind, P), ...] as "gemv at P = 2, 4; small at P = 2"."""
    kinds = dict.fromkeys(k for k, _ in pairs)
    return "; ".join(f"{k} at P = {', '.join(str(P) for kk, P in pairs if kk == k)}" for k in kinds)


def profile_from_probe(probe: dict, *, name: str, description: str, source: str,
                       date: str = "") -> MachineProfile:
    """A calibrated profile from a probe dict (see the module docstring).

    - ``coll[op][P]``: :func:`_coll_tables`; α, β: :func:`_alpha_beta`;
    - ``contention[kind][P]`` = work[kind][P][0] / work[kind][1][0] (median worker of P
      at once over the kernel alone), P ≥ 2;
    - ``straggler[kind][P]`` = jitter[kind][P]["mean_of_max_over_mean"] (the mean over
      steps of the slowest worker's step over the mean step) where the probe has it,
      else work[kind][P][1] / work[kind][P][0] (the slowest worker's whole run over the
      median worker's: persistent imbalance, not per-step noise), P ≥ 2;
    - ``kernels[kind]`` = alone[kind]["s_per_call"], else work[kind][1][0] / calls
      (calls from ``method["work"]``, else xeon16's 200 / 200 / 20,000).

    ``source`` should say where the probe comes from; how each table was derived is
    appended to it. ``date`` defaults to the day in ``meta["date"]``.
    """
    coll = _coll_tables(probe)
    alpha, beta, how = _alpha_beta(coll)
    work = {k: _int_keys(v) for k, v in (probe.get("work") or {}).items()}
    jitter = {k: _int_keys(v) for k, v in (probe.get("jitter") or {}).items()}
    calls = {**dict(WORK), **((probe.get("method") or {}).get("work") or {})}
    alone = probe.get("alone") or {}
    contention, straggler, kernels, from_jitter, from_work = {}, {}, {}, [], []
    for kind, w in work.items():
        if 1 in w:
            contention[kind] = {P: w[P][0] / w[1][0] for P in sorted(w) if P >= 2}
        st = {}
        for P in sorted(p for p in w if p >= 2):
            j = jitter.get(kind, {}).get(P)
            if j and "mean_of_max_over_mean" in j:
                st[P] = float(j["mean_of_max_over_mean"])
                from_jitter.append((kind, P))
            else:
                st[P] = w[P][1] / w[P][0]
                from_work.append((kind, P))
        if st:
            straggler[kind] = st
        if kind in alone:
            kernels[kind] = float(alone[kind]["s_per_call"])
        elif 1 in w:
            kernels[kind] = w[1][0] / calls[kind]
    derived = (f"{how}; contention = median worker's kernel time with P at once over alone "
               f"(work[kind][P][0] / work[kind][1][0]); straggler = "
               + (f"mean over steps of the slowest worker's step / mean step (jitter) for "
                  f"{_which(from_jitter)}" if from_jitter else "")
               + ("; " if from_jitter and from_work else "")
               + (f"slowest worker's run / median worker's run (work max / median, persistent "
                  f"imbalance rather than per-step jitter) for {_which(from_work)}"
                  if from_work else "")
               + "; kernels = s per call alone ("
               + ("alone[kind].s_per_call" if alone else "work[kind][1][0] / calls, calls "
                  + ", ".join(f"{k} {calls[k]}" for k in kernels)) + ")")
    meta = probe.get("meta") or {}
    return MachineProfile(
        name, alpha, beta, source=f"{source}. Derived (engine.calibration.profile_from_probe): "
        f"{derived}", description=description, date=date or str(meta.get("date", ""))[:10],
        backend=str(meta.get("backend", "local")), coll=coll, contention=contention,
        straggler=straggler, kernels=kernels)


def with_compute_ratio(profile: MachineProfile, here: dict | None = None) -> MachineProfile:
    """``profile`` with compute_ratio = the geometric mean over the reference kernels both
    know of t_there / t_here (``here``: :func:`kernels_alone` (quick) when None). A
    profile without kernels (α/β) comes back unchanged, and nothing is measured."""
    if not profile.kernels:
        return profile
    here = kernels_alone(quick=True) if here is None else here
    shared = [k for k in profile.kernels if k in here and here[k] > 0]
    if not shared:
        return profile
    ratio = math.exp(np.mean([math.log(profile.kernels[k] / here[k]) for k in shared]))
    return replace(profile, compute_ratio=float(ratio))


def worker_counts(n: int) -> list[int]:
    """The P a calibration measures up to n workers: the powers of two from 2 below n, and n
    (at least 2): 16 -> [2, 4, 8, 16]; 12 -> [2, 4, 8, 12]; 2 -> [2]."""
    n = max(2, int(n))
    return [2 ** k for k in range(1, n.bit_length()) if 2 ** k < n] + [n]


def default_name() -> str:
    """A name for this machine: the host name (letters, digits, '-') and its CPU count."""
    host = "".join(c if c.isalnum() or c == "-" else "-" for c in socket.gethostname()) or "host"
    return f"{host}-{os.cpu_count()}cpu"


def describe(meta: dict) -> str:
    """The machine in words, from a probe's ``meta``."""
    cpu = meta.get("lscpu") or {}
    v = meta.get("versions") or {}
    blas = (v.get("blas") or [{}])[0] or {}
    return (f"host {meta.get('hostname')}: {meta.get('cpu_count')} CPUs "
            f"({cpu.get('Model name', 'model unknown')}, {cpu.get('Thread(s) per core', '?')} thread(s) "
            f"per core, {cpu.get('Socket(s)', '?')} socket(s), hypervisor {cpu.get('Hypervisor vendor', 'none')}), "
            f"affinity {meta.get('sched_affinity')}, {meta.get('mem_gib')} GiB; {meta.get('platform')}; "
            f"Python {v.get('python')}, numpy {v.get('numpy')} ({blas.get('internal_api')} "
            f"{blas.get('version')}); collectives on the {meta.get('backend')} backend"
            + (f" ({v['mpi_library'].splitlines()[0]})" if v.get("mpi_library") else ""))


def calibrate(*, workers, backend: str = "local", quick: bool = False, comm=None,
              name: str | None = None, say=None, on_step=None):
    """Measure this machine (:func:`measure`) and build its profile: ``(probe, profile)``
    on rank 0, ``(None, None)`` on other MPI ranks.

    ``workers``: the largest P (measured at :func:`worker_counts`), or a list of P; with
    ``backend="mpi"`` the world size of ``comm`` is the one P (one world size per
    invocation). ``quick``: a tenth of the repetitions (the profile says so).
    """
    from engine.calibration.probe import local_runner, mpi_runner

    if backend == "mpi":
        if comm is None:
            from engine.comm.mpi import MPIComm
            comm = MPIComm()
        from mpi4py import MPI

        Ps, run_P, rank0, mpi_module = [comm.size], mpi_runner(comm), comm.rank == 0, MPI
    else:
        Ps = sorted(set(workers)) if isinstance(workers, (list, tuple)) else worker_counts(workers)
        run_P, rank0, mpi_module = local_runner, True, None
    probe = measure(run_P, Ps, backend=backend, quick=quick, rank0=rank0, mpi_module=mpi_module,
                    say=say, on_step=on_step)
    if not rank0:
        return None, None
    m = probe["meta"]
    cores = m.get("sched_affinity") or m.get("cpu_count") or 0
    over = [P for P in Ps if P > cores]
    source = (f"measured by engine.calibration.calibrate on host {m['hostname']}, {m['date']}, "
              f"{backend} backend, P = {', '.join(map(str, Ps))}"
              + (", QUICK (a tenth of the repetitions, calls and steps)" if quick else
                 ", xeon16's repetitions") + f"; 1-minute load {m['loadavg_before'][0]:.2f} before, "
              f"{m['loadavg_after'][0]:.2f} after"
              + (f"; OVERSUBSCRIBED at P = {', '.join(map(str, over))} (more workers than the "
                 f"{cores} cores)" if over else "") + "; single run, microbenchmarks only")
    prof = profile_from_probe(probe, name=name or default_name(), description=describe(m), source=source)
    return probe, prof
