"""Bunch-mode training of the 156-1000-56 speech MLP (Färber 1997, Quicknet), one thread.

One step = forward + backward + SGD step on a bunch of B patterns. Speed is
also given in MCUPS (million connection updates per second,
B · n_params / seconds per step) and as a share of the matmul roofline:

    roofline MCUPS = R_gemm / f / 1e6
    R_gemm = Σ_k 2·m_k·k_k·n_k / Σ_k t_k   over the five GEMMs of one step
             (forward a0@W1, a1@W2; weight gradients a0ᵀ@δ1, a1ᵀ@δ2; input
             delta δ2@W2ᵀ), numpy's own matmul on the same shapes and operand
             layouts as MLP.forward/backward, one thread, timed in the same run;
    f      = (2·C + 2·C + 2·(C − C_1)) / C  flops per connection update of the
             minimal algorithm: forward 2, weight gradient 2, input delta 2
             except in the first layer; C = all weights and biases,
             C_1 = the first layer's (157 000 of 213 056 here, f ≈ 4.526).

Activations: logistic hidden and output units (Quicknet's hidden sigmoid).
"""
from __future__ import annotations

from time import perf_counter

import numpy as np
from threadpoolctl import threadpool_limits

from engine.nets.mlp import MLP
from engine.optim import SGD

SIZES = (156, 1000, 56)
ACT = "logistic"
BUNCHES = [12, 96, 1024]


class BunchStep:
    """A net, its workspace and a fixed bunch of B random frames with one-hot targets."""

    def __init__(self, B: int, *, sizes=SIZES, activation=ACT, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.B = B
        self.net = MLP(sizes, activation)
        self.net.init_uniform(rng, scale=0.1)
        self.X = rng.standard_normal((B, sizes[0]))  # (B, 156)
        self.T = np.zeros((B, sizes[-1]))  # (B, 56) one-hot
        self.T[np.arange(B), rng.integers(0, sizes[-1], B)] = 1.0
        self.ws = self.net.workspace(B)
        self.g = np.empty(self.net.n_params)  # (n_params,)
        self.dy = np.empty((B, sizes[-1]))  # (B, 56)
        self.opt = SGD(self.net.n_params, lr=0.01, momentum=0.5)

    def step(self) -> None:
        y, cache = self.net.forward(self.X, ws=self.ws)
        np.subtract(y, self.T, out=self.dy)  # ∂E/∂y of ½Σ(y − t)²
        self.net.backward(self.dy, cache, out=self.g)
        self.opt.step(self.net.params, self.g, self.B)

    # -- the roofline ---------------------------------------------------------
    def gemm_calls(self):
        """The step's GEMMs as (flops, callable) on its own arrays and layouts."""
        net, ws, B = self.net, self.ws, self.B
        a = [self.X] + ws.a[1:]
        calls = []
        for l in range(1, net.L + 1):
            n_in, n_out = net.sizes[l - 1], net.sizes[l]
            f = 2 * B * n_in * n_out
            W, gW = net.W[l], net.view(self.g, f"W{l}")
            calls.append((f, lambda a0=a[l - 1], W=W, o=ws.a[l]: np.matmul(a0, W, out=o)))
            calls.append((f, lambda a0=a[l - 1], d=ws.delta[l], o=gW: np.matmul(a0.T, d, out=o)))
            if l > 1:
                calls.append((f, lambda d=ws.delta[l], W=W, o=ws.delta[l - 1]:
                              np.matmul(d, W.T, out=o)))
        return calls

    def flops_per_cu(self) -> float:
        net = self.net
        C = net.n_params
        C1 = (net.sizes[0] + 1) * net.sizes[1]
        return (2 * C + 2 * C + 2 * (C - C1)) / C

    def mcups(self, seconds_per_step: float) -> float:
        return self.B * self.net.n_params / seconds_per_step / 1e6


def _best(fn, reps: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (perf_counter() - t) / reps)
    return best


def reps_for(B: int) -> int:
    return max(5, 4096 // B)


def step_seconds(job: BunchStep, *, repeats: int = 5) -> float:
    job.step()
    return _best(job.step, reps_for(job.B), repeats)


def gemm_seconds(job: BunchStep, *, repeats: int = 5) -> tuple[float, float]:
    """(total flops, best total seconds) of the step's GEMMs, each timed on its own."""
    job.step()  # fill the workspace with realistic values
    total_f, total_t = 0.0, 0.0
    for f, call in job.gemm_calls():
        call()
        total_f += f
        total_t += _best(call, reps_for(job.B), repeats)
    return total_f, total_t


def roofline(job: BunchStep, *, rounds: int = 3, repeats: int = 3) -> dict:
    """Step and GEMM times interleaved over ``rounds`` (best of each), and the ratio."""
    t_step, t_gemm, flops = float("inf"), float("inf"), 0.0
    for _ in range(rounds):
        t_step = min(t_step, step_seconds(job, repeats=repeats))
        flops, t = gemm_seconds(job, repeats=repeats)
        t_gemm = min(t_gemm, t)
    rate = flops / t_gemm  # flop/s
    roof = rate / job.flops_per_cu() / 1e6
    ours = job.mcups(t_step)
    return {"step_s": t_step, "gemm_s": t_gemm, "gemm_gflops": rate / 1e9,
            "flops_per_cu": job.flops_per_cu(), "roofline_mcups": roof, "mcups": ours,
            "fraction": ours / roof}


class BunchTraining:
    """156-1000-56, logistic, bunch B, one BLAS thread."""

    params = [BUNCHES]
    param_names = ["bunch"]
    timeout = 600

    def setup(self, B):
        self._limits = threadpool_limits(1)
        self.job = BunchStep(B)

    def teardown(self, B):
        self._limits.restore_original_limits()

    def time_step(self, B):
        self.job.step()

    def peakmem_step(self, B):
        self.job.step()

    def track_mcups(self, B):
        """B · n_params / (best-of-5 mean step time), measured inside the benchmark."""
        return self.job.mcups(step_seconds(self.job))

    track_mcups.unit = "MCUPS"

    def track_roofline_percent(self, B):
        """Our MCUPS as a percentage of the matmul roofline taken in the same run."""
        return 100.0 * roofline(self.job)["fraction"]

    track_roofline_percent.unit = "%"
