"""Fused element-wise passes of the MLP step (issue 14: performance).

Each kernel does in one pass over memory what the numpy reference beside it does in
several ufunc calls, with the same IEEE operations in the same order on every element,
so the results are bit-identical (signed zeros included; a NaN's sign and payload may
differ, as LLVM may commute an add): fusing saves memory traffic and call overhead, never
a rounding. numba compiles without ``fastmath``, so LLVM may not contract a·b + c into
one FMA. tanh is :mod:`engine.tanhkernel`'s, the one kernel here that computes a function
another way than numpy (within a few ulp; its tests bound it). (Versions fused into the
bias pass timed slower here than the two passes, in one-off trials that were not kept: with
numpy's algorithm ported, and with tanhkernel's, 191 against 173 µs a parity epoch, best of 4
in two runs a minute apart.) A column sum is fused only where numpy's ``add.reduce(axis=0)``
adds rows in order, which is every array of two or more columns; one column is a contiguous
vector that numpy sums pairwise, so it is left to numpy.
``tests/unit/test_kernels.py`` checks the two implementations against each other.

``IMPLEMENTATION`` is ``"numba"`` where numba imports, else ``"numpy"``; the environment
variable ``ENGINE_KERNELS=numpy`` forces the reference (the targets' before and after;
the switch itself lives in :mod:`engine.tanhkernel`, the lowest module that compiles).
"""
from __future__ import annotations

import numpy as np

from engine.activations import ACTIVATIONS
from engine.tanhkernel import njit, tanh

IMPLEMENTATION = "numpy" if njit is None else "numba"


# ---- the numpy reference: the engine's passes as they were ---------------------------------
def _np_bias_act(act, z, b):
    z += b
    act.f(z, z)


def _np_df_mul(act, y, d, out, tmp, colsum) -> bool:
    np.multiply(d, act.df(y, tmp), out=out)
    return False


def _np_outer_df_mul(act, y, dcol, wcol, out, tmp, colsum) -> bool:
    # einsum's outer loop is 2x the broadcast multiply's speed at (256, 100); one rounded
    # product per element either way
    np.einsum("i,j->ij", dcol, wcol, out=out)
    out *= act.df(y, tmp)
    return False


def _np_sgd(p, g, v, c, m):
    u = np.multiply(g, c)  # SGD.direction
    v *= m  # SGD.apply
    v += u
    p += v


# ---- numba: one pass each ---------------------------------------------------------------------
if njit is not None:
    @njit(cache=True)
    def _bias_scale(z, b, s):  # z = (z + b)·s: the bias and f's inner scale (·1 is exact)
        for i in range(z.shape[0]):
            for j in range(z.shape[1]):
                z[i, j] = (z[i, j] + b[j]) * s

    @njit(cache=True)
    def _scale_shift(y, s, c):  # y = y·s + c: the logistic's ½·tanh + ½
        for i in range(y.shape[0]):
            for j in range(y.shape[1]):
                y[i, j] = y[i, j] * s + c

    @njit(cache=True)
    def _dfprime(form, s, y):  # f′ from the output, as activations.py computes it
        if form == 0:  # tanh(s·z): s·(1 − y²)
            return (1.0 - y * y) * s
        if form == 1:  # logistic: (1 − y)·y
            return (1.0 - y) * y
        return 1.0  # identity

    @njit(cache=True)
    def _df_mul(form, s, y, d, out, colsum, want):  # out = d·f′(y); colsum = Σ_i out
        B, n = y.shape
        for i in range(B):
            for j in range(n):
                v = d[i, j] * _dfprime(form, s, y[i, j])
                out[i, j] = v
                if want:  # as add.reduce: row 0, then each row added in turn
                    colsum[j] = v if i == 0 else colsum[j] + v

    @njit(cache=True)
    def _outer_df_mul(form, s, y, dcol, wcol, out, colsum, want):  # out = (0 + δ wᵀ)·f′(y)
        B, n = y.shape
        for i in range(B):
            for j in range(n):
                # einsum adds each product to a zeroed output: 0 + (−0) is +0
                v = (0.0 + dcol[i] * wcol[j]) * _dfprime(form, s, y[i, j])
                out[i, j] = v
                if want:
                    colsum[j] = v if i == 0 else colsum[j] + v

    @njit(cache=True)
    def _sgd(p, g, v, c, m):  # u = g·c; v = v·m + u; p = p + v
        for k in range(p.shape[0]):
            w = v[k] * m
            w = w + g[k] * c
            v[k] = w
            p[k] = p[k] + w

