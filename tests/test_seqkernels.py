"""engine.seqkernels: the fused LSTM step and CTC recursions give the numpy reference's
bits, step by step on values where another rounding would show (wide exponents, ±0,
±inf, NaN, −inf log-probabilities), and over whole LSTM+CTC training runs with padding,
repeated labels, empty labels and a sequence too short for its labels. Negative
controls: a backward step that forms σ' as s − s², and α or β summed in another order,
are caught. (The gradients themselves are checked by finite differences in
tests/test_lstm_ctc.py, which runs whichever implementation is installed.)"""
from __future__ import annotations

import numpy as np
import pytest
from test_kernels import same_bits, values  # tests/ is on sys.path under pytest

from engine import seqkernels as K
from engine.losses import CTCTarget, ctc_loss_and_grad
from engine.nets.lstm import LSTM, pad_batch
from engine.optim import Adadelta

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:overflow:RuntimeWarning")
needs_numba = pytest.mark.skipif(K.IMPLEMENTATION != "numba", reason="numba absent")
SHAPES = [(1, 1), (4, 64), (3, 5), (7, 17)]  # (B, H)
STEPS = ("lstm_forward_step", "lstm_backward_step", "ctc_alpha", "ctc_beta")


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
@pytest.mark.parametrize("B,H", SHAPES, ids=str)
@pytest.mark.parametrize("special", [False, True], ids=["finite", "special"])
def test_lstm_forward_step_matches_the_reference(B, H, special):
    rng = np.random.default_rng(B * 100 + H)
    z, zh, c_prev = (pre_activations(rng, shape, special=special)
                     for shape in ((B, 4 * H), (B, 4 * H), (B, H)))
    ref = forward_step(K._np_lstm_forward_step, z, zh, c_prev)
    assert same_bits(ref, forward_step(K._nb_lstm_forward_step, z, zh, c_prev))


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


def forward_step(step, z, zh, c_prev):
    B, H = c_prev.shape
    zz, c, tc, h = z.copy(), np.empty((B, H)), np.empty((B, H)), np.empty((B, H))
    step(zz, zh, c_prev, c, tc, h, K.LSTMScratch(B, H))
    return np.concatenate([zz.ravel(), c.ravel(), tc.ravel(), h.ravel()])


def backward_step(step, z, rng_seed, B, H, *, special):
    rng = np.random.default_rng(rng_seed)
    dh_out, tc = values(rng, (B, H), special=special), np.tanh(rng.standard_normal((B, H)) * 3)
    c_prev, dh, dc = (values(rng, (B, H), special=special) for _ in range(3))
    dz = np.full((B, 4 * H), 7.0)
    step(z, dh_out, tc, c_prev, dh, dc, dz, K.LSTMScratch(B, H))
    return np.concatenate([dh.ravel(), dc.ravel(), dz.ravel()])


@needs_numba
@pytest.mark.parametrize("B,H", SHAPES, ids=str)
@pytest.mark.parametrize("special", [False, True], ids=["finite", "special"])
def test_lstm_backward_step_matches_the_reference(B, H, special):
    z = gates(np.random.default_rng(H), B, H, special=special)
    ref = backward_step(K._np_lstm_backward_step, z, 1, B, H, special=special)
    fused = backward_step(K._nb_lstm_backward_step, z, 1, B, H, special=special)
    assert same_bits(ref, fused)


def test_a_backward_step_forming_sigma_prime_another_way_is_caught():
    """The control: s − s² equals s(1 − s) in exact arithmetic, not in floats."""
    B, H = 4, 64

    def other(z, dh_out, tc, c_prev, dh, dc, dz, ws):
        K._np_lstm_backward_step(z, dh_out, tc, c_prev, dh, dc, dz, ws)
        s = z[:, 2 * H:3 * H]
        np.multiply(dh, tc, out=dz[:, 2 * H:3 * H])
        dz[:, 2 * H:3 * H] *= s - s * s

    z = gates(np.random.default_rng(9), B, H, special=False)
    ref = backward_step(K._np_lstm_backward_step, z, 1, B, H, special=False)
    assert not same_bits(ref, backward_step(other, z, 1, B, H, special=False))


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
    assert same_bits(a_ref, a_nb) and same_bits(b_ref, b_nb)
    if T > 2:  # both kinds of cell are there
        assert np.isfinite(a_ref).any() and np.isneginf(b_ref).any()


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


def train_lstm_ctc(steps: int = 12):
    """A few ADADELTA steps of LSTM+CTC on padded batches: a repeat label, an empty label
    sequence, and one sequence too short for its labels (loss +inf, zero gradient)."""
    rng = np.random.default_rng(11)
    net = LSTM(3, 6, 5)
    net.init(np.random.default_rng(12), scale=0.5)
    opt = Adadelta(net.n_params, lr=1.0, rho=0.95, eps=1e-6)
    lens = np.array([9, 4, 7, 2])
    seqs = [rng.normal(size=(n, 3)) for n in lens]
    x, mask = pad_batch(seqs, length=10)
    tgt = CTCTarget(np.array([[1, 2, 2], [3, 0, 0], [0, 0, 0], [1, 2, 3]]),
                    np.array([3, 1, 0, 3]), lens)
    g, losses = np.empty(net.n_params), []
    for _ in range(steps):
        y, cache = net.forward(x, mask)
        per_seq, dy = ctc_loss_and_grad(y, tgt)
        losses.append(per_seq)
        g, dx = net.backward(dy, cache, out=g, need_dx=True)
        net.params += opt.delta(g, 4)
    return np.concatenate([net.params, g, dx.ravel(), np.ravel(losses)])


@needs_numba
def test_lstm_ctc_training_is_bit_identical_fused_and_reference(monkeypatch):
    fused = train_lstm_ctc()
    for name in STEPS:
        monkeypatch.setattr(K, name, getattr(K, f"_np_{name}"))
    ref = train_lstm_ctc()
    assert np.isinf(ref).sum() == 12 and same_bits(ref, fused)  # the short sequence's +inf
    monkeypatch.setattr(K, "ctc_beta", lambda beta, lpe, *a: K._np_ctc_beta(beta, lpe * (1 + 1e-15), *a))
    assert not same_bits(train_lstm_ctc(), fused)  # the control


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
    for name in ("lstm_forward_step", "lstm_backward_step", "ctc_alpha", "ctc_beta"):
        assert getattr(K, name) is getattr(K, pre + name), name
