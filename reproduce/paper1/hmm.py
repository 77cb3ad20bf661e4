"""Hybrid HMM/ANN Viterbi decoding over a word loop (Bourlard & Morgan, *Connectionist
Speech Recognition: A Hybrid Approach*, Kluwer 1994, ch. 7; Färber 1997, §3.5 and
Table 2: "the trained networks [used] in the considered ASR system").

The hybrid approach: an MLP trained on phone-labelled frames estimates the posterior
P(q | x_t) of each phone class q; dividing by the class prior P(q) gives a *scaled
likelihood* p(x_t | q) / p(x_t), which replaces the emission density of an HMM whose
states are tied to phones (:func:`scaled_log_likelihoods`, :func:`phone_priors`).

The recognition network is a loop of words (:class:`WordLoop`): each lexicon entry (a
pronunciation of a word, or a filler such as silence that yields no word) is the chain
of its phones, each phone a left-to-right HMM of ``states_per_phone`` states; every
state has a self-loop (log probability ``log_self``) and a transition to the next
state (``log_next``); leaving an entry's last state enters any entry's first state.
Entering a word costs the word insertion penalty (``insertion_penalty``, subtracted
in the log domain); fillers cost nothing. :func:`viterbi_word_loop` finds the best
path through that network by the Viterbi recursion and returns its word sequence.

Path score (what the decoder maximises, and what :func:`path_score` evaluates for
one given segmentation): the sum over frames of the state's scaled log-likelihood,
plus for each state visited for d frames (d − 1)·log_self + log_next (the last state
of the utterance exits too), minus the insertion penalty per word entry.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def phone_priors(labels, n_classes: int, *, floor: float = 1e-6) -> np.ndarray:
    """(n_classes,) relative frequencies of the training frames' labels (Bourlard &
    Morgan: the priors the net's posteriors are divided by), floored so that a class
    never seen in training does not divide by zero."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=n_classes)[:n_classes]
    p = counts / max(counts.sum(), 1)  # (n_classes,)
    return np.maximum(p, floor)


def scaled_log_likelihoods(posteriors: np.ndarray, priors: np.ndarray, *, normalize: bool = True,
                           floor: float = 1e-8) -> np.ndarray:
    """(T, K) log P(q | x_t) − log P(q). ``normalize``: rescale each frame's outputs to
    sum to 1 first (sigmoid outputs trained with squared error do not sum to 1 exactly)."""
    y = np.maximum(np.asarray(posteriors, dtype=np.float64), floor)  # (T, K)
    if normalize:
        y = y / y.sum(axis=1, keepdims=True)
    return np.log(y) - np.log(np.asarray(priors, dtype=np.float64))[None, :]


@dataclass
class WordLoop:
    """The states of a word loop. ``entries``: (word or None for a filler, phone indices)
    pairs, one per pronunciation; states are laid out entry by entry, phone by phone."""

    entries: list
    states_per_phone: int = 1
    phone: np.ndarray = field(init=False)  # (S,) the phone class of each state
    first: np.ndarray = field(init=False)  # (E,) first state of each entry
    last: np.ndarray = field(init=False)  # (E,) last state of each entry

    def __post_init__(self):
        if self.states_per_phone < 1:
            raise ValueError(f"states_per_phone must be ≥ 1, got {self.states_per_phone}")
        if not self.entries or any(len(ph) == 0 for _, ph in self.entries):
            raise ValueError("a word loop needs entries, each with at least one phone")
        ph, first, last = [], [], []
        for _, phones in self.entries:
            first.append(len(ph))
            ph += [int(p) for p in phones for _ in range(self.states_per_phone)]
            last.append(len(ph) - 1)
        self.phone, self.first, self.last = np.array(ph), np.array(first), np.array(last)

    @classmethod
    def from_lexicon(cls, lexicon: dict, phone_index: dict, *, fillers=(), states_per_phone: int = 1):
        """``lexicon``: word → list of pronunciations (space-separated phone names);
        ``fillers``: phone names that form one-phone entries yielding no word."""
        entries = [(w, [phone_index[p] for p in pron.split()]) for w, prons in lexicon.items() for pron in prons]
        entries += [(None, [phone_index[f]]) for f in fillers]
        return cls(entries, states_per_phone)

    @property
    def is_word(self) -> np.ndarray:
        return np.array([w is not None for w, _ in self.entries])


