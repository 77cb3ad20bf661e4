"""n-bit parity (Dahl et al. 2008, §5: 8-bit parity, all 256 patterns).

Inputs and targets use the two asymptotes of the output activation, so a
symmetric activation gets ±1 and the logistic gets 0/1. The target is
``high`` when the number of set bits is odd.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.activations import get_activation
from engine.data import Patterns


@lru_cache(maxsize=16)
def _parity(bits: int, low: float, high: float):
    codes = np.arange(2**bits)  # pattern i is the binary expansion of i, MSB first
    on = (codes[:, None] >> np.arange(bits - 1, -1, -1)) & 1  # (n, bits)
    X = np.where(on == 1, high, low).astype(np.float64)  # (n, bits)
    T = np.where(on.sum(axis=1, keepdims=True) % 2 == 1, high, low).astype(np.float64)  # (n, 1)
    X.flags.writeable = False
    T.flags.writeable = False
    return Patterns(X, T)


def parity(bits: int = 8, *, activation: str = "symmetric_sigmoid"):
    """:class:`engine.data.Patterns` ``(X, T)`` for all 2**bits patterns, read-only, shapes
    (n, bits), (n, 1)."""
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not 1 <= bits <= 20:
        raise ValueError(f"parity bits must be an integer in 1..20, got {bits!r}")
    act = get_activation(activation)
    if not np.isfinite(act.low):
        raise ValueError(f"activation {activation!r} has no bounded range to encode targets")
    return _parity(int(bits), act.low, act.high)
