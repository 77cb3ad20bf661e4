"""Schedules: which worker owns which nodes or sequences, and which sequences share
a mini-batch (at the end).

Linear data distribution
------------------------
The N(l) nodes of layer l are split over P processors in contiguous blocks;
the first R_l = N(l) mod P processors get one node more than the others::

    K_l = ⌊N(l) / P⌋,   R_l = N(l) mod P
    μ_l(n)       = (p, i),  p = max(⌊n / (K+1)⌋, ⌊(n − R) / K⌋),  i = n − pK − min(p, R)
    μ_l⁻¹(p, i)  = pK + min(p, R) + i
    I_{p,l}      = number of nodes processor p owns in layer l

Indices are 0-based (n = 0..N−1, p = 0..P−1, i = 0..I_{p,l}−1), as the
formulas require. :func:`count` is I_{p,l} = ⌊(N(l) + P − p − 1) / P⌋ = K + [p < R],
the count μ and μ⁻¹ imply. μ divides by K. When N(l) < P, K = 0 and every
node n < R is its own block, so p = n; :meth:`LinearDistribution.owner` handles that case.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np


def count(N: int, P: int, p: int) -> int:
    """I_{p,l}: nodes processor p owns in a layer of N nodes."""
    return (N + P - p - 1) // P


@dataclass(frozen=True)
class LinearDistribution:
    """The linear data distribution of one layer of ``N`` nodes over ``P`` processors."""

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
        """I_{p,l} (see the module docstring)."""
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


# ---- longest first --------------------------------------------------------------------
def longest_first(lengths, n_workers: int) -> np.ndarray:
    """Assign each sequence to a worker: longest first, each to the least-loaded worker.

    Sort the sequences by non-increasing length, then assign each in turn, longest
    first, to the least-loaded worker and add its length to that worker's load
    (Graham's LPT rule). Ties in length keep the input order; ties in load go to
    the lowest worker index. Returns ``a`` with ``0 <= a[i] < n_workers``, the
    worker of sequence i. Its makespan (:func:`makespan`) is at most
    (R+1)/R·OPT + max_i len(i) (the FFDH bound of Coffman et al. 1980).
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
    """The makespan: max over workers of the summed lengths."""
    loads = np.bincount(np.asarray(assignment), weights=np.asarray(lengths, dtype=float),
                        minlength=n_workers)
    return float(loads.max()) if len(loads) else 0.0


# ---- bucket layouts --------------------------------------------------------------
# Mini-batch schedules for variable-length sequences.
#
# A mini-batch costs O(max length in the batch); unbucketed
# T(S) = O(n/k · max_i l_i); with Q buckets S_1..S_Q,
# T(S) = O(Σ_q |S_q|/k · max_{i∈S_q} l_i). :func:`optimal_buckets` (dynamic programming)
# finds the Q upper bounds that minimise Σ_q |S_q| · max_{i∈S_q} l_i exactly.
#
# Besides these optimal buckets, the baselines that today's libraries use
# (equal-count / quantile buckets, equal-width buckets, sorting inside random
# megabatches) and the unbucketed random split, each with its padding waste.


def _lengths(lengths, *, allow_empty: bool = False) -> np.ndarray:
    """Sequence lengths checked once: a 1-d sequence of whole numbers >= 1 (whole-number
    floats are taken as integers), as int64. A fractional length used to be cut down by
    ``int()`` where no bucket bounds were computed, padding a sequence below its length."""
    l = np.asarray(lengths)
    if l.ndim != 1 or (l.size == 0 and not allow_empty):
        raise ValueError("lengths must be a non-empty 1-d sequence")
    if l.size == 0:
        return l.astype(np.int64)
    if not np.issubdtype(l.dtype, np.integer):
        if not np.issubdtype(l.dtype, np.number) or not np.all(l == np.round(l)):
            raise ValueError("lengths must be integers")
        l = l.astype(np.int64)
    if l.min() < 1:
        raise ValueError(f"lengths must be >= 1, got {l.min()}")
    return l


def _histogram(lengths) -> tuple[np.ndarray, np.ndarray]:
    return np.unique(_lengths(lengths), return_counts=True)  # distinct lengths (m,), their counts f (m,)


def bucket_cost(lengths, bounds) -> int:
    """Σ_q |S_q| · bound_q: the padded cells when every sequence is padded
    to its bucket's upper bound (sequences go to the first bound ≥ their length)."""
    l = np.asarray(lengths)
    b = np.asarray(bounds)
    if b.size == 0 or l.max() > b.max():
        raise ValueError("the largest bound must cover the longest sequence")
    q = np.searchsorted(b, l, side="left")
    return int(b[q].sum())


def optimal_buckets(lengths, n_buckets: int) -> np.ndarray:
    """Optimal buckets by dynamic programming: the sorted upper length bounds of at most
    ``n_buckets`` buckets minimising Σ_q |S_q| · max_{i∈S_q} l_i, exactly.

    Over the m distinct lengths v_1 < … < v_m with counts f:
    dp[q][i] = min_{j<i} dp[q−1][j] + (Σ_{t=j+1..i} f_t) · v_i, dp[0][0] = 0,
    dp[0][i>0] = ∞; bucket (j, i] costs its count times its longest length. An
    optimal bound is always one of the observed lengths, so restricting to them
    loses nothing. O(Q·m²) time. Returns min(Q, m) bounds (Q ≥ m: one per length).
    """
    if int(n_buckets) != n_buckets or n_buckets < 1:
        raise ValueError(f"n_buckets must be an integer >= 1, got {n_buckets!r}")
    v, f = _histogram(lengths)
    m = v.size
    Q = min(int(n_buckets), m)
    F = np.concatenate([[0], np.cumsum(f)])  # F[i] = Σ_{t≤i} f_t, (m+1,)
    inf = np.iinfo(np.int64).max // 4
    dp = np.full((Q + 1, m + 1), inf, dtype=np.int64)  # dp[q][i]: first i lengths in q buckets
    prev = np.zeros((Q + 1, m + 1), dtype=np.int64)
    dp[0, 0] = 0
    for q in range(1, Q + 1):
        for i in range(q, m + 1):
            j = np.arange(q - 1, i)  # the previous bucket ends after length j
            cand = dp[q - 1, j] + (F[i] - F[j]) * int(v[i - 1])
            k = int(np.argmin(cand))
            dp[q, i] = cand[k]
            prev[q, i] = j[k]
    bounds, i = [], m
    for q in range(Q, 0, -1):
        bounds.append(int(v[i - 1]))
        i = int(prev[q, i])
    return np.array(bounds[::-1], dtype=np.int64)


def quantile_buckets(lengths, n_buckets: int) -> np.ndarray:
    """Equal-count buckets: bound q is the (q/Q)-quantile of the lengths (an observed
    length, so some buckets may merge). Baseline."""
    l = np.sort(np.asarray(lengths))
    n = l.size
    idx = [min(n - 1, int(np.ceil(n * q / n_buckets)) - 1) for q in range(1, n_buckets + 1)]
    return np.unique(l[idx])


def equal_width_buckets(lengths, n_buckets: int) -> np.ndarray:
    """Equal-width buckets over [min, max]: bound q = min + q·(max − min)/Q, rounded up.
    Baseline."""
    l = np.asarray(lengths)
    lo, hi = int(l.min()), int(l.max())
    b = np.ceil(lo + (hi - lo) * np.arange(1, n_buckets + 1) / n_buckets).astype(np.int64)
    b[-1] = hi
    return np.unique(b)


BUCKETINGS = {"optimal": optimal_buckets, "quantile": quantile_buckets,
              "equal_width": equal_width_buckets}


# ---- one epoch's mini-batches -----------------------------------------------------


@dataclass(frozen=True)
class Batch:
    """Indices of the sequences in one mini-batch and the length it is padded to."""

    idx: np.ndarray
    pad_len: int


def epoch_batches(lengths, batch_size: int, rng: np.random.Generator, *, method: str = "optimal",
                  n_buckets: int = 1, bounds=None, order: str = "short_first",
                  shuffle_within: bool = True, pad_to: str = "bucket",
                  megabatch: int = 50) -> list[Batch]:
    """The mini-batches of one epoch over sequences 0..n−1 with the given lengths.

    ``method``:
      - ``"random"``: the unbucketed baseline: shuffle, split into batches;
        each batch padded to its longest sequence.
      - ``"optimal"`` | ``"quantile"`` | ``"equal_width"``: Q buckets (bounds from
        :data:`BUCKETINGS`, or ``bounds`` given); each sequence goes to the first
        bucket whose bound covers it; each bucket is split into batches.
      - ``"megabatch"``: shuffle, cut into megabatches of ``megabatch`` batches, sort
        each by length and split it (the common "group by length" sampler).
    ``order``: ``"short_first"`` (the shortest bucket's batches first, then each
    longer bucket's in turn) or ``"random"`` (batches in random order).
    ``shuffle_within``: shuffle inside each bucket (else keep ascending length).
    ``pad_to``: ``"bucket"`` pads to the bucket's bound (one padded length, so one
    model shape, per bucket) or ``"batch"`` to the batch's own longest sequence.
    """
    l = _lengths(lengths, allow_empty=True)
    n = l.size
    for name, v in (("batch_size", batch_size), ("megabatch", megabatch)):
        if int(v) != v or v < 1:  # an integral float is taken; 2.7 used to be cut down to 2
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    k = int(batch_size)
    if order not in ("short_first", "random"):
        raise ValueError(f"order must be 'short_first' or 'random', got {order!r}")
    if pad_to not in ("bucket", "batch"):
        raise ValueError(f"pad_to must be 'bucket' or 'batch', got {pad_to!r}")
    out: list[Batch] = []
    if method == "random":
        perm = rng.permutation(n)
        out = [Batch(perm[s:s + k], int(l[perm[s:s + k]].max())) for s in range(0, n, k)]
    elif method == "megabatch":
        perm = rng.permutation(n)
        M = k * int(megabatch)
        for s in range(0, n, M):
            mb = perm[s:s + M]
            mb = mb[np.argsort(l[mb], kind="stable")]
            out += [Batch(mb[j:j + k], int(l[mb[j:j + k]].max())) for j in range(0, mb.size, k)]
        if order == "short_first":  # megabatches are meant to be visited in random order
            order = "random"
    elif method in BUCKETINGS:
        b = np.asarray(BUCKETINGS[method](l, n_buckets) if bounds is None else bounds)
        q_of = np.searchsorted(b, l, side="left")  # (n,) bucket of each sequence
        if q_of.max() >= b.size:
            raise ValueError("the largest bound must cover the longest sequence")
        for q in range(b.size):
            members = np.flatnonzero(q_of == q)
            if members.size == 0:
                continue
            if shuffle_within:
                members = rng.permutation(members)
            else:
                members = members[np.argsort(l[members], kind="stable")]
            for j in range(0, members.size, k):
                idx = members[j:j + k]
                out.append(Batch(idx, int(b[q]) if pad_to == "bucket" else int(l[idx].max())))
    else:
        raise ValueError(f"unknown method {method!r}; use random, megabatch, "
                         + ", ".join(BUCKETINGS))
    if order == "random":
        out = [out[i] for i in rng.permutation(len(out))]
    return out


def padded_cells(batches: list[Batch]) -> int:
    """Σ_batches |batch| · padded length: the time steps an LSTM computes."""
    return int(sum(b.idx.size * b.pad_len for b in batches))


def padding_waste(lengths, batches: list[Batch]) -> float:
    """Share of computed cells that are padding: 1 − Σ l_i / padded cells."""
    l = np.asarray(lengths)
    real = int(sum(int(l[b.idx].sum()) for b in batches))
    return 1.0 - real / padded_cells(batches)
