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
    """Levenshtein distance (insertions, deletions, substitutions each cost 1)."""
    a, b = list(a), list(b)
    prev = np.arange(len(b) + 1)
    for i, ca in enumerate(a, 1):
        cur = np.empty_like(prev)
        cur[0] = i
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return int(prev[-1])


def character_error_rate(hyps, refs) -> float:
    """Σ edit distance / Σ reference length over a set of sequences."""
    refs = list(refs)
    n = sum(len(r) for r in refs)
    if n == 0:
        raise ValueError("references are empty")
    return sum(edit_distance(h, r) for h, r in zip(hyps, refs)) / n
