"""engine.seqkernels: the numba path gives the numpy reference's bits, on values where
another rounding would show (wide exponents, ±0, ±inf, NaN, −inf log-probabilities), for
batches of even and odd size (odd ones take numpy's matmul between kernels), and over whole
LSTM+CTC training runs with padding, repeated labels, empty labels and a sequence too short
for its labels. Where another CPU or BLAS may round otherwise, the difference is bounded as
issue 32 asks: a step's matmul within 1e-12 of numpy's (relative to Σ|a||b|), a training
curve within 1e-8 over 100 steps. Negative controls: a backward step that forms σ' as s − s²,
a matmul or α summed in another order, a float32 matmul, are caught. (The gradients
themselves are checked by finite differences in tests/test_lstm_ctc.py.)"""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_kernels import numpys_tanh, same_bits, values  # tests/ is on sys.path under pytest

from engine import seqkernels as K
from engine.losses import CTCTarget, ctc_loss_and_grad
from engine.nets.lstm import LSTM, pad_batch
from engine.optim import Adadelta

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:overflow:RuntimeWarning")
needs_numba = pytest.mark.skipif(K.IMPLEMENTATION != "numba", reason="numba absent")
def numba_path_keeps_numpys_bits() -> bool:
    """Whether on this CPU the numba path can give the reference's bits: numpy's float64
    ``exp`` and ``log`` are the C library's (which the compiled recursions call; numpy's
    AVX-512 loops are not), and numpy's matmul of an LSTM step's shape is one FMA chain an
    entry (engine/seqkernels.py, above ``_fused_matmul``)."""
    if K.IMPLEMENTATION != "numba":
        return False
    rng = np.random.default_rng(2026)
    x, y = rng.uniform(-40.0, 0.0, 4000), rng.uniform(1.0, 3.0, 4000)
    libm = np.array([math.exp(v) for v in x]), np.array([math.log(v) for v in y])
    a, b, out = rng.standard_normal((4, 64)), rng.standard_normal((64, 256)), np.empty((4, 256))
    K._matmul(a, b, out)
    return same_bits(np.exp(x), libm[0]) and same_bits(np.log(y), libm[1]) and same_bits(out, a @ b)


SAME = numba_path_keeps_numpys_bits()
pins_bits = pytest.mark.skipif(not SAME, reason="numpy's exp/log or matmul round otherwise on "
                               "this CPU: the bounds below hold instead")


def agree(ref, got, rtol=1e-12) -> bool:
    """The same bits where the numba path keeps them (SAME), else within ``rtol`` with the
    same infinities and NaNs."""
    if SAME:
        return same_bits(ref, got)
    return np.allclose(got, ref, rtol=rtol, atol=0.0, equal_nan=True) and np.array_equal(
        np.isinf(got) & (got > 0), np.isinf(ref) & (ref > 0))


SHAPES = [(1, 1), (4, 64), (3, 5), (7, 17), (2, 1), (6, 16), (1, 8)]  # (B, H): even and odd B
T_STEPS = 9


def gates(rng, B, H, *, special: bool):
    """Gate activations as forward leaves them: σ in (0, 1) for i, f, o and tanh for g,
    with ±0, ±1 and, if ``special``, a NaN among them."""
    z = np.concatenate([1 / (1 + np.exp(-3 * rng.standard_normal((B, 3 * H)))),
                        np.tanh(3 * rng.standard_normal((B, H)))], axis=1)
    flat = z.reshape(-1)
    flat[: min(4, flat.size)] = [0.0, -0.0, 1.0, -1.0][: min(4, flat.size)]
    if special and flat.size > 5:
        flat[5] = np.nan
    return z


@needs_numba
@pins_bits
@pytest.mark.parametrize("B,H", SHAPES, ids=str)
@pytest.mark.parametrize("special", [False, True], ids=["finite", "special"])
def test_lstm_forward_matches_the_reference(B, H, special, monkeypatch):
    rng = np.random.default_rng(B * 100 + H)
    Z = pre_activations(rng, (T_STEPS, B, 4 * H), special=special)
    Wh = pre_activations(rng, (H, 4 * H), special=False) / 3
    fused = forward(K._nb_lstm_forward, Z, Wh)
    numpys_tanh(monkeypatch)  # the reference with numpy's tanh throughout
    assert same_bits(forward(K._np_lstm_forward, Z, Wh), fused)


