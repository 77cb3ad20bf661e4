"""Where the parity 8-100-1 epoch of targets.py's target 1 spends its time, op by op.

Every numpy call of one ``bench_parity.ParityEpoch.epoch()`` (MLP.forward, MLP.backward
and SGD.step at e504026) is timed on its own, at its real shape and on values of a real
epoch, with one BLAS thread. Each op reads inputs that stay fixed and writes a separate
buffer of its output's shape: repeating an in-place op would drift its values (``+= b``
pushes tanh into saturation, ``*= 0.5`` reaches subnormals). The ops and the whole
``ParityEpoch.epoch`` are timed in interleaved rounds (each round times every op over
``--calls`` calls), and each keeps its best round, so a noisy stretch of the machine
hits them all alike. The whole epoch minus the sum of the ops is the engine's own
Python (method calls, view lookups) and what separate buffers cost or save. Run from
the repository root:

    .venv/bin/python benchmarks/profile_parity.py
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.bench_bunch import _best  # noqa: E402
from benchmarks.bench_parity import ParityEpoch  # noqa: E402


def ops(job: ParityEpoch) -> tuple[list[tuple[str, object]], object]:
    """(label, zero-argument call) for every numpy call of one epoch, in the engine's order,
    and, for comparison, the broadcast multiply that the einsum outer product replaced."""
    net, X, T = job.net, job.X, job.T
    W, b = net.W, net.b
    y, _ = net.forward(X, ws=job.ws)
    a1 = job.ws.a[1].copy()  # (256, 100) hidden outputs of a real forward pass
    y = y.copy()  # (256, 1)
    z1 = X @ W[1] + b[1]  # (256, 100) before the ½ scaling
    z1h = 0.5 * z1  # (256, 100) what tanh sees
    z2 = a1 @ W[2] + b[2]  # (256, 1)
    dy = y - T  # (256, 1)
    d2 = 0.5 * (1.0 - y * y) * dy  # (256, 1) output delta
    d1 = np.outer(d2[:, 0], W[2][:, 0]) * (0.5 * (1.0 - a1 * a1))  # (256, 100) hidden delta
    o1, o2 = np.empty_like(a1), np.empty_like(y)  # scratch outputs (256, 100), (256, 1)
    gW1, gW2 = np.empty_like(W[1]), np.empty_like(W[2])  # (8, 100), (100, 1)
    gb1, gb2 = np.empty_like(b[1]), np.empty_like(b[2])  # (100,), (1,)
    g = np.full(net.n_params, 1e-3)  # (n_params,) a gradient and a velocity that stay
    v = np.full(net.n_params, 1e-3)  # away from subnormals
    upd, v2, w2 = np.empty_like(g), np.empty_like(g), np.empty_like(g)
    lr_n, m, w = -job.opt.lr / job.n, job.opt.momentum, net.params
    before = lambda: np.multiply(d2, W[2].T, out=o1)  # noqa: E731 (256,1)*(1,100), before e504026
    return [
        ("fwd  X @ W1              (256,8)@(8,100)", lambda: np.matmul(X, W[1], out=o1)),
        ("fwd  + b1                (256,100)", lambda: np.add(z1, b[1], out=o1)),
        ("fwd  * 0.5               (256,100)", lambda: np.multiply(z1, 0.5, out=o1)),
        ("fwd  tanh                (256,100)", lambda: np.tanh(z1h, out=o1)),
        ("fwd  a1 @ W2             (256,100)@(100,1)", lambda: np.matmul(a1, W[2], out=o2)),
        ("fwd  + b2, * 0.5, tanh   (256,1)", lambda: (np.add(z2, b[2], out=o2),
                                                      np.multiply(z2, 0.5, out=o2),
                                                      np.tanh(z2, out=o2))),
        ("loss y - t               (256,1)", lambda: np.subtract(y, T, out=o2)),
        ("bwd  delta2 = dy·½(1-y²) (256,1), 4 ops", lambda: (np.multiply(y, y, out=o2),
                                                             np.subtract(1.0, o2, out=o2),
                                                             np.multiply(o2, 0.5, out=o2),
                                                             np.multiply(dy, o2, out=o2))),
        ("bwd  a1.T @ delta2       (100,256)@(256,1)", lambda: np.matmul(a1.T, d2, out=gW2)),
        ("bwd  sum delta2          (256,1)->(1,)", lambda: np.sum(d2, axis=0, out=gb2)),
        ("bwd  delta2 W2ᵀ (einsum) (256,1)x(1,100)",
         lambda: np.einsum("i,j->ij", d2[:, 0], W[2][:, 0], out=o1)),
        ("bwd  y * y               (256,100)", lambda: np.multiply(a1, a1, out=o1)),
        ("bwd  1 - .               (256,100)", lambda: np.subtract(1.0, a1, out=o1)),
        ("bwd  * 0.5               (256,100)", lambda: np.multiply(a1, 0.5, out=o1)),
        ("bwd  delta1 * df         (256,100)", lambda: np.multiply(d1, a1, out=o1)),
        ("bwd  X.T @ delta1        (8,256)@(256,100)", lambda: np.matmul(X.T, d1, out=gW1)),
        ("bwd  sum delta1          (256,100)->(100,)", lambda: np.sum(d1, axis=0, out=gb1)),
        ("sgd  u=-lr/n·g, v·m+u, w+v (1001,), 4 ops", lambda: (np.multiply(g, lr_n, out=upd),
                                                               np.multiply(v, m, out=v2),
                                                               np.add(v2, upd, out=v2),
                                                               np.add(w, v2, out=w2))),
    ], before


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=500, help="calls per op per round")
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args(argv)
    with threadpool_limits(1):
        job = ParityEpoch()
        listed, before = ops(job)
        steps = listed + [("ParityEpoch.epoch (the engine, whole)", job.epoch),
                          ("delta2 * W2ᵀ broadcast multiply (before)", before)]
        best = [float("inf")] * len(steps)
        for _, fn in steps:  # warm-up
            _best(fn, max(1, args.calls // 10), 1)
        for _ in range(args.rounds):
            for i, (_, fn) in enumerate(steps):
                best[i] = min(best[i], _best(fn, args.calls, 1))
    *parts, whole, t_before = best
    total = sum(parts)
    t_einsum = next(t for (label, _), t in zip(steps, parts) if "einsum" in label)
    print(f"numpy {np.__version__}; best of {args.rounds} interleaved rounds x {args.calls} calls; "
          "one thread")
    for (label, _), t in zip(steps, parts):
        print(f"  {label:44s} {t * 1e6:7.1f} µs  {t / total:5.1%}")
    print(f"  {'sum of the ops':44s} {total * 1e6:7.1f} µs")
    print(f"  {steps[-2][0]:44s} {whole * 1e6:7.1f} µs")
    print(f"  {'whole - sum (engine Python, buffers)':44s} {(whole - total) * 1e6:7.1f} µs")
    print(f"for comparison, the outer product as it was computed before e504026:\n"
          f"  {steps[-1][0]:44s} {t_before * 1e6:7.1f} µs  (einsum: "
          f"{t_einsum * 1e6:.1f} µs, {t_before / t_einsum:.2f}x faster)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
