"""Fused element-wise passes of the LSTM step and the CTC recursions (issue 14: performance).

The handwriting LSTM's batches are small (B = 4, 4H = 256): a time step is a dozen numpy calls of a few
hundred elements each, so call overhead, not arithmetic, sets its cost. Each kernel here
does in one call what the numpy reference beside it does in several, with the same IEEE
operations in the same order on every element, so the results are bit-identical (as in
:mod:`engine.kernels`, whose ``IMPLEMENTATION`` switch and ``ENGINE_KERNELS=numpy`` apply
here too). The transcendental functions stay numpy's own calls between the kernels:
numpy's SIMD ``exp``/``log``/``tanh`` and the libm ones numba would call differ in the
last bit on a few per cent of arguments. So does every matmul stay numpy's BLAS.

Per step, the numba path makes
- LSTM forward (after h_{t−1} W_h): kernel, ``tanh`` of all four gates, kernel, ``tanh`` c_t,
  kernel: 5 calls instead of 11;
- LSTM backward (before dz_t W_hᵀ): one kernel instead of 17 calls;
- CTC α or β (eqs. 6–7 and 10–11 of Graves et al. 2006, in the log domain): kernel,
  ``exp``, kernel, ``log``: 4 calls instead of 19 (α; β adds its row masks).
``tests/test_seqkernels.py`` checks both implementations against each other.
"""
from __future__ import annotations

import math

import numpy as np

from engine.activations import ACTIVATIONS
from engine.kernels import IMPLEMENTATION, njit  # noqa: F401  (IMPLEMENTATION: re-exported)

NINF = -np.inf
# σ(x) = ½·tanh(x/2) + ½: no overflow for large |x|. The LSTM used to round (tanh + 1)·½,
# which gives the same bits: halving is exact, so both are round(tanh + 1) / 2.
sigmoid = ACTIVATIONS["logistic"].f


# ---- the numpy reference: the engine's passes as they were ---------------------------------
class LSTMScratch:
    """The (B, ·) buffers a step of either implementation needs, allocated once a batch."""

    def __init__(self, B: int, H: int):
        self.H = H
        self.w, self.w2 = np.empty((B, H)), np.empty((B, H))
        self.sp = np.empty((B, 3 * H))  # σ' of i, f, o (backward)


def _np_lstm_forward_step(z, zh, c_prev, c, tc, h, ws):
    """z (B, 4H) holds x_t W_x + b, zh (B, 4H) h_{t−1} W_h; → z the gate activations
    [i | f | o | g] in place, c = c_t, tc = tanh c_t, h = h_t."""
    H = ws.H
    z += zh
    sigmoid(z[:, :3 * H], z[:, :3 * H])
    np.tanh(z[:, 3 * H:], out=z[:, 3 * H:])
    i, f, o, g = z[:, :H], z[:, H:2 * H], z[:, 2 * H:3 * H], z[:, 3 * H:]
    np.multiply(f, c_prev, out=c)
    c += np.multiply(i, g, out=ws.w)
    np.tanh(c, out=tc)
    np.multiply(o, tc, out=h)


def _np_lstm_backward_step(z, dh_out, tc, c_prev, dh, dc, dz, ws):
    """dh ← dh + ∂E/∂h_t from the output layer; dz ← ∂E/∂z_t (B, 4H); dc ← ∂E/∂c_{t−1}
    (without the part through h_{t−1}, which dz_t W_hᵀ adds next)."""
    H = ws.H
    w, w2, sp = ws.w, ws.w2, ws.sp
    i, f, o, gg = z[:, :H], z[:, H:2 * H], z[:, 2 * H:3 * H], z[:, 3 * H:]
    dh += dh_out
    # σ' = s(1 − s) of the i, f, o gates in one (B, 3H) pass
    np.subtract(1.0, z[:, :3 * H], out=sp)
    np.multiply(z[:, :3 * H], sp, out=sp)
    np.multiply(dh, tc, out=dz[:, 2 * H:3 * H])  # o: ∂h/∂o = tanh c
    np.multiply(dh, o, out=w)  # dc += dh · o · (1 − tanh² c)
    np.multiply(tc, tc, out=w2)
    np.subtract(1.0, w2, out=w2)
    w *= w2
    dc += w
    np.multiply(dc, gg, out=dz[:, :H])
    np.multiply(dc, c_prev, out=dz[:, H:2 * H])
    dz[:, :3 * H] *= sp
    np.multiply(dc, i, out=dz[:, 3 * H:])
    np.multiply(gg, gg, out=w2)  # tanh' = 1 − g²
    np.subtract(1.0, w2, out=w2)
    dz[:, 3 * H:] *= w2
    dc *= f


