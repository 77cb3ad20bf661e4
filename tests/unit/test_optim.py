"""SGD with momentum, worked by hand, and the direction/apply split."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.optim import SGD, Adadelta, ConjugateGradient


def test_two_momentum_steps_by_hand():
    """lr η = 0.1, momentum α = 0.5, gradients summed over count = 2 patterns.

    step 1: u1 = −0.1·(0.5, 1.0)/2 = (−0.025, −0.05);  Δw1 = u1
            w1 = (1, −2) + Δw1 = (0.975, −2.05)
    step 2: u2 = −0.1·(−1.0, 0.2)/2 = (0.05, −0.01)
            Δw2 = u2 + 0.5·Δw1 = (0.05 − 0.0125, −0.01 − 0.025) = (0.0375, −0.035)
            w2 = (0.975 + 0.0375, −2.05 − 0.035) = (1.0125, −2.085)
    """
    w = np.array([1.0, -2.0])
    opt = SGD(2, lr=0.1, momentum=0.5)
    np.testing.assert_array_equal(opt.velocity, [0.0, 0.0])
    opt.step(w, np.array([0.5, 1.0]), 2)
    np.testing.assert_allclose(w, [0.975, -2.05], rtol=1e-15)
    np.testing.assert_allclose(opt.velocity, [-0.025, -0.05], rtol=1e-15)
    opt.step(w, np.array([-1.0, 0.2]), 2)
    np.testing.assert_allclose(opt.velocity, [0.0375, -0.035], rtol=1e-14)
    np.testing.assert_allclose(w, [1.0125, -2.085], rtol=1e-14)


def test_without_momentum_is_plain_gradient_descent():
    w = np.array([3.0])
    opt = SGD(1, lr=0.5)
    assert opt.momentum == 0.0
    opt.step(w, np.array([2.0]), 1)  # 3 − 0.5·2 = 2
    opt.step(w, np.array([2.0]), 1)  # no memory of the first step: 2 − 1 = 1
    assert w[0] == pytest.approx(1.0, abs=1e-15)


def test_count_scales_the_step():
    """Online (count 1) vs batch (count n): the same gradient sum moves n times less."""
    a, b = np.zeros(3), np.zeros(3)
    g = np.array([1.0, -2.0, 4.0])
    SGD(3, lr=0.2).step(a, g, 1)
    SGD(3, lr=0.2).step(b, g, 4)
    np.testing.assert_allclose(a, -0.2 * g, rtol=1e-15)
    np.testing.assert_allclose(b, -0.05 * g, rtol=1e-15)


def test_direction_is_pure_and_writes_into_out():
    opt = SGD(2, lr=0.3, momentum=0.9)
    g = np.array([2.0, -4.0])
    u = opt.direction(g, 4)
    np.testing.assert_allclose(u, [-0.15, 0.3], rtol=1e-15)
    np.testing.assert_array_equal(g, [2.0, -4.0])  # input untouched
    np.testing.assert_array_equal(opt.velocity, [0.0, 0.0])  # no state change
    out = np.empty(3)
    r = opt.direction(g, 4, out=out[:2])
    assert np.shares_memory(r, out)
    np.testing.assert_allclose(out[:2], [-0.15, 0.3], rtol=1e-15)


def test_apply_sum_of_directions_equals_one_step_on_the_summed_gradient():
    """What pattern-parallel training relies on (Dahl et al. 2008, §4.1)."""
    rng = np.random.default_rng(0)
    g1, g2, g3 = rng.normal(size=(3, 5))
    w_split, w_step = np.ones(5), np.ones(5)
    o_split = SGD(5, lr=0.1, momentum=0.3)
    o_step = SGD(5, lr=0.1, momentum=0.3)
    for _ in range(3):  # several rounds, so the momentum term is exercised
        o_split.apply(w_split, o_split.direction(g1, 6) + o_split.direction(g2, 6)
                      + o_split.direction(g3, 6))
        o_step.step(w_step, g1 + g2 + g3, 6)
    np.testing.assert_allclose(w_split, w_step, rtol=1e-14)
    np.testing.assert_allclose(o_split.velocity, o_step.velocity, rtol=1e-13)


def test_apply_works_on_views_in_place():
    flat = np.zeros(4)
    view = flat[1:3]
    opt = SGD(2, lr=1.0, momentum=0.5)
    opt.apply(view, np.array([1.0, 2.0]))
    opt.apply(view, np.array([1.0, 2.0]))  # Δw2 = u + 0.5·u = 1.5·u
    np.testing.assert_allclose(flat, [0.0, 2.5, 5.0, 0.0], rtol=1e-15)


@pytest.mark.parametrize("lr", [
    0.0, -0.1, -math.inf,
    # regression: `lr <= 0` is False for NaN, so SGD(lr=nan) used to be accepted and
    # silently turned every parameter into NaN
    math.nan,
])
def test_bad_learning_rate(lr):
    with pytest.raises(ValueError, match="learning rate must be > 0"):
        SGD(3, lr=lr)


@pytest.mark.parametrize("momentum", [-0.1, 1.0, 1.5, math.nan])
def test_bad_momentum(momentum):
    with pytest.raises(ValueError, match=r"momentum must be in \[0, 1\)"):
        SGD(3, lr=0.1, momentum=momentum)


def test_boundary_values_are_accepted():
    opt = SGD(3, lr=1e-12, momentum=0.0)
    assert opt.lr == 1e-12
    assert SGD(3, lr=0.1, momentum=0.999).momentum == 0.999


# ---- conjugate gradient's stopping rule (issue 14) ----
def _quadratic(cond: float, n: int = 6, seed: int = 0):
    """Φ(x) = ½ xᵀAx − bᵀx with A's eigenvalues spread over [1, cond]."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    A = Q @ np.diag(np.linspace(1.0, cond, n)) @ Q.T  # (n, n)
    b = rng.standard_normal(n)  # (n,)
    return (lambda x: float(0.5 * x @ A @ x - b @ x)), (lambda x: (float(0.5 * x @ A @ x - b @ x), A @ x - b))


