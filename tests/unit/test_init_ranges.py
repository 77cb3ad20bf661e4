"""Initialisation ranges and reproducibility of every net in engine/nets (issue 35).

Nguyen–Widrow (MLP.init_nguyen_widrow, Nguyen & Widrow 1990): each hidden unit's incoming
weight vector has length β = 0.7·H^(1/n_in), its bias is uniform in [−β, β], the output
layer uniform in [−0.5, 0.5]. β is written out here by hand for each net, not computed from
the net's own sizes. LSTM.init: weights uniform in [−scale, scale], biases 0 except the
forget gate's (the second of the gate blocks [i | f | o | g], module docstring of
engine/nets/lstm.py). Elman and every FlatParams net: init_uniform, all in [−scale, scale].
tests/harness/test_mutation_guards.py already kills the deleted hidden-bias step.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.nets.elman import Elman
from engine.nets.lstm import LSTM
from engine.nets.mlp import MLP

# sizes → β of each hidden layer, by hand
NW_NETS = [
    ((2, 50, 1), [0.7 * math.sqrt(50)]),  # 4.9497…
    ((4, 16, 1), [1.4]),  # 0.7 · 16^(1/4) = 0.7 · 2
    ((3, 8, 2), [1.4]),  # 0.7 · 8^(1/3) = 0.7 · 2
    ((2, 9, 27, 1), [2.1, 0.7 * 3 ** (1 / 3)]),  # 0.7 · 9^(1/2); 0.7 · 27^(1/9) = 0.7 · 3^(1/3)
]


def _nw_problems(net: MLP, betas) -> list[str]:
    """What breaks the Nguyen–Widrow promises, for hidden β's given by hand."""
    bad = []
    for l, beta in enumerate(betas, start=1):
        W, b = net.W[l], net.b[l]
        if not np.allclose(np.linalg.norm(W, axis=0), beta, rtol=1e-12, atol=0):
            bad.append(f"W{l}: column norms not {beta:.6g}")
        if np.any(np.abs(b) > beta):
            bad.append(f"b{l}: outside [−β, β]")
        if b.size >= 8 and not (b.max() > beta / 4 and b.min() < -beta / 4):
            bad.append(f"b{l}: not spread over [−β, β]")
    for a in (net.W[net.L], net.b[net.L]):
        if np.any(np.abs(a) > 0.5):
            bad.append("output layer outside [−0.5, 0.5]")
    out = np.concatenate([net.W[net.L].ravel(), net.b[net.L]])
    if out.size >= 8 and not np.ptp(out) > 0.5:
        bad.append("output layer not spread over [−0.5, 0.5]")
    return bad


# kills: β's constant (0.7) or exponent (1/n_in) changed, the column rescaling dropped or done
# by rows, the bias range tied to 0.5 instead of β, the output range changed
@pytest.mark.parametrize("sizes,betas", NW_NETS, ids=[str(s) for s, _ in NW_NETS])
def test_nguyen_widrow_ranges_by_hand(sizes, betas):
    net = MLP(sizes)
    net.init_nguyen_widrow(np.random.default_rng(17))
    assert _nw_problems(net, betas) == []
    # a weight vector is drawn in [−0.5, 0.5] per component before it is scaled to length β:
    # its direction is not fixed (the components differ from unit to unit)
    W1 = net.W[1] / betas[0]
    assert np.ptp(W1) > 0.1


def test_the_checks_notice_a_wrong_beta_and_a_narrow_bias():
    # negative controls: the same checks on nets that break one promise each
    sizes, betas = NW_NETS[0]
    net = MLP(sizes)
    net.init_nguyen_widrow(np.random.default_rng(17))
    swapped = 0.7 * 2 ** (1 / 50)  # the exponent the other way round: n_in^(1/H)
    wrong = MLP(sizes, params=net.params.copy())
    wrong.W[1][:] *= swapped / betas[0]
    assert "W1: column norms not 4.94975" in _nw_problems(wrong, betas)
    narrow = MLP(sizes, params=net.params.copy())
    narrow.b[1][:] = np.random.default_rng(0).uniform(-0.5, 0.5, size=narrow.b[1].shape)
    assert "b1: not spread over [−β, β]" in _nw_problems(narrow, betas)
    uniform = MLP(sizes)
    uniform.init_uniform(np.random.default_rng(0), scale=0.5)  # FANN's other initialisation
    assert _nw_problems(uniform, betas)


