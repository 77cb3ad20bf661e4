"""The LSTM's loops over time and the CTC recursions: a numpy reference and a numba path.

The handwriting LSTM's batches are small (B = 4, 4H = 256): a time step is a dozen numpy
calls of a few hundred elements each, so call overhead, not arithmetic, sets its cost. The
numba path runs whole loops in compiled code where it can, with the same IEEE operations in
the same order on every element as the reference beside it (:mod:`engine.kernels`'
``IMPLEMENTATION`` switch and ``ENGINE_KERNELS=numpy`` apply here too):
- LSTM forward: the whole loop in one call, where :mod:`engine.tanhkernel`'s port of numpy's
  ``tanh`` holds on this CPU (``PORTED``); elsewhere a step is a kernel (h_{t−1},
  h_{t−1} W_h, the gates' pre-activations), numpy's ``tanh`` of all four gates, a kernel
  (σ, c_t), ``tanh`` c_t: 4 calls instead of about a dozen. The C library's ``tanh`` is no
  substitute: it differs from numpy's in the last bit on 27 % of arguments.
- LSTM backward: the whole loop in one call, dz_t W_hᵀ included (instead of about 18 a step).
- CTC α and β (eqs. 6–7 and 10–11 of Graves et al. 2006, in the log domain): each one call;
  the state occupancies γ (eqs. 14–16) from them: one pass instead of six numpy ones.

On a CPU without AVX-512 with OpenBLAS's AVX2 kernels (the 2-core VM of 2026-11-27) that
gives the reference's bits (the comment above ``_fused_matmul`` says why). Elsewhere,
numpy's AVX-512 ``exp``/``log`` or another BLAS order may round differently:
tests/test_seqkernels.py pins the bits where a probe finds them kept and, on every CPU,
bounds the difference (a matmul within 1e-12 of Σ|a||b|, 100 training steps within 1e-8).
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from engine.activations import ACTIVATIONS
from engine.kernels import IMPLEMENTATION, njit  # noqa: F401  (IMPLEMENTATION: re-exported)
from engine.tanhkernel import PORTED, TABLE

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
    ln y_t(l'_s) into beta (T, B, S), whose last row is −inf on entry (every other row is
    written); sequence b's row is ``init`` (B, S) at its last step t = Tb[b] − 1 and −inf
    after it."""
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


def _np_ctc_gamma(lg, beta, lpe, lp):
    """γ_t(s) = exp(α_t(s) + β_t(s) − ln y_t(l'_s) − ln p(z|x)) (Graves et al. 2006, eqs.
    14–16, log domain) into ``lg`` (T, B, S), which holds α on entry; lp (B,) holds ln p
    (0 where p = 0); 0 wherever the exponent is not finite. Returns ``lg``."""
    with np.errstate(invalid="ignore"):
        np.add(lg, beta, out=lg)
        lg -= lpe
        lg -= lp[None, :, None]
    notfin = ~np.isfinite(lg)
    np.copyto(lg, 0.0, where=notfin)
    np.exp(lg, out=lg)
    np.copyto(lg, 0.0, where=notfin)
    return lg


