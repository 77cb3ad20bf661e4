"""Loss registry: name -> (per-pattern value, derivative with respect to the output).

Values are per pattern, shape (B,); a strategy sums or averages them itself, so
the same loss serves online, bunch and batch updates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Loss:
    name: str
    value: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (y, t) -> (B,)
    grad: Callable[..., np.ndarray]  # (y, t, out) -> dE_p/dy, shape (B, n_out)


def _mse_value(y, t):
    # E_p = ½ Σ_o (y − t)²: the error of Rumelhart, Hinton & Williams (1986),
    # whose gradient (y − t) is what FANN and Quicknet back-propagate.
    d = y - t
    return 0.5 * np.einsum("bo,bo->b", d, d)


def _mse_grad(y, t, out=None):
    return np.subtract(y, t, out=out)


LOSSES: dict[str, Loss] = {
    "mse": Loss("mse", _mse_value, _mse_grad),
}


def get_loss(name: str) -> Loss:
    try:
        return LOSSES[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}; known: {', '.join(LOSSES)}") from None


def mean_squared_error(y: np.ndarray, t: np.ndarray) -> float:
    """The reported MSE: mean over patterns and outputs of (t − y)², no ½."""
    d = y - t
    return float(np.einsum("bo,bo->", d, d) / d.size)


def per_pattern_squared_error(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Mean over outputs of (t − y)² for each pattern, shape (B,)."""
    d = y - t
    return np.einsum("bo,bo->b", d, d) / d.shape[1]
