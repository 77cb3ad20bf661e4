"""Optimizers over flat parameter vectors.

Split into ``direction`` (what a worker computes from its own gradient) and
``apply`` (what every replica does with the combined update), so a
pattern-parallel strategy can exchange directions and every worker applies
the same sum.
"""
from __future__ import annotations

import numpy as np

from engine import kernels


class SGD:
    """Gradient descent with momentum.

    direction: u = −η · g / count          (g summed over ``count`` patterns)
    apply:     Δw(t) = u + α · Δw(t−1);  w ← w + Δw(t)

    ``count`` = 1 per pattern gives online updates, the bunch size gives bunch
    mode, the training-set size gives batch mode.
    """

    def __init__(self, n_params: int, *, lr: float, momentum: float = 0.0):
        if not lr > 0:  # also rejects NaN
            raise ValueError(f"learning rate must be > 0, got {lr}")
        if not 0 <= momentum < 1:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        self.lr = float(lr)
        self.momentum = float(momentum)
        self.velocity = np.zeros(n_params)  # Δw(t−1)

    def direction(self, grad_sum: np.ndarray, count: int, *, out: np.ndarray | None = None):
        return np.multiply(grad_sum, -self.lr / count, out=out)

    def apply(self, params: np.ndarray, update: np.ndarray) -> None:
        v = self.velocity
        v *= self.momentum
        v += update
        params += v

    def step(self, params: np.ndarray, grad_sum: np.ndarray, count: int) -> None:
        """direction, then apply, in one pass (engine.kernels.sgd: the same operations)."""
        kernels.sgd(params, grad_sum, self.velocity, -self.lr / count, self.momentum)


# ---- conjugate gradients --------------------------------------------------------------
_GOLD = (np.sqrt(5.0) - 1.0) / 2.0  # 0.618…


def beta_polak_ribiere_plus(g_new: np.ndarray, g_old: np.ndarray) -> float:
    """β⁺ = max(0, g_newᵀ(g_new − g_old) / g_oldᵀg_old): Polak–Ribière (1969), clipped at
    zero as Gilbert & Nocedal (1992) propose, so a bad direction restarts by itself."""
    den = float(g_old @ g_old)
    if den == 0.0:
        return 0.0
    return max(0.0, float(g_new @ (g_new - g_old)) / den)


def line_search_golden(phi, x: np.ndarray, d: np.ndarray, *, phi0: float, step0: float,
                       max_evals: int = 20, tol: float = 1e-2):
    """Derivative-free line search along d: evaluates Φ only.

    Bracketing: from α = step0, grow α by 1/0.618 while Φ keeps falling, or shrink
    it by 0.618 until Φ(α) < Φ(0). Then golden-section search inside the bracket
    until its width is below ``tol``·α or ``max_evals`` Φ evaluations are spent.
    ``phi(w)`` evaluates Φ at the weights w. Returns ``(alpha, phi(alpha), evals)``;
    alpha is 0 when no decrease was found.
    """
    w = np.empty_like(x)

    def f(a):
        np.add(x, a * d, out=w)
        return float(phi(w))

    evals = 0
    a, fa = 0.0, phi0
    b = step0
    fb = f(b)
    evals += 1
    if fb >= fa:  # shrink until Φ falls
        c, fc = b, fb
        while evals < max_evals:
            b = c * _GOLD
            fb = f(b)
            evals += 1
            if fb < fa:
                break
            c, fc = b, fb
        else:
            return 0.0, phi0, evals
    else:  # grow until Φ rises
        c = b / _GOLD
        fc = f(c)
        evals += 1
        while fc < fb and evals < max_evals:
            a, fa, b, fb = b, fb, c, fc
            c = b / _GOLD
            fc = f(c)
            evals += 1
    # a < b < c with Φ(b) < Φ(a) and Φ(b) <= Φ(c) (unless evals ran out): golden section
    while evals < max_evals and (c - a) > tol * b:
        if (c - b) > (b - a):
            y = b + (1 - _GOLD) * (c - b)
            fy = f(y)
            evals += 1
            if fy < fb:
                a, b, fb = b, y, fy
            else:
                c = y
        else:
            y = b - (1 - _GOLD) * (b - a)
            fy = f(y)
            evals += 1
            if fy < fb:
                c, b, fb = b, y, fy
            else:
                a = y
    return b, fb, evals