class _LSE3:
    """log(e^a + e^b + e^c) elementwise, −inf safe (engine.losses._lse3) into preallocated
    (B, S) buffers: the same operations in the same order per element, without ten
    temporaries a step. The caller suppresses the log(0) warning."""

    def __init__(self, shape):
        self.m, self.e, self.x = np.empty(shape), np.empty(shape), np.empty(shape)
        self.inf = np.empty(shape, dtype=bool)

    def __call__(self, a, b, c, *, out):
        m, e, x = self.m, self.e, self.x
        np.maximum(a, b, out=m)
        np.maximum(m, c, out=m)
        np.isfinite(m, out=self.inf)
        np.logical_not(self.inf, out=self.inf)
        np.copyto(m, 0.0, where=self.inf)  # mf
        np.subtract(a, m, out=e)
        np.exp(e, out=e)
        np.subtract(b, m, out=x)
        np.exp(x, out=x)
        e += x
        np.subtract(c, m, out=x)
        np.exp(x, out=x)
        e += x
        np.log(e, out=e)
        return np.add(m, e, out=out)


def _np_ctc_alpha(alpha, lpe, skip):
    """α_t = lse(α_{t−1}(s), α_{t−1}(s−1), α_{t−1}(s−2) where ``skip``) + ln y_t(l'_s), for
    t = 1..T−1 into alpha (T, B, S), whose row 0 is set; lpe (T, B, S), skip (B, S)."""
    T, B, S = alpha.shape
    sh1 = np.full((B, S), NINF)  # (B, S) α_{t−1}(s−1)
    sh2 = np.full((B, S), NINF)  # (B, S) α_{t−1}(s−2) where the skip is allowed
    noskip = ~skip[:, 2:]
    lse3 = _LSE3((B, S))
    with np.errstate(divide="ignore"):
        for t in range(1, T):
            a = alpha[t - 1]
            sh1[:, 1:] = a[:, :-1]
            sh2[:, 2:] = a[:, :-2]
            np.copyto(sh2[:, 2:], NINF, where=noskip)
            at = lse3(a, sh1, sh2, out=alpha[t])
            at += lpe[t]


def _np_ctc_beta(beta, lpe, skip, Tb, init):
    """β_t = lse(β_{t+1}(s), β_{t+1}(s+1), β_{t+1}(s+2) where s → s+2 is allowed) +
    ln y_t(l'_s) into beta (T, B, S), all −inf on entry; sequence b's row is ``init`` (B, S)
    at its last step t = Tb[b] − 1 and −inf after it."""
    T, B, S = beta.shape
    sh1 = np.full((B, S), NINF)  # (B, S) β_{t+1}(s+1)
    sh2 = np.full((B, S), NINF)  # (B, S) β_{t+1}(s+2) where the skip is allowed
    noskip_next = ~skip[:, 2:]  # s → s+2 not allowed, s < S − 2
    lse3 = _LSE3((B, S))
    with np.errstate(divide="ignore"):
        for t in range(T - 1, -1, -1):
            bt = beta[t]  # −inf: rows past their sequence's end stay so
            if t < T - 1:
                bn = beta[t + 1]
                sh1[:, :-1] = bn[:, 1:]
                sh2[:, :-2] = bn[:, 2:]
                np.copyto(sh2[:, :-2], NINF, where=noskip_next)
                lse3(bn, sh1, sh2, out=bt)
                bt += lpe[t]
                bt[Tb - 1 < t] = NINF
            last_step = Tb - 1 == t
            bt[last_step] = init[last_step]


