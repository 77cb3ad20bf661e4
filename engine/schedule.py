"""Which worker owns which work: static schedules of nodes and jobs onto workers.

Linear data distribution (Hlynsson & Schmitz 2016, §3)
------------------------------------------------------
The N(l) nodes of layer l are split over P processors in contiguous blocks;
the first R_l = N(l) mod P processors get one node more than the others::

    K_l = ⌊N(l) / P⌋,   R_l = N(l) mod P
    μ_l(n)       = (p, i),  p = max(⌊n / (K+1)⌋, ⌊(n − R) / K⌋),  i = n − pK − min(p, R)
    μ_l⁻¹(p, i)  = pK + min(p, R) + i
    I_{p,l}      = number of nodes processor p owns in layer l

Indices are 0-based (n = 0..N−1, p = 0..P−1, i = 0..I_{p,l}−1), as the
formulas require. Two things in the printed text need care:

- The paper prints I_{p,l} = ⌊(N(l) + P + p − 1) / P⌋. With that sign the
  counts add up to more than N(l) whenever P > 1 (N = 7, P = 3 gives
  3 + 3 + 3 = 9; N = 8, P = 2 gives 4 + 5 = 9). The standard linear-distribution count, which is the
  one μ and μ⁻¹ above imply, is ⌊(N(l) + P − p − 1) / P⌋ = K + [p < R].
  :func:`count` uses the latter; :func:`count_as_printed` keeps the printed
  one so the report and the tests can show the difference.
- μ divides by K. When N(l) < P, K = 0 and every node n < R is its own
  block, so p = n; :meth:`LinearDistribution.owner` handles that case.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np


def count(N: int, P: int, p: int) -> int:
    """I_{p,l}: nodes processor p owns in a layer of N nodes (§3, corrected sign)."""
    return (N + P - p - 1) // P


def count_as_printed(N: int, P: int, p: int) -> int:
    """I_{p,l} exactly as printed in §3: ⌊(N + P + p − 1)/P⌋ (does not sum to N in general)."""
    return (N + P + p - 1) // P


@dataclass(frozen=True)
class LinearDistribution:
    """The linear data distribution of one layer of ``N`` nodes over ``P`` processors (§3)."""

    N: int
    P: int

    def __post_init__(self):
        if not (isinstance(self.N, int) and isinstance(self.P, int)) or self.N < 1 or self.P < 1:
            raise ValueError(f"need integers N >= 1 and P >= 1, got N={self.N!r}, P={self.P!r}")

    @property
    def K(self) -> int:
        return self.N // self.P

    @property
    def R(self) -> int:
        return self.N % self.P

    def owner(self, n: int) -> tuple[int, int]:
        """μ_l(n) = (p, i): the processor owning global node n and its local index."""
        if not 0 <= n < self.N:
            raise IndexError(f"node {n} outside 0..{self.N - 1}")
        K, R = self.K, self.R
        if K == 0:  # fewer nodes than processors: node n is processor n's only node
            p = n
        else:
            p = max(n // (K + 1), (n - R) // K)
        return p, n - p * K - min(p, R)

    def global_index(self, p: int, i: int) -> int:
        """μ_l⁻¹(p, i) = pK + min(p, R) + i."""
        if not 0 <= p < self.P or not 0 <= i < self.count(p):
            raise IndexError(f"processor {p} has no local node {i} (N={self.N}, P={self.P})")
        return p * self.K + min(p, self.R) + i

    def count(self, p: int) -> int:
        """I_{p,l} (corrected; see the module docstring)."""
        return count(self.N, self.P, p)

    def start(self, p: int) -> int:
        """First global node of processor p: μ⁻¹(p, 0), also defined for an empty block."""
        return p * self.K + min(p, self.R)

    def block(self, p: int) -> slice:
        """Processor p's nodes as a slice of the layer (contiguous by construction)."""
        s = self.start(p)
        return slice(s, s + self.count(p))

    @property
    def max_count(self) -> int:
        """The largest block, K + [R > 0]: the padded message size of an exchange."""
        return self.K + (1 if self.R else 0)

    def counts(self) -> list[int]:
        return [self.count(p) for p in range(self.P)]


# ---- paper0: McCann & Kalman (1994), §2.2 -----------------------------------------
def longest_first(lengths, n_workers: int) -> np.ndarray:
    """Assign each sequence to a worker: longest first, each to the least-loaded worker.

    McCann & Kalman (1994), §2.2: "sort the sequences in order of non-increasing
    length. Then, assign each sequence s_i in turn to the least loaded processor,
    starting with the longest sequence, and adjust the load of that processor
    upwards by len(i)" (Graham's LPT rule). Ties in length keep the input order;
    ties in load go to the lowest worker index. Returns ``a`` with
    ``0 <= a[i] < n_workers``, the worker of sequence i. Its makespan (eq. 5)
    is at most (R+1)/R·OPT + max_i len(i) (the FFDH bound the paper quotes).
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be one-dimensional, got shape {lengths.shape}")
    if int(n_workers) != n_workers or n_workers < 1:
        raise ValueError(f"n_workers must be an integer >= 1, got {n_workers!r}")
    if len(lengths) and lengths.min() < 0:
        raise ValueError("lengths must be >= 0")
    order = np.argsort(-lengths, kind="stable")  # non-increasing, stable
    heap = [(0, r) for r in range(int(n_workers))]  # (load, worker)
    a = np.empty(len(lengths), dtype=np.int64)
    for i in order:
        load, r = heapq.heappop(heap)
        a[i] = r
        heapq.heappush(heap, (load + lengths[i], r))
    return a


def makespan(lengths, assignment, n_workers: int) -> float:
    """Eq. 5 of McCann & Kalman (1994): max over workers of the summed lengths."""
    loads = np.bincount(np.asarray(assignment), weights=np.asarray(lengths, dtype=float),
                        minlength=n_workers)
    return float(loads.max()) if len(loads) else 0.0