# ---- the numpy reference's loops over time ----------------------------------------------------
def _np_lstm_forward(Z, Wh, C, Hs, TC):
    """Z (T, B, 4H) holds x_t W_x + b → the gate activations; C, TC (T, B, H) ← c_t, tanh c_t;
    Hs (T + 1, B, H) ← h_t in Hs[t + 1] (Hs[0] = h_{−1} = 0 on entry). LSTM.forward's loop."""
    T, B, H4 = Z.shape
    ws, zh, c_prev = LSTMScratch(B, H4 // 4), np.empty((B, H4)), np.zeros((B, H4 // 4))
    for t in range(T):
        _np_lstm_forward_step(Z[t], np.matmul(Hs[t], Wh, out=zh), c_prev, C[t], TC[t], Hs[t + 1], ws)
        c_prev = C[t]


def _np_lstm_backward(Z, dH, TC, C, Wh, dZ):
    """dZ (T, B, 4H) ← ∂E/∂z_t given dH (T, B, H) = ∂E/∂h_t from the output layer:
    back-propagation through time, LSTM.backward's loop."""
    T, B, H4 = Z.shape
    ws, dh, dc, zero = LSTMScratch(B, H4 // 4), *(np.zeros((B, H4 // 4)) for _ in range(3))
    WhT = Wh.T
    for t in range(T - 1, -1, -1):
        _np_lstm_backward_step(Z[t], dH[t], TC[t], C[t - 1] if t > 0 else zero, dh, dc, dZ[t], ws)
        np.matmul(dZ[t], WhT, out=dh)


# ---- numba: whole loops over time where no transcendental function needs numpy's ------------
# A step's h_{t−1} W_h (B × H × 4H) is a dot product along k per entry. OpenBLAS's dgemm forms
# each entry of an even number of rows and more than one column as one FMA chain in k from 0
# (its 4- and 2-row kernels; an odd last row takes its one-row edge, one column a gemv, each
# in another order). ``_matmul`` forms that chain (LLVM's ``contract`` flag, on this function
# only, turns a·b + c into an FMA), so it gives numpy's bits where ``_fused_matmul`` says so
# and numpy's matmul runs elsewhere. ``exp`` and ``log`` compile to the C library's, which
# numpy's float64 loops call too on CPUs without AVX-512; ``tanh`` is numpy's, as ported to
# engine.tanhkernel, or numpy's ufunc between kernels. tests/test_seqkernels.py checks
# the bits and bounds the difference where another BLAS or CPU orders otherwise.
def _fused_matmul(rows: int, cols: int) -> bool:
    return MATMUL_SOUND and rows % 2 == 0 and cols > 1


@contextmanager
def _slp_vectorizer():
    """LLVM's SLP vectorizer on while a kernel compiles. numba leaves it off by default
    (numba#8852: it miscompiled other code); ``_matmul``'s 2 × 16 register tile needs it to
    become 8 vector FMAs per k instead of 32 scalar ones. On for that kernel alone, whose bits
    tests/test_seqkernels.py checks against numpy's matmul on every shape the loops pass."""
    from numba.core import config

    was = config.SLP_VECTORIZE
    config.SLP_VECTORIZE = 1
    try:
        yield
    finally:
        config.SLP_VECTORIZE = was


if njit is not None:
    from numba import uint64

    _U1, _U2, _U3, _U4, _U5, _U6, _U7, _U8, _U9, _U10, _U11, _U12, _U13, _U14, _U15 = (
        uint64(c) for c in range(1, 16))  # unsigned offsets: no negative-index wraparound

    with _slp_vectorizer():  # compiled here, for C-contiguous arrays only
        @njit("void(float64[:, ::1], float64[:, ::1], float64[:, ::1])", cache=True,
              fastmath={"contract"})
        def _matmul(a, b, out):
            """out = a @ b (a (M, K), b (K, N)), each entry one FMA chain in k from 0. Rows in
            pairs and columns in sixteens are a register tile: 32 chains side by side, each
            k's 16 values of b loaded once for both rows; the rest, one chain at a time."""
            M, Kd = a.shape
            N = b.shape[1]
            bf = b.reshape(b.size)
            M2, N16 = M - M % 2, N - N % 16
            for i in range(0, M2, 2):
                for j in range(0, N16, 16):
                    p0 = p1 = p2 = p3 = p4 = p5 = p6 = p7 = p8 = p9 = p10 = p11 = p12 = p13 = p14 = p15 = 0.0
                    q0 = q1 = q2 = q3 = q4 = q5 = q6 = q7 = q8 = q9 = q10 = q11 = q12 = q13 = q14 = q15 = 0.0
                    for k in range(Kd):
                        x, y, o = a[i, k], a[i + 1, k], uint64(k * N + j)
                        b0, b1, b2, b3 = bf[o], bf[o + _U1], bf[o + _U2], bf[o + _U3]
                        b4, b5, b6, b7 = bf[o + _U4], bf[o + _U5], bf[o + _U6], bf[o + _U7]
                        b8, b9, b10, b11 = bf[o + _U8], bf[o + _U9], bf[o + _U10], bf[o + _U11]
                        b12, b13, b14, b15 = bf[o + _U12], bf[o + _U13], bf[o + _U14], bf[o + _U15]
                        p0 = x * b0 + p0; p1 = x * b1 + p1; p2 = x * b2 + p2; p3 = x * b3 + p3
                        p4 = x * b4 + p4; p5 = x * b5 + p5; p6 = x * b6 + p6; p7 = x * b7 + p7
                        p8 = x * b8 + p8; p9 = x * b9 + p9; p10 = x * b10 + p10; p11 = x * b11 + p11
                        p12 = x * b12 + p12; p13 = x * b13 + p13; p14 = x * b14 + p14; p15 = x * b15 + p15
                        q0 = y * b0 + q0; q1 = y * b1 + q1; q2 = y * b2 + q2; q3 = y * b3 + q3
                        q4 = y * b4 + q4; q5 = y * b5 + q5; q6 = y * b6 + q6; q7 = y * b7 + q7
                        q8 = y * b8 + q8; q9 = y * b9 + q9; q10 = y * b10 + q10; q11 = y * b11 + q11
                        q12 = y * b12 + q12; q13 = y * b13 + q13; q14 = y * b14 + q14; q15 = y * b15 + q15
                    out[i, j + 0] = p0; out[i, j + 1] = p1; out[i, j + 2] = p2; out[i, j + 3] = p3
                    out[i, j + 4] = p4; out[i, j + 5] = p5; out[i, j + 6] = p6; out[i, j + 7] = p7
                    out[i, j + 8] = p8; out[i, j + 9] = p9; out[i, j + 10] = p10; out[i, j + 11] = p11
                    out[i, j + 12] = p12; out[i, j + 13] = p13; out[i, j + 14] = p14; out[i, j + 15] = p15
                    out[i + 1, j + 0] = q0; out[i + 1, j + 1] = q1; out[i + 1, j + 2] = q2; out[i + 1, j + 3] = q3
                    out[i + 1, j + 4] = q4; out[i + 1, j + 5] = q5; out[i + 1, j + 6] = q6; out[i + 1, j + 7] = q7
                    out[i + 1, j + 8] = q8; out[i + 1, j + 9] = q9; out[i + 1, j + 10] = q10; out[i + 1, j + 11] = q11
                    out[i + 1, j + 12] = q12; out[i + 1, j + 13] = q13; out[i + 1, j + 14] = q14; out[i + 1, j + 15] = q15
            for i in range(M):
                for j in range(N):
                    if i < M2 and j < N16:
                        continue
                    p = 0.0
                    for k in range(Kd):
                        p = a[i, k] * b[k, j] + p
                    out[i, j] = p

    def _matmul_sound() -> bool:
        """Whether the compiled tile computes a @ b here, within 1e-12 of Σ|a||b| (the bound
        tests/test_seqkernels.py puts on another BLAS's order), on the loops' shapes and
        their edges: a guard against a miscompiled tile, checked once at import; where it
        fails, the loops use numpy's matmul (``_fused_matmul`` False)."""
        rng = np.random.default_rng(0)
        for M, K, N in ((4, 64, 256), (4, 256, 64), (2, 16, 64), (6, 5, 20), (2, 3, 17)):
            a, b, out = rng.standard_normal((M, K)), rng.standard_normal((K, N)), np.empty((M, N))
            _matmul(a, b, out)
            if not np.all(np.abs(out - a @ b) <= 1e-12 * (np.abs(a) @ np.abs(b))):
                return False
        return True

    @njit(cache=True)
    def _h_prev(t, Z, TC, Hs):  # h_{t−1} = o_{t−1}·tanh c_{t−1} into Hs[t] (t > 0)
        H = Hs.shape[2]
        if t > 0:
            for b in range(Z.shape[1]):
                for k in range(H):
                    Hs[t, b, k] = Z[t - 1, b, 2 * H + k] * TC[t - 1, b, k]

    @njit(cache=True)
    def _gates_add(t, Z, zh):  # z_t += h_{t−1} W_h, then ·½ on the i, f, o gates (σ's inner scale)
        H3 = 3 * (Z.shape[2] // 4)
        for b in range(Z.shape[1]):
            for j in range(Z.shape[2]):
                v = Z[t, b, j] + zh[b, j]
                Z[t, b, j] = v * 0.5 if j < H3 else v

    @njit(cache=True)
    def _gates_in(t, Z, TC, Hs, Wh, zh):  # the three above in one call
        _h_prev(t, Z, TC, Hs)
        _matmul(Hs[t], Wh, zh)
        _gates_add(t, Z, zh)

    @njit(cache=True)
    def _cell(t, Z, C):  # σ = (tanh + 1)·½ (= ½·tanh + ½, bit for bit); c = f·c_{t−1} + i·g
        H = C.shape[2]
        for b in range(Z.shape[1]):
            for j in range(3 * H):
                Z[t, b, j] = (Z[t, b, j] + 1.0) * 0.5
            for k in range(H):
                cp = C[t - 1, b, k] if t > 0 else 0.0
                C[t, b, k] = Z[t, b, H + k] * cp + Z[t, b, k] * Z[t, b, 3 * H + k]

    @njit(cache=True)
    def _back_step(z, dh_out, tc, c_prev, dh, dc, dz, first):  # _np_lstm_backward_step's passes
        H = dh.shape[1]
        for b in range(z.shape[0]):
            for k in range(H):
                i, f, o, g = z[b, k], z[b, H + k], z[b, 2 * H + k], z[b, 3 * H + k]
                d = dh[b, k] + dh_out[b, k]
                dh[b, k] = d
                t = tc[b, k]
                w = (d * o) * (1.0 - t * t)
                dcv = dc[b, k] + w
                cp = 0.0 if first else c_prev[b, k]
                dz[b, k] = (dcv * g) * (i * (1.0 - i))
                dz[b, H + k] = (dcv * cp) * (f * (1.0 - f))
                dz[b, 2 * H + k] = (d * t) * (o * (1.0 - o))
                dz[b, 3 * H + k] = (dcv * i) * (1.0 - g * g)
                dc[b, k] = dcv * f

    @njit(cache=True)
    def _nb_lstm_backward_loop(Z, dH, TC, C, WhT, dZ):
        T, B, H = dH.shape
        dh, dc = np.zeros((B, H)), np.zeros((B, H))
        for t in range(T - 1, -1, -1):
            _back_step(Z[t], dH[t], TC[t], C[t - 1] if t > 0 else C[0], dh, dc, dZ[t], t == 0)
            _matmul(dZ[t], WhT, dh)

    @njit(cache=True)
    def _npmax(x, y):  # np.maximum: a NaN in either wins
        return x if (x >= y or x != x) else y

    @njit(cache=True)
    def _exp(d):  # e^d; e^0 = 1 and e^−inf = 0 exactly in every libm, so those need no call
        return 1.0 if d == 0.0 else (0.0 if d == -np.inf else math.exp(d))

    @njit(cache=True)
    def _lse3(x0, x1, x2):  # engine.losses._lse3's operations: mf + log((e^a + e^b) + e^c)
        m = _npmax(_npmax(x0, x1), x2)
        mf = m if math.isfinite(m) else 0.0
        return mf + math.log((_exp(x0 - mf) + _exp(x1 - mf)) + _exp(x2 - mf))

    @njit(cache=True)
    def _nb_ctc_alpha(alpha, lpe, skip):
        T, B, S = alpha.shape
        for t in range(1, T):
            for b in range(B):
                for s in range(S):
                    x1 = alpha[t - 1, b, s - 1] if s >= 1 else -np.inf
                    x2 = alpha[t - 1, b, s - 2] if s >= 2 and skip[b, s] else -np.inf
                    alpha[t, b, s] = _lse3(alpha[t - 1, b, s], x1, x2) + lpe[t, b, s]

    @njit(cache=True)
    def _nb_ctc_beta(beta, lpe, skip, Tb, init):
        T, B, S = beta.shape
        for t in range(T - 1, -1, -1):
            for b in range(B):
                for s in range(S):
                    if Tb[b] - 1 == t:
                        beta[t, b, s] = init[b, s]
                    elif Tb[b] - 1 < t:
                        beta[t, b, s] = -np.inf
                    else:
                        x1 = beta[t + 1, b, s + 1] if s + 1 < S else -np.inf
                        x2 = beta[t + 1, b, s + 2] if s + 2 < S and skip[b, s + 2] else -np.inf
                        beta[t, b, s] = _lse3(beta[t + 1, b, s], x1, x2) + lpe[t, b, s]


    @njit(cache=True)
    def _nb_ctc_gamma(lg, beta, lpe, lp):  # _np_ctc_gamma's operations, one pass
        T, B, S = lg.shape
        for t in range(T):
            for b in range(B):
                for s in range(S):
                    v = ((lg[t, b, s] + beta[t, b, s]) - lpe[t, b, s]) - lp[b]
                    lg[t, b, s] = math.exp(v) if math.isfinite(v) else 0.0
        return lg

    if PORTED:
        from engine.tanhkernel import tanh1

        @njit(cache=True)
        def _cell_tanh(t, Z, C, TC, T):  # tanh of the gates, then _cell, then tanh c_t: one pass
            H = C.shape[2]
            for b in range(Z.shape[1]):
                for j in range(4 * H):
                    v = tanh1(Z[t, b, j], T)
                    Z[t, b, j] = (v + 1.0) * 0.5 if j < 3 * H else v
                for k in range(H):
                    cp = C[t - 1, b, k] if t > 0 else 0.0
                    c = Z[t, b, H + k] * cp + Z[t, b, k] * Z[t, b, 3 * H + k]
                    C[t, b, k] = c
                    TC[t, b, k] = tanh1(c, T)

        @njit(cache=True)
        def _forward_loop(Z, Wh, C, Hs, TC, zh, T):
            for t in range(Z.shape[0]):
                _gates_in(t, Z, TC, Hs, Wh, zh)
                _cell_tanh(t, Z, C, TC, T)


def _nb_lstm_forward(Z, Wh, C, Hs, TC):
    """_np_lstm_forward. Where tanh is compiled (engine.tanhkernel.PORTED): the whole loop in
    one call where _fused_matmul, else 3 calls a step (numpy's matmul between two kernels).
    Otherwise 4 calls a step or 5: a kernel (with h_{t−1} W_h where _fused_matmul, else
    numpy's matmul between two kernels), numpy's ``tanh`` of the four gates, a kernel,
    ``tanh`` c_t."""
    T, B, H4 = Z.shape
    zh, fused = np.empty((B, H4)), _fused_matmul(B, H4)
    if PORTED and fused:
        _forward_loop(Z, Wh, C, Hs, TC, zh, TABLE)
    else:
        for t in range(T):
            if fused:
                _gates_in(t, Z, TC, Hs, Wh, zh)
            else:
                _h_prev(t, Z, TC, Hs)
                _gates_add(t, Z, np.matmul(Hs[t], Wh, out=zh))
            if PORTED:
                _cell_tanh(t, Z, C, TC, TABLE)
            else:
                np.tanh(Z[t], out=Z[t])
                _cell(t, Z, C)
                np.tanh(C[t], out=TC[t])
    np.multiply(Z[T - 1, :, H4 // 2:3 * H4 // 4], TC[T - 1], out=Hs[T])


def _nb_lstm_backward(Z, dH, TC, C, Wh, dZ):
    """_np_lstm_backward in one call where _fused_matmul (W_hᵀ made contiguous once, for
    _matmul's rows), else a kernel and numpy's matmul a step."""
    T, B, H = dH.shape
    if _fused_matmul(B, H):
        return _nb_lstm_backward_loop(Z, dH, TC, C, np.ascontiguousarray(Wh.T), dZ)
    dh, dc, WhT = np.zeros((B, H)), np.zeros((B, H)), Wh.T
    for t in range(T - 1, -1, -1):
        _back_step(Z[t], dH[t], TC[t], C[t - 1] if t > 0 else C[0], dh, dc, dZ[t], t == 0)
        np.matmul(dZ[t], WhT, out=dh)


MATMUL_SOUND = njit is not None and _matmul_sound()

# ---- the interface the engine calls -----------------------------------------------------------
# lstm_forward(Z, Wh, C, Hs, TC); lstm_backward(Z, dH, TC, C, Wh, dZ)   LSTM's loops over time
# ctc_alpha(alpha, lpe, skip); ctc_beta(beta, lpe, skip, Tb, init)      the CTC recursions
# ctc_gamma(alpha, beta, lpe, lp) -> γ in α's buffer                      the state occupancies
SEQ_FUNCTIONS = ("lstm_forward", "lstm_backward", "ctc_alpha", "ctc_beta", "ctc_gamma")
_PREFIX = "_np_" if njit is None else "_nb_"
lstm_forward, lstm_backward, ctc_alpha, ctc_beta, ctc_gamma = (globals()[_PREFIX + n] for n in SEQ_FUNCTIONS)


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel for the engine's argument types,
    so that no timed step pays for it. Called on import."""
    if njit is None:
        return
    T, S = 2, 3
    for B, H in ((1, 1), (2, 2)):  # numpy's matmul between kernels; _matmul
        Z, C, TC = np.zeros((T, B, 4 * H)), np.zeros((T, B, H)), np.zeros((T, B, H))
        Hs = np.zeros((T + 1, B, H))
        _nb_lstm_forward(Z, np.zeros((H, 4 * H)), C, Hs, TC)
        _nb_lstm_backward(Z, C.copy(), TC, C, np.zeros((H, 4 * H)), Z.copy())
    lpe, skip = np.zeros((T, 1, S)), np.zeros((1, S), dtype=bool)
    _nb_ctc_alpha(np.zeros((T, 1, S)), lpe, skip)
    _nb_ctc_beta(np.zeros((T, 1, S)), lpe, skip, np.full(1, 2, dtype=np.int64), np.zeros((1, S)))
    _nb_ctc_gamma(np.zeros((T, 1, S)), np.zeros((T, 1, S)), lpe, np.zeros(1))


warm_up()
