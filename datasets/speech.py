"""Synthetic phone-labelled acoustic frames for a connected-numbers task
(Färber 1997: the numbers95 corpus behind Table 2, 56 phone classes, 9-frame
input windows of §2.4).

The real numbers95 features are not redistributable, so this module *builds*
a corpus in their spirit, and loads real features from an ``.npz`` when a user
has them (:func:`load_npz`).

What is synthesised (:func:`synthesize`):

- **Utterances** are strings of 1–7 number words ("five", "oh", "twenty",
  "hundred", ...) from :data:`LEXICON`, each word a string of phones from
  :data:`PHONES`, with leading/trailing silence ``h#`` and optional pauses.
- **56 classes**: the TIMIT 61-phone set without ``ax-h, eng, hv, nx, q``;
  stops are closure + release (``tcl t``). The paper does not list its 56
  classes; this is our choice. Not every class occurs in number words
  (:func:`class_coverage` says which do).
- **Durations** per phone class (gamma distributed around a class mean),
  scaled by a per-utterance speaking rate.
- **Acoustics**: 13 static coefficients a frame (12 cepstra + log energy, the
  layout of PLP features). Each phone has a target vector (fixed by
  :data:`PHONE_SEED`, the same for every corpus). The target track of an
  utterance is smoothed by a triangular kernel across phone boundaries
  (**coarticulation**: frames near a boundary are blends of both phones),
  then transformed per **speaker** (a near-identity linear map plus an
  offset), shifted by a per-utterance **channel** offset (a convolutional
  channel is additive in the cepstral domain) and given white **noise** whose
  level varies per utterance.
- **Labels**: the phone whose segment holds the frame; the words of each
  utterance are kept in ``info["words"]`` (the references of word error rate).

Each frame's input pattern is a 9-frame window of 156 values (§2.4), clamped at
utterance boundaries: :class:`FrameCorpus` and :func:`windows_from_frames` (which a
Quicknet slave calls to build the windows itself from compressed input,
reproduce/paper1/bunch.py).

The cross-validation split is by speaker (:func:`speaker_split`): no speaker
of the CV set is heard in training.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


# ---- acoustic frames and their 9-frame windows (Quicknet, Färber 1997 §2.4) ----------------------
# §2.4 says a window of nine 10 ms frames, Table 2 says 156 inputs; 156 is not a
# multiple of 9, and the paper does not say how. Ours: the 13 statics of all 9 frames
# (117) plus the 13 deltas of the 3 centre frames (39), delta(t) = (c(t+1) − c(t−1))/2.
# The deltas are a function of the statics inside the window, so a slave that holds a
# chunk of 13-value frames builds the whole 156-value window itself (compressed input,
# §2.4). Windows are clamped at utterance boundaries (edge frames repeated).
N_STATIC = 13  # 12 cepstra + log energy per 10 ms frame
CONTEXT = 9  # §2.4: "typically nine 10ms frames wide"
HALF = CONTEXT // 2
DELTA_FRAMES = 3  # deltas of the centre 3 frames
N_INPUTS = CONTEXT * N_STATIC + DELTA_FRAMES * N_STATIC  # 117 + 39 = 156


@dataclass
class FrameCorpus:
    """Frames of many utterances, concatenated, with a class label per frame.

    frames (n, 13) float64, labels (n,) int64 in 0..n_classes−1, starts
    (n_utt + 1,) int64 utterance offsets (starts[0] = 0, starts[-1] = n),
    speakers (n_utt,) int64.
    """

    frames: np.ndarray
    labels: np.ndarray
    starts: np.ndarray
    speakers: np.ndarray
    n_classes: int
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self._ctx = None

    @property
    def n_frames(self) -> int:
        return int(self.frames.shape[0])

    @property
    def n_utts(self) -> int:
        return int(self.starts.size - 1)

    @property
    def ctx(self) -> np.ndarray:
        """(n, 9) frame indices of every frame's window, clamped to its utterance."""
        if self._ctx is None:
            self._ctx = context_index(self.starts)
        return self._ctx

    def windows(self, idx: np.ndarray) -> np.ndarray:
        """The 156-value input patterns of the frames ``idx`` (:func:`windows_from_frames`)."""
        return windows_from_frames(self.frames, self.ctx[idx])

    def targets(self, idx: np.ndarray, *, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """One-of-n_classes targets (len(idx), n_classes) with ``low``/``high`` at the
        output's asymptotes."""
        T = np.full((len(idx), self.n_classes), low)  # (B, n_classes)
        T[np.arange(len(idx)), self.labels[idx]] = high
        return T

    def subset(self, utts: np.ndarray):
        """The utterances ``utts`` (indices, in that order) as a new corpus of this type."""
        utts = np.asarray(utts, dtype=np.int64)
        lens = np.diff(self.starts)[utts]
        rows = np.concatenate([np.arange(self.starts[u], self.starts[u + 1]) for u in utts]) \
            if utts.size else np.zeros(0, np.int64)
        starts = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        return type(self)(self.frames[rows], self.labels[rows], starts, self.speakers[utts],
                          self.n_classes, dict(self.info))


def context_index(starts: np.ndarray) -> np.ndarray:
    """(n, 9) indices t−4..t+4 of every frame t, clamped into t's own utterance."""
    starts = np.asarray(starts, dtype=np.int64)
    n = int(starts[-1])
    lens = np.diff(starts)
    lo = np.repeat(starts[:-1], lens)  # (n,) first frame of each frame's utterance
    hi = np.repeat(starts[1:] - 1, lens)  # (n,) last frame
    t = np.arange(n)[:, None] + np.arange(-HALF, HALF + 1)[None, :]  # (n, 9)
    return np.clip(t, lo[:, None], hi[:, None])


def windows_from_frames(frames: np.ndarray, ctx_rows: np.ndarray) -> np.ndarray:
    """Build (B, 156) patterns from frames and (B, 9) window row indices into ``frames``.

    Values 0..116: the 13 statics of the 9 frames, oldest first; 117..155: the
    deltas (c(t+1) − c(t−1))/2 of the frames at window positions 3, 4, 5.
    """
    S = frames[ctx_rows]  # (B, 9, 13)
    B = S.shape[0]
    c = HALF  # centre position 4; the deltas at positions 3, 4, 5 use positions 2..6
    D = 0.5 * (S[:, c:c + 3] - S[:, c - 2:c + 1])  # (B, 3, 13): position j: S[j+1] − S[j−1]
    return np.concatenate([S.reshape(B, -1), D.reshape(B, -1)], axis=1)  # (B, 156)

# ---- the phone set and lexicon ---------------------------------------------------------
PHONES = (
    "h#",  # silence: class 0
    "iy", "ih", "eh", "ey", "ae", "aa", "aw", "ay", "ah", "ao", "oy", "ow", "uh", "uw", "ux", "er",
    "ax", "ix", "axr",  # vowels (19)
    "l", "r", "w", "y", "el", "hh",  # semivowels, glides (6)
    "m", "n", "ng", "en", "em",  # nasals (5)
    "s", "sh", "z", "zh", "f", "th", "v", "dh", "jh", "ch",  # fricatives, affricates (10)
    "b", "d", "g", "p", "t", "k",  # stop releases (6)
    "bcl", "dcl", "gcl", "pcl", "tcl", "kcl",  # stop closures (6)
    "dx", "epi", "pau",  # flap, epenthetic silence, pause
)
N_CLASSES = len(PHONES)  # 56
SILENCE = 0
PHONE_INDEX = {p: i for i, p in enumerate(PHONES)}

# Number words of a numbers95-like task (digits, teens, tens, "hundred", ...), with
# pronunciation variants. Stops are closure + release.
LEXICON = {
    "zero": ["z ih r ow", "z iy r ow"], "oh": ["ow"], "one": ["w ah n"],
    "two": ["tcl t uw", "tcl t ux"], "three": ["th r iy"], "four": ["f ao r", "f ow r"],
    "five": ["f ay v"], "six": ["s ih kcl k s"], "seven": ["s eh v ax n", "s eh v en"],
    "eight": ["ey tcl t", "ey dx"], "nine": ["n ay n"], "ten": ["tcl t eh n"],
    "eleven": ["ix l eh v ax n", "iy l eh v en"], "twelve": ["tcl t w eh l v"],
    "thirteen": ["th er tcl t iy n"], "fifteen": ["f ih f tcl t iy n"],
    "twenty": ["tcl t w eh n dx iy", "tcl t w eh n iy"], "thirty": ["th er dx iy"],
    "forty": ["f ao r dx iy"], "fifty": ["f ih f tcl t iy"],
    "hundred": ["hh ah n dcl d r ix dcl d", "hh ah n dcl d axr dcl d"],
    "thousand": ["th aw z en dcl d", "th aw z ax n dcl d"], "and": ["ae n dcl d", "en"],
    "point": ["pcl p oy n tcl t"], "dollars": ["dcl d aa l axr z"],
    "cents": ["s eh n tcl t s"], "first": ["f er s epi tcl t"],
    "second": ["s eh kcl k ax n dcl d"], "the": ["dh ax", "dh iy"],
    "number": ["n ah m bcl b axr"], "june": ["dcl jh uw n"], "check": ["tcl ch eh kcl k"],
    "box": ["bcl b aa kcl k s"], "zip": ["z ih pcl p"], "code": ["kcl k ow dcl d"],
    "good": ["gcl g uh dcl d"], "should": ["sh uh dcl d"], "usual": ["y uw zh uw el"],
    "eighth": ["ey tcl t th"], "sixth": ["s ih kcl k s th"], "something": ["s ah em th ix ng"],
}
DIGITS = ("zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

# ---- the acoustics --------------------------------------------------------------------
PHONE_SEED = 19970  # fixes the phone targets: every corpus shares the same acoustics


def class_coverage() -> tuple[int, list[str]]:
    """(number of the 56 classes that occur in the lexicon or as silence/pause, missing names)."""
    used = {"h#", "pau"}
    for prons in LEXICON.values():
        for p in prons:
            used.update(p.split())
    unknown = used - set(PHONES)
    if unknown:
        raise ValueError(f"lexicon uses phones outside PHONES: {sorted(unknown)}")
    return len(used), [p for p in PHONES if p not in used]


# ---- the corpus container ---------------------------------------------------------------
@dataclass
class SpeechCorpus(FrameCorpus):
    """A :class:`FrameCorpus` whose labels are the 56 phone classes of
    :data:`PHONES` unless told otherwise."""

    n_classes: int = N_CLASSES

    def subset(self, utts: np.ndarray):
        """As :meth:`FrameCorpus.subset`, carrying the word transcripts
        (``info["words"]``, one tuple per utterance) of the chosen utterances."""
        out = super().subset(utts)
        w = self.info.get("words")
        if w is not None and len(w) == self.n_utts:
            out.info["words"] = [w[int(u)] for u in np.asarray(utts, dtype=np.int64)]
        return out


# ---- synthesis ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SpeechConfig:
    n_speakers: int = 40
    utts_per_speaker: int = 10
    words: tuple = (1, 7)  # words per utterance, inclusive
    p_digit: float = 0.7  # share of words drawn from the eleven digit words
    p_pause: float = 0.15  # chance of a pause between two words
    rate: tuple = (0.8, 1.25)  # speaking-rate factor range (durations scale with 1/rate)
    coart: int = 5  # triangular coarticulation kernel width (frames, odd)
    speaker_scale: float = 0.15  # spread of the speaker's linear map around the identity
    speaker_offset: float = 0.5
    channel: float = 0.4  # spread of the per-utterance cepstral offset
    noise: tuple = (0.4, 1.0)  # per-utterance noise standard deviation range
    target_jitter: float = 0.3  # per-occurrence spread of a phone's target


# Mean duration in 10 ms frames per broad class.
_DUR = {"vowel": 9.0, "glide": 6.0, "nasal": 6.0, "fric": 9.0, "stop": 2.5, "closure": 5.0,
        "flap": 2.0, "epi": 2.0, "pau": 12.0, "h#": 15.0}


def _broad(p: str) -> str:
    i = PHONE_INDEX[p]
    if p in ("h#", "pau", "epi"):
        return p
    if p == "dx":
        return "flap"
    if 1 <= i <= 19:
        return "vowel"
    if 20 <= i <= 25:
        return "glide"
    if 26 <= i <= 30:
        return "nasal"
    if 31 <= i <= 40:
        return "fric"
    if 41 <= i <= 46:
        return "stop"
    return "closure"


def phone_targets() -> np.ndarray:
    """(56, 13) target vectors: a broad-class centroid plus a phone-specific offset, so
    phones of one class are closer to each other (confusable) than to other classes.
    Coefficient 0 is the log energy: silence and closures are quiet."""
    rng = np.random.default_rng(PHONE_SEED)
    classes = sorted(set(_broad(p) for p in PHONES))
    centroid = {c: rng.normal(0, 1.5, N_STATIC) for c in classes}  # (13,) each
    energy = {"vowel": 3.0, "glide": 2.0, "nasal": 1.5, "fric": 1.0, "stop": 1.0, "closure": -1.5,
              "flap": 1.0, "epi": -2.0, "pau": -3.0, "h#": -3.5}
    M = np.empty((N_CLASSES, N_STATIC))  # (56, 13)
    for i, p in enumerate(PHONES):
        c = _broad(p)
        M[i] = centroid[c] + rng.normal(0, 1.0, N_STATIC)
        M[i, 0] = energy[c] + rng.normal(0, 0.3)
    return M


def _utterance_phones(cfg: SpeechConfig, rng: np.random.Generator) -> list[int]:
    return _utterance(cfg, rng)[0]


def _utterance(cfg: SpeechConfig, rng: np.random.Generator) -> tuple[list[int], tuple]:
    """(phone classes with silences and pauses, the words spoken)."""
    words = list(LEXICON)
    others = [w for w in words if w not in DIGITS]
    n = int(rng.integers(cfg.words[0], cfg.words[1] + 1))
    seq, spoken = [SILENCE], []
    for k in range(n):
        w = DIGITS[rng.integers(len(DIGITS))] if rng.random() < cfg.p_digit else \
            others[rng.integers(len(others))]
        spoken.append(w)
        prons = LEXICON[w]
        seq += [PHONE_INDEX[p] for p in prons[rng.integers(len(prons))].split()]
        if k < n - 1 and rng.random() < cfg.p_pause:
            seq.append(PHONE_INDEX["pau"])
    seq.append(SILENCE)
    return seq, tuple(spoken)


def synthesize(cfg: SpeechConfig = SpeechConfig(), *, rng: np.random.Generator) -> SpeechCorpus:
    """Build a corpus of ``n_speakers × utts_per_speaker`` utterances (module docstring)."""
    M = phone_targets()  # (56, 13)
    mean_dur = np.array([_DUR[_broad(p)] for p in PHONES])  # (56,)
    kernel = np.bartlett(cfg.coart + 2)[1:-1]
    kernel /= kernel.sum()  # (coart,) triangular, sums to 1
    frames, labels, lens, spk, said = [], [], [], [], []
    for s in range(cfg.n_speakers):
        A = np.eye(N_STATIC) + rng.normal(0, cfg.speaker_scale / np.sqrt(N_STATIC),
                                          (N_STATIC, N_STATIC))  # (13, 13)
        b = rng.normal(0, cfg.speaker_offset, N_STATIC)  # (13,)
        for _ in range(cfg.utts_per_speaker):
            seq, spoken = _utterance(cfg, rng)
            ph = np.array(seq)  # (n_phones,)
            said.append(spoken)
            rate = rng.uniform(*cfg.rate)
            d = np.maximum(1, np.rint(rng.gamma(4.0, mean_dur[ph] / (4.0 * rate)))).astype(int)
            lab = np.repeat(ph, d)  # (T,)
            tgt = M[ph] + rng.normal(0, cfg.target_jitter, (ph.size, N_STATIC))  # (n_phones, 13)
            track = np.repeat(tgt, d, axis=0)  # (T, 13) piecewise-constant targets
            pad = cfg.coart // 2
            padded = np.pad(track, ((pad, pad), (0, 0)), mode="edge")
            smooth = np.stack([np.convolve(padded[:, j], kernel, mode="valid")
                               for j in range(N_STATIC)], axis=1)  # (T, 13) coarticulation
            x = smooth @ A.T + b + rng.normal(0, cfg.channel, N_STATIC)  # speaker, channel
            x += rng.normal(0, rng.uniform(*cfg.noise), x.shape)  # noise
            frames.append(x)
            labels.append(lab)
            lens.append(lab.size)
            spk.append(s)
    starts = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return SpeechCorpus(np.concatenate(frames), np.concatenate(labels).astype(np.int64), starts,
                        np.asarray(spk, dtype=np.int64), info={"synthetic": True, "config": cfg, "words": said})


def speaker_split(corpus: SpeechCorpus, *, cv_fraction: float = 0.2,
                  rng: np.random.Generator) -> tuple[SpeechCorpus, SpeechCorpus]:
    """(train, cv): a random ``cv_fraction`` of the speakers (at least one) go to CV."""
    if not 0 < cv_fraction < 1:
        raise ValueError(f"cv_fraction must be in (0, 1), got {cv_fraction}")
    spk = np.unique(corpus.speakers)
    if spk.size < 2:
        raise ValueError("a speaker split needs at least two speakers")
    n_cv = min(spk.size - 1, max(1, int(round(cv_fraction * spk.size))))
    cv_spk = rng.choice(spk, n_cv, replace=False)
    is_cv = np.isin(corpus.speakers, cv_spk)
    return corpus.subset(np.flatnonzero(~is_cv)), corpus.subset(np.flatnonzero(is_cv))


def normalize(train: SpeechCorpus, *others: SpeechCorpus) -> None:
    """Scale every coefficient to zero mean, unit variance with the *training* set's
    statistics, in place (Quicknet normalises its input features the same way)."""
    mu = train.frames.mean(axis=0)  # (13,)
    sd = train.frames.std(axis=0) + 1e-12  # (13,)
    for c in (train, *others):
        c.frames -= mu
        c.frames /= sd
        c.info["normalized_with"] = {"mean": mu.tolist(), "std": sd.tolist()}


# ---- real features from an .npz ---------------------------------------------------------
NPZ_FIELDS = {"frames": "(n_frames, 13) float per-frame features",
              "labels": "(n_frames,) integer phone class in 0..n_classes-1",
              "starts": "(n_utts + 1,) integer utterance offsets, 0 first and n_frames last",
              "speakers": "(n_utts,) integer speaker id (optional; default: one per utterance)"}


def save_npz(corpus: SpeechCorpus, path) -> None:
    np.savez(path, frames=corpus.frames, labels=corpus.labels, starts=corpus.starts,
             speakers=corpus.speakers)


def load_npz(path, *, n_classes: int = N_CLASSES) -> SpeechCorpus:
    """Load real features: fields ``frames``, ``labels``, ``starts`` and optionally
    ``speakers`` (:data:`NPZ_FIELDS`). Raises ValueError naming the offending field."""
    path = Path(path)
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable .npz file ({e})") from None

    def bad(name, why):
        return ValueError(f"{path}: field {name!r} {why}; expected {NPZ_FIELDS[name]}")

    for name in ("frames", "labels", "starts"):
        if name not in z.files:
            raise ValueError(f"{path}: missing field {name!r} ({NPZ_FIELDS[name]}); "
                             f"found {sorted(z.files)}")
    frames, labels, starts = z["frames"], z["labels"], z["starts"]
    if frames.ndim != 2 or frames.shape[1] != N_STATIC:
        raise bad("frames", f"has shape {frames.shape}")
    if not np.issubdtype(frames.dtype, np.floating) or not np.isfinite(frames).all():
        raise bad("frames", f"must be finite floats, got dtype {frames.dtype}")
    n = frames.shape[0]
    if labels.shape != (n,) or not np.issubdtype(labels.dtype, np.integer):
        raise bad("labels", f"has shape {labels.shape} and dtype {labels.dtype} (n_frames = {n})")
    if n and (labels.min() < 0 or labels.max() >= n_classes):
        raise bad("labels", f"has values in {labels.min()}..{labels.max()}")
    if starts.ndim != 1 or starts.size < 2 or not np.issubdtype(starts.dtype, np.integer):
        raise bad("starts", f"has shape {starts.shape} and dtype {starts.dtype}")
    if starts[0] != 0 or starts[-1] != n or np.any(np.diff(starts) <= 0):
        raise bad("starts", f"must rise strictly from 0 to n_frames = {n}, got "
                            f"{starts[0]}..{starts[-1]}")
    if "speakers" in z.files:
        speakers = z["speakers"]
        if speakers.shape != (starts.size - 1,) or not np.issubdtype(speakers.dtype, np.integer):
            raise bad("speakers", f"has shape {speakers.shape} and dtype {speakers.dtype} "
                                  f"(n_utts = {starts.size - 1})")
    else:
        speakers = np.arange(starts.size - 1)
    return SpeechCorpus(frames.astype(np.float64), labels.astype(np.int64), starts.astype(np.int64),
                        speakers.astype(np.int64), n_classes, {"synthetic": False, "path": str(path)})
