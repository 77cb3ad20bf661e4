"""paper4's §6 speedup model (Hlynsson & Schmitz 2016) as printed: the node-parallel
forward, backward, update and aggregate speedups (§6.1–6.2) of a net of uniform width n and
L layers, with t_a, t_startup and t_data calibrated on a machine (:func:`calibrate_t_a`
here, blocked.py ``calibrate_exchange``). Our implementation's own model is blocked.py."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from time import perf_counter

import numpy as np

# The formulas below are §6 exactly as printed: N(l) = n in every layer, L layers
# (L − 1 of them computed), t_a the time of one arithmetic operation, t_startup and
# t_data the start-up and per-value times of one broadcast, which §6 charges once
# per node and layer, "approximately log(P)" steps each.
#
# The base of that logarithm is not printed. A binomial-tree broadcast takes
# ⌈log2 P⌉ message steps, so base 2 is the one the derivation implies, and it is
# the default here. Table 1 does not settle it: its n = 32k column is within 0.2 %
# of the aggregate formula in every base (communication is negligible there), and
# its n = 132 column matches none (ln comes closest, 3 % low at every P ≥ 2);
# reproduce/paper4/report.py tabulates all three bases beside the paper.
LOG_BASES = {"2": 2.0, "e": math.e, "10": 10.0}


def _log(P: float, base) -> float:
    b = LOG_BASES[base] if isinstance(base, str) else float(base)
    return math.log(P) / math.log(b)


def count_as_printed(N: int, P: int, p: int) -> int:
    """I_{p,l} exactly as §3 prints it: ⌊(N + P + p − 1)/P⌋. With that sign the counts add
    up to more than N whenever P > 1 (N = 7, P = 3 gives 3 + 3 + 3 = 9; N = 8, P = 2 gives
    4 + 5 = 9); the count μ and μ⁻¹ imply, which the engine uses
    (:func:`engine.schedule.count`), is ⌊(N + P − p − 1)/P⌋."""
    return (N + P + p - 1) // P


@dataclass(frozen=True)
class NodeModel:
    """§6 parameters: t_a (s per operation), t_startup and t_data (s per broadcast
    of one value), and the base of log(P). ``source`` says where they come from."""

    t_a: float
    t_startup: float
    t_data: float
    log_base: str = "2"
    source: str = ""

    @property
    def r(self) -> float:
        """(t_startup + t_data) / t_a, the one ratio every speedup formula needs."""
        return (self.t_startup + self.t_data) / self.t_a

    def forward_speedup(self, n: int, P: int, L: int) -> float:
        """§6.1.1: S_P = P·(n+1) / ((n+1) + P·(t_startup+t_data)/t_a·log(P))."""
        return P * (n + 1) / ((n + 1) + P * self.r * _log(P, self.log_base))

    def backward_speedup(self, n: int, P: int, L: int) -> float:
        """§6.1.2: S_P = P·(9·L/(n·(L−1)) + n) / (9/(L−1) + n + (t_startup+t_data)/t_a·log(P)·P)."""
        return P * (9 * L / (n * (L - 1)) + n) / (9 / (L - 1) + n + self.r * _log(P, self.log_base) * P)

    @staticmethod
    def update_speedup(n: int, P: int, L: int) -> float:
        """§6.1.3: S_P = P (no communication)."""
        return float(P)

    def aggregate_speedup(self, n: int, P: int, L: int) -> float:
        """§6.2: S_P = P·(2n + 2 + 9·L/(n·(L−1))) / (2n + 2 + 2P·(t_startup+t_data)/t_a·log(P) + 9/(L−1))."""
        num = 2 * n + 2 + 9 * L / (n * (L - 1))
        return P * num / (2 * n + 2 + 2 * P * self.r * _log(P, self.log_base) + 9 / (L - 1))

    def forward_backward_speedup(self, n: int, P: int, L: int) -> float:
        """T*_S / T_P of §6.1.1 and §6.1.2 added, from their printed uniform-width forms:
        T_S = t_a·(L−1)·(n² + n) + t_a·9·L + t_a·(L−1)·n²,
        T_P = t_a·(L−1)·(n·n/P + n/P) + t_a·9·n/P + t_a·(L−1)·n/P·n + 2·(t_startup+t_data)·log(P)·(L−1)·n.
        (The paper gives no combined formula; Table 3 measures this pair of passes.)
        """
        ta, c = self.t_a, (self.t_startup + self.t_data) * _log(P, self.log_base)
        ts = ta * (L - 1) * (n * n + n) + ta * 9 * L + ta * (L - 1) * n * n
        tp = (ta * (L - 1) * (n * n / P + n / P) + ta * 9 * n / P + ta * (L - 1) * n / P * n
              + 2 * c * (L - 1) * n)
        return ts / tp

    def forward_time(self, sizes, P: int) -> float:
        """§6.1.1's T_P for any layer sizes N(0..L−1), I_{p,l} of the slowest processor:
        t_a·Σ N(l−1)·I_{p,l} + t_a·Σ I_{p,l} + (t_startup+t_data)·log(P)·Σ N(l), l = 1..L−1.
        With P = 1 (log 1 = 0) this is the sequential T_1.
        """
        from engine.schedule import LinearDistribution

        I = [LinearDistribution(int(n), P).max_count for n in sizes]
        comp = sum(sizes[l - 1] * I[l] + I[l] for l in range(1, len(sizes)))
        return self.t_a * comp + (self.t_startup + self.t_data) * _log(P, self.log_base) * sum(sizes[1:])

    def as_dict(self) -> dict:
        return {**asdict(self), "r": self.r}


def calibrate_t_a(sizes, *, B: int = 1, reps: int = 20, activation: str = "symmetric_sigmoid",
                  rng: np.random.Generator | None = None) -> dict:
    """t_a from the serial forward pass of an MLP ``sizes`` (engine/nets/mlp.py, this
    process's BLAS threads): median time / (Σ N(l−1)·N(l) + Σ N(l)) operations per
    pattern (one per weight and one per node of a serial forward pass)."""
    from engine.nets.mlp import MLP

    rng = np.random.default_rng(0) if rng is None else rng
    net = MLP(sizes, activation)
    net.init_uniform(rng, scale=0.1)
    x = rng.uniform(-1, 1, (B, sizes[0]))  # (B, N(0))
    ws = net.workspace(B)
    net.forward(x, ws=ws)
    ts = []
    for _ in range(reps):
        t = perf_counter()
        net.forward(x, ws=ws)
        ts.append(perf_counter() - t)
    ops = B * sum(sizes[l - 1] * sizes[l] + sizes[l] for l in range(1, len(sizes)))
    med = float(np.median(ts))
    return {"t_a": med / ops, "forward_s": med, "forward_s_min": float(min(ts)),
            "forward_s_max": float(max(ts)), "ops": ops, "reps": reps, "sizes": list(sizes), "B": B}