_FORMS = {"tanh": 0, "logistic": 1, "identity": 2}
_NO_COLSUM = np.empty(0)


def _fused(act) -> bool:
    """Only the registry's own activations: a copy with another f or df (dataclasses.replace)
    keeps its form, which would no longer say what it computes."""
    return act.form in _FORMS and ACTIVATIONS.get(act.name) is act


def _nb_bias_act(act, z, b):
    if not _fused(act):
        _np_bias_act(act, z, b)
    elif act.form == "tanh":
        _bias_scale(z, b, act.scale)
        tanh(z, z)
    elif act.form == "logistic":  # ½·tanh(z/2) + ½ (activations._logistic)
        _bias_scale(z, b, 0.5)
        tanh(z, z)
        _scale_shift(z, 0.5, 0.5)
    else:  # identity
        _bias_scale(z, b, 1.0)


def _nb_df_mul(act, y, d, out, tmp, colsum) -> bool:
    if not _fused(act):
        return _np_df_mul(act, y, d, out, tmp, colsum)
    want = colsum is not None and y.shape[1] > 1
    _df_mul(_FORMS[act.form], act.scale, y, d, out, colsum if want else _NO_COLSUM, want)
    return want


def _nb_outer_df_mul(act, y, dcol, wcol, out, tmp, colsum) -> bool:
    if not _fused(act):
        return _np_outer_df_mul(act, y, dcol, wcol, out, tmp, colsum)
    want = colsum is not None and y.shape[1] > 1
    _outer_df_mul(_FORMS[act.form], act.scale, y, dcol, wcol, out,
                  colsum if want else _NO_COLSUM, want)
    return want


# ---- the interface the engine calls -----------------------------------------------------------
# bias_act(act, z, b):                       z ← f(z + b), in place; z (B, n), b (n,)
# df_mul(act, y, d, out, tmp, colsum):       out ← d ⊙ f′(y); y, d, out (B, n), tmp scratch (B, n)
# outer_df_mul(act, y, dcol, wcol, out, tmp, colsum): out ← (dcol ⊗ wcol) ⊙ f′(y)
#   both also write colsum ← Σ_i out (the next layer's bias gradient) where they can, and
#   return whether they did; colsum None asks for none.
# sgd(p, g, v, c, m):                         v ← m·v + c·g; p ← p + v (engine.optim.SGD)
if njit is None:
    bias_act, df_mul, outer_df_mul, sgd = _np_bias_act, _np_df_mul, _np_outer_df_mul, _np_sgd
else:
    bias_act, df_mul, outer_df_mul, sgd = _nb_bias_act, _nb_df_mul, _nb_outer_df_mul, _sgd


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel for float64 C arrays, so that no
    timed step pays for it. Called on import."""
    if njit is None:
        return
    z, b, col = np.zeros((2, 2)), np.zeros(2), np.zeros(2)
    _bias_scale(z, b, 1.0)
    _scale_shift(z, 1.0, 0.0)
    tanh(z, z)  # in place, and the out-of-place loops of 2 and 1 dimensions
    tanh(z, np.empty_like(z))
    tanh(col, np.empty_like(col))
    for want in (True, False):
        _df_mul(0, 1.0, z, z, z, col if want else _NO_COLSUM, want)
        _outer_df_mul(0, 1.0, z, col, col, z, col if want else _NO_COLSUM, want)
    _sgd(col, col, col, 0.0, 0.0)


warm_up()
