"""Where an MLP training step spends its time, numpy call by numpy call.

Two jobs, the ones behind targets.py's targets 1 and 2:

- ``parity``: one ``bench_parity.ParityEpoch.epoch()``, the 8-100-1 net with the
  symmetric sigmoid on all 256 parity patterns (target 1, against FANN);
- ``bunch``: one ``bench_bunch.BunchStep.step()``, the 156-1000-56 logistic net at
  B = 1024 (target 2, the roofline share and torch).

The list of calls mirrors ``MLP.forward``, ``MLP.backward`` (engine/nets/mlp.py),
each activation's ``f`` and ``df`` (engine/activations.py) and ``SGD.step``
(engine/optim.py) in the engine's order, at their real shapes and on the values of
a real step, with one BLAS thread. The activation ops composed here are checked
against the engine's own ``f`` and ``df`` bit for bit before anything is timed, so
a listing that no longer matches the engine stops the script. Each op reads inputs
that stay fixed and writes a separate buffer of its output's shape: repeating an
in-place op would drift its values (``+= b`` pushes tanh into saturation, ``*= 0.5``
reaches subnormals). The ops and the whole step are timed in interleaved rounds
(each round times every op over ``--calls`` calls) and each keeps its best round,
so a noisy stretch of the machine hits them all alike. The whole step minus the sum
of the ops is the engine's own Python (method calls, view lookups) and what
separate buffers cost or save.

After the list, for comparison only, the same job's alternatives that the engine
does not use, with how far they round from it: the outer product as a broadcast
multiply (what einsum replaced at e504026) and the logistic through ``exp``. Run
from the repository root:

    .venv/bin/python benchmarks/profile_mlp.py                # parity
    .venv/bin/python benchmarks/profile_mlp.py --job bunch
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.bench_bunch import BunchStep, _best  # noqa: E402
from benchmarks.bench_parity import ParityEpoch  # noqa: E402
from benchmarks.targets import machine_line  # noqa: E402
from engine.tanhkernel import tanh  # noqa: E402  (the engine's: compiled where numba runs, else numpy's)

# Each activation's f(z) (here) and df(y) (``_df_ops_of``) as the engine's activations.py
# computes them, one numpy call per entry: (label, call(x, out)); each call reads the
# previous one's result. Checked against the engine's f and df in ``_check``.
_HALF = [("* 0.5", lambda x, o: np.multiply(x, 0.5, out=o))]
F_OPS = {
    "logistic": _HALF + [("tanh", tanh),
                         ("* 0.5", lambda x, o: np.multiply(x, 0.5, out=o)),
                         ("+ 0.5", lambda x, o: np.add(x, 0.5, out=o))],
    "symmetric_sigmoid": _HALF + [("tanh", tanh)],
    "tanh": [("tanh", tanh)],
}
def _df_ops_of(name: str, y: np.ndarray) -> list:
    """df(y)'s calls as (label, call(x, out)), in the engine's order."""
    if name == "logistic":  # y (1 − y)
        return [("1 - y", lambda x, o: np.subtract(1.0, x, out=o)),
                ("· y", lambda x, o: np.multiply(x, y, out=o))]
    ops = [("y · y", lambda x, o: np.multiply(x, x, out=o)),
           ("1 - .", lambda x, o: np.subtract(1.0, x, out=o))]
    if name == "symmetric_sigmoid":  # ½ (1 − y²)
        ops.append(("* 0.5", lambda x, o: np.multiply(x, 0.5, out=o)))
    return ops


def _chain(ops, x):
    """The input of every op of ``ops`` applied in turn to ``x``, and the result."""
    ins = []
    for _, fn in ops:
        ins.append(x)
        x = fn(x, np.empty_like(x))
    return ins, x


def _df_ops(name: str, y: np.ndarray):
    """(label, fixed input, call(x, out)) of df(y)'s calls, and df(y)."""
    ops = _df_ops_of(name, y)
    ins, out = _chain(ops, y)
    return [(label, x, fn) for (label, fn), x in zip(ops, ins)], out


def _check(net, z_pre: list, a: list) -> None:
    """The composed ops give the engine's f and df bit for bit, layer by layer."""
    for l, act in enumerate(net.acts, start=1):
        _, f_ours = _chain(F_OPS[act.name], z_pre[l])
        f_engine = act.f(z_pre[l], np.empty_like(z_pre[l]))
        _, df_ours = _df_ops(act.name, a[l])
        df_engine = act.df(a[l], np.empty_like(a[l]))
        if not (np.array_equal(f_ours, f_engine) and np.array_equal(df_ours, df_engine)):
            raise SystemExit(f"profile_mlp: the listed ops of {act.name!r} no longer match "
                             "engine/activations.py; update F_OPS/_df_ops_of")


