"""paper1's timing work: measured NP/PP runs, per-step compute timings for emulation,
and the calibration of the §2.5 model on this machine (Färber 1997, §2.5, §3.2–3.4).

Emulated time of one bunch on P slaves = the §2.5 composition
max(T_d + T_c, P·T_d + T_h) with T_c the *measured* compute of one slave's share
(NP: its block of N_h/P hidden units on all B patterns; PP: the whole net on B/P
patterns), T_h the *measured* host work, and T_d from a machine profile.
"""
from __future__ import annotations

import math
from time import perf_counter

import numpy as np

from engine.nets.mlp import MLP
from engine.perfmodel import measure_here
from reproduce.paper1.spert import SpertModel, fit_line, n_wts
from reproduce.paper1.bunch import BunchConfig
from reproduce.paper1.network_parallel import NPMaster, NPSlave, hidden_blocks

N_I, N_O = 156, 56


def _median_of(fn, reps: int, times: list | None = None) -> float:
    """Median seconds of ``reps`` calls after a warm-up (the typical step, comparable
    with the wall clock of a measured run on the same shared machine). ``times``: a list
    that receives every call's seconds (kept in the task's result; the claims' intervals are
    over separate emul runs, reproduce/paper1/claims.py ``emulated_composer``)."""
    fn()
    ts = []
    for _ in range(reps):
        t = perf_counter()
        fn()
        ts.append(perf_counter() - t)
    if times is not None:
        times.extend(ts)
    return float(np.median(ts))


def _xe(B: int, rng) -> tuple[np.ndarray, np.ndarray]:
    return rng.standard_normal((B, N_I)), 0.01 * rng.standard_normal((B, N_O))  # (B, 156), (B, 56)


