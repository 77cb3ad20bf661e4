"""engine.tanhkernel: the compiled tanh (−expm1(−2|x|)/(expm1(−2|x|) + 2), signed) against
numpy's float64 tanh, issue 32's three guards where a kernel computes a function another way:
- per element within 1e-15 relative (measured: at most 3 ulp, 4.7e-16), on every scale from
  subnormal to past the clamp, and exact at the special values;
- 100 training steps of an MLP of every tanh form within 1e-8 of the same run on numpy's tanh;
- (the equivalence suite runs every strategy and its serial reference on the same kernels).
The loops in place and on strided views give tanh1's bits element by element. Negative
controls: a tanh 1e-14 off leaves the element bound, one 1e-6 off the training bound."""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_kernels import same_bits, train

from engine import tanhkernel as TK

needs_numba = pytest.mark.skipif(TK.njit is None, reason="numba absent or ENGINE_KERNELS=numpy")
SPECIAL = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-310, 1e-300, 2.0 ** -28, 0.5 * math.log(3),
                    19.0625, 20.0, -20.0, 22.0, 1e300, np.finfo(float).max, np.inf, -np.inf, np.nan])


def arguments(rng, n=20000):
    """n normal arguments at each scale from 1e-12 to 50, both signs (the normal's own)."""
    return np.concatenate([rng.standard_normal(n) * s for s in 10.0 ** np.arange(-12, 2)]
                          + [rng.uniform(0, 25, n)])


def compiled(x):
    out = np.empty_like(x)
    TK._nb_tanh(x, out)
    return out


def within(got, ref, rel) -> bool:
    return bool(np.all(np.abs(got - ref) <= rel * np.abs(ref)))


@needs_numba
def test_each_element_is_within_1e_15_of_numpys():
    x = arguments(np.random.default_rng(32))
    got, ref = compiled(x), np.tanh(x)
    assert within(got, ref, 1e-15)
    assert not same_bits(got, ref)  # another function: the bits do move (41 % of them here)
    assert not within(ref * (1 + 1e-14 * np.sign(x)), got, 1e-15)  # the control


@needs_numba
def test_the_special_values_are_exact():
    got, ref = compiled(SPECIAL), np.tanh(SPECIAL)
    assert same_bits(got[:6], ref[:6]) and np.signbit(got[1]) and np.signbit(got[3])  # ±0, tiny: x
    assert got[8:16].tolist() == [1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -1.0]  # rounds to ±1
    assert np.isnan(got[-1])
    assert within(got[6:8], ref[6:8], 1e-15)


@needs_numba
def test_the_loops_give_tanh1s_bits_in_place_and_on_strided_views():
    z = np.random.default_rng(1).standard_normal((6, 40)) * 3
    one = np.vectorize(TK.tanh1)
    ref = z.copy()
    ref[:, 10:] = one(z[:, 10:])
    ref[::2, 3] = one(z[::2, 3])
    got = z.copy()
    TK.tanh(got[:, 10:], got[:, 10:])
    TK.tanh(got[::2, 3], got[::2, 3])
    assert same_bits(got, ref) and not same_bits(got, z)


def curve(monkeypatch, f):
    """100 steps of MLPs of every tanh form (test_kernels.train) with tanh f in every pass."""
    from engine import activations, kernels

    monkeypatch.setattr(activations, "tanh", f)
    monkeypatch.setattr(kernels, "tanh", f)
    return np.concatenate([train((8, 100, 1), "symmetric_sigmoid", need_dx=True, steps=100),
                           train((6, 9, 1, 1), ["tanh", "tanh1.5", "logistic"], need_dx=False, steps=100)])


@needs_numba
def test_training_holds_to_1e_8_over_100_steps(monkeypatch):
    ours = curve(monkeypatch, TK._nb_tanh)
    ref = curve(monkeypatch, TK._np_tanh)
    assert np.isfinite(ref).all() and not same_bits(ours, ref)
    assert np.max(np.abs(ours - ref)) <= 1e-8 * np.max(np.abs(ref))
    off = curve(monkeypatch, lambda z, out: np.multiply(np.tanh(z, out=out), 1 + 1e-6, out=out))
    assert np.max(np.abs(off - ref)) > 1e-8 * np.max(np.abs(ref))  # the control


def test_the_engine_calls_the_compiled_tanh_where_numba_runs():
    from engine import activations, kernels, seqkernels

    assert TK.COMPILED == (TK.njit is not None)
    assert TK.tanh is (TK._nb_tanh if TK.COMPILED else TK._np_tanh)
    assert activations.tanh is kernels.tanh is TK.tanh and seqkernels.COMPILED == TK.COMPILED
