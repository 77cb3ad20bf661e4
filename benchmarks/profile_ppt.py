"""Where an emulated paper3 task spends its time, per worker and round (issue 14, target 7).

The job is paper3's default setup (8-bit parity, 8-100-1 symmetric sigmoid, η = 0.1,
α = 0.3, k = 2, threshold 0.01; reproduce/paper3/setup.py) as Pattern Parallel Training
on the emulated backend, compute only (the ``FREE`` profile, as paper3's emulated tasks
run), P nodes, local epoch m, one seed. The default is 8 nodes, local epoch 32, seed 6:
in the committed d29965b run that task never converged and ran its 200,000 rounds to the
epoch cap (201 s). Here it stops after ``--rounds`` rounds (default 20,000: the share of
rounds that verify grows as the estimate nears the threshold).

First an unwrapped run gives the compute the workers' clocks book per worker and round.
Then a second run of the same rounds splits that compute into phases, by timers wrapped
around the engine's functions:

- sampling: drawing the local epoch (``random_steps``, Dahl et al. 2008 §4 step 1);
- forward: the local epoch's forward pass;
- error history: the per-pattern squared errors and their ring of k·n/P (§4.1);
- backward: back-propagation into the gradient;
- update: the direction −η·g/m and applying the summed updates with momentum (§4.1);
- verification: the full-set MSE every worker computes once the mean estimate is below the
  threshold (§4.1), its forward pass included;
- other: the rest of the booked compute (the step loop, the hooks' bookkeeping, the sum of
  the P updates, the clocks), i.e. the booked compute less the phases above.

The timers add two clock reads and a Python call to each timed call, so the wrapped run
may book a little more than the unwrapped one (this VM's noise can hide it); the split is
of the wrapped run. Outside the compute is the emulator's own
work (switching workers, assembling each allgather), which an emulated task spends but
does not book. Last, the numpy calls that a step fused into compiled code would still make
to keep the bits (the engine's tanh, compiled in engine/tanhkernel.py, BLAS, the generator's draw, the sums whose order numpy sets), timed alone: a floor for what fusing could reach. And one worker's round outside the
data-parallel loop, through the engine's methods and with the same calls inlined (the same
weights both ways, checked): what removing the Python structure alone, without fusing,
could reach.

    .venv/bin/python benchmarks/profile_ppt.py [--nodes 8 --local-epoch 32 --seed 6 --rounds 20000]
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

from datasets.parity import parity  # noqa: E402
from engine.nets.mlp import MLP  # noqa: E402
from engine.optim import SGD  # noqa: E402
from engine.parallel import data_parallel  # noqa: E402
from engine.perfmodel import FREE  # noqa: E402
from engine.tanhkernel import tanh  # noqa: E402
from reproduce.paper3 import ppt as pattern  # noqa: E402
from reproduce.paper3.setup import DEFAULT  # noqa: E402

PHASES = ("sampling", "forward", "error history", "backward", "update", "verification")


def run(P: int, m: int, seed: int, rounds: int):
    """(RunRecord, wall s) of one emulated PPT run of paper3's setup, capped at ``rounds``."""
    s = DEFAULT
    X, T = parity(s.bits, activation=s.activation)
    cfg = pattern.PPTConfig(local_epoch=m, lr=s.lr, momentum=s.momentum, k=s.k,
                            threshold=s.threshold, combine=s.combine,
                            max_epochs=rounds * P * m / X.shape[0])  # = ``rounds`` rounds
    t = time.perf_counter()
    rec = pattern.train_pattern_parallel(X, T, backend="emulated", profile=FREE, sizes=s.sizes,
                                         activation=s.activation, cfg=cfg, seed=seed, workers=P,
                                         init_scale=s.init_scale)
    return rec, time.perf_counter() - t


