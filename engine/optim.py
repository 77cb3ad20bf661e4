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
