"""engine/optim.py: the paths of the conjugate-gradient optimizer and its line search that
tests/unit/test_cg_path.py does not walk (issue 35): searches that find no decrease, a growth
phase that runs into the evaluation cap, CG's argument checks, zero gradients, a minimize
of no iterations. Evaluation points are worked by hand from the documented rule: bracket
from α = step0, growing by 1/G while Φ falls or shrinking by G until Φ(α) < Φ(0), with
G = (√5 − 1)/2 written out here; alpha 0 when no decrease was found.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.optim import ConjugateGradient, beta_polak_ribiere_plus, line_search_golden

G = (math.sqrt(5.0) - 1.0) / 2.0


def _search(fun, *, step0, max_evals, tol=1e-2, phi0=None):
    pts = []

    def phi(w):
        pts.append(float(w[0]))
        return fun(float(w[0]))

    alpha, val, evals = line_search_golden(phi, np.zeros(1), np.ones(1),
                                           phi0=fun(0.0) if phi0 is None else phi0,
                                           step0=step0, max_evals=max_evals, tol=tol)
    return alpha, val, evals, pts


# kills: "no decrease" taken as Φ ≤ Φ(0) instead of Φ < Φ(0) (the `>=` of the first test or
# the `<` of the shrink loop moved by one), the cap not ending the shrink phase, the returned
# alpha or value not 0 and Φ(0) when every trial failed
@pytest.mark.parametrize("fun,name", [(lambda a: 3.0, "flat"), (lambda a: a * a, "uphill")])
def test_a_search_with_no_decrease_returns_zero_after_the_cap(fun, name):
    alpha, val, evals, pts = _search(fun, step0=0.5, max_evals=7)
    assert (alpha, val, evals) == (0.0, fun(0.0), 7)
    # the shrink phase by hand: 0.5, 0.5·G, …, 0.5·G⁶
    np.testing.assert_allclose(pts, [0.5 * G ** k for k in range(7)], rtol=1e-12)
    # control: a function that dips below Φ(0) only at the 5th trial is found there
    dip = 0.5 * G ** 4

    def late(a):
        return -1.0 if abs(a - dip) < 1e-9 else fun(a)

    alpha, val, evals, pts = _search(late, step0=0.5, max_evals=7)
    assert alpha > 0.0 and val == -1.0 and pts[4] == pytest.approx(dip, rel=1e-12)


# kills: the growth phase not stopped by the cap (an endless search on an unbounded Φ) or
# growing by another factor; the returned value not Φ at the returned alpha
def test_growth_on_an_unbounded_direction_stops_at_the_cap():
    alpha, val, evals, pts = _search(lambda a: -a, step0=0.25, max_evals=9)
    assert evals == 9 == len(pts)
    np.testing.assert_allclose(pts, [0.25 / G ** k for k in range(9)], rtol=1e-12)
    assert alpha in pts and val == -alpha and val < 0.0
    # control: a larger cap goes further out along the same powers
    assert _search(lambda a: -a, step0=0.25, max_evals=12)[0] > alpha


# kills: the step0 check dropped or moved (0 or NaN accepted: every first trial would be 0 or
# NaN and each search would fail)
@pytest.mark.parametrize("bad", [0.0, -0.1, math.nan])
def test_cg_refuses_a_step0_that_is_not_positive(bad):
    with pytest.raises(ValueError, match="step0 must be > 0"):
        ConjugateGradient(3, step0=bad)
    assert ConjugateGradient(3, step0=1e-12).step0 == 1e-12  # control: any positive value


def test_cg_defaults_restart_every_to_the_parameter_count():
    # Powell (1977): restart every n iterations; None and 0 both mean n
    assert ConjugateGradient(7).restart_every == 7
    assert ConjugateGradient(7, restart_every=0).restart_every == 7
    assert ConjugateGradient(7, restart_every=3).restart_every == 3


# kills: the zero-denominator guard of β⁺ dropped (a ZeroDivisionError after a zero gradient)
def test_beta_is_zero_after_a_zero_gradient():
    assert beta_polak_ribiere_plus(np.array([1.0, 2.0]), np.zeros(2)) == 0.0
    # hand: g_new = (1, 2), g_old = (1, 1): 1·0 + 2·1 = 2 over 2 → 1
    assert beta_polak_ribiere_plus(np.array([1.0, 2.0]), np.ones(2)) == 1.0


# kills: minimize calling phi_grad or the callback when no iteration runs, or reporting a
# final Φ it did not compute
def test_minimize_of_no_iterations_does_nothing():
    calls = []
    x = np.array([1.0, 2.0])
    h = ConjugateGradient(2).minimize(x, lambda w: calls.append("phi"),
                                      lambda w: calls.append("phi_grad"), iterations=0,
                                      callback=lambda *a: calls.append("callback"))
    assert calls == [] and x.tolist() == [1.0, 2.0]
    assert h == {"phi": [], "evals": [], "restarted": [], "useful": 0, "stopped": "iterations",
                 "final_phi": None}


def test_minimize_from_the_minimiser_stalls_after_two_iterations():
    # ∇Φ = 0 at the start: a stationary point, so no search (d = 0 would try x itself at
    # every trial point) and no decrease: stall after 2 iterations (issue 14)
    A = np.array([[2.0, 0.0], [0.0, 4.0]])
    x_star = np.array([0.5, -0.25])
    b = A @ x_star  # Φ(x) = ½xᵀAx − bᵀx, minimised at x_star

    def phi(w):
        return float(0.5 * w @ A @ w - b @ w)

    x = x_star.copy()
    h = ConjugateGradient(2, max_evals=6).minimize(x, phi, lambda w: (phi(w), A @ w - b),
                                                   iterations=50)
    assert h["stopped"] == "stall" and len(h["phi"]) == 2 and h["useful"] == 0
    assert h["evals"] == [0, 0] and h["restarted"] == [True, True]
    assert np.array_equal(x, x_star) and h["final_phi"] == phi(x_star) == -0.375  # −½ x*ᵀAx* = −½(0.5 + 0.25)


def test_a_zero_gradient_after_an_accepted_step_is_no_decrease():
    # Φ(x) = (x − 1)²: from 0 the first search (d = 2, α₀ = 0.1/2) lands on the minimiser 1
    # (α = 0.5 up to rounding); there ∇Φ = 0 exactly
    seen = []

    def phi(w):
        seen.append(float(w[0]))
        return float((w[0] - 1.0) ** 2)

    cg = ConjugateGradient(1, restart_every=5)
    x = np.zeros(1)
    cg.step(x, phi, 1.0, np.array([-2.0]))
    assert cg.alpha > 0.0 and abs(x[0] - 1.0) < 1e-2
    x[0] = 1.0  # exactly on the minimiser
    seen.clear()
    new, evals, restarted = cg.step(x, phi, 0.0, np.zeros(1))
    assert x[0] == 1.0
    assert all(math.isfinite(s) for s in seen)  # Φ only ever at finite weights
    assert new == 0.0 and cg.alpha == 0.0  # no decrease: alpha 0, Φ as it was
    assert evals == 0 and seen == []  # no search at a stationary point
    # control: off the minimiser the next iteration searches again and lowers Φ
    x[0] = 0.5
    new, evals, _ = cg.step(x, phi, 0.25, np.array([-1.0]))
    assert evals > 0 and cg.alpha > 0.0 and new < 0.25 and all(math.isfinite(s) for s in seen)


def test_the_search_moves_only_on_a_strict_decrease():
    # Φ(α) = max(1 − α, 0) along d = 1 from 0: every α ≥ 1 ties at 0, so the first trial point
    # that reaches the floor is kept; a later point of equal value never replaces it
    seen = []

    def phi(w):
        seen.append(float(w[0]))
        return max(1.0 - float(w[0]), 0.0)

    alpha, value, evals = line_search_golden(phi, np.zeros(1), np.ones(1), phi0=1.0, step0=0.7, max_evals=30)
    first = next(a for a in seen if max(1.0 - a, 0.0) == 0.0)
    assert value == 0.0 and alpha == first and evals == len(seen)
    assert sum(1 for a in seen if a >= 1.0) > 1  # control: other points of equal value were tried


def test_line_search_defaults_are_the_documented_ones():
    # 20 Φ evaluations at most and a bracket below 1 % of α: counted on a Φ that never falls
    calls = []

    def phi(w):
        calls.append(1)
        return 1.0 + float(w[0]) ** 2  # any step from 0 along d = 1 raises Φ

    alpha, value, evals = line_search_golden(phi, np.zeros(1), np.ones(1), phi0=1.0, step0=1.0)
    assert (alpha, value) == (0.0, 1.0) and evals == len(calls) == 20
    assert line_search_golden(phi, np.zeros(1), np.ones(1), phi0=1.0, step0=1.0, max_evals=7)[2] == 7  # control


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_non_finite_gradient_leaves_the_weights_as_they_were():
    # no step is taken unless the search found a decrease (α > 0): a gradient with NaN or inf
    # finds none, and the weights keep their values (0·inf would turn them NaN)
    for bad in (np.nan, np.inf):
        x = np.array([0.5, -0.25])
        cg = ConjugateGradient(2)
        cg.step(x, lambda w: float(w @ w), 0.3125, np.array([bad, 1.0]))
        assert np.array_equal(x, [0.5, -0.25]) and not cg.alpha > 0.0, bad