def ops(job, step) -> list[tuple[str, object]]:
    """(label, zero-argument call) for every numpy call of one step, in the engine's order."""
    net, X, T = job.net, job.X, job.T
    W, b, L = net.W, net.b, net.L
    step()  # a real step's values
    y, _ = net.forward(X, ws=job.ws)
    a = [X] + [job.ws.a[l].copy() for l in range(1, L + 1)]  # a[l] (B, n_l) layer outputs
    z_pre = [None] + [a[l - 1] @ W[l] + b[l] for l in range(1, L + 1)]  # (B, n_l) after + b
    _check(net, z_pre, a)
    g = np.full(net.n_params, 1e-3)  # (n_params,) a gradient and a velocity that stay
    v = np.full(net.n_params, 1e-3)  # away from subnormals
    B, shape = X.shape[0], lambda x: str(x.shape).replace(" ", "")
    out = []

    def add(label, fn):
        out.append((label, fn))

    for l in range(1, L + 1):
        o = np.empty_like(a[l])
        add(f"fwd  a{l - 1} @ W{l}  {shape(a[l - 1])}@{shape(W[l])}",
            lambda x=a[l - 1], w=W[l], o=o: np.matmul(x, w, out=o))
        add(f"fwd  + b{l}  {shape(a[l])}", lambda z=a[l - 1] @ W[l], bb=b[l], o=o: np.add(z, bb, out=o))
        ins, _ = _chain(F_OPS[net.acts[l - 1].name], z_pre[l])
        for (label, fn), x in zip(F_OPS[net.acts[l - 1].name], ins):
            add(f"fwd  f{l}: {label}  {shape(x)}", lambda fn=fn, x=x, o=o: fn(x, o))
    dy = y - T  # (B, n_L)
    add(f"loss y - t  {shape(dy)}", lambda o=np.empty_like(dy): np.subtract(y, T, out=o))
    # the deltas of a real step, layer by layer: delta[l] (B, n_l)
    delta = [None] * (L + 1)
    dfs = {l: _df_ops(net.acts[l - 1].name, a[l]) for l in range(1, L + 1)}
    delta[L] = dy * dfs[L][1]
    for l in range(L, 1, -1):
        delta[l - 1] = (delta[l] @ W[l].T) * dfs[l - 1][1]
    for label, x, fn in dfs[L][0]:
        add(f"bwd  df{L}: {label}  {shape(x)}", lambda fn=fn, x=x, o=np.empty_like(x): fn(x, o))
    add(f"bwd  delta{L} = dy · df  {shape(dy)}",
        lambda d=dfs[L][1], o=np.empty_like(dy): np.multiply(dy, d, out=o))
    for l in range(L, 0, -1):
        gW, gb = np.empty_like(W[l]), np.empty_like(b[l])
        add(f"bwd  a{l - 1}ᵀ @ delta{l}  {shape(a[l - 1].T)}@{shape(delta[l])}",
            lambda x=a[l - 1], d=delta[l], o=gW: np.matmul(x.T, d, out=o))
        add(f"bwd  Σ delta{l}  {shape(delta[l])}->{shape(gb)}",
            lambda d=delta[l], o=gb: np.sum(d, axis=0, out=o))
        if l == 1:
            continue
        o = np.empty_like(a[l - 1])
        if delta[l].shape[1] == 1:
            add(f"bwd  delta{l} W{l}ᵀ (einsum)  {shape(delta[l])}x{shape(W[l].T)}",
                lambda d=delta[l], w=W[l], o=o: np.einsum("i,j->ij", d[:, 0], w[:, 0], out=o))
        else:
            add(f"bwd  delta{l} @ W{l}ᵀ  {shape(delta[l])}@{shape(W[l].T)}",
                lambda d=delta[l], w=W[l], o=o: np.matmul(d, w.T, out=o))
        for label, x, fn in dfs[l - 1][0]:
            add(f"bwd  df{l - 1}: {label}  {shape(x)}", lambda fn=fn, x=x, o=o: fn(x, o))
        add(f"bwd  delta{l - 1} *= df  {shape(o)}",
            lambda d=delta[l] @ W[l].T, f=dfs[l - 1][1], o=o: np.multiply(d, f, out=o))
    upd, v2, w2 = np.empty_like(g), np.empty_like(g), np.empty_like(g)
    lr_n, m, w = -job.opt.lr / B, job.opt.momentum, net.params
    add(f"sgd  u = -lr/B·g, v·m + u, w + v  ({net.n_params},), 4 ops",
        lambda: (np.multiply(g, lr_n, out=upd), np.multiply(v, m, out=v2),
                 np.add(v2, upd, out=v2), np.add(w, v2, out=w2)))
    return out


