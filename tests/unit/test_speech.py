"""datasets/speech.py: the 156-value windows worked by hand, the synthetic corpus's
structure (boundaries, coarticulation, speaker split) and the .npz loader's errors."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from datasets import speech as S


def _toy():
    """Two utterances of 3 and 6 frames; frame t has every coefficient equal to t·(1 + j/100)."""
    n = 9
    frames = np.arange(n, dtype=float)[:, None] * (1 + np.arange(S.N_STATIC) / 100)[None]  # (9, 13)
    return S.SpeechCorpus(frames, np.zeros(n, np.int64), np.array([0, 3, 9]), np.array([0, 1]))


def test_156_inputs_from_a_9_frame_window():
    assert S.N_INPUTS == 156 == 9 * 13 + 3 * 13
    assert S.N_CLASSES == 56 and S.PHONES[S.SILENCE] == "h#"
    assert len(set(S.PHONES)) == 56


def test_window_worked_by_hand():
    c = _toy()
    # Frame 1 of utterance 0 (frames 0..2): t−4..t+4 = −3..5 clamped into 0..2.
    assert c.ctx[1].tolist() == [0, 0, 0, 0, 1, 2, 2, 2, 2]
    # Frame 4 of utterance 1 (frames 3..8): 0..8 clamped into 3..8.
    assert c.ctx[4].tolist() == [3, 3, 3, 3, 4, 5, 6, 7, 8]
    x = c.windows(np.array([4]))[0]  # (156,)
    scale = 1 + np.arange(13) / 100
    want_static = np.concatenate([k * scale for k in [3, 3, 3, 3, 4, 5, 6, 7, 8]])
    np.testing.assert_allclose(x[:117], want_static)
    # deltas at window positions 3, 4, 5: (c[pos+1] − c[pos−1])/2 = (4−3)/2, (5−3)/2, (6−4)/2
    np.testing.assert_allclose(x[117:], np.concatenate([0.5 * scale, 1.0 * scale, 1.0 * scale]))


def test_windows_never_cross_an_utterance():
    c = S.synthesize(S.SpeechConfig(n_speakers=3, utts_per_speaker=2), rng=np.random.default_rng(0))
    utt = np.repeat(np.arange(c.n_utts), np.diff(c.starts))  # (n,)
    assert (utt[c.ctx] == utt[:, None]).all()
    assert c.ctx[:, 4].tolist() == list(range(c.n_frames))


def test_synthesis_is_seeded_and_labelled():
    cfg = S.SpeechConfig(n_speakers=2, utts_per_speaker=3)
    a = S.synthesize(cfg, rng=np.random.default_rng(5))
    b = S.synthesize(cfg, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.frames, b.frames)
    assert a.labels.min() >= 0 and a.labels.max() < 56
    assert a.starts[0] == 0 and a.starts[-1] == a.n_frames and (np.diff(a.starts) > 0).all()
    # every utterance starts and ends in silence
    assert (a.labels[a.starts[:-1]] == S.SILENCE).all() and (a.labels[a.starts[1:] - 1] == S.SILENCE).all()


def test_coarticulation_blends_only_near_boundaries():
    """With speaker, channel, noise and jitter switched off a frame deep inside a phone
    is its phone's target, and the frame just after a boundary is a blend."""
    cfg = replace(S.SpeechConfig(n_speakers=1, utts_per_speaker=4), speaker_scale=0, speaker_offset=0,
                  channel=0, noise=(0.0, 0.0), target_jitter=0)
    c = S.synthesize(cfg, rng=np.random.default_rng(1))
    M = S.phone_targets()
    half = cfg.coart // 2
    lab = c.labels
    deep = [t for t in range(half, c.n_frames - half) if (lab[t - half:t + half + 1] == lab[t]).all()]
    assert deep
    np.testing.assert_allclose(c.frames[deep], M[lab[deep]], atol=1e-12)
    edge = [t for t in range(1, c.n_frames) if lab[t] != lab[t - 1] and
            t < c.n_frames - half and (lab[t:t + half + 1] == lab[t]).all()]
    assert edge
    d = np.abs(c.frames[edge] - M[lab[edge]]).max(axis=1)
    assert (d > 1e-3).all()


def test_speaker_split_is_disjoint_and_complete():
    c = S.synthesize(S.SpeechConfig(n_speakers=10, utts_per_speaker=2), rng=np.random.default_rng(2))
    tr, cv = S.speaker_split(c, cv_fraction=0.3, rng=np.random.default_rng(3))
    assert set(tr.speakers).isdisjoint(cv.speakers)
    assert len(set(cv.speakers)) == 3
    assert tr.n_frames + cv.n_frames == c.n_frames and tr.n_utts + cv.n_utts == c.n_utts
    with pytest.raises(ValueError, match="cv_fraction"):
        S.speaker_split(c, cv_fraction=1.0, rng=np.random.default_rng(0))


def test_npz_roundtrip(tmp_path):
    c = S.synthesize(S.SpeechConfig(n_speakers=2, utts_per_speaker=2), rng=np.random.default_rng(4))
    S.save_npz(c, tmp_path / "c.npz")
    d = S.load_npz(tmp_path / "c.npz")
    np.testing.assert_array_equal(d.frames, c.frames)
    np.testing.assert_array_equal(d.windows(np.arange(5)), c.windows(np.arange(5)))


def _write(path, **fields):
    np.savez(path, **fields)
    return path


GOOD = dict(frames=np.zeros((5, 13)), labels=np.zeros(5, np.int64), starts=np.array([0, 2, 5]))


@pytest.mark.parametrize("change, needle", [
    ({"frames": None}, "missing field 'frames'"),
    ({"labels": None}, "missing field 'labels'"),
    ({"frames": np.zeros((5, 12))}, "field 'frames' has shape (5, 12)"),
    ({"frames": np.full((5, 13), np.nan)}, "field 'frames' must be finite floats"),
    ({"labels": np.zeros(4, np.int64)}, "field 'labels' has shape (4,)"),
    ({"labels": np.array([0, 1, 2, 56, 0])}, "field 'labels' has values in 0..56"),
    ({"labels": np.zeros(5)}, "field 'labels' has shape (5,) and dtype float64"),
    ({"starts": np.array([0, 3, 4])}, "field 'starts' must rise strictly from 0 to n_frames = 5"),
    ({"starts": np.array([1, 5])}, "field 'starts' must rise strictly"),
    ({"speakers": np.zeros(3, np.int64)}, "field 'speakers' has shape (3,)"),
])
def test_npz_errors_name_the_field(tmp_path, change, needle):
    fields = {**GOOD, **change}
    fields = {k: v for k, v in fields.items() if v is not None}
    p = _write(tmp_path / "bad.npz", **fields)
    with pytest.raises(ValueError) as e:
        S.load_npz(p)
    assert needle in str(e.value)


def test_npz_not_a_file(tmp_path):
    p = tmp_path / "x.npz"
    p.write_text("not a zip")
    with pytest.raises(ValueError, match="not a readable .npz"):
        S.load_npz(p)
