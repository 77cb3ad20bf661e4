"""Where an LSTM+CTC training epoch of paper2 spends its time, with engine/seqkernels.py's
fused passes and with the numpy reference, and why the fused ones keep numpy's
transcendental functions.

The job is one training epoch of paper2's default setup (1,200 handwriting sequences,
data seed 2016, LSTM of 64 cells, k = 4, ADADELTA, one BLAS thread) from the same initial
model (seed 1) on the same batches, for Q = 6 (optimal buckets) and random batches. Each
round trains it once with each implementation, interleaved, so machine load hits both
alike; each keeps its best round. The epoch's time is split into the LSTM forward pass, the
CTC loss and gradient, and the backward pass (BPTT), by timers around those three calls.
Before timing, the two implementations' trained parameters are compared: a difference above
1e-10 of the largest stops the script (they are not bit-identical: the numba path's CTC
rescales α and β where the reference works in logs).

Then, for reference, how often numpy's ``exp``, ``log`` and ``tanh`` differ in the last bit
from the C library's (``math``), which is what numba's compiled code would call.

    .venv/bin/python benchmarks/profile_lstm.py [--rounds 3]
    .venv/bin/python benchmarks/profile_lstm.py --layouts [--k 4] [--rounds 3]

``--layouts``: instead, Fig. 4's question of what a bucketed cell costs against a random
batch's. One epoch of forward + backward passes (no update, as reproduce/paper2/timing_k.py
times them) per layout (random batches, optimal Q = 3 and 6) at mini-batch size k, split
into the three phases, with each layout's padded cells Σ B·T_pad and its CTC lattice cells
Σ B·T_pad·S_pad (S_pad = 2·longest label + 1 in the batch, what the α/β recursions run
over), interleaved, best of ``--rounds``.

``--costs``: what a forward step of the compiled path is made of at B = 4, H = 64 (T = 300
random steps, best of ``--rounds``): the step as the engine runs it, the same loop without
its two numpy ``tanh`` calls, the step's h W_h by the compiled FMA chain and by numpy's
BLAS, and ns per element of numpy's ``tanh`` and ``exp`` and of the C library's ``tanh``
compiled by numba (100,000 arguments).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine import seqkernels as K  # noqa: E402
from engine.nets import lstm  # noqa: E402

STEPS = K.SEQ_FUNCTIONS
PHASES = {"forward": (lstm.LSTM, "forward"), "CTC": (lstm, "ctc_loss_and_grad"),
          "backward": (lstm.LSTM, "backward")}


def use(impl: str) -> None:
    """Route the engine's step functions to ``"fused"`` (numba) or ``"numpy"`` (reference)."""
    for name in STEPS:
        setattr(K, name, getattr(K, ("_nb_" if impl == "fused" else "_np_") + name))


def timed_phases() -> dict:
    """Wrap the three phases with timers; returns the dict they add their seconds to."""
    acc = dict.fromkeys(PHASES, 0.0)
    for phase, (owner, attr) in PHASES.items():
        fn = getattr(owner, attr)

        def wrapped(*a, _fn=fn, _phase=phase, **kw):
            t = time.perf_counter()
            try:
                return _fn(*a, **kw)
            finally:
                acc[_phase] += time.perf_counter() - t

        setattr(owner, attr, wrapped)
    return acc


def epoch(config: str, impl: str, acc: dict):
    """(seconds, phase seconds, trained params) of one epoch of ``config`` ("optimal:6")."""
    from engine.schedule import BUCKETINGS
    from reproduce.paper2.bucketed import SeqWorker
    from reproduce.paper2 import tasks
    from reproduce.paper2.setup import DEFAULT

    d, data = tasks._seq(DEFAULT)
    tr = np.asarray(d.train)
    m, q = config.split(":")
    w = SeqWorker(data, tasks._n_out(), cfg=tasks.cfg_for(DEFAULT, Q=int(q), epochs=1, method=m),
                  seed=1, rank=0, size=1)
    rng = np.random.default_rng(0)
    bounds = BUCKETINGS[m](data.lengths[tr], int(q)) if m in BUCKETINGS else None
    batches = w.schedule(rng.permutation(tr), bounds, batch_size=DEFAULT.batch_size, rng=rng)
    use(impl)
    for k in acc:
        acc[k] = 0.0
    t = time.perf_counter()
    w.train_portion(batches)
    return time.perf_counter() - t, dict(acc), w.net.params.copy(), len(batches)


