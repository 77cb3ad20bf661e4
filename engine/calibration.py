"""Machine calibration: the probe's measurements and the profile built from them.

The probe (``benchmarks/machines/probe.py``, from
``../shared/machines/xeon16/measure_collectives_and_contention.py``) writes a
JSON dict: ``nproc``; ``coll[P]["op:n"]``, µs per collective of n float64
(slowest rank, best of 5 batches); ``work[kind][P] = [median, max]`` seconds of
one worker's fixed kernel run while P workers run it at once (P = 1: alone);
optionally ``jitter[kind][P]`` (per-step times, :func:`jitter_summary`),
``alone[kind]`` (the kernels on one worker) and ``meta``, ``method``.
:func:`profile_from_probe` turns such a dict into a calibrated
:class:`engine.perfmodel.MachineProfile`.

The reference kernels ("gemv": 2048×2048 float64 matrix–vector, memory-bound;
"gemm": 256×256 product, compute-bound; "small": a parity-sized layer,
cache-resident) and their call counts (200, 200, 20,000) are xeon16's.
"""
from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np
from threadpoolctl import threadpool_limits

from engine.perfmodel import MachineProfile

SIZES = [1_000, 8_016, 100_000]  # float64 elements per collective, as xeon16
REPS = 2000  # as xeon16
WORK = (("gemv", 200), ("gemm", 200), ("small", 20000))  # (kind, calls), as xeon16
JITTER = (("small", 10, 2000), ("gemm", 1, 500))  # (kind, kernel calls per step, steps)
MAX_ELEMS = 1 << 17  # local backend slot size, as xeon16
FLOPS = {"gemv": 2 * 2048 * 2048, "gemm": 2 * 256 ** 3, "small": 2 * 100 * 9 * 32}


def _kernel(kind, rank):
    """One call of the reference kernel ``kind``, data seeded by ``rank`` (xeon16's work())."""
    rng = np.random.default_rng(rank)
    if kind == "gemv":  # memory-bound: 2048x2048 f64 matrix-vector (32 MiB per worker)
        A = rng.standard_normal((2048, 2048)); v = rng.standard_normal(2048)
        return lambda: A @ v
    if kind == "gemm":  # compute-bound
        A = rng.standard_normal((256, 256)); B = rng.standard_normal((256, 256))
        return lambda: A @ B
    W = rng.standard_normal((100, 9)); X = rng.standard_normal((9, 32))  # parity-sized layer
    return lambda: np.tanh(W @ X).sum()


def kernels_alone(*, quick: bool = False, n_rep: int | None = None) -> dict:
    """{kind: seconds per call} of the reference kernels on one worker, 1 BLAS thread:
    the best of ``n_rep`` (5; quick 3) timings of xeon16's call counts (quick: a tenth)."""
    n_rep = n_rep or (3 if quick else 5)
    out = {}
    with threadpool_limits(1):
        for kind, n in WORK:
            n = max(1, n // 10) if quick else n
            f = _kernel(kind, 0)
            for _ in range(3):
                f()
            best = math.inf
            for _ in range(n_rep):
                t = time.perf_counter()
                for _ in range(n):
                    f()
                best = min(best, time.perf_counter() - t)
            out[kind] = best / n
    return out


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