def slave_step_seconds(strategy: str, *, N_h: int, B: int, P: int, forward: bool, reps: int,
                       seed: int = 0, times: list | None = None) -> float:
    """Median seconds of one slave's compute for one bunch (see the module docstring)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(seed)
    full = MLP((N_I, N_h, N_O), "logistic")
    full.init_uniform(rng, scale=0.1)
    with threadpool_limits(1):
        if strategy == "NP":
            lo, hi = hidden_blocks(N_h, P)[0]
            s = NPSlave(full, lo, hi, holds_bias2=True, cfg=BunchConfig(bunch=B, lr=1e-3))
            x, e = _xe(B, rng)

            def step():
                _, k = s.forward(x)
                if not forward:
                    s.update(e, k)
            return _median_of(step, reps, times)
        m = max(1, math.ceil(B / P))
        x, e = _xe(m, rng)
        ws = full.workspace(m)
        g = np.empty(full.n_params)

        def step():
            y, cache = full.forward(x, ws=ws)
            if not forward:
                full.backward(e, cache, out=g)
                full.params -= 1e-9 * g
        return _median_of(step, reps, times)


def host_seconds(*, B: int, P: int, forward: bool, reps: int, seed: int = 0,
                 times: list | None = None) -> float:
    """Median seconds of the master's work per NP bunch: sum P partials, nonlinearity,
    and (training) the error; the forward pass stops after the nonlinearity."""
    rng = np.random.default_rng(seed)
    master = NPMaster(MLP((N_I, 4, N_O), "logistic"))
    part = 0.1 * rng.standard_normal((P, B, N_O))  # (P, B, 56)
    t = np.zeros((B, N_O))
    t[np.arange(B), rng.integers(0, N_O, B)] = 1.0
    lab = np.argmax(t, axis=1)
    out = np.empty((B, N_O))

    def train():
        master.error(part, t, lab, out)

    def fwd():
        np.copyto(out, part[0])
        for p in range(1, P):
            np.add(out, part[p], out=out)
        master.f_o.f(out, out)
    return _median_of(fwd if forward else train, reps, times)


def calibrate(*, hidden=(100, 250, 500, 1000), bunches=(48, 1000), reps: int = 7) -> dict:
    """Fit c1, c2 (training and forward) per bunch size from one-slave runs of several
    hidden sizes (§2.5), c_h from the host's error computation at B = 48, and the
    shared-memory latency and bandwidth between two local processes."""
    out = {"fits": {}}
    for B in bunches:
        r = max(3, reps * 48 // B)
        per = {f: [slave_step_seconds("NP", N_h=h, B=B, P=1, forward=f, reps=r) / B for h in hidden]
               for f in (False, True)}
        (c1, c2), (f1, f2) = fit_line(hidden, per[False]), fit_line(hidden, per[True])
        out["fits"][str(B)] = {"c1": c1, "c2": c2, "c1_fwd": f1, "c2_fwd": f2, "hidden": list(hidden),
                               "train_s_per_pattern": per[False], "fwd_s_per_pattern": per[True]}
    out["c_h"] = host_seconds(B=48, P=1, forward=False, reps=50) / 48
    out["c_h_fwd"] = host_seconds(B=48, P=1, forward=True, reps=50) / 48
    prof = measure_here(reps=1000)
    out["latency_s"], out["bandwidth_Bps"] = prof.latency_s, prof.bandwidth_Bps
    out["profile_source"] = prof.source
    return out


def here_model(cal: dict, *, B: int) -> SpertModel:
    """The §2.5 model with this machine's constants (fits at the calibration bunch
    nearest to B; float64 values, 8 bytes each)."""
    keys = sorted(cal["fits"], key=lambda k: abs(math.log(int(k) / B)))
    f = cal["fits"][keys[0]]
    return SpertModel(
        "here", bw_write_Bps=cal["bandwidth_Bps"], bw_read_Bps=cal["bandwidth_Bps"],
        c1_s=f["c1"], c2_s=f["c2"], c_h_s=cal["c_h"], c1_fwd_s=f["c1_fwd"], c2_fwd_s=f["c2_fwd"],
        c_h_fwd_s=cal["c_h_fwd"], input_bytes=8, error_bytes=8, output_bytes=8, weight_bytes=8,
        latency_s=cal["latency_s"], fitted=True,
        source=(f"calibrated here: c1, c2 fitted to one-slave step times at B = {keys[0]} over "
                f"N_h = {f['hidden']}; c_h timed on the host's error computation; latency and "
                f"bandwidth: {cal['profile_source']}"))


def emulate_curve(strategy: str, *, N_h: int, B: int, slaves, forward: bool, reps: int) -> list[dict]:
    """Measured per-slave compute T_c and host time T_h for each P (composed later), the
    medians and every repetition behind them (``T_c_reps``, ``T_h_reps``, kept for inspection:
    the claims resample whole runs of this curve, not its repetitions, reproduce/paper1/claims.py
    ``emulated_composer``)."""
    rows = []
    for P in slaves:
        if strategy == "NP" and P > N_h:
            continue
        # at least 5 repetitions (was 3: PP at B ≥ 1000), the claims' intervals need n ≥ 5
        r = max(5, reps * 48 // max(B // (P if strategy == "PP" else 1), 1))
        tc, th = [], []
        T_c = slave_step_seconds(strategy, N_h=N_h, B=B, P=P, forward=forward, reps=min(r, reps), times=tc)
        T_h = host_seconds(B=B, P=P, forward=forward, reps=max(5, reps), times=th) if strategy == "NP" else \
            _pp_host_seconds(N_h=N_h, P=P, reps=max(5, reps // 2), forward=forward, times=th)
        rows.append({"P": P, "T_c": T_c, "T_h": T_h, "T_c_reps": tc, "T_h_reps": th})
    return rows


def _pp_host_seconds(*, N_h: int, P: int, reps: int, forward: bool, times: list | None = None) -> float:
    """The PP master's work per bunch: summing P weight-update vectors (training)."""
    if forward:
        if times is not None:
            times.extend([0.0] * reps)
        return 0.0
    n = n_wts(N_I, N_h, N_O) + N_h + N_O
    parts = np.ones((P, n))
    acc = np.empty(n)

    def f():
        np.copyto(acc, parts[0])
        for p in range(1, P):
            np.add(acc, parts[p], out=acc)
    return _median_of(f, reps, times)
