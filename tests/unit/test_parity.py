"""n-bit parity (Dahl et al. 2008, §5): encoding, targets, shapes, bad input."""
from __future__ import annotations

import numpy as np
import pytest

from datasets.parity import parity


def test_three_bit_table_symmetric():
    X, T = parity(3)  # symmetric_sigmoid: low −1, high +1; pattern i is i in binary, MSB first
    want_X = [[-1, -1, -1], [-1, -1, 1], [-1, 1, -1], [-1, 1, 1],
              [1, -1, -1], [1, -1, 1], [1, 1, -1], [1, 1, 1]]
    want_T = [[-1], [1], [1], [-1], [1], [-1], [-1], [1]]  # odd number of ones -> +1
    np.testing.assert_array_equal(X, want_X)
    np.testing.assert_array_equal(T, want_T)


def test_two_bit_logistic_is_xor_in_zero_one():
    X, T = parity(2, activation="logistic")
    np.testing.assert_array_equal(X, [[0, 0], [0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(T, [[0], [1], [1], [0]])


@pytest.mark.parametrize("activation,low,high", [
    ("symmetric_sigmoid", -1.0, 1.0), ("tanh", -1.0, 1.0), ("tanh1.5", -1.0, 1.0),
    ("logistic", 0.0, 1.0),
])
@pytest.mark.parametrize("bits", [1, 4, 8])
def test_encoding_and_target_rule(bits, activation, low, high):
    X, T = parity(bits, activation=activation)
    n = 2**bits
    assert X.shape == (n, bits) and T.shape == (n, 1)
    assert X.dtype == T.dtype == np.float64
    assert set(np.unique(X)) <= {low, high} and set(np.unique(T)) <= {low, high}
    ones = (X == high).sum(axis=1)
    np.testing.assert_array_equal(T[:, 0] == high, ones % 2 == 1)
    # every pattern exactly once, in binary order
    codes = (X == high).astype(int) @ (2 ** np.arange(bits - 1, -1, -1))
    np.testing.assert_array_equal(codes, np.arange(n))
    assert (T == high).sum() == n // 2  # parity splits the set in half


def test_read_only_and_cached():
    X, T = parity(4)
    with pytest.raises(ValueError):
        X[0, 0] = 5.0
    with pytest.raises(ValueError):
        T[0, 0] = 5.0
    X2, _ = parity(4)
    assert X2 is X  # cached
    Xl, _ = parity(4, activation="logistic")
    assert Xl is not X and Xl.min() == 0.0


def test_numpy_integer_bits():
    X, T = parity(np.int64(3))
    assert X.shape == (8, 3)


@pytest.mark.parametrize("bits", [0, -1, 21, 2.5, 3.0, "3", None, True])
def test_bad_bits(bits):
    with pytest.raises(ValueError, match="parity bits must be an integer in 1..20"):
        parity(bits)


def test_unbounded_activation_is_rejected():
    with pytest.raises(ValueError, match="'identity' has no bounded range"):
        parity(3, activation="identity")


def test_unknown_activation_is_rejected():
    with pytest.raises(ValueError, match="unknown activation 'relu'"):
        parity(3, activation="relu")
