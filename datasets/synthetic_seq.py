"""Synthetic sequence sets of the sizes of McCann & Kalman's (1994) network-partition nets.

The paper's radio-station data (digital audio of classical, talk and rock-and-roll
stations, a (240+10)-10-3 net) and natural-language parsing data (a (34+24)-24-39
net) are not available. Figs 2–3 time only the §2.1 derivative loop, whose cost
depends on the net's sizes and the number of patterns, not on the values, so
stand-in data of the right shapes serves (our choice of counts and lengths):

* ``radio``: each sequence is one station: 240 inputs uniform in [−1, 1] around a
  class-dependent mean, target the station's class one-hot in ±1 (3 outputs).
* ``parsing``: each sequence is a sentence of one-hot words over 34 inputs,
  39 targets ±1 drawn per pattern.
"""
from __future__ import annotations

import numpy as np

from engine.data import Sequences

NETS = {  # name: (n_in, n_feedback = n_hidden, n_hidden, n_out), §3.1
    "radio": (240, 10, 10, 3),
    "parsing": (34, 24, 24, 39),
}


def sequences(name: str, rng: np.random.Generator, *, n_seq: int = 16, min_len: int = 8,
              max_len: int = 24) -> Sequences:
    """``n_seq`` sequences with lengths uniform in [min_len, max_len]."""
    if name not in NETS:
        raise ValueError(f"unknown net {name!r}; known: {', '.join(NETS)}")
    n_in, _, _, n_out = NETS[name]
    lens = rng.integers(min_len, max_len + 1, size=n_seq)
    N = int(lens.sum())
    if name == "radio":
        cls = rng.integers(0, n_out, size=n_seq)
        means = rng.uniform(-0.5, 0.5, size=(n_out, n_in))
        X = np.concatenate([np.clip(means[c] + rng.uniform(-0.5, 0.5, size=(l, n_in)), -1, 1)
                            for c, l in zip(cls, lens)])  # (N, 240)
        T = np.concatenate([np.tile(np.where(np.arange(n_out) == c, 1.0, -1.0), (l, 1))
                            for c, l in zip(cls, lens)])  # (N, 3)
    else:
        X = np.eye(n_in)[rng.integers(0, n_in, size=N)]  # (N, 34)
        T = rng.choice([-1.0, 1.0], size=(N, n_out))  # (N, 39)
    return Sequences(X, T, np.concatenate([[0], np.cumsum(lens)]))