def mismatches(n: int = 100_000) -> None:
    rng = np.random.default_rng(0)
    cases = {"exp": (np.exp, math.exp, rng.uniform(-30, 5, n)),
             "log": (np.log, math.log, rng.uniform(1e-3, 4, n)),
             "tanh": (np.tanh, math.tanh, rng.uniform(-5, 5, n))}
    print(f"\nnumpy against the C library (math), {n:,} arguments each:")
    for name, (f_np, f_c, x) in cases.items():
        diff = int((f_np(x) != np.array([f_c(v) for v in x])).sum())
        print(f"  {name:5s} x in [{x.min():.3g}, {x.max():.3g}]: {diff:,} differ "
              f"({100 * diff / n:.1f} %)")


def _best(f, rounds: int, n: int = 1) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def costs(rounds: int, T: int = 300, B: int = 4, H: int = 64) -> None:
    from numba import njit

    @njit
    def libm_tanh(x, out):
        for i in range(x.size):
            out[i] = math.tanh(x[i])

    rng = np.random.default_rng(0)
    Z0, Wh = rng.standard_normal((T, B, 4 * H)), rng.standard_normal((H, 4 * H)) * 0.1
    C, TC, Hs, zh = np.empty((T, B, H)), np.empty((T, B, H)), np.zeros((T + 1, B, H)), np.empty((B, 4 * H))

    def step(with_tanh: bool):
        Z = Z0.copy()
        Whp = K._panels(Wh, B)  # made once a batch, as the loop makes it
        for t in range(T):
            K._gates_in(t, Z, TC, Hs, Wh, Whp, zh)
            if with_tanh:
                np.tanh(Z[t], out=Z[t])
            K._cell(t, Z, C)
            if with_tanh:
                np.tanh(C[t], out=TC[t])

    x, out = rng.uniform(-5, 5, 100_000), np.empty(100_000)
    a, b, o = rng.standard_normal((B, H)), rng.standard_normal((H, 4 * H)), np.empty((B, 4 * H))
    libm_tanh(x, out)
    with threadpool_limits(1):
        full, bare = _best(lambda: step(True), rounds) / T, _best(lambda: step(False), rounds) / T
        bp = K._panels(b, B)
        mm_c, mm_np = (_best(lambda: K._matmul_panels(a, bp, b, o), rounds, 2000),
                       _best(lambda: np.matmul(a, b, out=o), rounds, 2000))
        per = {"numpy tanh": _best(lambda: np.tanh(x, out=out), rounds, 10),
               "numpy exp": _best(lambda: np.exp(x, out=out), rounds, 10),
               "C library tanh (numba)": _best(lambda: libm_tanh(x, out), rounds, 10)}
    print(f"\nforward step, B = {B}, H = {H}, T = {T}, best of {rounds}: {full * 1e6:.1f} µs as run; "
          f"{bare * 1e6:.1f} µs without its two numpy tanh calls ({B * 5 * H:,} values a step)")
    print(f"h W_h ({B} × {H} × {4 * H}): compiled FMA chains (b in panels) {mm_c * 1e6:.1f} µs, numpy's BLAS "
          f"{mm_np * 1e6:.1f} µs")
    for k, v in per.items():
        print(f"{k}: {v / x.size * 1e9:.1f} ns an element")


