"""One tiny example worked by hand, the flat-parameter layout and bad input.

The net is 2-2-1 with logistic units everywhere. Conventions of the engine:
W{l}[i, j] connects unit i of layer l−1 to unit j of layer l, z = a·W + b,
and the loss is E = Σ_p ½ (y_p − t_p)², whose gradient is summed over the
patterns.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.losses import get_loss
from engine.nets.mlp import MLP


def sig(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


# hand-picked weights
W1 = [[0.1, -0.2],   # from input 0 to hidden 0, hidden 1
      [0.3, 0.4]]    # from input 1
B1 = [0.05, -0.1]
W2 = [0.5, -0.6]     # from hidden 0, hidden 1 to the output
B2 = 0.2


def worked_net() -> MLP:
    net = MLP((2, 2, 1), "logistic")
    # flat layout: W1 row-major, b1, W2, b2
    net.params[:] = [0.1, -0.2, 0.3, 0.4, 0.05, -0.1, 0.5, -0.6, 0.2]
    return net


def by_hand(x0: float, x1: float, t: float):
    """Forward and backward for one pattern, written out term by term."""
    z1_0 = x0 * 0.1 + x1 * 0.3 + 0.05
    z1_1 = x0 * -0.2 + x1 * 0.4 - 0.1
    h0, h1 = sig(z1_0), sig(z1_1)
    z2 = h0 * 0.5 + h1 * -0.6 + 0.2
    y = sig(z2)
    E = 0.5 * (y - t) ** 2
    d2 = (y - t) * y * (1 - y)  # ∂E/∂z2
    d1_0 = d2 * 0.5 * h0 * (1 - h0)  # ∂E/∂z1_0
    d1_1 = d2 * -0.6 * h1 * (1 - h1)
    grad = {
        "W1": [[x0 * d1_0, x0 * d1_1], [x1 * d1_0, x1 * d1_1]],
        "b1": [d1_0, d1_1],
        "W2": [[h0 * d2], [h1 * d2]],
        "b2": [d2],
    }
    dx = [0.1 * d1_0 + -0.2 * d1_1, 0.3 * d1_0 + 0.4 * d1_1]
    return {"h": (h0, h1), "y": y, "E": E, "grad": grad, "dx": dx}


def test_first_pattern_numbers_by_hand():
    """x = (1, 0.5): z1 = (0.1 + 0.15 + 0.05, −0.2 + 0.2 − 0.1) = (0.3, −0.1)."""
    net = worked_net()
    x = np.array([[1.0, 0.5]])
    y, cache = net.forward(x)
    a = cache[0]
    # σ(0.3) = 0.574442516811659…, σ(−0.1) = 0.475020812521060…
    np.testing.assert_allclose(a[1][0], [0.574442516811659, 0.475020812521060], rtol=1e-14)
    # z2 = 0.5·0.574442516811659 − 0.6·0.475020812521060 + 0.2 = 0.2022087708931936…
    z2 = 0.5 * 0.574442516811659 - 0.6 * 0.475020812521060 + 0.2
    assert z2 == pytest.approx(0.2022087708931935, rel=1e-14)
    assert y.shape == (1, 1)
    assert y[0, 0] == pytest.approx(sig(z2), rel=1e-14)
    assert y[0, 0] == pytest.approx(0.550380644321159, rel=1e-13)  # σ(z2)


@pytest.mark.parametrize("x0,x1,t", [(1.0, 0.5, 1.0), (-1.0, 2.0, 0.0)])
def test_one_pattern_forward_and_gradients(x0, x1, t):
    net = worked_net()
    hand = by_hand(x0, x1, t)
    x = np.array([[x0, x1]])
    T = np.array([[t]])
    y, cache = net.forward(x)
    np.testing.assert_allclose(cache[0][1][0], hand["h"], rtol=1e-14)
    assert y[0, 0] == pytest.approx(hand["y"], rel=1e-14)
    assert get_loss("mse").value(y, T)[0] == pytest.approx(hand["E"], rel=1e-13)
    g, dx = net.backward(get_loss("mse").grad(y, T), cache, need_dx=True)
    for name, want in hand["grad"].items():
        np.testing.assert_allclose(net.view(g, name), np.array(want).reshape(net.shapes[name]),
                                   rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(dx[0], hand["dx"], rtol=1e-12)


def test_two_pattern_bunch_sums_the_hand_gradients():
    net = worked_net()
    p, q = by_hand(1.0, 0.5, 1.0), by_hand(-1.0, 2.0, 0.0)
    x = np.array([[1.0, 0.5], [-1.0, 2.0]])
    T = np.array([[1.0], [0.0]])
    y, cache = net.forward(x)
    np.testing.assert_allclose(y[:, 0], [p["y"], q["y"]], rtol=1e-14)
    g = net.backward(get_loss("mse").grad(y, T), cache)
    want = np.concatenate([np.ravel(p["grad"][k]) + np.ravel(q["grad"][k])
                           for k in ("W1", "b1", "W2", "b2")])
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_forward_has_no_hidden_state():
    net = worked_net()
    x = np.array([[1.0, 0.5], [-1.0, 2.0]])
    y1 = net.forward(x)[0].copy()
    net.forward(np.array([[3.0, -3.0]]))
    np.testing.assert_array_equal(net.forward(x)[0], y1)


# -- flat-parameter layout -------------------------------------------------------
def test_flat_layout_views_share_memory():
    net = worked_net()
    assert net.n_params == 9 == net.n_connections
    assert list(net.named()) == ["W1", "b1", "W2", "b2"]
    assert net.slices == {"W1": slice(0, 4), "b1": slice(4, 6), "W2": slice(6, 8), "b2": slice(8, 9)}
    v = net.named()
    np.testing.assert_array_equal(v["W1"], W1)
    np.testing.assert_array_equal(v["b1"], B1)
    np.testing.assert_array_equal(v["W2"][:, 0], W2)
    np.testing.assert_array_equal(v["b2"], [B2])
    for name, arr in v.items():
        assert np.shares_memory(arr, net.params), name
    for l in (1, 2):
        assert np.shares_memory(net.W[l], net.params)
        assert np.shares_memory(net.b[l], net.params)
    # write through the flat vector, read through the views, and back
    net.params[1] = 7.0
    assert net.W[1][0, 1] == 7.0 and v["W1"][0, 1] == 7.0
    net.W[2][1, 0] = -3.0
    assert net.params[7] == -3.0
    net.b[1][:] = [11.0, 12.0]
    np.testing.assert_array_equal(net.params[4:6], [11.0, 12.0])
    # in-place updates of the whole vector reach the views (what an optimizer does)
    net.params += 1.0
    assert net.b[2][0] == pytest.approx(B2 + 1.0)


def test_view_on_a_gradient_vector_and_external_params():
    net = MLP((2, 2, 1), "logistic")
    g = np.arange(9.0)
    np.testing.assert_array_equal(net.view(g, "W1"), [[0, 1], [2, 3]])
    np.testing.assert_array_equal(net.view(g, "b2"), [8])
    assert np.shares_memory(net.view(g, "W2"), g)
    ext = np.linspace(-1, 1, 9)
    net2 = MLP((2, 2, 1), "logistic", params=ext)
    assert net2.params is ext
    ext[0] = 42.0
    assert net2.W[1][0, 0] == 42.0


def test_layout_of_a_deeper_net():
    net = MLP((3, 4, 5, 2))
    assert net.L == 3
    assert net.n_params == 3 * 4 + 4 + 4 * 5 + 5 + 5 * 2 + 2
    assert net.shapes["W2"] == (4, 5) and net.shapes["b3"] == (2,)
    assert net.slices["W3"] == slice(3 * 4 + 4 + 4 * 5 + 5, 3 * 4 + 4 + 4 * 5 + 5 + 10)


def test_init_uniform_range_and_determinism():
    net = MLP((3, 4, 5, 2))
    net.init_uniform(np.random.default_rng(3), scale=0.25)
    assert np.all(np.abs(net.params) <= 0.25) and np.ptp(net.params) > 0.25
    first = net.params.copy()
    net.init_uniform(np.random.default_rng(3), scale=0.25)
    np.testing.assert_array_equal(net.params, first)
    net.init_uniform(np.random.default_rng(4), scale=0.25)
    assert not np.array_equal(net.params, first)


def test_init_nguyen_widrow_hidden_norms():
    net = MLP((3, 4, 5, 2))
    net.init_nguyen_widrow(np.random.default_rng(0))
    for l in (1, 2):
        beta = 0.7 * net.sizes[l] ** (1.0 / net.sizes[l - 1])
        np.testing.assert_allclose(np.linalg.norm(net.W[l], axis=0), beta, rtol=1e-12)
        assert np.all(np.abs(net.b[l]) <= beta)
    assert np.all(np.abs(net.W[3]) <= 0.5) and np.all(np.abs(net.b[3]) <= 0.5)


# -- bad input ----------------------------------------------------------------
def test_unknown_activation_name_is_named_in_the_error():
    with pytest.raises(ValueError, match=r"unknown activation 'relu'"):
        MLP((2, 2, 1), "relu")
    with pytest.raises(ValueError, match=r"'softsign'"):
        MLP((2, 2, 1), ["logistic", "softsign"])


@pytest.mark.parametrize("acts", [["logistic"], ["logistic"] * 3, []])
def test_wrong_number_of_activations(acts):
    with pytest.raises(ValueError, match=rf"need 2 activations, got {len(acts)}"):
        MLP((2, 2, 1), acts)


@pytest.mark.parametrize("sizes", [(3,), (), (2, 0, 1)])
def test_bad_sizes(sizes):
    with pytest.raises(ValueError, match="at least two layer sizes"):
        MLP(sizes)


@pytest.mark.parametrize("params", [np.zeros(8), np.zeros(10), np.zeros(9, dtype=np.float32),
                                    np.zeros((3, 3))])
def test_bad_params_vector(params):
    with pytest.raises(ValueError, match=r"params must be float64 of shape \(9,\)"):
        MLP((2, 2, 1), "logistic", params=params)


def test_loss_and_grad_is_the_forward_and_backward_pass():
    # the Net protocol's loss_and_grad: Σ of the loss and the gradient that forward + backward give
    rng = np.random.default_rng(4)
    net = MLP([3, 5, 2], "tanh")
    net.init_uniform(rng, scale=0.5)
    X, T = rng.normal(size=(4, 3)), rng.choice([-0.9, 0.9], size=(4, 2))
    lf = get_loss(net.loss)
    y, cache = net.forward(X)
    want_E = float(np.sum(lf.value(y, T)))
    want_g = net.backward(lf.grad(y, T), cache).copy()
    g = np.full(net.n_params, np.nan)  # whatever the buffer held is overwritten
    assert net.loss_and_grad((X, T), g) == want_E and np.array_equal(g, want_g)
    assert np.abs(g).max() > 0  # control: a real gradient
