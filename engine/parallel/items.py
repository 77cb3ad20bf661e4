"""The items of any data container, as the data-parallel family splits them: the
patterns of :class:`engine.data.Patterns`, the sequences of
:class:`engine.data.Sequences` and :class:`engine.data.SeqData` (a pattern is an
item of one step)."""
from __future__ import annotations

import numpy as np

from engine.data import Patterns, SeqData, Sequences


class _Portion:
    """A worker's portion of the items, indexed 0..len−1, for ``local_steps``."""

    def __init__(self, data, portion):
        self.data, self.portion = data, portion
        self.n_patterns = len(portion)
        self.lengths = None if isinstance(data, Patterns) else data.lengths[portion]


def lengths(data) -> np.ndarray:
    """Steps per item: a pattern is one step."""
    return np.ones(data.n_patterns, dtype=np.int64) if isinstance(data, Patterns) else data.lengths


def n_items(data) -> int:
    return data.n_patterns if isinstance(data, (Patterns, _Portion)) else len(data.lengths)


def take(data, idx, pad_len: int | None = None):
    """The batch of items ``idx`` (padded to ``pad_len`` steps for sequences)."""
    if isinstance(data, Patterns):
        return data.take(idx)
    if isinstance(data, Sequences):
        return data.batch(idx, length=pad_len)
    if isinstance(data, SeqData):
        return data.batch(idx, pad_len)
    raise TypeError(f"no items in {type(data).__name__}")


def batches(data, idx, chunk: int = 0) -> list:
    """The items ``idx`` as batches: one (``chunk`` 0) or batches of at most ``chunk``
    items; sequences sorted longest first (:meth:`Sequences.batches`), so padding
    stays small (vectorised chunks of sequences)."""
    if len(idx) == 0:
        return []
    if not chunk:
        return [take(data, idx)]
    if isinstance(data, Sequences):
        return data.batches(idx, chunk=chunk)
    return [take(data, idx[k:k + chunk]) for k in range(0, len(idx), chunk)]


def share(b: int, P: int, p: int) -> slice:
    """Worker p's contiguous share of a bunch of b items (the first b % P get one more)."""
    q, r = divmod(b, P)
    lo = p * q + min(p, r)
    return slice(lo, lo + q + (p < r))
