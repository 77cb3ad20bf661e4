"""engine.schedule.longest_first (paper0 §2.2) against brute force, and the conjugate
gradient optimizer with its derivative-free line search (paper0 §2.2)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.optim import ConjugateGradient, beta_polak_ribiere_plus, line_search_golden
from engine.schedule import longest_first, makespan


def brute_force_opt(lengths, R):
    return min(makespan(lengths, a, R) for a in itertools.product(range(R), repeat=len(lengths)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 20), min_size=1, max_size=7), st.integers(1, 4))
def test_longest_first_within_the_bound_of_section_2_2(lengths, R):
    a = longest_first(lengths, R)
    assert a.shape == (len(lengths),) and a.min() >= 0 and a.max() < R
    ms, opt = makespan(lengths, a, R), brute_force_opt(lengths, R)
    assert opt <= ms <= (R + 1) / R * opt + max(lengths)  # §2.2, Coffman et al. (1980)
    assert ms <= (4 / 3 - 1 / (3 * R)) * opt + 1e-9  # Graham's LPT bound: tighter still


def test_longest_first_worked_example_and_rule():
    # lengths 7 5 4 3 3 on 2 workers: 7→0, 5→1, 4→1 (load 9), 3→0 (10), 3→1 (12)
    a = longest_first([3, 7, 4, 5, 3], 2)
    assert a.tolist() == [0, 0, 1, 1, 1]
    assert makespan([3, 7, 4, 5, 3], a, 2) == 12
    # negative control: round-robin in input order is worse here
    assert makespan([9, 1, 9, 1], [0, 1, 0, 1], 2) > makespan([9, 1, 9, 1], longest_first([9, 1, 9, 1], 2), 2)


def test_longest_first_bad_input():
    with pytest.raises(ValueError, match="n_workers"):
        longest_first([1, 2], 0)
    with pytest.raises(ValueError, match="one-dimensional"):
        longest_first([[1, 2]], 2)


def _quadratic(n=8, cond=100.0, seed=0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = Q @ np.diag(np.geomspace(1, cond, n)) @ Q.T
    b = rng.normal(size=n)
    return A, b, (lambda w: 0.5 * w @ A @ w - b @ w), (lambda w: (0.5 * w @ A @ w - b @ w, A @ w - b))


def test_cg_solves_a_quadratic_and_beats_steepest_descent():
    A, b, f, fg = _quadratic()
    x_star = np.linalg.solve(A, b)
    x = np.zeros(8)
    cg = ConjugateGradient(8, max_evals=60, tol=1e-8)
    cg.minimize(x, f, fg, iterations=12)
    assert np.linalg.norm(x - x_star) < 1e-4 * np.linalg.norm(x_star)
    # negative control: restarting every iteration is steepest descent, far slower
    x2 = np.zeros(8)
    ConjugateGradient(8, restart_every=1, max_evals=60, tol=1e-8).minimize(x2, f, fg, iterations=12)
    assert np.linalg.norm(x2 - x_star) > 100 * np.linalg.norm(x - x_star)


def test_line_search_uses_phi_only_and_finds_the_minimum():
    calls = []

    def phi(w):
        calls.append(1)
        return float((w[0] - 3.0) ** 2 + 1.0)

    x, d = np.zeros(1), np.ones(1)
    alpha, val, evals = line_search_golden(phi, x, d, phi0=phi(x), step0=0.1, max_evals=40, tol=1e-6)
    assert alpha == pytest.approx(3.0, rel=1e-5) and val == pytest.approx(1.0, abs=1e-9)
    assert evals == len(calls) - 1
    # an ascent direction finds no decrease and takes no step
    alpha, _, _ = line_search_golden(phi, x, -d, phi0=phi(x), step0=0.1, max_evals=10)
    assert alpha == 0.0


def test_polak_ribiere_plus_formula():
    g0, g1 = np.array([1.0, 2.0]), np.array([0.5, 0.5])
    assert beta_polak_ribiere_plus(g1, g0) == 0.0  # (0.5·−0.5 + 0.5·−1.5)/5 < 0 → clipped
    assert beta_polak_ribiere_plus(np.array([0.5, -1.0]), g0) == pytest.approx((-0.25 + 3) / 5)
    g1 = np.array([2.0, 1.0])
    assert beta_polak_ribiere_plus(g1, g0) == pytest.approx((2 * 1 + 1 * -1) / 5.0)


def test_cg_on_rosenbrock():
    f = lambda w: (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2  # noqa: E731

    def fg(w):
        return f(w), np.array([-2 * (1 - w[0]) - 400 * w[0] * (w[1] - w[0] ** 2),
                               200 * (w[1] - w[0] ** 2)])

    x = np.array([-1.2, 1.0])
    ConjugateGradient(2, max_evals=40, tol=1e-6).minimize(x, f, fg, iterations=300)
    assert np.allclose(x, [1.0, 1.0], atol=1e-3)
