"""engine.seqkernels: the numba path's LSTM loops give the numpy reference's bits, on values
where another rounding would show (wide exponents, ±0, ±inf, NaN), for batches of even and odd
size (odd ones take numpy's matmul between kernels), and over whole LSTM+CTC training runs with
padding, repeated labels, empty labels and a sequence too short for its labels. Its CTC
computes the same function another way (α and β rescaled, not in logs): ln p within 1e-12
relative and its gradient within 1e-12 of the reference. Where another CPU or BLAS may round otherwise,
the difference is bounded as issue 32 asks: a step's matmul within 1e-12 of numpy's
(relative to Σ|a||b|), a training curve within 1e-8 over 100 steps. Negative controls: a
backward step that forms σ' as s − s², a matmul summed in another order, a float32 matmul,
outputs off by 1e-9 or 1e-7, are caught. (The gradients themselves are checked by
finite differences in tests/unit/test_lstm_ctc.py.)"""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_kernels import numpys_tanh, same_bits, values  # the test folders are on sys.path (tests/conftest.py)

from engine import seqkernels as K
from engine.losses import CTCTarget, ctc_loss_and_grad
from engine.nets.lstm import LSTM, pad_batch
from engine.optim import Adadelta

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:overflow:RuntimeWarning")
needs_numba = pytest.mark.skipif(K.IMPLEMENTATION != "numba", reason="numba absent")
def numba_path_keeps_numpys_bits() -> bool:
    """Whether on this CPU the numba path's LSTM loops can give the reference's bits: numpy's
    matmul of an LSTM step's shape is one FMA chain an entry (engine/seqkernels.py, above
    ``_fused_matmul``). (Their ``tanh`` is engine.tanhkernel's; the pins compare both sides on one.)"""
    if K.IMPLEMENTATION != "numba":
        return False
    rng = np.random.default_rng(2026)
    a, b, out = rng.standard_normal((4, 64)), rng.standard_normal((64, 256)), np.empty((4, 256))
    K._matmul(a, b, out)
    return same_bits(out, a @ b)


SAME = numba_path_keeps_numpys_bits()
pins_bits = pytest.mark.skipif(not SAME, reason="numpy's matmul rounds otherwise on this CPU: "
                               "the bounds below hold instead")


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
    fused = forward(K._nb_lstm_forward, Z, Wh)  # tanh1 inside the compiled loops
    monkeypatch.setattr(K, "COMPILED", False)  # the same kernels, the compiled tanh between them
    assert same_bits(forward(K._nb_lstm_forward, Z, Wh), fused)
    numpys_tanh(monkeypatch)  # numpy's tanh between them, and in the reference
    assert same_bits(forward(K._np_lstm_forward, Z, Wh), forward(K._nb_lstm_forward, Z, Wh))


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
                 (1, 64, 256), (4, 6, 1), (8, 64, 256), (4, 64, 20), (2, 9, 40)]
# (M, K, N): an odd M or one column: numpy's own order; M % 4 = 0: the 4 × 8 tile, else the
# 2 × 16; N % 8 or N % 16 ≠ 0: columns past the last panel


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


