"""Best-path decoding and character error rate for CTC outputs (Graves et al. 2006, §3.2).

CER is a measure, beside the loss, of what training means for recognition.
"""
from __future__ import annotations

import numpy as np


def best_path(u: np.ndarray, input_lengths) -> list[list[int]]:
    """Most probable path per sequence: argmax class per step (up to its input length),
    repeats merged, blanks (class 0) removed. u is (T, B, K) outputs (logits or probabilities)."""
    k = np.argmax(u, axis=-1)  # (T, B)
    out = []
    for b, Tb in enumerate(np.asarray(input_lengths, dtype=int)):
        path = k[:Tb, b]
        keep = np.ones(len(path), dtype=bool)
        keep[1:] = path[1:] != path[:-1]
        out.append([int(c) for c in path[keep] if c != 0])
    return out


def edit_distance(a, b) -> int:
    """Levenshtein distance (insertions, deletions, substitutions each cost 1), one
    vectorised row of the dynamic programme at a time over the shorter sequence (the
    distance is symmetric). A row's recurrence cur[j] = min(t[j], cur[j−1] + 1), with
    t[j] = min(prev[j−1] + [a_i ≠ b_j], prev[j] + 1), unrolls to
    cur[j] = j + min_{j' ≤ j} (t[j'] − j'): a running minimum, exact in integers."""
    a, b = list(a), list(b)
    if len(a) > len(b):
        a, b = b, a
    bb, j = np.asarray(b), np.arange(len(b) + 1)
    prev, t = j.copy(), np.empty_like(j)
    for i, ca in enumerate(a, 1):
        t[0] = i
        np.minimum(prev[:-1] + (bb != ca), prev[1:] + 1, out=t[1:])
        t -= j
        prev = np.minimum.accumulate(t) + j
    return int(prev[-1])


def character_error_rate(hyps, refs) -> float:
    """Σ edit distance / Σ reference length over a set of sequences."""
    refs = list(refs)
    n = sum(len(r) for r in refs)
    if n == 0:
        raise ValueError("references are empty")
    return sum(edit_distance(h, r) for h, r in zip(hyps, refs)) / n
