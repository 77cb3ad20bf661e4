"""Data containers: what a network's ``loss_and_grad`` takes, and what datasets build.

The engine owns the containers; ``datasets/`` only generates workloads into them
(docs/engine.md). Each network of :mod:`engine.nets` takes one batch type:

* :class:`Patterns` (X, T): independent patterns, the batch of the MLP.
* :class:`Sequences`: patterns of many sequences back to back, one target per
  pattern. Its :meth:`Sequences.batch` pads some of them time-major into a
  :class:`SeqBatch`, the batch of the Elman net (and of the LSTM under a per-step loss).
* :func:`pad_batch` and :class:`SeqData`: variable-length sequences with label
  strings; :meth:`SeqData.batch` pads some of them into a :class:`CTCBatch`
  (x, mask, CTC target), the batch of the LSTM under CTC.

Padded batches are time-major: arrays (L, S, n) hold step t of S sequences and
``mask`` (L, S) is 1 where sequence s has a step t.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from engine.losses import CTCTarget


# ---- independent patterns (MLP) -------------------------------------------------------------
class Patterns(NamedTuple):
    """Input patterns and their targets; unpacks as ``X, T = patterns``."""

    X: np.ndarray  # (N, n_in)
    T: np.ndarray  # (N, n_out)

    @property
    def n_patterns(self) -> int:
        return int(self.X.shape[0])

    def take(self, idx) -> "Patterns":
        """The patterns ``idx`` (copies, in that order)."""
        return Patterns(self.X[idx], self.T[idx])


# ---- sequences with a target per pattern (Elman) --------------------------------------------
@dataclass(frozen=True)
class Sequences:
    """Patterns of many sequences back to back: sequence i is rows starts[i]:starts[i+1]."""

    X: np.ndarray  # (N, n_in)
    T: np.ndarray  # (N, n_out)
    starts: np.ndarray  # (n_seq + 1,) int, starts[0] = 0, starts[-1] = N

    def __post_init__(self):
        s = np.asarray(self.starts)
        if s[0] != 0 or s[-1] != len(self.X) or np.any(np.diff(s) < 1) or len(self.T) != len(self.X):
            raise ValueError("starts must rise strictly from 0 to the number of patterns")

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.starts)

    @property
    def n_seq(self) -> int:
        return len(self.starts) - 1

    @property
    def n_patterns(self) -> int:
        return len(self.X)

    def batch(self, ids, *, length: int | None = None) -> "SeqBatch":
        """Pad sequences ``ids`` into one time-major batch of ``length`` steps (default:
        their longest; a bucket bound pads further: one padded length per bucket, as
        :func:`engine.schedule.epoch_batches` pads)."""
        ids = np.asarray(ids, dtype=np.int64)
        lens = self.lengths[ids]
        L = int(lens.max()) if length is None else int(length)
        if lens.max() > L:
            raise ValueError(f"a sequence has {int(lens.max())} steps, more than the padded "
                             f"length {L}")
        S = len(ids)
        X = np.zeros((L, S, self.X.shape[1]))  # (L, S, n_in)
        T = np.zeros((L, S, self.T.shape[1]))  # (L, S, n_out)
        mask = np.zeros((L, S))  # (L, S)
        for j, i in enumerate(ids):
            a, b = self.starts[i], self.starts[i + 1]
            X[: b - a, j] = self.X[a:b]
            T[: b - a, j] = self.T[a:b]
            mask[: b - a, j] = 1.0
        return SeqBatch(X, T, mask, ids)

    def batches(self, ids=None, *, chunk: int = 64) -> list["SeqBatch"]:
        """The sequences ``ids`` (default all) sorted by length, cut into batches of
        at most ``chunk`` sequences, so padding is small and memory bounded."""
        ids = np.arange(self.n_seq) if ids is None else np.asarray(ids, dtype=np.int64)
        if len(ids) == 0:
            return []
        ids = ids[np.argsort(-self.lengths[ids], kind="stable")]
        return [self.batch(ids[k:k + chunk]) for k in range(0, len(ids), chunk)]


@dataclass(frozen=True)
class SeqBatch:
    """Sequences padded time-major, with a target per step; padded steps have mask 0."""

    X: np.ndarray  # (L, S, n_in)
    T: np.ndarray  # (L, S, n_out)
    mask: np.ndarray  # (L, S)
    ids: np.ndarray  # (S,) sequence numbers

    @property
    def n_patterns(self) -> int:
        return int(self.mask.sum())


# ---- sequences with a label string (LSTM + CTC) ---------------------------------------------
def pad_batch(seqs: list, *, length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stack sequences (each (l_i, n_in)) time-major into x (T, B, n_in) and mask (T, B),
    padded with zeros to ``length`` (default: the longest)."""
    T = max(len(s) for s in seqs) if length is None else int(length)
    B, n = len(seqs), seqs[0].shape[1]
    x = np.zeros((T, B, n))  # (T, B, n_in)
    mask = np.zeros((T, B))  # (T, B)
    for b, s in enumerate(seqs):
        if len(s) > T:
            raise ValueError(f"sequence {b} has {len(s)} steps, more than the padded length {T}")
        x[:len(s), b] = s
        mask[:len(s), b] = 1.0
    return x, mask


class CTCBatch(NamedTuple):
    """A padded batch and its CTC target; unpacks as ``x, mask, target = batch``."""

    X: np.ndarray  # (T, B, n_in)
    mask: np.ndarray  # (T, B)
    target: CTCTarget  # labels (B, L_max), label_lengths (B,), input_lengths (B,)


class SeqData:
    """Variable-length sequences and their label strings, as arrays a batch is cut from
    (one copy per process). Labels are class numbers 1..K−1; 0 is the CTC blank."""

    def __init__(self, seqs, labels):
        self.seqs, self.labels = seqs, labels
        self.lengths = np.array([len(s) for s in seqs], dtype=np.int64)  # (n,)
        self.label_lengths = np.array([len(z) for z in labels], dtype=np.int64)  # (n,)
        self.n_in = seqs[0].shape[1]

    def batch(self, idx: np.ndarray, pad_len: int | None = None) -> CTCBatch:
        """x (T, B, n_in), mask (T, B), CTCTarget for the sequences ``idx``, padded to
        ``pad_len`` steps (default: their longest)."""
        idx = np.asarray(idx)
        x, mask = pad_batch([self.seqs[i] for i in idx], length=pad_len)
        L = int(self.label_lengths[idx].max())
        lab = np.zeros((idx.size, L), dtype=np.int64)  # (B, L_max)
        for b, i in enumerate(idx):
            lab[b, :self.label_lengths[i]] = self.labels[i]
        return CTCBatch(x, mask, CTCTarget(lab, self.label_lengths[idx], self.lengths[idx]))
