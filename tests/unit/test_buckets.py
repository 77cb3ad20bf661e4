"""paper2 §III.A: DYNAMICBUCKETING against brute force, the baselines, and epoch schedules."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.schedule import (bucket_cost, epoch_batches, equal_width_buckets, optimal_buckets,
                             padded_cells, padding_waste, quantile_buckets)


def brute_force_cost(lengths, Q: int) -> int:
    """min over every choice of ≤ Q bounds among the distinct lengths (the largest always in)."""
    v = sorted(set(int(x) for x in lengths))
    best = None
    for q in range(1, min(Q, len(v)) + 1):
        for cuts in itertools.combinations(v[:-1], q - 1):
            c = bucket_cost(lengths, list(cuts) + [v[-1]])
            best = c if best is None or c < best else best
    return best


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 25), min_size=1, max_size=40), st.integers(1, 5))
def test_optimal_buckets_is_the_brute_force_minimum(lengths, Q):
    b = optimal_buckets(lengths, Q)
    assert list(b) == sorted(set(b.tolist())) and b[-1] == max(lengths)
    assert len(b) <= Q
    assert bucket_cost(lengths, b) == brute_force_cost(lengths, Q)
    # never worse than the baselines with the same Q
    assert bucket_cost(lengths, b) <= bucket_cost(lengths, quantile_buckets(lengths, Q))
    assert bucket_cost(lengths, b) <= bucket_cost(lengths, equal_width_buckets(lengths, Q))


def test_optimal_buckets_worked_example():
    # lengths 1,1,1,10: Q=1 costs 4·10 = 40; Q=2 splits {1,1,1}{10}: 3 + 10 = 13
    assert bucket_cost([1, 1, 1, 10], optimal_buckets([1, 1, 1, 10], 1)) == 40
    assert list(optimal_buckets([1, 1, 1, 10], 2)) == [1, 10]
    # 2,3,3,9,10 in 2 buckets: {2,3,3}{9,10} = 9 + 20 = 29 beats {2}{3,3,9,10} = 2 + 40
    assert list(optimal_buckets([2, 3, 3, 9, 10], 2)) == [3, 10]
    assert list(optimal_buckets([5, 5, 7], 4)) == [5, 7]  # Q above the distinct lengths


def test_bucketing_bad_inputs():
    with pytest.raises(ValueError, match="n_buckets"):
        optimal_buckets([1, 2], 0)
    with pytest.raises(ValueError, match=">= 1"):
        optimal_buckets([0, 2], 2)
    with pytest.raises(ValueError, match="non-empty"):
        optimal_buckets([], 2)
    with pytest.raises(ValueError, match="cover"):
        bucket_cost([1, 9], [5])


@pytest.mark.parametrize("method", ["random", "megabatch", "optimal", "quantile", "equal_width"])
@pytest.mark.parametrize("order", ["short_first", "random"])
def test_epoch_batches_cover_each_sequence_once(method, order):
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 300, size=203)
    bs = epoch_batches(lengths, 16, rng, method=method, n_buckets=4, order=order, megabatch=3)
    idx = np.concatenate([b.idx for b in bs])
    assert sorted(idx.tolist()) == list(range(203))
    assert all(b.idx.size <= 16 and lengths[b.idx].max() <= b.pad_len for b in bs)
    if method in ("optimal", "quantile", "equal_width") and order == "short_first":
        pads = [b.pad_len for b in bs]
        assert pads == sorted(pads)  # shortest bucket first (§IV.A)
    assert 0 <= padding_waste(lengths, bs) < 1


def test_bucket_padding_is_the_eq2_cost_and_beats_random():
    rng = np.random.default_rng(1)
    lengths = np.round(rng.lognormal(4.5, 0.8, size=500)).astype(int) + 1
    b = optimal_buckets(lengths, 3)
    bs = epoch_batches(lengths, 16, rng, method="optimal", n_buckets=3)
    assert padded_cells(bs) == bucket_cost(lengths, b)  # pad_to="bucket": eq. (2)'s cells
    trimmed = epoch_batches(lengths, 16, rng, method="optimal", n_buckets=3, pad_to="batch")
    assert padded_cells(trimmed) <= padded_cells(bs)
    rand = epoch_batches(lengths, 16, rng, method="random")
    assert padded_cells(rand) > padded_cells(bs)
    sorted_in = epoch_batches(lengths, 16, rng, method="optimal", n_buckets=3, shuffle_within=False)
    for q in np.unique([x.pad_len for x in sorted_in]):
        inner = np.concatenate([lengths[x.idx] for x in sorted_in if x.pad_len == q])
        assert np.all(np.diff(inner) >= 0)


def test_epoch_batches_bad_inputs():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="unknown method"):
        epoch_batches([3, 4], 2, rng, method="nope")
    with pytest.raises(ValueError, match="order"):
        epoch_batches([3, 4], 2, rng, order="longest")
    with pytest.raises(ValueError, match="batch_size"):
        epoch_batches([3, 4], 0, rng)


# kills: the quantile index one past the (q/Q)-quantile (the bounds would move up a length)
def test_quantile_buckets_worked_example():
    # bound q is the ceil(n q / Q)-th smallest length (1-based)
    assert list(quantile_buckets([4, 1, 3, 2], 2)) == [2, 4]
    assert list(quantile_buckets(range(1, 11), 5)) == [2, 4, 6, 8, 10]
    assert list(quantile_buckets([1, 2, 3], 2)) == [2, 3]  # ceil(1.5) = 2: the 2nd smallest
    assert list(quantile_buckets([5, 5, 5, 9], 2)) == [5, 9]