# ---- numba: one pass each ---------------------------------------------------------------------
if njit is not None:
    @njit(cache=True)
    def _gates_in(z, zh, H):  # z = z + zh; the i, f, o gates then ·½ (σ's inner scale)
        for b in range(z.shape[0]):
            for j in range(4 * H):
                v = z[b, j] + zh[b, j]
                z[b, j] = v * 0.5 if j < 3 * H else v

    @njit(cache=True)
    def _cell(z, c_prev, c, H):  # σ = (tanh + 1)·½ (= ½·tanh + ½, bit for bit); c = f·c_{t−1} + i·g
        for b in range(z.shape[0]):
            for j in range(3 * H):
                z[b, j] = (z[b, j] + 1.0) * 0.5
            for k in range(H):
                c[b, k] = z[b, H + k] * c_prev[b, k] + z[b, k] * z[b, 3 * H + k]

    @njit(cache=True)
    def _hidden(z, tc, h, H):  # h = o·tanh c
        for b in range(z.shape[0]):
            for k in range(H):
                h[b, k] = z[b, 2 * H + k] * tc[b, k]

    @njit(cache=True)
    def _lstm_back(z, dh_out, tc, c_prev, dh, dc, dz, H):  # _np_lstm_backward_step's passes
        for b in range(z.shape[0]):
            for k in range(H):
                i, f, o, g = z[b, k], z[b, H + k], z[b, 2 * H + k], z[b, 3 * H + k]
                d = dh[b, k] + dh_out[b, k]
                dh[b, k] = d
                t = tc[b, k]
                w = (d * o) * (1.0 - t * t)
                dcv = dc[b, k] + w
                dz[b, k] = (dcv * g) * (i * (1.0 - i))
                dz[b, H + k] = (dcv * c_prev[b, k]) * (f * (1.0 - f))
                dz[b, 2 * H + k] = (d * t) * (o * (1.0 - o))
                dz[b, 3 * H + k] = (dcv * i) * (1.0 - g * g)
                dc[b, k] = dcv * f

    @njit(cache=True)
    def _npmax(x, y):  # np.maximum: a NaN in either wins
        return x if (x >= y or x != x) else y

    @njit(cache=True)
    def _lse_in(x0, x1, x2, E, M, b, s):  # _LSE3 up to its exp: mf and the differences
        m = _npmax(_npmax(x0, x1), x2)
        mf = m if math.isfinite(m) else 0.0
        M[b, s] = mf
        E[0, b, s] = x0 - mf
        E[1, b, s] = x1 - mf
        E[2, b, s] = x2 - mf

    @njit(cache=True)
    def _sum3(E, e):  # e^a + e^b, then + e^c
        for b in range(e.shape[0]):
            for s in range(e.shape[1]):
                e[b, s] = (E[0, b, s] + E[1, b, s]) + E[2, b, s]

    @njit(cache=True)
    def _alpha_step(out, M, e, lp, skip, E, fin, prep):
        """fin: α_t = (mf + log Σ) + ln y_t into out (B, S); prep: from out, mf into M and
        the three differences into E (3, B, S) for step t + 1."""
        B, S = out.shape
        for b in range(B):
            if fin:
                for s in range(S):
                    out[b, s] = (M[b, s] + e[b, s]) + lp[b, s]
            if prep:
                for s in range(S):
                    x1 = out[b, s - 1] if s >= 1 else -np.inf
                    x2 = out[b, s - 2] if s >= 2 and skip[b, s] else -np.inf
                    _lse_in(out[b, s], x1, x2, E, M, b, s)

    @njit(cache=True)
    def _beta_step(out, M, e, lp, skip, E, Tb, init, t, fin, prep):
        """β_t as _alpha_step's α_t, with the rows of sequences ending at t set to init and
        those ended before to −inf; prep for step t − 1 from s + 1 and s + 2."""
        B, S = out.shape
        for b in range(B):
            if fin:
                for s in range(S):
                    if Tb[b] - 1 == t:
                        out[b, s] = init[b, s]
                    elif Tb[b] - 1 < t:
                        out[b, s] = -np.inf
                    else:
                        out[b, s] = (M[b, s] + e[b, s]) + lp[b, s]
            if prep:
                for s in range(S):
                    x1 = out[b, s + 1] if s + 1 < S else -np.inf
                    x2 = out[b, s + 2] if s + 2 < S and skip[b, s + 2] else -np.inf
                    _lse_in(out[b, s], x1, x2, E, M, b, s)