@pytest.mark.parametrize("cond", [10.0, 100.0])
def test_cg_stops_at_a_stall_with_the_result_of_every_iteration(cond):
    from engine.optim import ConjugateGradient

    phi, phi_grad = _quadratic(cond)
    x = np.zeros(6)
    h = ConjugateGradient(6).minimize(x, phi, phi_grad, iterations=300)
    assert h["stopped"] == "stall" and len(h["phi"]) < 100  # most of 300 came after convergence
    assert h["useful"] == len(h["phi"]) - 2  # the two iterations that found no decrease
    # negative control: the same optimizer stepped by hand all 300 times ends at the same x
    y, cg = np.zeros(6), ConjugateGradient(6)
    for _ in range(300):
        v, g = phi_grad(y)
        cg.step(y, phi, v, g)
    np.testing.assert_array_equal(x, y)
    assert h["final_phi"] == phi_grad(y)[0]


def test_cg_relative_tolerance_stops_earlier_and_only_when_asked():
    from engine.optim import ConjugateGradient

    phi, phi_grad = _quadratic(100.0)
    x = np.zeros(6)
    h = ConjugateGradient(6).minimize(x, phi, phi_grad, iterations=300, rel_tol=1e-3)
    assert h["stopped"] == "tolerance" and h["useful"] == len(h["phi"])
    x2 = np.zeros(6)
    h2 = ConjugateGradient(6).minimize(x2, phi, phi_grad, iterations=len(h["phi"]))
    assert h2["stopped"] == "iterations"  # without rel_tol the same count just runs out
    np.testing.assert_array_equal(x, x2)


# ---- ADADELTA (paper2's per-process rule; Zeiler 2012, Alg. 1) ----
def test_adadelta_worked_steps_and_descent():
    """Zeiler (2012) Alg. 1 with ρ = 0.95, ε = 1e−6, g = 2 (sum 4 over 2 patterns):
    E[g²] = 0.05·4 = 0.2; Δx = −√1e−6/√(0.2 + 1e−6)·2 = −0.00447212…;
    E[Δx²] = 0.05·Δx². A second step, g = −1 (sum −3 over 3 patterns), lr 0.5, by hand:
    E[g²] = 0.95·0.2 + 0.05·1, Δx = −√(E[Δx²] + ε)/√(E[g²] + ε)·(−1), x moves by 0.5·Δx."""
    opt = Adadelta(1)
    x = np.array([1.0])
    opt.step(x, np.array([4.0]), 2)
    dx = -math.sqrt(1e-6) / math.sqrt(0.2 + 1e-6) * 2
    assert x[0] == pytest.approx(1.0 + dx, rel=1e-14)
    assert dx == pytest.approx(-0.0044721248, rel=1e-7)
    assert opt.Eg2[0] == pytest.approx(0.2, rel=1e-14)
    assert opt.Edx2[0] == pytest.approx(0.05 * dx * dx, rel=1e-14)
    opt.lr = 0.5
    eg2, edx2 = 0.95 * 0.2 + 0.05 * 1.0, 0.05 * dx * dx
    dx2 = -math.sqrt(edx2 + 1e-6) / math.sqrt(eg2 + 1e-6) * -1.0
    opt.step(x, np.array([-3.0]), 3)
    assert x[0] == pytest.approx(1.0 + dx + 0.5 * dx2, rel=1e-14)
    assert opt.Eg2[0] == pytest.approx(eg2, rel=1e-14)
    assert opt.Edx2[0] == pytest.approx(0.95 * edx2 + 0.05 * dx2 * dx2, rel=1e-14)
    # it descends a quadratic
    A = np.diag([1.0, 10.0])
    w = np.array([3.0, -2.0])
    opt = Adadelta(2)
    f0 = w @ A @ w
    for _ in range(500):
        opt.step(w, 2 * A @ w, 1)
    assert w @ A @ w < 0.1 * f0


@pytest.mark.parametrize("kw,match", [({"lr": 0.0}, "learning rate"), ({"lr": math.nan}, "learning rate"),
                                      ({"rho": 1.0}, "rho"), ({"rho": -0.1}, "rho"), ({"rho": math.nan}, "rho"),
                                      ({"eps": 0.0}, "eps"), ({"eps": math.nan}, "eps")])
def test_adadelta_rejects_bad_settings(kw, match):
    with pytest.raises(ValueError, match=match):
        Adadelta(2, **kw)


def test_adadelta_boundary_settings_are_accepted():
    # control of the rejections above: ρ = 0 (no memory) and a tiny lr or ε are valid
    opt = Adadelta(2, lr=1e-12, rho=0.0, eps=1e-300)
    assert (opt.lr, opt.rho, opt.eps) == (1e-12, 0.0, 1e-300)


def test_cg_defaults_are_the_documented_ones():
    # McCann & Kalman give no line-search settings: ours are the docstring's, and a change of them shows
    cg = ConjugateGradient(4)
    assert (cg.restart_every, cg.step0, cg.max_evals, cg.tol) == (4, 0.1, 20, 1e-2)
    assert ConjugateGradient(4, restart_every=2).restart_every == 2