def timed_phases():
    """Wrap the engine's functions with timers; returns (seconds by phase, call counts, undo)."""
    acc, calls = dict.fromkeys(PHASES, 0.0), dict.fromkeys(PHASES, 0)
    saved, state = [], {"verifying": False}

    def wrap(owner, attr, phase, *, generator=False, flag=False):
        fn = getattr(owner, attr)
        saved.append((owner, attr, fn))
        if generator:  # time each draw, not the generator's life
            def wrapped(*a, **kw):
                g = fn(*a, **kw)
                while True:
                    t = time.perf_counter()
                    try:
                        item = next(g)
                    except StopIteration:
                        return
                    acc[phase] += time.perf_counter() - t
                    calls[phase] += 1
                    yield item
        else:
            def wrapped(*a, **kw):
                if state["verifying"] and not flag:  # inside the verification: its time
                    return fn(*a, **kw)
                state["verifying"] = flag
                t = time.perf_counter()
                try:
                    return fn(*a, **kw)
                finally:
                    acc[phase] += time.perf_counter() - t
                    calls[phase] += 1
                    state["verifying"] = False
        setattr(owner, attr, wrapped)

    wrap(data_parallel, "random_steps", "sampling", generator=True)
    wrap(MLP, "forward", "forward")
    wrap(pattern, "per_pattern_squared_error", "error history")
    wrap(pattern.ErrorEstimateStop, "_remember", "error history")
    wrap(MLP, "backward", "backward")
    wrap(SGD, "direction", "update")
    wrap(SGD, "apply", "update")
    wrap(pattern.ErrorEstimateStop, "full_mse", "verification", flag=True)

    def undo():
        for owner, attr, fn in reversed(saved):
            setattr(owner, attr, fn)

    return acc, calls, undo


def profile(P: int, m: int, seed: int, rounds: int) -> dict:
    """Both runs (unwrapped, then with the phase timers) and what they booked; raises if the
    wrapped run trained differently."""
    with threadpool_limits(1):
        rec, wall = run(P, m, seed, rounds)
        acc, calls, undo = timed_phases()
        try:
            rec2, wall2 = run(P, m, seed, rounds)
        finally:
            undo()
    if rec2.rounds != rec.rounds or not np.array_equal(rec2.params, rec.params):
        raise RuntimeError("the wrapped run trained differently")
    return {"rec": rec, "wall": wall, "wall_wrapped": wall2, "booked": float(rec2.compute_s.sum()),
            "phases": acc, "calls": calls, "curve": rec2.loss_curve}


def numpy_floor(m: int, n_hidden: int, n_in: int, n: int, *, history: int) -> dict:
    """µs of the numpy calls a fused worker step would still make, to keep the bits: both
    layers' tanh and GEMMs (m patterns; n in the verification), the local epoch's draw, and
    the sums whose order numpy sets (the error history's mean over ``history`` values, the
    verification's MSE). Each writes a preallocated output, as the engine does; best of 5
    repeats of 2,000 calls each."""
    import timeit

    rng = np.random.default_rng(0)

    def b(*shape):
        return np.empty(shape)

    z_m, z_n = rng.standard_normal((m, n_hidden)), rng.standard_normal((n, n_hidden))
    h_m, h_n = rng.standard_normal((m, 1)), rng.standard_normal((n, 1))
    W1, W2 = rng.standard_normal((n_in, n_hidden)), rng.standard_normal((n_hidden, 1))
    x_m, x_n = rng.standard_normal((m, n_in)), rng.standard_normal((n, n_in))
    o_m, o_n, y_m, y_n = b(m, n_hidden), b(n, n_hidden), b(m, 1), b(n, 1)
    g1, g2 = b(n_in, n_hidden), b(n_hidden, 1)  # the gradient's W1 and W2 blocks
    hist, d_n = rng.random(history), rng.standard_normal((n, 1))
    calls = {
        f"tanh ({m}, {n_hidden}) and ({m}, 1)": lambda: (tanh(z_m, o_m), tanh(h_m, y_m)),
        f"GEMMs of {m} patterns (forward 2, backward 2)": lambda: (
            np.matmul(x_m, W1, out=o_m), np.matmul(o_m, W2, out=y_m),
            np.matmul(o_m.T, y_m, out=g2), np.matmul(x_m.T, o_m, out=g1)),
        f"choice of {m} of {n}": lambda: rng.choice(n, m, replace=False),
        f"mean of the error history ({history})": lambda: np.add.reduce(hist) / history,
        f"tanh ({n}, {n_hidden}) and ({n}, 1) (verification)": lambda: (
            tanh(z_n, o_n), tanh(h_n, y_n)),
        f"GEMMs of {n} patterns (verification)": lambda: (
            np.matmul(x_n, W1, out=o_n), np.matmul(o_n, W2, out=y_n)),
        f"MSE of {n} (verification)": lambda: np.einsum("bo,bo->", d_n, d_n) / d_n.size,
    }
    with threadpool_limits(1):
        return {k: 1e6 * min(timeit.repeat(f, number=2000, repeat=5)) / 2000 for k, f in calls.items()}


