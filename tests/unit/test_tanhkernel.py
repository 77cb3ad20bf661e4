"""engine.tanhkernel: the compiled port of numpy's float64 tanh gives numpy's bits where its
import-time probe says so (PORTED), element by element on every one of its 16 intervals,
at the special values, in place and on strided views; and on every CPU it stays within
4 ulp of the C library's tanh, whatever numpy does there. Negative controls: a table with
one coefficient a unit in the last place off is caught by the probe, and a kernel built
on it by the pins. (Whole training runs with the port against numpy's tanh:
tests/unit/test_kernels.py and tests/unit/test_seqkernels.py, through ``numpys_tanh``.)"""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_kernels import same_bits

from engine import tanhkernel as TK

needs_numba = pytest.mark.skipif(TK.njit is None, reason="numba absent or ENGINE_KERNELS=numpy")
pins_bits = pytest.mark.skipif(not TK.PORTED, reason="numpy's tanh rounds otherwise on this CPU "
                               "(no FMA, or another algorithm): the kernels call it instead")
EDGES = np.concatenate([[0.0], 0.125 * 2.0 ** (np.arange(16) / 2.0), [40.0]])


def arguments(rng, n=2000):
    """n uniform arguments in each interval of the table and past it, both signs."""
    x = np.concatenate([rng.uniform(lo, hi, n) for lo, hi in zip(EDGES[:-1], EDGES[1:])])
    return np.concatenate([x, -x])


def port(x):
    out = np.empty_like(x)
    TK._nb_tanh(x, out)
    return out


def ulps(a, b):
    """|a − b| in units in the last place of b."""
    return np.abs(a - b) / np.spacing(np.abs(b))


@needs_numba
@pins_bits
def test_the_port_gives_numpys_bits_on_every_interval():
    x = arguments(np.random.default_rng(32))
    assert same_bits(port(x), np.tanh(x))


@needs_numba
@pins_bits
def test_the_port_gives_numpys_bits_at_the_special_values():
    x = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-310, 0.125, np.nextafter(0.125, 0), 19.0625,
                  22.0, 1e300, 2.0 ** 1023, -2.0 ** 1023, np.finfo(float).max, np.inf, -np.inf, np.nan])
    got, ref = port(x), np.tanh(x)
    assert same_bits(got, ref) and np.signbit(got[1]) and got[-3:-1].tolist() == [1.0, -1.0]


@needs_numba
@pins_bits
def test_the_port_works_in_place_and_on_strided_views():
    z = np.random.default_rng(1).standard_normal((6, 40)) * 3
    ref = z.copy()
    np.tanh(ref[:, 10:], out=ref[:, 10:])
    np.tanh(ref[::2, 3], out=ref[::2, 3])
    got = z.copy()
    TK.tanh(got[:, 10:], got[:, 10:])
    TK.tanh(got[::2, 3], got[::2, 3])
    assert same_bits(got, ref)


@needs_numba
def test_the_port_is_within_4_ulp_of_the_c_librarys_tanh():
    """On every CPU, whether or not numpy computes tanh this way: numpy's algorithm is
    SVML's "la" (low accuracy, at most 4 ulp) one; the C library's is within 1 ulp of tanh.
    The largest seen here is 3 ulp (near 0.48, 3.4e5 arguments). The control: tanh rounded to
    float32 is far outside."""
    x = arguments(np.random.default_rng(5), n=500)
    libm = np.array([math.tanh(v) for v in x])
    assert ulps(port(x), libm).max() <= 4.0
    assert ulps(port(x).astype(np.float32).astype(np.float64), libm).max() > 1e6


@needs_numba
def test_a_table_one_ulp_off_is_caught():
    T = TK.TABLE.copy()
    T[5, 1] = np.nextafter(T[5, 1], np.inf)  # c0 of interval 5, one ulp up

    def off(z, out):
        TK._tanh_1d(z, out, T)

    assert TK.same_as_numpy(lambda z, out: TK._tanh_1d(z, out, TK.TABLE)) == TK.PORTED
    assert not TK.same_as_numpy(off)
    x = arguments(np.random.default_rng(32))
    got = np.empty_like(x)
    off(x, got)
    assert not same_bits(got, np.tanh(x))


def test_the_engine_calls_the_port_only_where_it_holds():
    from engine import activations, kernels, seqkernels

    assert TK.PORTED == (TK.njit is not None and TK.same_as_numpy(TK._nb_tanh))
    assert TK.tanh is (TK._nb_tanh if TK.PORTED else TK._np_tanh)
    assert activations.tanh is kernels.tanh is TK.tanh and seqkernels.PORTED == TK.PORTED
