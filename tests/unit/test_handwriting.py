"""paper2 §IV.A data: Hershey-font pen trajectories of real words, per-writer style, 5% validation."""
from __future__ import annotations

import numpy as np
import scipy.stats

from datasets.handwriting import (ALPHABET, N_CLASSES, decode, encode, handwriting, min_ctc_steps,
                                  word_list)


def test_samples_labels_split_and_determinism():
    d = handwriting(120, seed=4)
    assert len(d.seqs) == 120 and len(d.val) == 6  # 5 % held out
    assert set(d.train).isdisjoint(d.val) and len(d.train) + len(d.val) == 120
    for x, z, text in zip(d.seqs, d.labels, d.texts):
        assert x.ndim == 2 and x.shape[1] == 3 and x.dtype == np.float64
        assert set(np.unique(x[:, 2])) <= {0.0, 1.0} and x[0, 2] == 0.0
        assert decode(z) == text and z.min() >= 1 and z.max() < N_CLASSES
        assert len(x) >= min_ctc_steps(z)
        assert all(w in word_list() for w in text.split(" "))
    e = handwriting(120, seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(d.seqs, e.seqs)) and d.texts == e.texts
    assert handwriting(120, seed=5).texts != d.texts


def test_writers_differ_and_lengths_are_wide_and_skewed():
    d = handwriting(400, seed=2)
    l = d.lengths
    assert scipy.stats.skew(l) > 1.0  # long right tail
    assert np.percentile(l, 99) / np.median(l) > 4
    # the same text by two writers differs in length and shape
    from datasets.handwriting import make_writers, render

    rng = np.random.default_rng(0)
    w = make_writers(2, rng)
    a, b = render("hello", w[0], rng), render("hello", w[1], rng)
    assert len(a) != len(b) or not np.allclose(a, b)


def test_encode_decode_and_word_list():
    assert decode(encode("a zebra")) == "a zebra" and encode(" ")[0] == 1
    assert len(ALPHABET) + 1 == N_CLASSES
    words = word_list()
    assert len(words) > 50_000 and "house" in words