def _round_runner(P: int, m: int, *, inline: bool, verify: float, seed: int = 3):
    """``go(R)``: R rounds of one PPT worker (paper3's setup) outside the data-parallel loop,
    without communication: the other P − 1 updates are this worker's own, and a separate
    stream verifies at rate ``verify``. ``inline``: the engine's calls for this net (two
    layers, one output: MLP.backward's outer-product branch) written out with locals bound
    once, else through its methods (ErrorEstimateStop.grad, SGD.direction and
    apply), as :func:`engine.parallel.data_parallel._sync_step` calls them. Returns
    (go, params): both variants must leave the same weights."""
    s = DEFAULT
    X, T = parity(s.bits, activation=s.activation)
    n = X.shape[0]
    net = MLP(s.sizes, s.activation)
    net.init_uniform(np.random.default_rng(1), scale=s.init_scale)
    rng, vrng = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    N = net.n_params
    msg, recv, u = np.empty(N + 1), np.empty((P, N + 1)), np.empty(N)  # (N+1,), (P, N+1), (N,)
    if not inline:
        cfg = pattern.PPTConfig(local_epoch=m, lr=s.lr, momentum=s.momentum, k=s.k,
                                threshold=s.threshold)
        hk = pattern.ErrorEstimateStop(X, T, cfg=cfg)
        comm = type("Comm", (), {"size": P, "rank": 0})()
        rep = type("Rep", (), {"net": net, "g": np.empty(N)})()
        hk.start(comm, rep)
        opt = SGD(N, lr=s.lr, momentum=s.momentum)

        def go(R):
            for _ in range(R):
                idx = rng.choice(n, m, replace=False)
                hk.grad(comm, rep, idx, None, msg[N:])
                opt.direction(rep.g, m, out=msg[:N])
                recv[:] = msg
                opt.apply(net.params, np.add.reduce(recv[:, :N], axis=0, out=u))
                float(np.add.reduce(recv[:, N]) / P)
                if vrng.random() < verify:
                    hk.full_mse(net)
        return go, net.params
    from engine import kernels as K
    from engine.losses import mean_squared_error

    W1, b1, W2, b2 = net.W[1], net.b[1], net.W[2], net.b[2]
    a1, a2 = net.acts
    ws, wsn = net.workspace(m), net.workspace(n)  # the local epoch's; the verification's
    h, y, d2, t2, d1, t1, dy = ws.a[1], ws.a[2], ws.delta[2], ws.tmp[2], ws.delta[1], ws.tmp[1], ws.dy
    g = np.empty(N)  # (N,)
    gW1, gb1, gW2, gb2 = (net.view(g, k) for k in ("W1", "b1", "W2", "b2"))
    Rh = math.ceil(s.k * n / P)
    hist, st = np.zeros(Rh), [0, 0]  # (⌈k·n/P⌉,) ring; [position, length]
    v, params, c, mom = np.zeros(N), net.params, -s.lr / m, s.momentum
    choice, matmul, einsum, addr = rng.choice, np.matmul, np.einsum, np.add.reduce
    bias_act, df_mul, outer = K.bias_act, K.df_mul, K.outer_df_mul

    def go(R):
        for _ in range(R):
            idx = choice(n, m, replace=False)
            x, t = X[idx], T[idx]
            matmul(x, W1, out=h)
            bias_act(a1, h, b1)
            matmul(h, W2, out=y)
            bias_act(a2, y, b2)
            d = y - t
            e = (einsum("bo,bo->b", d, d) / d.shape[1])[-Rh:]
            pos, first = st[0], min(Rh - st[0], e.size)
            hist[pos:pos + first] = e[:first]
            hist[:e.size - first] = e[first:]
            st[0], st[1] = (pos + e.size) % Rh, min(Rh, st[1] + e.size)
            np.subtract(y, t, out=dy)
            df_mul(a2, y, dy, d2, t2, None)
            matmul(h.T, d2, out=gW2)
            addr(d2, axis=0, out=gb2)
            outer(a1, h, d2[:, 0], W2[:, 0], d1, t1, gb1)
            matmul(x.T, d1, out=gW1)
            msg[N] = addr(hist[:st[1]]) / st[1]
            np.multiply(g, c, out=msg[:N])
            recv[:] = msg
            addr(recv[:, :N], axis=0, out=u)
            np.multiply(v, mom, out=v)  # SGD.apply: v *= α; v += u; params += v
            np.add(v, u, out=v)
            np.add(params, v, out=params)
            float(addr(recv[:, N]) / P)
            if vrng.random() < verify:
                mean_squared_error(net.forward(X, ws=wsn)[0], T)
    return go, params


