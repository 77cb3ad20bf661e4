"""Central-difference gradient checks in float64 (docs/engine.md).

The checker compares MLP.backward (through the "mse" loss) with a central
difference of the summed loss.  A negative control shows that the same
checker reports a large error when the analytic gradient is wrong, so a pass
here means something.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.activations import ACTIVATIONS, Activation, get_activation
from engine.losses import LOSSES, get_loss
from engine.nets.mlp import MLP

SIZES = (3, 4, 5, 2)  # depth 3
B = 6  # patterns in the bunch
TOL = 1e-7
H = 1e-6  # central-difference step


# -- the checker ----------------------------------------------------------------
def total_loss(net: MLP, x: np.ndarray, t: np.ndarray, loss: str = "mse") -> float:
    """Σ_p E_p for the current params (fresh workspace, no shared state)."""
    y, _ = net.forward(x)
    return float(get_loss(loss).value(y, t).sum())


def numeric_param_grad(net: MLP, x, t, *, h: float = H) -> np.ndarray:
    g = np.empty(net.n_params)
    p = net.params
    for i in range(net.n_params):
        old = p[i]
        p[i] = old + h
        fp = total_loss(net, x, t)
        p[i] = old - h
        fm = total_loss(net, x, t)
        p[i] = old
        g[i] = (fp - fm) / (2 * h)
    return g


def numeric_input_grad(net: MLP, x, t, *, h: float = H) -> np.ndarray:
    x = x.copy()
    g = np.empty_like(x)
    for idx in np.ndindex(*x.shape):
        old = x[idx]
        x[idx] = old + h
        fp = total_loss(net, x, t)
        x[idx] = old - h
        fm = total_loss(net, x, t)
        x[idx] = old
        g[idx] = (fp - fm) / (2 * h)
    return g


def analytic_grads(net: MLP, x, t, *, need_dx: bool = False):
    y, cache = net.forward(x)
    dy = get_loss("mse").grad(y, t)
    return net.backward(dy, cache, need_dx=need_dx)


def rel_error(a: np.ndarray, b: np.ndarray) -> float:
    """Norm-wise relative error ‖a − b‖ / max(‖a‖, ‖b‖)."""
    denom = max(np.linalg.norm(a), np.linalg.norm(b), 1e-300)
    return float(np.linalg.norm(a - b) / denom)


def make_problem(acts, *, seed: int = 0, sizes=SIZES, batch: int = B):
    rng = np.random.default_rng(seed)
    net = MLP(sizes, acts)
    net.init_uniform(rng, scale=0.8)
    x = rng.normal(size=(batch, sizes[0]))  # (B, n_0)
    t = rng.uniform(-0.9, 0.9, size=(batch, sizes[-1]))  # (B, n_L)
    return net, x, t


def check_param_grad(net, x, t) -> float:
    ga = analytic_grads(net, x, t).copy()
    gn = numeric_param_grad(net, x, t)
    return rel_error(ga, gn)


# -- positive checks -------------------------------------------------------------
@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_param_gradient_matches_central_difference(act):
    net, x, t = make_problem(act)
    p0 = net.params.copy()
    err = check_param_grad(net, x, t)
    assert err < TOL, f"{act}: relative error {err:.3e}"
    np.testing.assert_array_equal(net.params, p0)  # the checker restored the weights


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_input_gradient_with_need_dx(act):
    net, x, t = make_problem(act, seed=1)
    g, dx = analytic_grads(net, x, t, need_dx=True)
    assert dx.shape == x.shape
    dxn = numeric_input_grad(net, x, t)
    assert rel_error(dx, dxn) < TOL
    # need_dx must not change the parameter gradient
    g_plain = analytic_grads(net, x, t)
    np.testing.assert_array_equal(g, g_plain)


def test_mixed_activations_per_layer():
    acts = ["logistic", "tanh1.5", "identity"]
    net, x, t = make_problem(acts, seed=2)
    assert check_param_grad(net, x, t) < TOL
    _, dx = analytic_grads(net, x, t, need_dx=True)
    assert rel_error(dx, numeric_input_grad(net, x, t)) < TOL


def test_single_layer_net_input_gradient():
    """L = 1: the need_dx branch runs without any hidden-layer derivative."""
    net, x, t = make_problem("tanh", seed=3, sizes=(3, 2))
    assert check_param_grad(net, x, t) < TOL
    _, dx = analytic_grads(net, x, t, need_dx=True)
    assert rel_error(dx, numeric_input_grad(net, x, t)) < TOL


def test_gradient_is_summed_over_the_bunch():
    net, x, t = make_problem("tanh", seed=4)
    g_all = analytic_grads(net, x, t).copy()
    g_each = sum(analytic_grads(net, x[i:i + 1], t[i:i + 1]).copy() for i in range(B))
    np.testing.assert_allclose(g_all, g_each, rtol=1e-12, atol=1e-14)


def test_backward_out_buffer_and_workspace_reuse():
    net, x, t = make_problem("symmetric_sigmoid", seed=5)
    ref = analytic_grads(net, x, t).copy()
    ws = net.workspace(B)
    out = np.full(net.n_params, np.nan)
    for _ in range(3):  # reusing the same workspace gives the same answer
        y, cache = net.forward(x, ws=ws)
        g = net.backward(get_loss("mse").grad(y, t), cache, out=out)
        assert g is out
        np.testing.assert_array_equal(out, ref)


@settings(max_examples=15, deadline=None, database=None)  # writes nothing outside tests/
@given(
    sizes=st.lists(st.integers(1, 4), min_size=2, max_size=4),
    act=st.sampled_from(sorted(ACTIVATIONS)),
    batch=st.integers(1, 3),
    seed=st.integers(0, 2**31 - 1),
)
def test_random_architectures(sizes, act, batch, seed):
    net, x, t = make_problem(act, seed=seed, sizes=tuple(sizes), batch=batch)
    ga = analytic_grads(net, x, t).copy()
    gn = numeric_param_grad(net, x, t)
    # a gradient can be ~0 by symmetry; then only the absolute error means anything
    assert np.linalg.norm(ga - gn) <= TOL * max(np.linalg.norm(gn), 1e-3)


# -- negative controls: the checker must fail on a wrong gradient ---------------------
def _with_df(act: Activation, other: Activation) -> Activation:
    return dataclasses.replace(act, name=act.name + "-wrong-df", df=other.df)


@pytest.mark.parametrize("act,other", [
    ("logistic", "tanh"),
    ("tanh", "symmetric_sigmoid"),
    ("symmetric_sigmoid", "tanh"),
    ("tanh1.5", "tanh"),
    ("identity", "logistic"),
])
def test_negative_control_wrong_derivative_is_detected(act, other):
    net, x, t = make_problem(act, seed=6)
    assert check_param_grad(net, x, t) < TOL  # sane before the sabotage
    net.acts[0] = _with_df(ACTIVATIONS[act], ACTIVATIONS[other])  # first hidden layer only
    err = check_param_grad(net, x, t)
    assert err > 1e-3, f"checker missed a wrong derivative ({err:.3e})"


def test_negative_control_perturbed_gradient_is_detected():
    net, x, t = make_problem("tanh", seed=7)
    ga = analytic_grads(net, x, t).copy()
    gn = numeric_param_grad(net, x, t)
    assert rel_error(ga, gn) < TOL
    bad = ga.copy()
    i = int(np.argmax(np.abs(bad)))
    bad[i] *= 1 + 1e-4  # a 0.01 % error in one component
    assert rel_error(bad, gn) > 10 * TOL
    bad = ga.copy()
    bad[net.slices["b2"]] = 0.0  # a forgotten bias gradient
    assert rel_error(bad, gn) > 1e-3


def test_negative_control_wrong_input_gradient_is_detected():
    net, x, t = make_problem("logistic", seed=8)
    net.acts[1] = _with_df(ACTIVATIONS["logistic"], ACTIVATIONS["identity"])
    _, dx = analytic_grads(net, x, t, need_dx=True)
    assert rel_error(dx, numeric_input_grad(net, x, t)) > 1e-3


# -- activations on their own ----------------------------------------------------------
@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_activation_derivative_from_output_matches_numeric(act):
    a = ACTIVATIONS[act]
    z = np.linspace(-3, 3, 61)
    y = a.f(z, np.empty_like(z))
    d = a.df(y, np.empty_like(z))
    h = 1e-6
    dn = (a.f(z + h, np.empty_like(z)) - a.f(z - h, np.empty_like(z))) / (2 * h)
    np.testing.assert_allclose(d, dn, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_activation_writes_into_out_and_supports_in_place(act):
    a = ACTIVATIONS[act]
    z = np.linspace(-2, 2, 9)
    out = np.empty_like(z)
    r = a.f(z, out)
    assert r is out
    zz = z.copy()
    a.f(zz, zz)  # forward runs activations in place on the pre-activation buffer
    np.testing.assert_array_equal(zz, out)
    d = np.empty_like(z)
    assert a.df(out, d) is d


def test_symmetric_sigmoid_formula():
    z = np.linspace(-30, 30, 601)
    y = ACTIVATIONS["symmetric_sigmoid"].f(z, np.empty_like(z))
    np.testing.assert_allclose(y, 2.0 / (1.0 + np.exp(-z)) - 1.0, rtol=1e-12, atol=1e-15)
    # and a few points by hand: f(0) = 0, f(ln 3) = 2/(1 + 1/3) − 1 = 1/2
    pts = np.array([0.0, math.log(3.0), -math.log(3.0)])
    np.testing.assert_allclose(ACTIVATIONS["symmetric_sigmoid"].f(pts, np.empty(3)),
                               [0.0, 0.5, -0.5], rtol=1e-14, atol=1e-15)


def test_other_activation_formulas():
    z = np.linspace(-5, 5, 101)
    f = lambda name: ACTIVATIONS[name].f(z, np.empty_like(z))  # noqa: E731
    # σ = ½·tanh(z/2) + ½: tanh within 1e-15 relative (tests/unit/test_tanhkernel.py) puts σ
    # within 5e-16 absolute, not relative: where σ is small, ½ + ½·tanh cancels (z = −4.7: 1.1e-14)
    sigma = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(f("logistic"), sigma, rtol=0, atol=5e-16)
    assert np.max(np.abs(f("logistic") - (sigma + 1e-15))) > 5e-16  # the control
    np.testing.assert_allclose(f("tanh"), np.tanh(z), rtol=1e-14)
    np.testing.assert_allclose(f("tanh1.5"), np.tanh(1.5 * z), rtol=1e-14)
    np.testing.assert_array_equal(f("identity"), z)


def test_activation_asymptotes():
    assert (ACTIVATIONS["logistic"].low, ACTIVATIONS["logistic"].high) == (0.0, 1.0)
    for name in ("tanh", "symmetric_sigmoid", "tanh1.5"):
        assert (ACTIVATIONS[name].low, ACTIVATIONS[name].high) == (-1.0, 1.0)


def test_unknown_activation_and_loss_names():
    with pytest.raises(ValueError, match="'relu'"):
        get_activation("relu")
    with pytest.raises(ValueError, match="'cross_entropy'"):
        get_loss("cross_entropy")


def test_mse_loss_value_and_grad():
    y = np.array([[0.5, -1.0], [2.0, 0.0]])
    t = np.array([[1.0, 1.0], [0.0, 0.0]])
    # E_p = ½ Σ_o (y − t)²: ½(0.25 + 4) and ½(4 + 0)
    np.testing.assert_allclose(LOSSES["mse"].value(y, t), [2.125, 2.0], rtol=1e-15)
    np.testing.assert_array_equal(LOSSES["mse"].grad(y, t), y - t)
    out = np.empty_like(y)
    assert LOSSES["mse"].grad(y, t, out) is out