@needs_numba
@pytest.mark.parametrize("rows,width", [(4, 8), (8, 8), (2, 16), (6, 16)])
def test_panels_hold_bs_columns_in_tiles_of_the_width_the_rows_take(rows, width):
    b = np.arange(5 * 40, dtype=np.float64).reshape(5, 40)
    bp = K._panels(b, rows)
    assert bp.shape == (40 // width, 5, width)
    for jt in range(bp.shape[0]):
        assert np.array_equal(bp[jt], b[:, jt * width:(jt + 1) * width])
    a, out = np.ones((rows, 5)), np.empty((rows, 40))  # a product read from them is b's column sums
    K._matmul_panels(a, bp, b, out)
    assert np.array_equal(out, np.repeat(b.sum(axis=0, keepdims=True), rows, axis=0))
    wrong = bp.copy()  # the control: a panel out of place changes the product
    wrong[0, 0, 0] += 1.0
    K._matmul_panels(a, wrong, b, out)
    assert not np.array_equal(out, np.repeat(b.sum(axis=0, keepdims=True), rows, axis=0))


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
    numpys_tanh(monkeypatch)  # both sides on one tanh: this test is about the matmul
    fused = forward(K._nb_lstm_forward, Z, Wh)
    args = backward_inputs(np.random.default_rng(13), 4, 16, special=False)
    got = backward(K._nb_lstm_backward, *args)
    assert agree(forward(K._np_lstm_forward, Z, Wh), fused)
    assert agree(backward(K._np_lstm_backward, *args), got)


def ctc_inputs(rng, T, B, L, K=6):
    """Outputs u (T, B, K) with wide logits, the extended labels (repeats, empty labels) and
    their skips, input lengths (one sequence too short for its labels: p = 0) and the states
    each sequence uses, as engine.losses.ctc_loss_and_grad builds them."""
    u = rng.normal(size=(T, B, K)) * np.exp(rng.uniform(-2, 2, (T, B, 1)))
    labels = rng.integers(1, K, (B, L))
    labels[:, 1::3] = labels[:, :-1:3][:, :labels[:, 1::3].shape[1]]  # repeats
    Lz = rng.integers(0, L + 1, B)
    Tb = rng.integers(1, T + 1, B)
    Tb[0], Lz[0] = T, min(L, (T + 1) // 2)
    if B > 1 and L > 1:
        Tb[-1], Lz[-1] = 1, 2  # two labels in one step: no path
    S = 2 * L + 1
    ext = np.zeros((B, S), dtype=np.int64)
    ext[:, 1::2] = labels
    Sb = 2 * Lz + 1
    ext[np.arange(S)[None, :] >= Sb[:, None]] = 0
    skip = np.zeros((B, S), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != 0) & (ext[:, 2:] != ext[:, :-2])
    return u, ext, skip, Tb, Sb


def ctc_of(impl, u, ext, skip, Tb, Sb):
    grad = np.full(u.shape, 7.0)  # written everywhere
    return impl(u, ext, skip, Tb, Sb, grad), grad


def ctc_close(ref, got, tol=1e-12) -> bool:
    """ln p within ``tol`` relative (the same −inf), the gradient within ``tol`` absolute (its
    entries lie in [−1, 1])."""
    (lp, g), (lp2, g2) = ref, got
    fin = np.isfinite(lp)
    return (np.array_equal(fin, np.isfinite(lp2)) and np.array_equal(lp[~fin], lp2[~fin])
            and np.allclose(lp2[fin], lp[fin], rtol=tol, atol=tol)
            and np.max(np.abs(g2 - g), initial=0.0) <= tol)


CTC_SHAPES = [(1, 1, 1), (2, 1, 1), (9, 3, 3), (40, 4, 11), (5, 2, 1), (60, 5, 20)]


@needs_numba
@pytest.mark.parametrize("T,B,L", CTC_SHAPES, ids=str)
def test_rescaled_ctc_matches_the_log_domain_reference(T, B, L):
    # the numba path rescales α and β (Graves et al. §4.1) where the reference works in logs:
    # the same function, last bits apart (issue 32's bound); the control: the reference on
    # outputs off by 1e-9 relative leaves it
    u, ext, skip, Tb, Sb = ctc_inputs(np.random.default_rng(T * B * L), T, B, L)
    ref = ctc_of(K._np_ctc, u, ext, skip, Tb, Sb)
    got = ctc_of(K._nb_ctc, u, ext, skip, Tb, Sb)
    assert ctc_close(ref, got)
    assert np.array_equal(K._nb_ctc(u, ext, skip, Tb, Sb), got[0])  # without a gradient, the same ln p
    assert np.array_equal(K._np_ctc(u, ext, skip, Tb, Sb), ref[0])
    lp, g = ref
    assert np.isfinite(lp[0]) and np.allclose(g.sum(axis=2), 0.0, atol=1e-12)  # softmax − occupancy
    if B > 1 and L > 1:
        assert np.isneginf(lp[-1]) and not g[:, -1].any()  # p = 0: no gradient
    assert not ctc_close(ref, ctc_of(K._np_ctc, u * (1 + 1e-9), ext, skip, Tb, Sb))


@needs_numba
def test_sequences_the_rescaling_cannot_hold_get_the_references_bits():
    # outputs that are not finite, or a label probability below e^−700, go to the log domain:
    # there the result is the reference's own, bit for bit; the other sequences are rescaled
    u, ext, skip, Tb, Sb = ctc_inputs(np.random.default_rng(5), 12, 4, 3)
    Tb[1:3] = 12
    u[3, 1, 2] = np.nan
    u[5, 2, :] = 0.0
    u[5, 2, ext[2, 1]] = -800.0  # the first label, at a step it must be emitted or skipped
    ref = ctc_of(K._np_ctc, u, ext, skip, Tb, Sb)
    got = ctc_of(K._nb_ctc, u, ext, skip, Tb, Sb)
    for b in (1, 2):
        assert same_bits(got[0][b], ref[0][b]) and same_bits(got[1][:, b], ref[1][:, b])
    assert np.isnan(ref[0][1]) and ctc_close((ref[0][[0]], ref[1][:, 0]), (got[0][[0]], got[1][:, 0]))


@needs_numba
def test_a_path_whose_share_underflows_is_not_taken_for_no_path():
    # 150 distinct-neighbour labels at probability ~1e-3 a step, the blank near 1: p lies below
    # the floats, so rescaling would find the end states empty; the log domain has a finite
    # ln p, and so has the numba path, bit for bit (the sequence is long enough for its labels)
    T, L, n_cls = 400, 150, 6
    labels = (np.arange(L) % (n_cls - 1) + 1)[None, :]  # 1, 2, 3, 4, 5, 1, ...: no repeats
    u = np.zeros((T, 1, n_cls))
    u[:, :, 0] = 7.0  # blank ≈ 1, every label ≈ 1e-3
    S = 2 * L + 1
    ext = np.zeros((1, S), dtype=np.int64)
    ext[:, 1::2] = labels
    skip = np.zeros((1, S), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != 0) & (ext[:, 2:] != ext[:, :-2])
    Tb, Sb = np.array([T]), np.array([S])
    ref = ctc_of(K._np_ctc, u, ext, skip, Tb, Sb)
    got = ctc_of(K._nb_ctc, u, ext, skip, Tb, Sb)
    assert np.isfinite(ref[0][0]) and ref[0][0] < math.log(1e-300)
    assert same_bits(got[0], ref[0]) and same_bits(got[1], ref[1])


@pytest.mark.parametrize("impl", ["reference", "fused"])
def test_ctc_ignores_what_lies_past_a_sequences_end(impl):
    # whatever the outputs hold past a sequence's last step and whatever labels pad its unused
    # states, ln p and the gradient are those of the clean input, with a zero gradient at the
    # padded steps; NaN padding leaves ln p as it is
    if impl == "fused" and K.njit is None:
        pytest.skip("numba absent")
    fn = K._np_ctc if impl == "reference" else K._nb_ctc
    u, ext, skip, Tb, Sb = ctc_inputs(np.random.default_rng(11), 9, 3, 3)
    Tb[1], Sb[1] = 4, 3
    ext[1, 3:] = 0
    clean = ctc_of(fn, u, ext, skip, Tb, Sb)
    dirty_u, dirty_ext = u.copy(), ext.copy()
    for b, n in enumerate(Tb):
        dirty_u[n:, b] = 30.0 * np.arange(u.shape[2])
    dirty_ext[1, 3:] = 4
    dirty = ctc_of(fn, dirty_u, dirty_ext, skip, Tb, Sb)
    assert same_bits(dirty[0], clean[0]) and same_bits(dirty[1], clean[1])
    assert not dirty[1][4:, 1].any() and dirty[1][:4, 1].any()
    dirty_u[4:, 1] = np.nan  # NaN padding: ln p as clean (the reference's gradient takes NaN·0 there)
    assert same_bits(fn(dirty_u, dirty_ext, skip, Tb, Sb), clean[0])


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


def lstm_reference(monkeypatch):
    """The LSTM loops routed to the numpy reference; the CTC stays as it is."""
    for name in ("lstm_forward", "lstm_backward"):
        monkeypatch.setattr(K, name, getattr(K, f"_np_{name}"))
    numpys_tanh(monkeypatch)


@needs_numba
@pins_bits
@pytest.mark.parametrize("n_seq", [4, 3], ids=["even-batch", "odd-batch"])
def test_lstm_training_is_bit_identical_fused_and_reference(monkeypatch, n_seq):
    # the LSTM's compiled loops keep the reference's bits over whole runs, given one tanh:
    # the loops with tanh1 inside give the bits of the same kernels with the compiled tanh
    # between them, and those with numpy's tanh between them the reference's. Every run takes
    # the same CTC (the reference's), which computes the function another way on the numba path
    monkeypatch.setattr(K, "ctc", K._np_ctc)
    fused = train_lstm_ctc(n_seq=n_seq)
    monkeypatch.setattr(K, "COMPILED", False)
    assert same_bits(train_lstm_ctc(n_seq=n_seq), fused)
    numpys_tanh(monkeypatch)
    stepped = train_lstm_ctc(n_seq=n_seq)
    lstm_reference(monkeypatch)
    ref = train_lstm_ctc(n_seq=n_seq)
    assert np.isinf(ref).sum() == 12 * (n_seq == 4) and same_bits(ref, stepped)  # the short sequence's +inf
    assert not same_bits(stepped, fused)  # the two tanh differ in the last bits
    monkeypatch.setattr(K, "ctc", lambda u, *a: K._np_ctc(u * (1 + 1e-15), *a))
    assert not same_bits(train_lstm_ctc(n_seq=n_seq), ref)  # the control


def within_1e_8(run, ref) -> bool:
    """The losses of every step within 1e-8 relative, the parameters within 1e-8 of their
    largest magnitude."""
    (loss, params), (loss_ref, params_ref) = run, ref
    return (np.allclose(loss, loss_ref, rtol=1e-8, atol=0.0)
            and np.max(np.abs(params - params_ref)) <= 1e-8 * np.max(np.abs(params_ref)))


@needs_numba
def test_a_training_curve_holds_to_1e_8_over_100_steps(monkeypatch):
    """Issue 32's guard where the bits move (the rescaled CTC everywhere, the LSTM loops on
    some CPUs): 100 steps of the odd and the even batch, fused against the reference. The
    control: the reference with the CTC's outputs off by 1e-7 relative leaves the bound."""
    fused = [train_lstm_ctc(100, n_seq=n, curve=True) for n in (3, 4)]
    reference(monkeypatch)
    ref = [train_lstm_ctc(100, n_seq=n, curve=True) for n in (3, 4)]
    for f, r in zip(fused, ref):
        assert within_1e_8(f, r)
    monkeypatch.setattr(K, "ctc", lambda u, *a: K._np_ctc(u * (1 + 1e-7), *a))
    assert not within_1e_8(train_lstm_ctc(100, n_seq=3, curve=True), ref[0])


def test_the_dispatched_steps_are_the_labelled_implementation():
    # engine.kernels.IMPLEMENTATION (recorded in results) names these too: numba's fused steps
    # where it is "numba", the numpy reference otherwise
    pre = "_nb_" if K.IMPLEMENTATION == "numba" else "_np_"
    for name in K.SEQ_FUNCTIONS:
        assert getattr(K, name) is getattr(K, pre + name), name