def methods_vs_inline(P: int, m: int, *, verify: float, rounds: int = 4000, repeats: int = 5):
    """µs per round of one worker's round through the engine's methods and inlined
    (:func:`_round_runner`), interleaved, best of ``repeats``; after checking that both
    leave the same weights."""
    a, pa = _round_runner(P, m, inline=False, verify=verify)
    b, pb = _round_runner(P, m, inline=True, verify=verify)
    a(rounds), b(rounds)
    if not np.array_equal(pa, pb):
        raise SystemExit("the inlined round no longer computes what the engine's methods do")
    best = {"methods": math.inf, "inline": math.inf}
    with threadpool_limits(1):
        for _ in range(repeats):
            for k, go in (("methods", a), ("inline", b)):
                t = time.perf_counter()
                go(rounds)
                best[k] = min(best[k], 1e6 * (time.perf_counter() - t) / rounds)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--local-epoch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=20_000)
    args = ap.parse_args(argv)
    P, m = args.nodes, args.local_epoch
    print(f"paper3 PPT, emulated (compute only), {P} nodes, local epoch {m}, seed {args.seed}, "
          f"at most {args.rounds:,} rounds; load {os.getloadavg()[0]:.2f}")
    r = profile(P, m, args.seed, args.rounds)
    rec, c, acc, calls, booked = r["rec"], r["rec"].compute_s, r["phases"], r["calls"], r["booked"]
    wr = rec.rounds * P  # worker-rounds
    slowest = c.max(axis=1).sum()
    print(f"unwrapped: {rec.rounds:,} rounds ({'converged' if rec.converged else 'not converged'}),"
          f" wall {r['wall']:.3f} s; compute per worker and round: mean {1e6 * c.mean():.1f} µs, "
          f"median {1e6 * np.median(c):.1f} µs; Σ over rounds of the slowest worker "
          f"{slowest:.3f} s = {slowest / c.mean(axis=1).sum():.2f}× Σ of the mean worker")
    rows = [(k, acc[k], calls[k]) for k in PHASES] + [("other", booked - sum(acc.values()), None)]
    print(f"wrapped:   the same rounds and weights, wall {r['wall_wrapped']:.3f} s, compute booked "
          f"{booked:.3f} s ({1e6 * booked / wr:.1f} µs per worker and round)")
    print(f"  {'phase':14s} {'µs per worker-round':>20s} {'share':>6s} {'calls per worker-round':>24s}")
    for k, sec, n in rows:
        per = "" if n is None else f"{n / wr:24.2f}"
        print(f"  {k:14s} {1e6 * sec / wr:20.1f} {100 * sec / booked:5.0f} % {per}")
    out = r["wall_wrapped"] - booked
    print(f"  outside compute (the emulator's own work): {1e6 * out / wr:.1f} µs per "
          f"worker-round, {100 * out / r['wall_wrapped']:.0f} % of the wall time")
    if calls["verification"]:
        print(f"  one verification (full-set forward of {2 ** DEFAULT.bits} patterns and the MSE): "
              f"{1e6 * acc['verification'] / calls['verification']:.1f} µs")
    n = 2 ** DEFAULT.bits
    fl = numpy_floor(m, DEFAULT.hidden, DEFAULT.bits, n, history=math.ceil(DEFAULT.k * n / P))
    v = calls["verification"] / wr  # verifications per worker-round
    print("numpy calls a fused step would keep (their bits): µs per call, best of 5 × 2,000")
    for k, us in fl.items():
        print(f"  {k:48s} {us:7.1f}")
    per = sum(us * (v if "verification" in k else 1.0) for k, us in fl.items())
    print(f"  per worker-round at {v:.2f} verifications each: {per:.1f} µs, against "
          f"{1e6 * booked / wr:.1f} µs booked")
    mi = methods_vs_inline(P, m, verify=v)
    print(f"one worker's round outside the data-parallel loop, no communication, {v:.2f} "
          "verifications a round (the same weights both ways), best of 5 × 4,000 rounds:")
    print(f"  through the engine's methods {mi['methods']:.1f} µs; the same calls inlined, "
          f"locals bound once, {mi['inline']:.1f} µs")
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
