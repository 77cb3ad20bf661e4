"""Loss registry: name -> (per-pattern value, derivative with respect to the output).

Values are per pattern, shape (B,); a strategy sums or averages them itself, so
the same loss serves online, bunch and batch updates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine import seqkernels
from engine.seqkernels import log_softmax  # noqa: F401 (the CTC's; re-exported)


@dataclass(frozen=True)
class Loss:
    name: str
    value: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (y, t) -> (B,)
    grad: Callable[..., np.ndarray]  # (y, t, out) -> dE_p/dy, shape (B, n_out)


def _mse_value(y, t):
    # E_p = ½ Σ_o (y − t)²: the error of Rumelhart, Hinton & Williams (1986),
    # whose gradient (y − t) is what FANN back-propagates.
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


def masked_loss_and_grad(Y: np.ndarray, T: np.ndarray, mask: np.ndarray, *, loss: str):
    """A per-pattern loss over a padded time-major batch: (Σ of the loss over the real
    steps, ∂/∂Y (L, S, n_out) with padded steps zeroed). Y, T (L, S, n_out), mask (L, S)."""
    L, S, O = Y.shape
    lf = get_loss(loss)
    y2, t2 = Y.reshape(L * S, O), T.reshape(L * S, O)
    m = mask.reshape(L * S)
    total = float(lf.value(y2, t2) @ m)
    dY = lf.grad(y2, t2) * m[:, None]  # (L·S, n_out)
    return total, dY.reshape(L, S, O)


def mean_squared_error(y: np.ndarray, t: np.ndarray) -> float:
    """The reported MSE: mean over patterns and outputs of (t − y)², no ½."""
    d = y - t
    return float(np.einsum("bo,bo->", d, d) / d.size)


def per_pattern_squared_error(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Mean over outputs of (t − y)² for each pattern, shape (B,)."""
    d = y - t
    return np.einsum("bo,bo->b", d, d) / d.shape[1]


# ---- Kalman & Kwasny's error -------------------------------------------------------
# Kalman & Kwasny's error (IJCNN 1991), Φ:
#   Φ_p = Σ_o (t_po − a_po)² / (1 − a_po²)
# and its derivative, the factor of ∂a_po/∂Y in ∂Φ_p/∂Y:
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


# ---- CTC ----------------------------------------------------------------------------
# Connectionist Temporal Classification, Graves, Fernández, Gomez & Schmidhuber (ICML 2006),
# over a padded, time-major batch; class 0 is the blank. engine/seqkernels.py computes it:
# the numpy reference in log space, the numba path with α and β rescaled (their §4.1).


@dataclass(frozen=True)
class CTCTarget:
    """The CTC "target" of a padded batch: labels (B, L_max) padded with anything,
    label_lengths (B,) and input_lengths (B,) (the real steps of each sequence)."""

    labels: np.ndarray
    label_lengths: np.ndarray
    input_lengths: np.ndarray


def ctc_loss_and_grad(u: np.ndarray, target: CTCTarget, *, need_grad: bool = True):
    """CTC negative log-likelihood −ln p(z|x) per sequence (B,) and its gradient with
    respect to the unnormalised outputs u (T, B, K) (Graves et al. 2006, eqs. 5–16).

    Extended label l' = (blank, z_1, blank, z_2, …, blank), S = 2|z| + 1 states.
    α_t(s) = y_t(l'_s) · [α_{t−1}(s) + α_{t−1}(s−1) + α_{t−1}(s−2) if l'_s ≠ blank and
    l'_s ≠ l'_{s−2}]; β symmetric; p(z|x) = α_{T−1}(S−1) + α_{T−1}(S−2).
    ∂(−ln p)/∂u_{t,k} = y_{t,k} − Σ_{s: l'_s = k} α_t(s) β_t(s) / (y_{t,k} p)  (eq. 16),
    for t below the sequence's input length, 0 at padded steps. A sequence too short
    for its labels has p = 0: loss +inf and a zero gradient.
    """
    T, B, K = u.shape
    labels = np.asarray(target.labels, dtype=np.int64).reshape(B, -1)
    Lz = np.asarray(target.label_lengths, dtype=np.int64)
    Tb = np.asarray(target.input_lengths, dtype=np.int64)
    if Lz.shape != (B,) or Tb.shape != (B,):
        raise ValueError("label_lengths and input_lengths need one entry per sequence")
    if np.any(Tb < 1) or np.any(Tb > T):
        raise ValueError(f"input lengths must be in 1..{T}")
    S = 2 * labels.shape[1] + 1
    ext = np.zeros((B, S), dtype=np.int64)  # (B, S) extended labels, blank = 0
    ext[:, 1::2] = labels
    Sb = 2 * Lz + 1  # (B,) states used by each sequence
    sidx = np.arange(S)
    ext[sidx[None, :] >= Sb[:, None]] = 0
    skip = np.zeros((B, S), dtype=bool)  # (B, S): s−2 → s allowed
    skip[:, 2:] = (ext[:, 2:] != 0) & (ext[:, 2:] != ext[:, :-2])
    grad = np.empty((T, B, K)) if need_grad else None  # (T, B, K)
    logp = seqkernels.ctc(u, ext, skip, Tb, Sb, grad)  # (B,) ln p(z|x), eqs. 6–16
    return -logp, grad


def _ctc_value(u, t):
    return ctc_loss_and_grad(u, t, need_grad=False)[0]


def _ctc_grad(u, t, out=None):
    g = ctc_loss_and_grad(u, t)[1]
    if out is not None:
        np.copyto(out, g)
        return out
    return g


LOSSES["ctc"] = Loss("ctc", _ctc_value, _ctc_grad)  # y: (T, B, K) logits, t: CTCTarget
