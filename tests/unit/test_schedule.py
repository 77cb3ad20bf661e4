"""Linear data distribution μ, μ⁻¹, I_{p,l} (Hlynsson & Schmitz 2016, §3)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.schedule import LinearDistribution, count


def owners_by_hand(N, P):
    """Blocks dealt out by hand: the first N mod P processors get ⌈N/P⌉ nodes, the rest ⌊N/P⌋."""
    out, n = [], 0
    for p in range(P):
        size = N // P + (1 if p < N % P else 0)
        out += [(p, i) for i in range(size)]
        n += size
    assert n == N
    return out


@pytest.mark.parametrize("N,P,expected", [
    (7, 3, [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0), (2, 1)]),  # worked: K=2, R=1
    (8, 2, [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]),
    (2, 4, [(0, 0), (1, 0)]),  # N < P: K = 0, processors 2 and 3 own nothing
    (5, 1, [(0, i) for i in range(5)]),
])
def test_mu_worked_examples(N, P, expected):
    d = LinearDistribution(N, P)
    assert [d.owner(n) for n in range(N)] == expected


@given(N=st.integers(1, 300), P=st.integers(1, 40))
def test_mu_inverse_and_counts(N, P):
    d = LinearDistribution(N, P)
    assert [d.owner(n) for n in range(N)] == owners_by_hand(N, P)
    assert sum(d.counts()) == N
    assert max(d.counts()) == d.max_count and min(d.counts()) == N // P
    for n in range(N):
        p, i = d.owner(n)
        assert 0 <= i < d.count(p)
        assert d.global_index(p, i) == n  # μ⁻¹(μ(n)) = n
        assert d.block(p).start <= n < d.block(p).stop
    for p in range(P):
        assert d.count(p) == count(N, P, p) == (N + P - p - 1) // P


def test_uneven_split_7_over_3():
    d = LinearDistribution(7, 3)
    assert (d.K, d.R) == (2, 1)
    assert d.counts() == [3, 2, 2]
    assert [d.block(p) for p in range(3)] == [slice(0, 3), slice(3, 5), slice(5, 7)]


@pytest.mark.parametrize("bad", [(0, 2), (3, 0), (2.0, 1)])
def test_bad_sizes(bad):
    with pytest.raises(ValueError, match="need integers N >= 1 and P >= 1"):
        LinearDistribution(*bad)


def test_out_of_range():
    d = LinearDistribution(7, 3)
    with pytest.raises(IndexError, match="node 7 outside"):
        d.owner(7)
    with pytest.raises(IndexError, match="has no local node 2"):
        d.global_index(1, 2)