def viterbi_word_loop(loglik: np.ndarray, loop: WordLoop, *, insertion_penalty: float = 0.0,
                      log_self: float = np.log(0.5), log_next: float = np.log(0.5)) -> tuple[list, float]:
    """(best word sequence, its path score) for one utterance; ``loglik`` is (T, K)
    scaled log-likelihoods (module docstring for the score)."""
    loglik = np.asarray(loglik, dtype=np.float64)
    T = loglik.shape[0]
    if T == 0:
        return [], 0.0
    S, E = loop.phone.size, loop.first.size
    enter = np.where(loop.is_word, -float(insertion_penalty), 0.0)  # (E,) cost of entering each entry
    not_first = np.ones(S, dtype=bool)
    not_first[loop.first] = False
    # word history: node k = (entry, previous node), -1 is the empty history
    node_entry, node_prev = [], []
    delta = np.full(S, -np.inf)  # (S,) best score of a path ending in state s at time t
    hist = np.full(S, -1, dtype=np.int64)  # (S,) its word-history node
    delta[loop.first] = enter + loglik[0, loop.phone[loop.first]]
    for e in range(E):
        node_entry.append(e)
        node_prev.append(-1)
    hist[loop.first] = np.arange(E)
    for t in range(1, T):
        stay = delta + log_self  # (S,)
        move = np.full(S, -np.inf)
        move[1:] = delta[:-1] + log_next
        new = stay.copy()
        nh = hist.copy()
        take = not_first & (move > stay)
        new[take] = move[take]
        nh[1:][take[1:]] = hist[:-1][take[1:]]
        ends = delta[loop.last] + log_next  # (E,) leave each entry's last state
        b = int(np.argmax(ends))
        cand = ends[b] + enter  # (E,) enter each entry from the best word end
        win = cand > stay[loop.first]
        if win.any():
            k0 = len(node_entry)
            idx = np.flatnonzero(win)
            node_entry += idx.tolist()
            node_prev += [int(hist[loop.last[b]])] * idx.size
            new[loop.first[idx]] = cand[idx]
            nh[loop.first[idx]] = k0 + np.arange(idx.size)
        delta = new + loglik[t, loop.phone]
        hist = nh
    fin = delta[loop.last] + log_next  # (E,)
    b = int(np.argmax(fin))
    words, k = [], int(hist[loop.last[b]])
    while k >= 0:
        w = loop.entries[node_entry[k]][0]
        if w is not None:
            words.append(w)
        k = node_prev[k]
    return words[::-1], float(fin[b])


def path_score(loglik: np.ndarray, loop: WordLoop, entry_seq, durations, *, insertion_penalty: float = 0.0,
               log_self: float = np.log(0.5), log_next: float = np.log(0.5)) -> float:
    """Score of one path: entries ``entry_seq`` (indices into ``loop.entries``) with
    ``durations`` frames in each of their states in order (module docstring)."""
    states = [s for e in entry_seq for s in range(loop.first[e], loop.last[e] + 1)]
    if len(states) != len(durations) or sum(durations) != loglik.shape[0] or min(durations) < 1:
        raise ValueError("durations must give ≥ 1 frame to each state and sum to T")
    score, t = 0.0, 0
    for s, d in zip(states, durations):
        score += float(loglik[t:t + d, loop.phone[s]].sum()) + (d - 1) * log_self + log_next
        t += d
    return score - insertion_penalty * sum(loop.entries[e][0] is not None for e in entry_seq)


def word_error_rate(hyps, refs) -> float:
    """Σ word edit distance / Σ reference words: :func:`engine.decoding.character_error_rate`,
    whose edit distance takes any sequences, here of words."""
    from engine.decoding import character_error_rate

    return character_error_rate(hyps, refs)
