"""Quicknet-style parallel bunch training (Färber 1997): NP and PP training MCUPS per
number of workers P and bunch size, pipelined NP against not, and bytes per pattern
with and without compressed input.

The net is bench_bunch.py's 156-1000-56 logistic MLP (its ``BunchTraining`` times
the single-process step; this suite adds the strategies around it). Data: a small
synthetic speech corpus (datasets/speech.py), 4,800 patterns timed per NP run and
3 bunches per PP run, local backend (forked processes, one BLAS thread each).

MCUPS = patterns · N_h(N_i + N_o) / wall, the wall clock of the training loop as
the workers time it (asv cannot time inside child processes), as in
reproduce/paper1/tasks.py. ``time_*`` times the whole call, fork included.
"""
from __future__ import annotations

import numpy as np

from benchmarks.bench_bunch import ACT, SIZES

NP_PATTERNS = 4800


def _corpus():
    from datasets.speech import SpeechConfig, normalize, synthesize

    c = synthesize(SpeechConfig(n_speakers=12, utts_per_speaker=12), rng=np.random.default_rng(0))
    assert c.n_frames >= max(NP_PATTERNS, 3 * 5000), c.n_frames
    normalize(c)
    return c


def _mcups(r, B: int) -> float:
    N_i, N_h, N_o = SIZES
    return r["bunches"] * B * N_h * (N_i + N_o) / r["wall"] / 1e6


def _np(corpus, P: int, B: int, pipelined: bool, compressed: bool = True) -> dict:
    from reproduce.paper1.bunch import BunchConfig
    from reproduce.paper1.network_parallel import train_network_parallel

    nb = NP_PATTERNS // B
    cfg = BunchConfig(bunch=B, lr=1e-4, pipelined=pipelined, compressed=compressed, chunk=nb * B,
                      max_bunches=nb)
    return train_network_parallel(corpus, sizes=SIZES, activation=ACT, cfg=cfg, seed=0, workers=P,
                                  backend="local")


def _pp(corpus, P: int, B: int, compressed: bool = False) -> dict:
    from reproduce.paper1.bunch import BunchConfig
    from reproduce.paper1.pattern_bunch import train_pattern_bunch

    cfg = BunchConfig(bunch=B, lr=1e-6, compressed=compressed, chunk=3 * B, max_bunches=3)
    return train_pattern_bunch(corpus, sizes=SIZES, activation=ACT, cfg=cfg, seed=0, workers=P,
                               backend="local")


class NetworkParallel:
    """NP, master on rank 0 with slave 0, compressed input."""

    params = [[1, 2], [12, 48, 96], [False, True]]
    param_names = ["P", "bunch", "pipelined"]
    timeout = 600

    def setup_cache(self):
        return _corpus()

    def time_train(self, corpus, P, B, pipelined):
        _np(corpus, P, B, pipelined)

    def track_mcups(self, corpus, P, B, pipelined):
        return _mcups(_np(corpus, P, B, pipelined), B)

    track_mcups.unit = "MCUPS"

    def track_pipelined_over_not(self, corpus, P, B, pipelined):
        """MCUPS pipelined / not, interleaved in one call (reported on the pipelined=True row)."""
        if not pipelined:
            return 1.0
        a, b = [], []
        for _ in range(3):
            a.append(_mcups(_np(corpus, P, B, True), B))
            b.append(_mcups(_np(corpus, P, B, False), B))
        return max(a) / max(b)

    track_pipelined_over_not.unit = "ratio"


class PatternParallel:
    params = [[1, 2], [1000, 5000]]
    param_names = ["P", "bunch"]
    timeout = 600

    def setup_cache(self):
        return _corpus()

    def time_train(self, corpus, P, B):
        _pp(corpus, P, B)

    def track_mcups(self, corpus, P, B):
        return _mcups(_pp(corpus, P, B), B)

    track_mcups.unit = "MCUPS"


class BytesPerPattern:
    """Bytes the master moves per pattern and slave (§2.4, §2.5), P = 2: deterministic counts."""

    params = [["NP", "PP"], [False, True]]
    param_names = ["strategy", "compressed"]
    timeout = 300

    def setup_cache(self):
        return _corpus()

    def track_bytes_per_pattern(self, corpus, strategy, compressed):
        B = 48 if strategy == "NP" else 1000
        r = _np(corpus, 2, B, True, compressed) if strategy == "NP" else _pp(corpus, 2, B, compressed)
        return float(r["log"][:, -1, 2].sum() / (r["bunches"] * B))

    track_bytes_per_pattern.unit = "bytes"