def layouts(k: int, rounds: int, acc: dict) -> None:
    from engine.schedule import BUCKETINGS
    from reproduce.paper2 import tasks
    from reproduce.paper2.bucketed import SeqWorker
    from reproduce.paper2.setup import DEFAULT

    d, data = tasks._seq(DEFAULT)
    tr = np.asarray(d.train)
    lab = np.array([len(x) for x in data.labels])
    best = {}
    with threadpool_limits(1):
        for rep in range(rounds):
            perm = np.random.default_rng(100 + rep).permutation(tr)
            for m, q in (("random", 1), ("optimal", 3), ("optimal", 6)):
                cfg = tasks.cfg_for(DEFAULT, Q=q, epochs=1, method=m)
                w = SeqWorker(data, tasks._n_out(), cfg=cfg, seed=1, rank=0, size=1)
                bounds = BUCKETINGS[m](data.lengths[tr], q) if m in BUCKETINGS else None
                batches = w.schedule(perm, bounds, batch_size=k, rng=np.random.default_rng(rep))
                big = max(batches, key=lambda b: b.idx.size * b.pad_len)
                w.grad(big.idx, big.pad_len)  # untimed warm-up, as timing_k.py
                for key in acc:
                    acc[key] = 0.0
                t = time.perf_counter()
                for b in batches:
                    w.grad(b.idx, b.pad_len)
                dt = time.perf_counter() - t
                name = f"{m}:{q}"
                if name not in best or dt < best[name][0]:
                    best[name] = (dt, dict(acc), sum(b.idx.size * b.pad_len for b in batches),
                                  sum(b.idx.size * b.pad_len * (2 * lab[b.idx].max() + 1) for b in batches))
    r = best["random:1"]
    print(f"\nk = {k}: one epoch of forward + backward passes, best of {rounds} interleaved rounds; "
          "ratios are random batches' ÷ this layout's")
    print(f"  {'layout':11s} {'seconds':>8s} {'speed-up':>8s} {'cells':>7s} {'lattice':>8s}  "
          + "  ".join(f"{p:>9s}" for p in PHASES))
    for name, (dt, ph, cells, lat) in best.items():
        print(f"  {name:11s} {dt:8.2f} {r[0] / dt:8.3f} {r[2] / cells:7.3f} {r[3] / lat:8.3f}  "
              + "  ".join(f"{r[1][p] / ph[p]:9.3f}" for p in PHASES))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layouts", action="store_true", help="Fig. 4's cost per cell by layout instead")
    ap.add_argument("--k", type=int, default=4, help="--layouts: the mini-batch size")
    ap.add_argument("--costs", action="store_true", help="a forward step's parts instead")
    args = ap.parse_args(argv)
    if args.costs:
        print(f"seqkernels: {K.IMPLEMENTATION}; load {os.getloadavg()[0]:.2f}")
        costs(args.rounds)
        print(f"load {os.getloadavg()[0]:.2f}")
        return 0
    acc = timed_phases()
    if args.layouts:
        print(f"seqkernels: {K.IMPLEMENTATION}; load {os.getloadavg()[0]:.2f}")
        layouts(args.k, args.rounds, acc)
        print(f"load {os.getloadavg()[0]:.2f}")
        return 0
    print(f"seqkernels: {K.IMPLEMENTATION}; load {os.getloadavg()[0]:.2f}")
    if K.IMPLEMENTATION != "numba":
        print("numba is absent: nothing to compare")
        return 1
    with threadpool_limits(1):
        for config in ("optimal:6", "random:1"):
            best, params = {}, {}
            for _ in range(args.rounds):
                for impl in ("numpy", "fused"):
                    s, ph, params[impl], n = epoch(config, impl, acc)
                    if impl not in best or s < best[impl][0]:
                        best[impl] = (s, ph)
                rel = np.max(np.abs(params["fused"] - params["numpy"])) / np.max(np.abs(params["numpy"]))
                if not rel <= 1e-10:
                    print(f"{config}: the two implementations' parameters differ by {rel:.3g}: stop")
                    return 2
            print(f"\n{config}: one epoch, {n} updates, best of {args.rounds} interleaved rounds "
                  f"(trained parameters within {rel:.2g} of the largest: the CTC rescales)")
            print(f"  {'':8s} {'epoch s':>8s}  " + "  ".join(f"{k:>15s}" for k in PHASES))
            for impl, (s, ph) in best.items():
                cells = "  ".join(f"{ph[k]:7.3f} ({100 * ph[k] / s:3.0f} %)" for k in PHASES)
                print(f"  {impl:8s} {s:8.3f}  {cells}")
            print(f"  fused / numpy speed: {best['numpy'][0] / best['fused'][0]:.2f}x; by phase "
                  + ", ".join(f"{k} {best['numpy'][1][k] / best['fused'][1][k]:.2f}x"
                              for k in PHASES))
    mismatches()
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