class ConjugateGradient:
    """Nonlinear conjugate gradients with a derivative-free line search.

    Direction: d_0 = −g_0, d_k = −g_k + β_k d_(k−1) with β = Polak–Ribière⁺
    (:func:`beta_polak_ribiere_plus`). Restarts (d = −g) every ``restart_every``
    iterations (default: the number of parameters, Powell 1977), when β⁺ clips
    to 0, and when d is not a descent direction (gᵀd ≥ 0). The first trial step
    of a line search is the previous accepted step scaled by
    (g_(k−1)ᵀd_(k−1)) / (g_kᵀd_k) (Nocedal & Wright 2006, §3.5), initially
    ``step0`` / ‖g_0‖.
    """

    def __init__(self, n_params: int, *, restart_every: int | None = None, step0: float = 0.1,
                 max_evals: int = 20, tol: float = 1e-2):
        if not step0 > 0:
            raise ValueError(f"step0 must be > 0, got {step0}")
        self.restart_every = int(restart_every or n_params)
        self.step0, self.max_evals, self.tol = float(step0), int(max_evals), float(tol)
        self.k = 0  # iterations since the last restart
        self.d = None
        self.g_old = None
        self.slope_old = None
        self.alpha = None
        self.restarts = 0

    def step(self, x: np.ndarray, phi, value: float, grad: np.ndarray):
        """One iteration from x (updated in place) with Φ(x) = value and ∇Φ(x) = grad.

        Returns ``(new value, line-search Φ evaluations, restarted)``.
        """
        restarted = self.d is None or self.k >= self.restart_every
        if not restarted:
            beta = beta_polak_ribiere_plus(grad, self.g_old)
            d = -grad + beta * self.d
            if beta == 0.0 or float(grad @ d) >= 0.0:
                restarted = True
        if restarted:
            d = -grad
            self.k = 0
            self.restarts += 1
        slope = float(grad @ d)  # < 0, or 0 where the gradient is exactly 0
        if slope == 0.0:  # a stationary point: no direction lowers Φ, so no search (it would
            alpha, new, evals = 0.0, value, 0  # start from α·slope_old/0 = ±inf) and no step
        else:
            if self.alpha is None or self.alpha == 0.0:
                a0 = self.step0 / np.sqrt(float(grad @ grad))  # > 0: a zero gradient stopped above
            else:
                a0 = self.alpha * self.slope_old / slope
            alpha, new, evals = line_search_golden(phi, x, d, phi0=value, step0=a0,
                                                   max_evals=self.max_evals, tol=self.tol)
        if alpha > 0.0:
            x += alpha * d
        self.d, self.g_old, self.slope_old, self.alpha = d, grad.copy(), slope, alpha
        self.k += 1
        return new, evals, restarted

    def minimize(self, x: np.ndarray, phi, phi_grad, *, iterations: int, callback=None,
                 rel_tol: float | None = None) -> dict:
        """Run up to ``iterations`` CG iterations on x in place; ``phi_grad(w) -> (Φ, ∇Φ)`` is
        a derivative epoch, ``phi(w) -> Φ`` a forward (line-search) epoch.

        Stopping rule (issue 14). **Stall:** when two iterations in a row find no decrease
        (line-search step 0), x, ∇Φ and the next trial step are what they were, so every
        further iteration would repeat the second one exactly (the first failure sets the
        step to 0, the second is a restart d = −g from the initial trial step
        ``step0``/‖g‖): CG stops after it, and the result is what ``iterations`` full
        iterations would give. **Tolerance** (``rel_tol``, off by default because it
        changes the result): stop after an iteration whose relative decrease
        (Φ_before − Φ_after)/|Φ_before| is below ``rel_tol``.

        The history holds every iteration run (``phi``, ``evals``, ``restarted``), then
        ``useful``: iterations up to the last one that lowered Φ; ``stopped``: "stall",
        "tolerance" or "iterations"; ``final_phi``.
        """
        hist = {"phi": [], "evals": [], "restarted": []}
        useful, stopped, failures = 0, "iterations", 0
        for _ in range(iterations):
            value, grad = phi_grad(x)
            new, evals, r = self.step(x, phi, value, grad)
            hist["phi"].append(value)
            hist["evals"].append(evals)
            hist["restarted"].append(r)
            if callback is not None:
                callback(x, value)
            if self.alpha > 0.0:
                failures, useful = 0, len(hist["phi"])
                if rel_tol is not None and (value - new) <= rel_tol * abs(value):
                    stopped = "tolerance"
                    break
            else:
                failures += 1
                if failures == 2:
                    stopped = "stall"
                    break
        hist["useful"], hist["stopped"] = useful, stopped
        hist["final_phi"] = phi_grad(x)[0] if hist["phi"] else None
        return hist


# ---- ADADELTA (Zeiler 2012) ---------------------------------------------------


class Adadelta:
    """ADADELTA (Zeiler 2012, Algorithm 1), a per-process update rule:

        E[g²]_t  = ρ E[g²]_{t−1} + (1 − ρ) g_t²
        Δx_t     = − (√(E[Δx²]_{t−1} + ε) / √(E[g²]_t + ε)) · g_t
        E[Δx²]_t = ρ E[Δx²]_{t−1} + (1 − ρ) Δx_t²
        x_{t+1}  = x_t + lr · Δx_t

    g = grad_sum / count. Defaults ρ = 0.95, ε = 1e−6, lr = 1 are Lasagne's
    ``adadelta``. As in Lasagne, ``lr`` scales the step but E[Δx²] accumulates
    the unscaled Δx.
    """

    def __init__(self, n_params: int, *, lr: float = 1.0, rho: float = 0.95, eps: float = 1e-6):
        if not lr > 0:
            raise ValueError(f"learning rate must be > 0, got {lr}")
        if not 0 <= rho < 1:
            raise ValueError(f"rho must be in [0, 1), got {rho}")
        if not eps > 0:
            raise ValueError(f"eps must be > 0, got {eps}")
        self.lr, self.rho, self.eps = float(lr), float(rho), float(eps)
        self.Eg2 = np.zeros(n_params)  # E[g²]
        self.Edx2 = np.zeros(n_params)  # E[Δx²]

    def delta(self, grad_sum: np.ndarray, count: int) -> np.ndarray:
        """Δx for this gradient; updates both running averages."""
        g = grad_sum / count
        r = self.rho
        self.Eg2 *= r
        self.Eg2 += (1 - r) * g * g
        dx = -np.sqrt(self.Edx2 + self.eps) / np.sqrt(self.Eg2 + self.eps) * g
        self.Edx2 *= r
        self.Edx2 += (1 - r) * dx * dx
        return dx

    def step(self, params: np.ndarray, grad_sum: np.ndarray, count: int) -> None:
        params += self.lr * self.delta(grad_sum, count)