def forward(loop, Z, Wh):
    T, B, H4 = Z.shape
    zz, C, TC, Hs = Z.copy(), *(np.empty((T, B, H4 // 4)) for _ in range(2)), np.zeros((T + 1, B, H4 // 4))
    loop(zz, Wh, C, Hs, TC)
    return np.concatenate([zz.ravel(), C.ravel(), TC.ravel(), Hs.ravel()])


def test_the_two_forms_of_the_logistic_give_the_same_bits():
    """The fused kernel rounds σ as (tanh + 1)·½ (as the LSTM always did), the reference
    as ½·tanh + ½ (engine.activations): halving is exact, so both are round(tanh + 1)/2.
    The control: (tanh + 1)/3 against tanh/3 + 1/3 does differ."""
    t = np.tanh(np.random.default_rng(8).standard_normal(100_000) * 3)
    t[:4] = [0.0, -0.0, 1.0, -1.0]
    assert same_bits((t + 1.0) * 0.5, t * 0.5 + 0.5)
    assert not same_bits((t + 1.0) / 3, t / 3 + 1 / 3)


def pre_activations(rng, shape, *, special: bool):
    """Mostly N(0, 3²), where σ and tanh are neither linear nor saturated; a fifth of the
    entries with wide exponents (1e-25 to 10); with ``special`` ±0, ±inf and NaN too."""
    x = 3 * rng.standard_normal(shape)
    wide = rng.random(shape) < 0.2
    x[wide] = values(rng, shape)[wide] * 1e-12
    if special:
        flat = x.reshape(-1)
        k = rng.choice(flat.size, size=min(flat.size, 5), replace=False)
        flat[k] = [0.0, -0.0, np.inf, -np.inf, np.nan][: k.size]
    return x


def backward_inputs(rng, B, H, *, special):
    """Gate activations as forward leaves them, ∂E/∂h_t, tanh c_t and c_t of T_STEPS steps."""
    Z = np.stack([gates(rng, B, H, special=special) for _ in range(T_STEPS)])
    dH = values(rng, (T_STEPS, B, H), special=special)
    TC = np.tanh(rng.standard_normal((T_STEPS, B, H)) * 3)
    C = values(rng, (T_STEPS, B, H), special=special)
    return Z, dH, TC, C, rng.standard_normal((H, 4 * H)) * 0.3


def backward(loop, Z, dH, TC, C, Wh):
    dZ = np.full(Z.shape, 7.0)
    loop(Z, dH, TC, C, Wh, dZ)
    return dZ


@needs_numba
@pins_bits
@pytest.mark.parametrize("B,H", SHAPES, ids=str)
@pytest.mark.parametrize("special", [False, True], ids=["finite", "special"])
def test_lstm_backward_matches_the_reference(B, H, special):
    args = backward_inputs(np.random.default_rng(H * 10 + B), B, H, special=special)
    assert same_bits(backward(K._np_lstm_backward, *args), backward(K._nb_lstm_backward, *args))


def test_a_backward_step_forming_sigma_prime_another_way_is_caught(monkeypatch):
    """The control: s − s² equals s(1 − s) in exact arithmetic, not in floats."""
    B, H = 4, 16
    args = backward_inputs(np.random.default_rng(9), B, H, special=False)
    ref = backward(K._np_lstm_backward, *args)
    step = K._np_lstm_backward_step

    def other(z, dh_out, tc, c_prev, dh, dc, dz, ws):
        step(z, dh_out, tc, c_prev, dh, dc, dz, ws)
        s = z[:, 2 * H:3 * H]
        np.multiply(dh, tc, out=dz[:, 2 * H:3 * H])
        dz[:, 2 * H:3 * H] *= s - s * s

    monkeypatch.setattr(K, "_np_lstm_backward_step", other)
    assert not same_bits(ref, backward(K._np_lstm_backward, *args))


MATMUL_SHAPES = [(2, 64, 256), (4, 256, 64), (6, 16, 64), (3, 5, 20), (7, 17, 4), (5, 12, 48),
                 (1, 64, 256), (4, 6, 1)]  # (M, K, N): an odd M or one column: numpy's own order


@needs_numba
@pytest.mark.parametrize("M,K_,N", MATMUL_SHAPES, ids=str)
def test_the_compiled_matmul_is_numpys_where_the_loops_use_it_and_close_elsewhere(M, K_, N):
    rng = np.random.default_rng(M * K_ * N)
    a, b = rng.standard_normal((M, K_)), rng.standard_normal((K_, N))
    out = np.empty((M, N))
    K._matmul(a, b, out)
    ref = a @ b
    if K._fused_matmul(M, N) and SAME:  # the shapes the LSTM's loops hand it
        assert same_bits(out, ref)
    assert np.all(np.abs(out - ref) <= 1e-12 * (np.abs(a) @ np.abs(b)))
    other = np.empty((M, N))  # the control: k summed from the top down
    K._matmul(a[:, ::-1].copy(), b[::-1].copy(), other)
    assert not same_bits(other, ref) and np.all(np.abs(other - ref) <= 1e-12 * (np.abs(a) @ np.abs(b)))


def test_the_bound_catches_a_float32_matmul():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 64)), rng.standard_normal((64, 256))
    low = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float64)
    assert not np.all(np.abs(low - a @ b) <= 1e-12 * (np.abs(a) @ np.abs(b)))