def alternatives(job) -> list[tuple[str, object, str]]:
    """(label, call, how it rounds against the engine) of what the engine does not use."""
    net, X = job.net, job.X
    alt = []
    for l in range(1, net.L + 1):
        a_prev = X if l == 1 else job.ws.a[l - 1]
        if net.sizes[l] == 1 and l > 1:  # the outer product's old form
            d, w = np.linspace(-1, 1, X.shape[0])[:, None], net.W[l]
            o = np.empty((X.shape[0], net.sizes[l - 1]))
            same = np.array_equal(d * w.T, np.einsum("i,j->ij", d[:, 0], w[:, 0]))
            alt.append((f"delta{l} * W{l}ᵀ broadcast multiply {o.shape}",
                        lambda d=d, w=w, o=o: np.multiply(d, w.T, out=o),
                        "same bits" if same else "DIFFERENT bits"))
        if net.acts[l - 1].name == "logistic":
            z = a_prev @ net.W[l] + net.b[l]  # (B, n_l)
            o = np.empty_like(z)

            def via_exp(z=z, o=o):  # 1 / (1 + e^-z): 4 calls
                np.negative(z, out=o)
                np.exp(o, out=o)
                o += 1.0
                return np.reciprocal(o, out=o)

            ref = net.acts[l - 1].f(z, np.empty_like(z))
            via_exp()
            ulps = np.abs(o - ref) / np.spacing(np.abs(ref))
            alt.append((f"f{l} logistic as 1/(1+exp(-z)) {z.shape}, 4 ops", via_exp,
                        f"{np.mean(o != ref):.0%} of values differ, by up to {ulps.max():.1f} ulp"))
            alt.append((f"f{l} the engine's logistic (for this comparison) {z.shape}",
                        lambda f=net.acts[l - 1].f, z=z, o=o: f(z, o), "the reference"))
    return alt


JOBS = {"parity": (ParityEpoch, "epoch", 500, 20), "bunch": (lambda: BunchStep(1024), "step", 5, 7)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--job", choices=sorted(JOBS), default="parity")
    ap.add_argument("--calls", type=int, help="calls per op per round (parity 500, bunch 5)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (parity 20, bunch 7)")
    args = ap.parse_args(argv)
    make, method, calls, rounds = JOBS[args.job]
    calls, rounds = args.calls or calls, args.rounds or rounds
    with threadpool_limits(1):
        job = make()
        whole_fn = getattr(job, method)
        listed = ops(job, whole_fn)
        alt = alternatives(job)
        steps = listed + [(f"{type(job).__name__}.{method} (the engine, whole)", whole_fn)]
        steps += [(label, fn) for label, fn, _ in alt]
        best = [float("inf")] * len(steps)
        for _, fn in steps:  # warm-up
            _best(fn, max(1, calls // 10), 1)
        for _ in range(rounds):
            for i, (_, fn) in enumerate(steps):
                best[i] = min(best[i], _best(fn, calls, 1))
    parts, whole, t_alt = best[:len(listed)], best[len(listed)], best[len(listed) + 1:]
    total = sum(parts)
    unit, scale = ("µs", 1e6) if whole < 1e-2 else ("ms", 1e3)
    w = max(len(label) for label, _ in steps) + 2
    print(f"job {args.job}; numpy {np.__version__}; best of {rounds} interleaved rounds x {calls} "
          f"calls; one thread; {machine_line()}")
    for (label, _), t in zip(listed, parts):
        print(f"  {label:{w}s} {t * scale:8.2f} {unit}  {t / total:5.1%}")
    print(f"  {'sum of the ops':{w}s} {total * scale:8.2f} {unit}")
    print(f"  {steps[len(listed)][0]:{w}s} {whole * scale:8.2f} {unit}")
    print(f"  {'whole - sum (engine Python, buffers)':{w}s} {(whole - total) * scale:8.2f} {unit}")
    by = {}
    for (label, _), t in zip(listed, parts):
        kind = ("matmul/einsum" if ("@" in label or "einsum" in label) else
                "tanh" if "tanh" in label else "other")
        by[kind] = by.get(kind, 0.0) + t
    print("  by kind: " + ", ".join(f"{k} {t * scale:.2f} {unit} ({t / total:.0%})"
                                    for k, t in by.items()))
    if alt:
        print("for comparison, not used by the engine:")
        for (label, _, note), t in zip(alt, t_alt):
            print(f"  {label:{w}s} {t * scale:8.2f} {unit}  ({note})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