# kills: init_nguyen_widrow drawing from numpy's global state instead of the Generator it is
# given (seeding the global state would then change the net)
def test_nguyen_widrow_uses_only_its_generator():
    a, b = MLP((3, 8, 2)), MLP((3, 8, 2))
    np.random.seed(1)
    a.init_nguyen_widrow(np.random.default_rng(5))
    np.random.seed(2)
    b.init_nguyen_widrow(np.random.default_rng(5))
    np.testing.assert_array_equal(a.params, b.params)
    # and it consumes the generator: a second initialisation from the same one differs
    g = np.random.default_rng(5)
    a.init_nguyen_widrow(g)
    b.init_nguyen_widrow(g)
    assert not np.array_equal(a.params, b.params)


# ---- LSTM ---------------------------------------------------------------------------------

# kills: the forget-gate bias written to another gate, the other biases not zeroed, the output
# bias left random, scale ignored
@pytest.mark.parametrize("scale,forget", [(0.1, 1.0), (0.3, 2.5)])
def test_lstm_init_ranges_and_biases(scale, forget):
    H = 6
    net = LSTM(3, H, 4)
    net.params[:] = 7.0  # a value every part of init must overwrite
    net.init(np.random.default_rng(3), scale=scale, **({} if forget == 1.0 else {"forget_bias": forget}))
    for name in ("Wx", "Wh", "Wy"):
        w = net.view(net.params, name)
        assert np.all(np.abs(w) <= scale), name
        assert np.ptp(w) > scale, name  # spread over the range, not a constant
    assert _lstm_bias_problems(net.view(net.params, "b"), H, forget) == []
    np.testing.assert_array_equal(net.view(net.params, "by"), 0.0)
    # control: the forget value on the input gate, or left-over random biases, are noticed
    wrong = np.zeros(4 * H)
    wrong[:H] = forget
    assert _lstm_bias_problems(wrong, H, forget) == ["input gate", "forget gate"]
    noisy = np.random.default_rng(0).uniform(-scale, scale, 4 * H)
    noisy[H:2 * H] = forget
    assert _lstm_bias_problems(noisy, H, forget) == ["input gate", "output gate and cell input"]


def _lstm_bias_problems(b, H, forget) -> list[str]:
    """Which gate blocks of b (order [i | f | o | g]) differ from 0, forget, 0, 0."""
    want = [("input gate", b[:H], 0.0), ("forget gate", b[H:2 * H], forget),
            ("output gate and cell input", b[2 * H:], 0.0)]
    return [name for name, got, v in want if not np.array_equal(got, np.full(got.shape, v))]


def test_lstm_init_reproducible_per_seed():
    a, a2, c = LSTM(2, 5, 3), LSTM(2, 5, 3), LSTM(2, 5, 3)
    a.init(np.random.default_rng(9))
    a2.init(np.random.default_rng(9))
    c.init(np.random.default_rng(10))
    np.testing.assert_array_equal(a.params, a2.params)
    for name in ("Wx", "Wh", "Wy"):
        assert not np.array_equal(a.view(a.params, name), c.view(c.params, name)), name


# ---- Elman (init_uniform of FlatParams) ---------------------------------------------------

@pytest.mark.parametrize("kw", [dict(), dict(n_hidden2=5, skip=False), dict(n_feedback=2)])
def test_elman_init_uniform_covers_every_block(kw):
    net = Elman(4, 6, 3, **kw)
    net.params[:] = 7.0
    net.init_uniform(np.random.default_rng(2), scale=0.6)
    for name, block in net.named().items():
        assert np.all(np.abs(block) <= 0.6), name  # the 7.0 overwritten everywhere, in range
    assert net.n_params >= 50 and net.params.max() > 0.3 and net.params.min() < -0.3  # spread
    again = Elman(4, 6, 3, **kw)
    again.init_uniform(np.random.default_rng(2), scale=0.6)
    np.testing.assert_array_equal(net.params, again.params)