@needs_numba
def test_a_miscompiled_tile_is_refused_and_the_loops_fall_back_to_numpys_matmul(monkeypatch):
    # the import-time guard (MATMUL_SOUND): the tile passes here; a tile that forms the product
    # in float32 (the bound's control above) is refused; and with the guard off, the forward
    # and backward loops take numpy's matmul between kernels and keep the reference's bits
    assert K.MATMUL_SOUND and K._matmul_sound()
    good = K._matmul

    def low(a, b, out):
        out[:] = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float64)

    monkeypatch.setattr(K, "_matmul", low)
    assert not K._matmul_sound()
    monkeypatch.setattr(K, "_matmul", good)
    monkeypatch.setattr(K, "MATMUL_SOUND", False)
    assert not K._fused_matmul(4, 256)
    rng = np.random.default_rng(12)
    Z = pre_activations(rng, (T_STEPS, 4, 64), special=False)
    Wh = pre_activations(rng, (16, 64), special=False) / 3
    fused = forward(K._nb_lstm_forward, Z, Wh)
    args = backward_inputs(np.random.default_rng(13), 4, 16, special=False)
    got = backward(K._nb_lstm_backward, *args)
    numpys_tanh(monkeypatch)
    assert agree(forward(K._np_lstm_forward, Z, Wh), fused)
    assert agree(backward(K._np_lstm_backward, *args), got)


