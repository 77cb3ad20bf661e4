"""The LSTM's loops over time and the CTC recursions: a numpy reference and a numba path.

The handwriting LSTM's batches are small (B = 4, 4H = 256): a time step is a dozen numpy
calls of a few hundred elements each, so call overhead, not arithmetic, sets its cost. The
numba path runs whole loops in compiled code where it can, with the same IEEE operations in
the same order on every element as the reference beside it (:mod:`engine.kernels`'
``IMPLEMENTATION`` switch and ``ENGINE_KERNELS=numpy`` apply here too):
- LSTM forward: the whole loop in one call, with :mod:`engine.tanhkernel`'s compiled
  ``tanh1`` inside (``COMPILED``), which computes tanh another way than numpy, within a few
  ulp. With ``COMPILED`` off (the tests' way to pin the other bits) a step is a kernel
  (h_{t−1}, h_{t−1} W_h, the gates' pre-activations), ``tanh`` of all four gates, a kernel
  (σ, c_t), ``tanh`` c_t: 4 calls instead of about a dozen.
- LSTM backward: the whole loop in one call, dz_t W_hᵀ included (instead of about 18 a step).
- CTC: ln p(z|x) and its gradient (Graves et al. 2006, eqs. 5–16) in one call. Here too
  the numba path computes the same function another way: α and β rescaled at
  every step (the paper's §4.1, eqs. 9 and 13) instead of in the log domain, so a cell costs
  a few multiply-adds instead of two ``exp`` and a ``log``, with the softmax and the
  gradient in the same pass. Its results differ from the reference's in the last bits
  (tests/unit/test_seqkernels.py bounds them: ln p within 1e-12 relative, the gradient within
  1e-12 absolute, 100 training steps within 1e-8).

On a CPU without AVX-512 with OpenBLAS's AVX2 kernels (the 2-core VM of 2026-11-27) the LSTM
loops give the reference's bits, given the same tanh (the comment above ``_fused_matmul`` says why). Elsewhere,
numpy's AVX-512 ``exp`` or another BLAS order may round differently: tests/unit/test_seqkernels.py
pins the bits where a probe finds them kept and, on every CPU, bounds the difference (a
matmul within 1e-12 of Σ|a||b|, 100 training steps within 1e-8).
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from engine.activations import ACTIVATIONS
from engine.kernels import IMPLEMENTATION, njit  # noqa: F401  (IMPLEMENTATION: re-exported)
from engine.tanhkernel import COMPILED, tanh

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
    """log(e^a + e^b + e^c) elementwise, −inf safe (main's formula: tests/unit/test_perf_kernels.py)
    into preallocated (B, S) buffers: the same operations in the same order per element,
    without ten temporaries a step. The caller suppresses the log(0) warning."""

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


def log_softmax(u: np.ndarray) -> np.ndarray:
    """log y_k = u_k − log Σ_j exp u_j over the last axis."""
    m = u.max(axis=-1, keepdims=True)
    s = u - m
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def _np_ctc(u, ext, skip, Tb, Sb, grad=None):
    """CTC ln p(z|x) per sequence (B,) from the unnormalised outputs u (T, B, K), the
    extended labels ext (B, S) (blank = 0, ext[b, s] for s < Sb[b]), skip (B, S) (s−2 → s
    allowed), the input lengths Tb (B,) and the states used Sb (B,) = 2|z| + 1; −inf where no
    path fits (a sequence too short for its labels). With ``grad`` (T, B, K), also
    ∂(−ln p)/∂u into it: y_{t,k} − Σ_{s: l'_s = k} γ_t(s) (Graves et al. 2006, eq. 16), 0 at
    padded steps and where p = 0. The log-softmax, then :func:`_np_ctc_lattice`."""
    T, B, K = u.shape
    lp = log_softmax(u)  # (T, B, K)
    lpe = lp[:, np.arange(B)[:, None], ext]  # (T, B, S) ln y_t(l'_s)
    gamma = None if grad is None else np.empty(lpe.shape)
    logp = _np_ctc_lattice(lpe, skip, Tb, Sb, gamma)
    if grad is None:
        return logp
    S = ext.shape[1]
    onehot = np.zeros((B, S, K))  # (B, S, K)
    onehot[np.arange(B)[:, None], np.arange(S)[None, :], ext] = 1.0
    occ = np.matmul(gamma.transpose(1, 0, 2), onehot).transpose(1, 0, 2)  # (T, B, K): Σ_{l'_s=k} γ_t(s)
    np.exp(lp, out=grad)
    grad -= occ
    valid = (np.arange(T)[:, None] < Tb[None, :]) & np.isfinite(logp)[None, :]  # (T, B)
    grad *= valid[:, :, None]
    return logp


def _np_ctc_lattice(lpe, skip, Tb, Sb, gamma=None):
    """ln p(z|x) per sequence (B,), −inf where no path fits, from lpe (T, B, S) = ln y_t(l'_s)
    and the rest as :func:`_np_ctc`; with ``gamma`` (T, B, S), also the occupancies γ_t(s)
    into it, 0 at padded steps, unused states and where p = 0. In the log domain: α (eqs.
    6–7) in ``gamma``'s buffer, β (eqs. 10–11), then γ (eqs. 14–16)."""
    T, B, S = lpe.shape
    b = np.arange(B)
    alpha = np.empty((T, B, S)) if gamma is None else gamma  # _np_ctc_alpha writes rows 1..T−1
    alpha[0] = NINF
    alpha[0, :, 0] = lpe[0, :, 0]
    if S > 1:
        alpha[0, :, 1] = np.where(Sb > 1, lpe[0, :, 1], NINF)
    alpha[0][np.arange(S)[None, :] >= Sb[:, None]] = NINF
    _np_ctc_alpha(alpha, lpe, skip)
    last = alpha[Tb - 1, b]  # (B, S)
    end1 = last[b, Sb - 1]
    end2 = np.where(Sb > 1, last[b, np.maximum(Sb - 2, 0)], NINF)
    m = np.maximum(end1, end2)
    mf = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        logp = mf + np.log(np.exp(end1 - mf) + np.exp(end2 - mf))  # (B,)
    if gamma is None:
        return logp
    beta = np.empty((T, B, S))  # β_t(s) includes y_t(l'_s); _np_ctc_beta writes every row
    beta[T - 1] = NINF  # before the last, and the last where a sequence ends there
    init = np.full((B, S), NINF)
    init[b, Sb - 1] = lpe[Tb - 1, b, Sb - 1]
    has2 = Sb > 1
    init[b[has2], (Sb - 2)[has2]] = lpe[Tb - 1, b, np.maximum(Sb - 2, 0)][has2]
    _np_ctc_beta(beta, lpe, skip, Tb, init)
    ok = np.isfinite(logp)
    _np_ctc_gamma(alpha, beta, lpe, np.where(ok, logp, 0.0))
    gamma[:, ~ok] = 0.0
    gamma[np.arange(T)[:, None] >= Tb[None, :]] = 0.0
    return logp


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
# in another order). ``_matmul`` forms that chain (LLVM's ``contract`` flag, on these functions
# only, turns a·b + c into an FMA), so it gives numpy's bits where ``_fused_matmul`` says so
# and numpy's matmul runs elsewhere. The loops make W_h (W_hᵀ) into panels once a batch
# (``_panels``), so that each k's columns of a tile are contiguous: the tile reads W_h in
# order instead of a line 2 KiB past the last one (the same chains, the same bits). ``exp`` and ``log`` compile to the C library's, which
# numpy's float64 loops call too on CPUs without AVX-512; ``tanh`` is engine.tanhkernel's
# (its own tests bound it against numpy's). tests/unit/test_seqkernels.py checks the bits
# given one tanh and bounds the difference where another BLAS or CPU orders otherwise.
def _fused_matmul(rows: int, cols: int) -> bool:
    return MATMUL_SOUND and rows % 2 == 0 and cols > 1


@contextmanager
def _slp_vectorizer():
    """LLVM's SLP vectorizer on while a kernel compiles. numba leaves it off by default
    (numba#8852: it miscompiled other code); the register tiles (``_matmul_4x8``,
    ``_matmul_2x16``) need it to become 8 vector FMAs per k instead of 32 scalar ones. On for
    those kernels alone, whose bits tests/unit/test_seqkernels.py checks against numpy's matmul
    on every shape the loops pass."""
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

    @njit(cache=True, fastmath={"contract"})
    def _edge_columns(a, b, out, i0, i1, j0):  # out[i0:i1, j0:] = a[i0:i1] @ b[:, j0:], a chain an entry
        for i in range(i0, i1):
            for j in range(j0, b.shape[1]):
                p = 0.0
                for k in range(a.shape[1]):
                    p = a[i, k] * b[k, j] + p
                out[i, j] = p

    with _slp_vectorizer():  # compiled here, for C-contiguous arrays only
        @njit("void(float64[:, ::1], float64[:, :, ::1], float64[:, ::1], float64[:, ::1])",
              cache=True, fastmath={"contract"})
        def _matmul_4x8(a, bp, b, out):
            """out = a @ b for rows in fours (M % 4 = 0), b also as 8-wide panels ``bp``
            (:func:`_panels`): each entry one FMA chain in k from 0. A 4 × 8 register tile: 32
            chains side by side, each k's 8 values of b read once, contiguous, for four rows;
            the columns past the last whole panel one chain at a time."""
            M, Kd = a.shape
            bf = bp.reshape(bp.size)
            for i in range(0, M, 4):
                for jt in range(bp.shape[0]):
                    j, o0 = jt * 8, jt * Kd * 8
                    p0 = p1 = p2 = p3 = p4 = p5 = p6 = p7 = 0.0
                    q0 = q1 = q2 = q3 = q4 = q5 = q6 = q7 = 0.0
                    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = 0.0
                    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
                    for k in range(Kd):
                        x0, x1, x2, x3 = a[i, k], a[i + 1, k], a[i + 2, k], a[i + 3, k]
                        o = uint64(o0 + k * 8)
                        b0, b1, b2, b3 = bf[o], bf[o + _U1], bf[o + _U2], bf[o + _U3]
                        b4, b5, b6, b7 = bf[o + _U4], bf[o + _U5], bf[o + _U6], bf[o + _U7]
                        p0 = x0 * b0 + p0; p1 = x0 * b1 + p1; p2 = x0 * b2 + p2; p3 = x0 * b3 + p3
                        p4 = x0 * b4 + p4; p5 = x0 * b5 + p5; p6 = x0 * b6 + p6; p7 = x0 * b7 + p7
                        q0 = x1 * b0 + q0; q1 = x1 * b1 + q1; q2 = x1 * b2 + q2; q3 = x1 * b3 + q3
                        q4 = x1 * b4 + q4; q5 = x1 * b5 + q5; q6 = x1 * b6 + q6; q7 = x1 * b7 + q7
                        r0 = x2 * b0 + r0; r1 = x2 * b1 + r1; r2 = x2 * b2 + r2; r3 = x2 * b3 + r3
                        r4 = x2 * b4 + r4; r5 = x2 * b5 + r5; r6 = x2 * b6 + r6; r7 = x2 * b7 + r7
                        s0 = x3 * b0 + s0; s1 = x3 * b1 + s1; s2 = x3 * b2 + s2; s3 = x3 * b3 + s3
                        s4 = x3 * b4 + s4; s5 = x3 * b5 + s5; s6 = x3 * b6 + s6; s7 = x3 * b7 + s7
                    out[i, j + 0] = p0; out[i, j + 1] = p1; out[i, j + 2] = p2; out[i, j + 3] = p3
                    out[i, j + 4] = p4; out[i, j + 5] = p5; out[i, j + 6] = p6; out[i, j + 7] = p7
                    out[i + 1, j + 0] = q0; out[i + 1, j + 1] = q1; out[i + 1, j + 2] = q2; out[i + 1, j + 3] = q3
                    out[i + 1, j + 4] = q4; out[i + 1, j + 5] = q5; out[i + 1, j + 6] = q6; out[i + 1, j + 7] = q7
                    out[i + 2, j + 0] = r0; out[i + 2, j + 1] = r1; out[i + 2, j + 2] = r2; out[i + 2, j + 3] = r3
                    out[i + 2, j + 4] = r4; out[i + 2, j + 5] = r5; out[i + 2, j + 6] = r6; out[i + 2, j + 7] = r7
                    out[i + 3, j + 0] = s0; out[i + 3, j + 1] = s1; out[i + 3, j + 2] = s2; out[i + 3, j + 3] = s3
                    out[i + 3, j + 4] = s4; out[i + 3, j + 5] = s5; out[i + 3, j + 6] = s6; out[i + 3, j + 7] = s7
            _edge_columns(a, b, out, 0, M, bp.shape[0] * 8)

        @njit("void(float64[:, ::1], float64[:, :, ::1], float64[:, ::1], float64[:, ::1])",
              cache=True, fastmath={"contract"})
        def _matmul_2x16(a, bp, b, out):
            """out = a @ b for rows in pairs (M even), b also as 16-wide panels ``bp``: a 2 × 16
            register tile, as :func:`_matmul_4x8`; the rest one chain at a time."""
            M, Kd = a.shape
            bf = bp.reshape(bp.size)
            M2 = M - M % 2
            for i in range(0, M2, 2):
                for jt in range(bp.shape[0]):
                    j, o0 = jt * 16, jt * Kd * 16
                    p0 = p1 = p2 = p3 = p4 = p5 = p6 = p7 = p8 = p9 = p10 = p11 = p12 = p13 = p14 = p15 = 0.0
                    q0 = q1 = q2 = q3 = q4 = q5 = q6 = q7 = q8 = q9 = q10 = q11 = q12 = q13 = q14 = q15 = 0.0
                    for k in range(Kd):
                        x0, x1 = a[i, k], a[i + 1, k]
                        o = uint64(o0 + k * 16)
                        b0, b1, b2, b3 = bf[o], bf[o + _U1], bf[o + _U2], bf[o + _U3]
                        b4, b5, b6, b7 = bf[o + _U4], bf[o + _U5], bf[o + _U6], bf[o + _U7]
                        b8, b9, b10, b11 = bf[o + _U8], bf[o + _U9], bf[o + _U10], bf[o + _U11]
                        b12, b13, b14, b15 = bf[o + _U12], bf[o + _U13], bf[o + _U14], bf[o + _U15]
                        p0 = x0 * b0 + p0; p1 = x0 * b1 + p1; p2 = x0 * b2 + p2; p3 = x0 * b3 + p3
                        p4 = x0 * b4 + p4; p5 = x0 * b5 + p5; p6 = x0 * b6 + p6; p7 = x0 * b7 + p7
                        p8 = x0 * b8 + p8; p9 = x0 * b9 + p9; p10 = x0 * b10 + p10; p11 = x0 * b11 + p11
                        p12 = x0 * b12 + p12; p13 = x0 * b13 + p13; p14 = x0 * b14 + p14; p15 = x0 * b15 + p15
                        q0 = x1 * b0 + q0; q1 = x1 * b1 + q1; q2 = x1 * b2 + q2; q3 = x1 * b3 + q3
                        q4 = x1 * b4 + q4; q5 = x1 * b5 + q5; q6 = x1 * b6 + q6; q7 = x1 * b7 + q7
                        q8 = x1 * b8 + q8; q9 = x1 * b9 + q9; q10 = x1 * b10 + q10; q11 = x1 * b11 + q11
                        q12 = x1 * b12 + q12; q13 = x1 * b13 + q13; q14 = x1 * b14 + q14; q15 = x1 * b15 + q15
                    out[i, j + 0] = p0; out[i, j + 1] = p1; out[i, j + 2] = p2; out[i, j + 3] = p3
                    out[i, j + 4] = p4; out[i, j + 5] = p5; out[i, j + 6] = p6; out[i, j + 7] = p7
                    out[i, j + 8] = p8; out[i, j + 9] = p9; out[i, j + 10] = p10; out[i, j + 11] = p11
                    out[i, j + 12] = p12; out[i, j + 13] = p13; out[i, j + 14] = p14; out[i, j + 15] = p15
                    out[i + 1, j + 0] = q0; out[i + 1, j + 1] = q1; out[i + 1, j + 2] = q2; out[i + 1, j + 3] = q3
                    out[i + 1, j + 4] = q4; out[i + 1, j + 5] = q5; out[i + 1, j + 6] = q6; out[i + 1, j + 7] = q7
                    out[i + 1, j + 8] = q8; out[i + 1, j + 9] = q9; out[i + 1, j + 10] = q10; out[i + 1, j + 11] = q11
                    out[i + 1, j + 12] = q12; out[i + 1, j + 13] = q13; out[i + 1, j + 14] = q14; out[i + 1, j + 15] = q15
            _edge_columns(a, b, out, 0, M2, bp.shape[0] * 16)
            _edge_columns(a, b, out, M2, M, 0)

    @njit(cache=True)
    def _panels(b, rows):
        """b (K, N) as the panels the tile for ``rows`` rows reads: (N // w, K, w), w = 8
        where rows % 4 = 0, else 16 (panel jt holds columns jt·w … jt·w + w − 1). Made once a
        batch: b is W_h or W_hᵀ, the same at every step."""
        w = 8 if rows % 4 == 0 else 16
        Kd, N = b.shape
        bp = np.empty((N // w, Kd, w))
        for jt in range(N // w):
            for k in range(Kd):
                for c in range(w):
                    bp[jt, k, c] = b[k, jt * w + c]
        return bp

    @njit(cache=True)
    def _matmul_panels(a, bp, b, out):  # out = a @ b, ``bp`` = _panels(b, a.shape[0])
        if a.shape[0] % 4 == 0:
            _matmul_4x8(a, bp, b, out)
        else:
            _matmul_2x16(a, bp, b, out)

    @njit(cache=True)
    def _matmul(a, b, out):
        """out = a @ b (a (M, K), b (K, N), C-contiguous), each entry one FMA chain in k from
        0: rows in fours (4 × 8 tile) where M % 4 = 0, else in pairs (2 × 16), read from b
        made into panels first."""
        _matmul_panels(a, _panels(b, a.shape[0]), b, out)

    def _matmul_sound() -> bool:
        """Whether the compiled tile computes a @ b here, within 1e-12 of Σ|a||b| (the bound
        tests/unit/test_seqkernels.py puts on another BLAS's order), on the loops' shapes and
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
    def _gates_in(t, Z, TC, Hs, Wh, Whp, zh):  # the three above in one call (Whp: W_h's panels)
        _h_prev(t, Z, TC, Hs)
        _matmul_panels(Hs[t], Whp, Wh, zh)
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
        WhTp = _panels(WhT, B)
        for t in range(T - 1, -1, -1):
            _back_step(Z[t], dH[t], TC[t], C[t - 1] if t > 0 else C[0], dh, dc, dZ[t], t == 0)
            _matmul_panels(dZ[t], WhTp, WhT, dh)

    @njit(cache=True)
    def _ctc_rescaled(u, ext, skip, Tb, Sb, grad, need_grad, fallback):
        # _np_ctc's function with α and β rescaled to sum 1 at every step (Graves et al. 2006,
        # §4.1, eqs. 9 and 13): ln p = Σ_t ln C_t + ln(α̂_{T−1}(S−1) + α̂_{T−1}(S−2)), C_t the
        # sum of α at t before rescaling; γ_t(s) = α̂_t(s)·β̂_t(s)/y_t(l'_s) normalised over s
        # (Σ_s α_t(s)β_t(s)/y_t(l'_s) = p at every t, eq. 14). A sequence whose outputs are
        # not finite, whose label probabilities fall below e^−700 (where y would leave the
        # normal floats), or whose end states hold less than 1e-290 of α at its last step (no
        # path: too short for its labels; or a share that underflows) is left to the log
        # domain: fallback[b] = True, nothing written.
        T, B, K = u.shape
        S = ext.shape[1]
        logp = np.full(B, np.nan)
        pr, y = np.empty((T, K)), np.empty((T, S))
        ah, bh = np.empty((T, S)), np.empty((T, S))
        for b in range(B):
            Tn, Sn = Tb[b], Sb[b]
            low = False
            for t in range(Tn):
                m = u[t, b, 0]
                for k in range(1, K):
                    m = max(m, u[t, b, k])
                e = 0.0
                for k in range(K):
                    e += math.exp(u[t, b, k] - m)
                lse = m + math.log(e)
                if not math.isfinite(lse):
                    low = True
                    break
                for k in range(K):
                    pr[t, k] = math.exp(u[t, b, k] - lse)
                for s in range(Sn):
                    if u[t, b, ext[b, s]] - lse < -700.0:
                        low = True
                    y[t, s] = pr[t, ext[b, s]]
            if low:
                fallback[b] = True
                continue
            lp, ok = 0.0, True
            for t in range(Tn):
                c = 0.0
                for s in range(Sn):
                    if t == 0:
                        v = y[0, s] if s < 2 else 0.0
                    else:
                        v = ah[t - 1, s]
                        if s >= 1:
                            v += ah[t - 1, s - 1]
                        if s >= 2 and skip[b, s]:
                            v += ah[t - 1, s - 2]
                        v *= y[t, s]
                    ah[t, s] = v
                    c += v
                if not c > 0.0:
                    ok = False
                    break
                inv = 1.0 / c
                for s in range(Sn):
                    ah[t, s] *= inv
                lp += math.log(c)
            end = 0.0
            if ok:
                end = ah[Tn - 1, Sn - 1] + (ah[Tn - 1, Sn - 2] if Sn > 1 else 0.0)
            if not end > 1e-290:  # no path, or one whose share of α underflowed: the log domain
                fallback[b] = True
                continue
            logp[b] = lp + math.log(end)
            if not need_grad:
                continue
            for t in range(T):
                for k in range(K):
                    grad[t, b, k] = pr[t, k] if t < Tn else 0.0
            for t in range(Tn - 1, -1, -1):
                d = 0.0
                for s in range(Sn):
                    if t == Tn - 1:
                        v = y[t, s] if s >= Sn - 2 else 0.0
                    else:
                        v = bh[t + 1, s]
                        if s + 1 < Sn:
                            v += bh[t + 1, s + 1]
                        if s + 2 < Sn and skip[b, s + 2]:
                            v += bh[t + 1, s + 2]
                        v *= y[t, s]
                    bh[t, s] = v
                    d += v
                inv = 1.0 / d
                for s in range(Sn):
                    bh[t, s] *= inv
            for t in range(Tn):  # γ into ah, then the gradient y − Σ_{l'_s = k} γ_t(s)
                z = 0.0
                for s in range(Sn):
                    g = ah[t, s] * bh[t, s] / y[t, s] if y[t, s] > 0.0 else 0.0
                    ah[t, s] = g
                    z += g
                inv = 1.0 / z
                for s in range(Sn):
                    grad[t, b, ext[b, s]] -= ah[t, s] * inv
        return logp

    if COMPILED:
        from engine.tanhkernel import tanh1

        @njit(cache=True, error_model="numpy")  # tanh1's division may not raise
        def _cell_tanh(t, Z, C, TC):  # tanh of the gates, then _cell, then tanh c_t: one pass
            H = C.shape[2]
            for b in range(Z.shape[1]):
                for j in range(4 * H):
                    v = tanh1(Z[t, b, j])
                    Z[t, b, j] = (v + 1.0) * 0.5 if j < 3 * H else v
                for k in range(H):
                    cp = C[t - 1, b, k] if t > 0 else 0.0
                    c = Z[t, b, H + k] * cp + Z[t, b, k] * Z[t, b, 3 * H + k]
                    C[t, b, k] = c
                    TC[t, b, k] = tanh1(c)

        @njit(cache=True, error_model="numpy")
        def _forward_loop(Z, Wh, C, Hs, TC, zh):
            Whp = _panels(Wh, Z.shape[1])
            for t in range(Z.shape[0]):
                _gates_in(t, Z, TC, Hs, Wh, Whp, zh)
                _cell_tanh(t, Z, C, TC)


def _nb_lstm_forward(Z, Wh, C, Hs, TC):
    """_np_lstm_forward. Where tanh is compiled (engine.tanhkernel.COMPILED): the whole loop in
    one call where _fused_matmul, else 3 calls a step (numpy's matmul between two kernels).
    Otherwise 4 calls a step or 5: a kernel (with h_{t−1} W_h where _fused_matmul, else
    numpy's matmul between two kernels), numpy's ``tanh`` of the four gates, a kernel,
    ``tanh`` c_t."""
    T, B, H4 = Z.shape
    zh, fused = np.empty((B, H4)), _fused_matmul(B, H4)
    if COMPILED and fused:
        _forward_loop(Z, Wh, C, Hs, TC, zh)
    else:
        Whp = _panels(Wh, B) if fused else None
        for t in range(T):
            if fused:
                _gates_in(t, Z, TC, Hs, Wh, Whp, zh)
            else:
                _h_prev(t, Z, TC, Hs)
                _gates_add(t, Z, np.matmul(Hs[t], Wh, out=zh))
            if COMPILED:
                _cell_tanh(t, Z, C, TC)
            else:
                tanh(Z[t], Z[t])
                _cell(t, Z, C)
                tanh(C[t], TC[t])
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


def _nb_ctc(u, ext, skip, Tb, Sb, grad=None):
    """_np_ctc with α and β rescaled instead of in the log domain, softmax, lattice and
    gradient in one compiled pass (``_ctc_rescaled``): the same function, its last bits
    different. Sequences it leaves to the log domain (outputs not finite, a label probability
    below e^−700, no path or an end share below 1e-290) go through :func:`_np_ctc`, so those
    keep the reference's meaning and bits."""
    need = grad is not None
    Tb, Sb = np.asarray(Tb, dtype=np.int64), np.asarray(Sb, dtype=np.int64)
    fallback = np.zeros(len(Tb), dtype=np.bool_)
    logp = _ctc_rescaled(u, ext, skip, Tb, Sb, grad if need else np.empty((0, 0, 0)), need, fallback)
    if fallback.any():
        g = np.empty((u.shape[0], int(fallback.sum()), u.shape[2])) if need else None
        logp[fallback] = _np_ctc(u[:, fallback], ext[fallback], skip[fallback], Tb[fallback],
                                 Sb[fallback], g)
        if need:
            grad[:, fallback] = g
    return logp


MATMUL_SOUND = njit is not None and _matmul_sound()

# ---- the interface the engine calls -----------------------------------------------------------
# lstm_forward(Z, Wh, C, Hs, TC); lstm_backward(Z, dH, TC, C, Wh, dZ)   LSTM's loops over time
# ctc(u, ext, skip, Tb, Sb, grad=None) -> ln p (B,); ∂(−ln p)/∂u into grad  the CTC
SEQ_FUNCTIONS = ("lstm_forward", "lstm_backward", "ctc")
_PREFIX = "_np_" if njit is None else "_nb_"
lstm_forward, lstm_backward, ctc = (globals()[_PREFIX + n] for n in SEQ_FUNCTIONS)


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
    u, ext, skip, one = (np.zeros((T, 1, 4)), np.zeros((1, S), dtype=np.int64),
                         np.zeros((1, S), dtype=bool), np.ones(1, dtype=np.int64))
    _nb_ctc(u, ext, skip, 2 * one, 3 * one)
    _nb_ctc(u, ext, skip, 2 * one, 3 * one, np.zeros((T, 1, 4)))


warm_up()
