"""paper1's Table 2 decoding (reproduce/paper1/decode.py) on the synthetic numbers corpus:
the transcripts agree with the phone labels, oracle posteriors decode to the words
spoken, and posteriors of the wrong utterance do not (negative control)."""
import numpy as np

from datasets.speech import LEXICON, PHONE_INDEX, N_CLASSES, SpeechConfig, speaker_split, synthesize
from reproduce.paper1.hmm import phone_priors, scaled_log_likelihoods, viterbi_word_loop, word_error_rate
from reproduce.paper1.decode import numbers_loop

FILL = {PHONE_INDEX["h#"], PHONE_INDEX["pau"]}


def _corpus():
    return synthesize(SpeechConfig(n_speakers=4, utts_per_speaker=3), rng=np.random.default_rng(3))


def _collapse(seq):
    return [p for i, p in enumerate(seq) if i == 0 or p != seq[i - 1]]


def _strings(words):
    """Every phone string (as a list of phone lists per word) the words can be spoken as."""
    out = [[]]
    for w in words:
        out = [a + [[PHONE_INDEX[p] for p in pr.split()]] for a in out for pr in LEXICON[w]]
    return out


def _labels(c, u):
    return _collapse([int(p) for p in _collapse(list(c.labels[c.starts[u]:c.starts[u + 1]])) if p not in FILL])


def _parses(words, lab):
    return any(_collapse(sum(a, [])) == lab for a in _strings(words))


def test_words_match_labels_and_survive_split():
    c = _corpus()
    assert len(c.info["words"]) == c.n_utts
    for u in range(c.n_utts):  # some pronunciation of the words gives the labels' phone string
        assert _parses(c.info["words"][u], _labels(c, u))
    tr, cv = speaker_split(c, rng=np.random.default_rng(0))
    u = int(np.flatnonzero(np.isin(c.speakers, cv.speakers))[0])
    assert cv.info["words"][0] == c.info["words"][u]


def _oracle(c):
    post = np.full((c.n_frames, N_CLASSES), 1e-6)  # (n_frames, 56) near-one-hot
    post[np.arange(c.n_frames), c.labels] = 1.0
    return scaled_log_likelihoods(post, phone_priors(c.labels, N_CLASSES))


def test_oracle_posteriors_decode_to_the_words():
    c = _corpus()
    ll, loop = _oracle(c), numbers_loop()
    hyps = [viterbi_word_loop(ll[c.starts[u]:c.starts[u + 1]], loop, insertion_penalty=2.0)[0]
            for u in range(c.n_utts)]
    for u, h in enumerate(hyps):
        ref = c.info["words"][u]
        assert _parses(h, _labels(c, u))  # always a reading of the frames' phones
        # exact unless a word ends with the phone the next begins with ("zero oh": the
        # labels merge "ow ow" into one segment, which one word explains at less penalty)
        if not any(a[i][-1] == a[i + 1][0] for a in _strings(ref) for i in range(len(a) - 1)):
            assert h == list(ref)


def test_wrong_utterance_posteriors_fail():
    """Negative control: each utterance decoded from the next one's oracle frames."""
    c = _corpus()
    ll, loop = _oracle(c), numbers_loop()
    hyps = [viterbi_word_loop(ll[c.starts[v]:c.starts[v + 1]], loop, insertion_penalty=2.0)[0]
            for v in np.roll(np.arange(c.n_utts), 1)]
    assert word_error_rate(hyps, c.info["words"]) > 0.5
