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


# ---- paper0: McCann & Kalman (1994) ---------------------------------------------
# Kalman & Kwasny's error (IJCNN 1991), the Φ of McCann & Kalman (1994), §1:
#   Φ_p = Σ_o (t_po − a_po)² / (1 − a_po²)
# and its derivative, the factor of ∂a_po/∂Y in eq. 1:
#   ∂Φ_p/∂a_po = 2 (t − a) ((t − a) a − (1 − a²)) / (1 − a²)².
# 1 − a² is floored at KK_FLOOR so a saturated tanh (|a| == 1.0 in float64,
# |x| ≳ 12.5 for tanh(1.5x)) gives a large finite error rather than 0/0 or inf.
KK_FLOOR = 1e-12


def _kk_value(y, t):
    d = t - y
    den = np.maximum(1.0 - y * y, KK_FLOOR)
    return np.einsum("bo,bo->b", d * d, 1.0 / den)


def _kk_grad(y, t, out=None):
    d = t - y
    den = np.maximum(1.0 - y * y, KK_FLOOR)
    g = 2.0 * d * (d * y - den) / (den * den)
    if out is None:
        return g
    np.copyto(out, g)
    return out


LOSSES["kalman_kwasny"] = Loss("kalman_kwasny", _kk_value, _kk_grad)