def recursion_inputs(rng, T, B, S):
    """lpe (T, B, S) of log-probabilities with a few −inf (a softmax underflow), the skip
    pattern of labels with repeats, input lengths, the first α row and β's last rows."""
    lpe = -rng.exponential(3.0, (T, B, S)) * np.exp(rng.uniform(-5, 3, (T, B, S)))
    lpe.reshape(-1)[rng.choice(lpe.size, size=lpe.size // 20 + 1, replace=False)] = -np.inf
    skip = rng.random((B, S)) < 0.5
    skip[:, :2] = False
    skip[:, ::2] = False  # blanks never skip
    Tb = rng.integers(1, T + 1, B)
    Tb[0] = T
    alpha = np.full((T, B, S), -np.inf)
    alpha[0, :, :2] = lpe[0, :, :2]
    init = np.full((B, S), -np.inf)
    init[:, -2:] = lpe[Tb - 1, np.arange(B)][:, -2:]
    return lpe, skip, Tb, alpha, init


@needs_numba
@pytest.mark.parametrize("T,B,S", [(1, 1, 1), (2, 1, 3), (9, 3, 7), (40, 4, 23), (5, 2, 2)], ids=str)
def test_ctc_recursions_match_the_reference(T, B, S):
    lpe, skip, Tb, alpha, init = recursion_inputs(np.random.default_rng(T * B * S), T, B, S)
    a_ref, a_nb = alpha.copy(), alpha.copy()
    K._np_ctc_alpha(a_ref, lpe, skip)
    K._nb_ctc_alpha(a_nb, lpe, skip)
    b_ref, b_nb = np.full((T, B, S), -np.inf), np.full((T, B, S), 5.0)  # fused writes every cell
    K._np_ctc_beta(b_ref, lpe, skip, Tb, init)
    K._nb_ctc_beta(b_nb, lpe, skip, Tb, init)
    assert agree(a_ref, a_nb) and agree(b_ref, b_nb)
    if T > 2:  # both kinds of cell are there
        assert np.isfinite(a_ref).any() and np.isneginf(b_ref).any()


@needs_numba
@pins_bits
@pytest.mark.parametrize("T,B,S", [(1, 1, 1), (9, 3, 7), (40, 4, 23)], ids=str)
def test_ctc_occupancies_match_the_reference(T, B, S):
    # γ from α, β, ln y and ln p (0 where p = 0): −inf and NaN in the exponent give 0, as do
    # the cells no path reaches; the control: the exponent summed in another order differs
    rng = np.random.default_rng(T + B + S)
    alpha, beta = -rng.exponential(3.0, (T, B, S)), -rng.exponential(3.0, (T, B, S))
    lpe = -rng.exponential(2.0, (T, B, S))
    alpha.reshape(-1)[1::5], beta.reshape(-1)[3::7] = -np.inf, -np.inf
    alpha.reshape(-1)[2::11] = np.nan
    lp = np.where(rng.random(B) < 0.3, 0.0, -rng.exponential(5.0, B))
    ref = K._np_ctc_gamma(alpha.copy(), beta, lpe, lp)
    assert agree(ref, K._nb_ctc_gamma(alpha.copy(), beta, lpe, lp))
    assert (ref > 0).any()
    if T > 1:
        assert (ref == 0).any()
        other = np.exp(alpha + (beta - lpe - lp[None, :, None]))
        other[~np.isfinite(other)] = 0.0
        assert not same_bits(ref, other)


def test_a_recursion_summing_in_another_order_is_caught():
    """The control: e^a + (e^b + e^c) against the reference's (e^a + e^b) + e^c."""
    lpe, skip, Tb, alpha, init = recursion_inputs(np.random.default_rng(3), 40, 4, 23)
    ref = alpha.copy()
    K._np_ctc_alpha(ref, lpe, skip)
    other = alpha.copy()
    sh1, sh2 = np.full((4, 23), -np.inf), np.full((4, 23), -np.inf)
    with np.errstate(divide="ignore"):
        for t in range(1, 40):
            a = other[t - 1]
            sh1[:, 1:], sh2[:, 2:] = a[:, :-1], np.where(skip[:, 2:], a[:, :-2], -np.inf)
            m = np.maximum(np.maximum(a, sh1), sh2)
            mf = np.where(np.isfinite(m), m, 0.0)
            other[t] = mf + np.log(np.exp(a - mf) + (np.exp(sh1 - mf) + np.exp(sh2 - mf))) + lpe[t]
    assert not same_bits(ref, other)


def train_lstm_ctc(steps: int = 12, *, n_seq: int = 4, curve: bool = False):
    """ADADELTA steps of LSTM+CTC on padded batches: a repeat label, an empty label
    sequence, and one sequence too short for its labels (loss +inf, zero gradient); with
    ``n_seq`` = 3 an odd batch (numpy's matmul between the kernels). With ``curve``, the
    finite losses of every step and the trained parameters."""
    rng = np.random.default_rng(11)
    net = LSTM(3, 6, 5)
    net.init(np.random.default_rng(12), scale=0.5)
    opt = Adadelta(net.n_params, lr=1.0, rho=0.95, eps=1e-6)
    lens = np.array([9, 4, 7, 2])[:n_seq]
    seqs = [rng.normal(size=(n, 3)) for n in lens]
    x, mask = pad_batch(seqs, length=10)
    tgt = CTCTarget(np.array([[1, 2, 2], [3, 0, 0], [0, 0, 0], [1, 2, 3]])[:n_seq],
                    np.array([3, 1, 0, 3])[:n_seq], lens)
    g, losses = np.empty(net.n_params), []
    for _ in range(steps):
        y, cache = net.forward(x, mask)
        per_seq, dy = ctc_loss_and_grad(y, tgt)
        losses.append(per_seq)
        g, dx = net.backward(dy, cache, out=g, need_dx=True)
        net.params += opt.delta(g, n_seq)
    if curve:
        losses = np.ravel(losses)
        return losses[np.isfinite(losses)], net.params.copy()
    return np.concatenate([net.params, g, dx.ravel(), np.ravel(losses)])


def reference(monkeypatch):
    for name in K.SEQ_FUNCTIONS:
        monkeypatch.setattr(K, name, getattr(K, f"_np_{name}"))
    numpys_tanh(monkeypatch)


@needs_numba
@pins_bits
@pytest.mark.parametrize("n_seq", [4, 3], ids=["even-batch", "odd-batch"])
def test_lstm_ctc_training_is_bit_identical_fused_and_reference(monkeypatch, n_seq):
    fused = train_lstm_ctc(n_seq=n_seq)
    reference(monkeypatch)
    ref = train_lstm_ctc(n_seq=n_seq)
    assert np.isinf(ref).sum() == 12 * (n_seq == 4) and same_bits(ref, fused)  # the short sequence's +inf
    monkeypatch.setattr(K, "ctc_beta", lambda beta, lpe, *a: K._np_ctc_beta(beta, lpe * (1 + 1e-15), *a))
    assert not same_bits(train_lstm_ctc(n_seq=n_seq), fused)  # the control


def within_1e_8(run, ref) -> bool:
    """The losses of every step within 1e-8 relative, the parameters within 1e-8 of their
    largest magnitude."""
    (loss, params), (loss_ref, params_ref) = run, ref
    return (np.allclose(loss, loss_ref, rtol=1e-8, atol=0.0)
            and np.max(np.abs(params - params_ref)) <= 1e-8 * np.max(np.abs(params_ref)))


@needs_numba
def test_a_training_curve_holds_to_1e_8_over_100_steps(monkeypatch):
    """Issue 32's guard for a CPU where the bits move: 100 steps of the odd and the even
    batch, fused against the reference (the same bits where SAME). The control: the
    reference with α's log-probabilities off by 1e-9 relative leaves the bound."""
    fused = [train_lstm_ctc(100, n_seq=n, curve=True) for n in (3, 4)]
    reference(monkeypatch)
    ref = [train_lstm_ctc(100, n_seq=n, curve=True) for n in (3, 4)]
    for f, r in zip(fused, ref):
        assert within_1e_8(f, r) and (not SAME or same_bits(np.concatenate(f), np.concatenate(r)))
    monkeypatch.setattr(K, "ctc_alpha",
                        lambda alpha, lpe, skip: K._np_ctc_alpha(alpha, lpe * (1 + 1e-9), skip))
    assert not within_1e_8(train_lstm_ctc(100, n_seq=3, curve=True), ref[0])


@pytest.mark.parametrize("impl", ["reference", "fused"])
def test_beta_ignores_what_lies_past_a_sequences_end(impl):
    # β past a sequence's last step is −inf whatever the log-probabilities hold there (a NaN
    # from garbage padding included), so the padded steps never reach the loss
    if impl == "fused" and K.njit is None:
        pytest.skip("numba absent")
    lpe, skip, Tb, alpha, init = recursion_inputs(np.random.default_rng(11), 9, 3, 7)
    Tb[1] = 4
    beta_of = K._np_ctc_beta if impl == "reference" else K._nb_ctc_beta
    clean = np.full((9, 3, 7), -np.inf)
    beta_of(clean, lpe, skip, Tb, init)
    dirty_lpe = lpe.copy()
    for b, n in enumerate(Tb):
        dirty_lpe[n:, b] = np.nan
    dirty = np.full((9, 3, 7), -np.inf)
    beta_of(dirty, dirty_lpe, skip, Tb, init)
    assert same_bits(dirty, clean)
    assert np.isneginf(dirty[4:, 1]).all() and np.isfinite(dirty[:4, 1]).any()


def test_the_dispatched_steps_are_the_labelled_implementation():
    # engine.kernels.IMPLEMENTATION (recorded in results) names these too: numba's fused steps
    # where it is "numba", the numpy reference otherwise
    pre = "_nb_" if K.IMPLEMENTATION == "numba" else "_np_"
    for name in K.SEQ_FUNCTIONS:
        assert getattr(K, name) is getattr(K, pre + name), name
