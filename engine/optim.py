"""Optimizers over flat parameter vectors.

Split into ``direction`` (what a worker computes from its own gradient) and
``apply`` (what every replica does with the combined update), so a
pattern-parallel strategy can exchange directions and every worker applies
the same sum (Dahl et al. 2008, §4.1).
"""
from __future__ import annotations

import numpy as np


class SGD:
    """Gradient descent with momentum.

    direction: u = −η · g / count          (g summed over ``count`` patterns)
    apply:     Δw(t) = u + α · Δw(t−1);  w ← w + Δw(t)

    ``count`` = 1 per pattern gives online updates, the bunch size gives bunch
    mode, the training-set size gives batch mode.
    """

    def __init__(self, n_params: int, *, lr: float, momentum: float = 0.0):
        if not lr > 0:  # also rejects NaN
            raise ValueError(f"learning rate must be > 0, got {lr}")
        if not 0 <= momentum < 1:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        self.lr = float(lr)
        self.momentum = float(momentum)
        self.velocity = np.zeros(n_params)  # Δw(t−1)

    def direction(self, grad_sum: np.ndarray, count: int, *, out: np.ndarray | None = None):
        return np.multiply(grad_sum, -self.lr / count, out=out)

    def apply(self, params: np.ndarray, update: np.ndarray) -> None:
        v = self.velocity
        v *= self.momentum
        v += update
        params += v

    def step(self, params: np.ndarray, grad_sum: np.ndarray, count: int) -> None:
        self.apply(params, self.direction(grad_sum, count))


# ---- ADADELTA (paper2: Khomenko et al. 2016, §III.B step 4) ----


class Adadelta:
    """ADADELTA (Zeiler 2012, Algorithm 1), the per-process update rule of
    Khomenko et al. (2016, §III.B, step 4):

        E[g²]_t  = ρ E[g²]_{t−1} + (1 − ρ) g_t²
        Δx_t     = − (√(E[Δx²]_{t−1} + ε) / √(E[g²]_t + ε)) · g_t
        E[Δx²]_t = ρ E[Δx²]_{t−1} + (1 − ρ) Δx_t²
        x_{t+1}  = x_t + lr · Δx_t

    g = grad_sum / count. Defaults ρ = 0.95, ε = 1e−6, lr = 1 are Lasagne's
    ``adadelta`` (the paper used Lasagne and gives no values). As in Lasagne,
    ``lr`` scales the step but E[Δx²] accumulates the unscaled Δx.
    """

    def __init__(self, n_params: int, *, lr: float = 1.0, rho: float = 0.95, eps: float = 1e-6):
        if not lr > 0:
            raise ValueError(f"learning rate must be > 0, got {lr}")
        if not 0 <= rho < 1:
            raise ValueError(f"rho must be in [0, 1), got {rho}")
        if not eps > 0:
            raise ValueError(f"eps must be > 0, got {eps}")
        self.lr, self.rho, self.eps = float(lr), float(rho), float(eps)
        self.Eg2 = np.zeros(n_params)  # E[g²]
        self.Edx2 = np.zeros(n_params)  # E[Δx²]

    def delta(self, grad_sum: np.ndarray, count: int) -> np.ndarray:
        """Δx for this gradient; updates both running averages."""
        g = grad_sum / count
        r = self.rho
        self.Eg2 *= r
        self.Eg2 += (1 - r) * g * g
        dx = -np.sqrt(self.Edx2 + self.eps) / np.sqrt(self.Eg2 + self.eps) * g
        self.Edx2 *= r
        self.Edx2 += (1 - r) * dx * dx
        return dx

    def step(self, params: np.ndarray, grad_sum: np.ndarray, count: int) -> None:
        params += self.lr * self.delta(grad_sum, count)
