"""Hybrid HMM/ANN word-loop Viterbi decoder (reproduce/paper1/hmm.py): a worked example, brute
force over every word sequence and segmentation, and negative controls."""
from itertools import combinations, product

import numpy as np
import pytest

from reproduce.paper1.hmm import (WordLoop, path_score, phone_priors, scaled_log_likelihoods,
                        viterbi_word_loop, word_error_rate)


def _ab():
    return WordLoop([("a", [0]), ("b", [1])])


# Worked by hand (log_self = log_next = 0, so only emissions and the penalty count):
# frames (class 0, class 1): (0, −2), (−3, 0), (0, −2).
# "a" over all 3 frames: 0 − 3 + 0 − p = −3 − p; "a b a": 0 + 0 + 0 − 3p; "a b": −2 − 2p;
# "b" alone: −2 + 0 − 2 − p. p = 1: "a b a" = −3 beats "a" = −4; p = 2: "a" = −5 beats −6.
LL = np.array([[0.0, -2.0], [-3.0, 0.0], [0.0, -2.0]])


@pytest.mark.parametrize("p, words, score", [(0.0, ["a", "b", "a"], 0.0), (1.0, ["a", "b", "a"], -3.0),
                                             (2.0, ["a"], -5.0)])
def test_worked_example(p, words, score):
    w, s = viterbi_word_loop(LL, _ab(), insertion_penalty=p, log_self=0.0, log_next=0.0)
    assert w == words
    assert s == pytest.approx(score)


def _compositions(T, n):
    for cuts in combinations(range(1, T), n - 1):
        b = (0,) + cuts + (T,)
        yield [b[i + 1] - b[i] for i in range(n)]


def _brute(ll, loop, **kw):
    T = ll.shape[0]
    best, arg = -np.inf, None
    n_states = [loop.last[e] - loop.first[e] + 1 for e in range(len(loop.entries))]
    for L in range(1, T + 1):
        for seq in product(range(len(loop.entries)), repeat=L):
            n = sum(n_states[e] for e in seq)
            if n > T:
                continue
            for d in _compositions(T, n):
                s = path_score(ll, loop, seq, d, **kw)
                if s > best:
                    best, arg = s, seq
    return [loop.entries[e][0] for e in arg if loop.entries[e][0] is not None], best


@pytest.mark.parametrize("spp", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force(spp, seed):
    rng = np.random.default_rng(seed)
    loop = WordLoop([("x", [0]), ("y", [1, 2]), ("z", [2, 0]), (None, [3])], states_per_phone=spp)
    ll = rng.normal(0, 2, (6, 4))  # (T, K)
    for p in (0.0, 1.5):
        kw = dict(insertion_penalty=p, log_self=np.log(0.6), log_next=np.log(0.4))
        w, s = viterbi_word_loop(ll, loop, **kw)
        bw, bs = _brute(ll, loop, **kw)
        assert s == pytest.approx(bs)
        assert w == bw


def test_penalty_controls_insertions():
    """Negative control: the same frames decoded with a large penalty give fewer words."""
    rng = np.random.default_rng(5)
    ll = rng.normal(0, 1, (40, 2))
    n = [len(viterbi_word_loop(ll, _ab(), insertion_penalty=p)[0]) for p in (0.0, 5.0, 50.0)]
    assert n[0] > n[1] >= n[2] >= 1


def test_prior_changes_path():
    """Dividing by the priors matters: posteriors (0.6, 0.4) everywhere decode as "a" with
    flat priors and as "b" with priors (0.8, 0.2) (scaled likelihoods 0.75 < 2)."""
    post = np.tile([0.6, 0.4], (5, 1))
    flat = viterbi_word_loop(scaled_log_likelihoods(post, np.array([0.5, 0.5])), _ab(), insertion_penalty=1.0)
    skew = viterbi_word_loop(scaled_log_likelihoods(post, np.array([0.8, 0.2])), _ab(), insertion_penalty=1.0)
    assert flat[0] == ["a"] and skew[0] == ["b"]


def test_priors_and_scaled_likelihoods():
    pr = phone_priors([0, 0, 0, 1], 3)
    assert pr[:2] == pytest.approx([0.75, 0.25]) and pr[2] > 0  # floored, never zero
    ll = scaled_log_likelihoods(np.array([[2.0, 2.0, 0.0]]), np.array([0.5, 0.25, 0.25]))
    assert ll[0, :2] == pytest.approx([np.log(0.5 / 0.5), np.log(0.5 / 0.25)], abs=1e-6)


def test_fillers_yield_no_words_and_lexicon():
    loop = WordLoop.from_lexicon({"one": ["w ah n"], "oh": ["ow"]}, {"h#": 0, "w": 1, "ah": 2, "n": 3, "ow": 4},
                                 fillers=("h#",), states_per_phone=2)
    assert loop.phone.size == 2 * (3 + 1 + 1)
    ll = np.full((12, 5), -5.0)
    ll[0:2, 0] = ll[2:4, 1] = ll[4:6, 2] = ll[6:8, 3] = ll[8:12, 0] = 0.0
    assert viterbi_word_loop(ll, loop, insertion_penalty=1.0)[0] == ["one"]


def test_wer():
    assert word_error_rate([["a", "b"], ["c"]], [["a", "c"], ["c", "d"]]) == pytest.approx(2 / 4)
    with pytest.raises(ValueError):
        WordLoop([("a", [])])