def _nb_lstm_forward_step(z, zh, c_prev, c, tc, h, ws):
    H = ws.H
    _gates_in(z, zh, H)
    np.tanh(z, out=z)
    _cell(z, c_prev, c, H)
    np.tanh(c, out=tc)
    _hidden(z, tc, h, H)


def _nb_lstm_backward_step(z, dh_out, tc, c_prev, dh, dc, dz, ws):
    _lstm_back(z, dh_out, tc, c_prev, dh, dc, dz, ws.H)


def _nb_ctc_alpha(alpha, lpe, skip):
    T, B, S = alpha.shape
    E, M, e = np.empty((3, B, S)), np.empty((B, S)), np.empty((B, S))
    _alpha_step(alpha[0], M, e, lpe[0], skip, E, False, T > 1)
    with np.errstate(divide="ignore"):
        for t in range(1, T):
            np.exp(E, out=E)
            _sum3(E, e)
            np.log(e, out=e)
            _alpha_step(alpha[t], M, e, lpe[t], skip, E, True, t < T - 1)


def _nb_ctc_beta(beta, lpe, skip, Tb, init):
    T, B, S = beta.shape
    E, M, e = np.empty((3, B, S)), np.empty((B, S)), np.empty((B, S))
    _beta_step(beta[T - 1], M, e, lpe[T - 1], skip, E, Tb, init, T - 1, True, T > 1)
    with np.errstate(divide="ignore"):
        for t in range(T - 2, -1, -1):
            np.exp(E, out=E)
            _sum3(E, e)
            np.log(e, out=e)
            _beta_step(beta[t], M, e, lpe[t], skip, E, Tb, init, t, True, t > 0)


# ---- the interface the engine calls -----------------------------------------------------------
# lstm_forward_step(z, zh, c_prev, c, tc, h, ws)          LSTM.forward's step after h_{t−1} W_h
# lstm_backward_step(z, dh_out, tc, c_prev, dh, dc, dz, ws) LSTM.backward's step before dz W_hᵀ
# ctc_alpha(alpha, lpe, skip); ctc_beta(beta, lpe, skip, Tb, init)   the CTC recursions
if njit is None:
    lstm_forward_step, lstm_backward_step = _np_lstm_forward_step, _np_lstm_backward_step
    ctc_alpha, ctc_beta = _np_ctc_alpha, _np_ctc_beta
else:
    lstm_forward_step, lstm_backward_step = _nb_lstm_forward_step, _nb_lstm_backward_step
    ctc_alpha, ctc_beta = _nb_ctc_alpha, _nb_ctc_beta


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel for the engine's argument types,
    so that no timed step pays for it. Called on import."""
    if njit is None:
        return
    B, H, S = 1, 1, 3
    z, zh, c = np.zeros((B, 4 * H)), np.zeros((B, 4 * H)), np.zeros((B, H))
    ws = LSTMScratch(B, H)
    _nb_lstm_forward_step(z, zh, c, c.copy(), c.copy(), c.copy(), ws)
    _nb_lstm_backward_step(z, c, c, c, c.copy(), c.copy(), zh, ws)
    lpe, skip = np.zeros((2, B, S)), np.zeros((B, S), dtype=bool)
    _nb_ctc_alpha(np.zeros((2, B, S)), lpe, skip)
    _nb_ctc_beta(np.zeros((2, B, S)), lpe, skip, np.full(B, 2, dtype=np.int64), np.zeros((B, S)))


warm_up()
