"""paper1's word recognition for Table 2 (Färber 1997, §3.5: "Table 2 shows the results
of using the trained networks in the considered ASR system"): the hybrid HMM/ANN
word-loop decoder of :mod:`reproduce.paper1.hmm` over the numbers lexicon of
:mod:`datasets.speech`, word error rate against each utterance's words.

Choices where the paper is silent (it names no decoder settings):
- one HMM state per phone with a self-loop, transitions 0.5 / 0.5 (``STATES_PER_PHONE``);
- fillers ``h#`` and ``pau`` (silence, pause) are one-phone entries of the loop that
  yield no word and cost no penalty; every pronunciation variant is its own entry;
- priors: relative label frequencies of the training frames; the net's sigmoid
  outputs are renormalised to sum to 1 per frame before division;
- the word insertion penalty is chosen from ``PENALTIES`` on a *dev* half of the CV
  speakers (lowest dev WER, the smallest penalty on ties) and WER is reported on the
  other half (*test* speakers), never choosing on the test numbers;
- the weights decoded are those after the last epoch.
"""
from __future__ import annotations

import numpy as np

from datasets.speech import LEXICON, N_CLASSES, PHONE_INDEX, speaker_split
from reproduce.paper1.hmm import WordLoop, phone_priors, scaled_log_likelihoods, viterbi_word_loop, word_error_rate

STATES_PER_PHONE = 1
FILLERS = ("h#", "pau")
PENALTIES = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)  # log domain, per word entered


def numbers_loop(states_per_phone: int = STATES_PER_PHONE) -> WordLoop:
    return WordLoop.from_lexicon(LEXICON, PHONE_INDEX, fillers=FILLERS, states_per_phone=states_per_phone)


def dev_test(cv, seed: int):
    """(dev, test): the CV speakers halved at random (at least one each)."""
    return speaker_split(cv, cv_fraction=0.5, rng=np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(9,))))


def utterance_scores(net, corpus, priors) -> list[np.ndarray]:
    """Scaled log-likelihoods (T_u, 56) of every utterance of ``corpus``."""
    y = net.forward(corpus.windows(np.arange(corpus.n_frames)))[0]  # (n_frames, 56)
    ll = scaled_log_likelihoods(y, priors)
    return [ll[corpus.starts[u]:corpus.starts[u + 1]] for u in range(corpus.n_utts)]


def wer_at(scores, refs, loop, penalty: float) -> float:
    hyps = [viterbi_word_loop(s, loop, insertion_penalty=penalty)[0] for s in scores]
    return word_error_rate(hyps, refs)


def table2_wer(net, train, cv, *, seed: int, penalties=PENALTIES) -> dict:
    """Dev-chosen penalty, dev WER per penalty, and test WER (fractions) of ``net``."""
    priors = phone_priors(train.labels, N_CLASSES)
    loop = numbers_loop()
    dev, test = dev_test(cv, seed)
    ds = utterance_scores(net, dev, priors)
    dev_wer = [wer_at(ds, dev.info["words"], loop, p) for p in penalties]
    best = float(penalties[int(np.argmin(dev_wer))])
    test_wer = wer_at(utterance_scores(net, test, priors), test.info["words"], loop, best)
    flat = wer_at(utterance_scores(net, test, np.full(N_CLASSES, 1.0 / N_CLASSES)), test.info["words"], loop, best)
    return {"penalty": best, "dev_wer": dev_wer, "penalties": list(penalties), "test_wer": test_wer,
            "test_wer_flat_prior": flat, "n_dev_utts": dev.n_utts, "n_test_utts": test.n_utts,
            "n_test_words": int(sum(len(w) for w in test.info["words"]))}
