"""The input checks of engine/schedule.py at their boundaries (issue 35): each check is
tested on both sides, the last value it accepts and the first it refuses, so a comparison
moved by one (< for <=) or a dropped check fails here. Expected layouts are worked by hand.

tests/harness/test_mutation_guards.py holds the non-integer lengths, the pad_to check and the
short-first shuffle; tests/unit/test_buckets.py and tests/unit/test_schedule_cg.py the plain refusals.
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.schedule import (LinearDistribution, bucket_cost, epoch_batches, longest_first,
                             optimal_buckets)


def rng(seed=0):
    return np.random.default_rng(seed)


# ---- longest_first (paper0) ---------------------------------------------------------------

# kills: the integer check on n_workers dropped (2.5 would run as 2 workers' heap, silently)
@pytest.mark.parametrize("bad", [2.5, 0, -1, 0.5])
def test_longest_first_refuses_a_worker_count_that_is_not_a_whole_number_above_zero(bad):
    with pytest.raises(ValueError, match=rf"n_workers must be an integer >= 1, got {bad!r}"):
        longest_first([3, 1, 2], bad)


def test_longest_first_boundaries_accepted():
    # one worker: everything on worker 0; 2.0 is a whole number
    assert longest_first([3, 1, 2], 1).tolist() == [0, 0, 0]
    assert longest_first([3, 1, 2], 2.0).tolist() == [0, 1, 1]  # 3→0, 2→1, 1→1 (load 2 < 3)
    # a length of 0 is allowed (>= 0), ties in load go to the lowest worker: 5→0, then the
    # zeros, in input order, to the least-loaded worker 1
    assert longest_first([0, 5, 0], 2).tolist() == [1, 0, 1]
    # no sequences: nothing to assign (the min() of an empty array is never taken)
    out = longest_first([], 3)
    assert out.shape == (0,) and out.dtype == np.int64


# kills: the ">= 0" check moved to "> 0" (a zero length refused) or dropped (a negative one
# taken as a load reduction)
def test_longest_first_refuses_a_negative_length():
    with pytest.raises(ValueError, match="lengths must be >= 0"):
        longest_first([4, -1, 2], 2)
    # control: the same input with 1 for −1 is assigned by hand as 4→0, 2→1, 1→1 (load 2 < 4)
    assert longest_first([4, 1, 2], 2).tolist() == [0, 1, 1]


# ---- lengths of the bucketing schedules (paper2) ------------------------------------------

# kills: the ">= 1" check moved to "> 1" or dropped; its message not saying the value
def test_lengths_one_is_the_smallest_accepted():
    assert optimal_buckets([1, 1, 4], 2).tolist() == [1, 4]  # {1,1}{4}: 2·1 + 4 = 6
    with pytest.raises(ValueError, match="lengths must be >= 1, got 0"):
        optimal_buckets([0, 1, 4], 2)
    with pytest.raises(ValueError, match="lengths must be >= 1, got -3"):
        epoch_batches([2, -3], 1, rng(), method="random")


@pytest.mark.parametrize("bad", [[[1, 2], [3, 4]], [], ["a", "b"], [1.0, float("nan")], [True, False]],
                         ids=["2-d", "empty", "strings", "nan", "bools"])
def test_lengths_that_are_not_whole_numbers_are_refused(bad):
    # kills: the dtype checks loosened (strings or NaN slipping through to int64)
    with pytest.raises(ValueError, match="lengths must be (a non-empty 1-d sequence|integers)"):
        optimal_buckets(bad, 2)


def test_an_epoch_of_no_sequences_is_empty_where_no_bounds_are_needed():
    # epoch_batches allows no sequences (allow_empty); bucketing them has no bounds to find
    assert epoch_batches([], 4, rng(), method="random") == []
    assert epoch_batches([], 4, rng(), method="megabatch") == []
    with pytest.raises(ValueError, match="non-empty"):
        epoch_batches([], 4, rng(), method="optimal")


# ---- batch size ----------------------------------------------------------------------------

# kills: the batch_size check moved (1 refused, or 0 accepted and looping forever / dividing)
def test_batch_size_one_is_the_smallest():
    bs = epoch_batches([3, 1, 2], 1, rng(), bounds=[3], shuffle_within=False, order="short_first")
    assert [b.idx.tolist() for b in bs] == [[1], [2], [0]]  # one bucket, ascending length
    assert [b.pad_len for b in bs] == [3, 3, 3]  # padded to the bucket's bound
    for bad in (0, -2):
        with pytest.raises(ValueError, match=f"batch_size must be an integer >= 1, got {bad}"):
            epoch_batches([3, 1, 2], bad, rng())


@pytest.mark.parametrize("kw", [dict(batch_size=2.7), dict(batch_size=2, megabatch=1.5, method="megabatch")],
                         ids=["batch_size", "megabatch"])
def test_a_fractional_batch_size_is_refused(kw):
    kw = {"method": "random", **kw}
    with pytest.raises(ValueError, match="integer"):
        epoch_batches([3, 1, 2, 5, 4], rng=rng(), **kw)
    # control: the same values as integral floats are taken, as the other counts are
    whole = {k: float(round(v)) if k in ("batch_size", "megabatch") else v for k, v in kw.items()}
    assert epoch_batches([3, 1, 2, 5, 4], rng=rng(), **whole)


# ---- bounds ----------------------------------------------------------------------------------

# kills: the cover check of epoch_batches moved (">=" to ">", an IndexError instead of the
# message) or dropped
def test_bounds_must_cover_the_longest_sequence_and_may_equal_it():
    with pytest.raises(ValueError, match="the largest bound must cover the longest sequence"):
        epoch_batches([1, 5, 9], 2, rng(), bounds=[3, 8])
    # the boundary: a bound equal to the longest length covers it. Hand layout with bounds
    # [3, 9]: bucket 0 = {0} (length 1), bucket 1 = {1, 2} (5, 9); ascending, batches of 2
    bs = epoch_batches([1, 5, 9], 2, rng(), bounds=[3, 9], shuffle_within=False)
    assert [(b.idx.tolist(), b.pad_len) for b in bs] == [([0], 3), ([1, 2], 9)]


def test_bucket_cost_boundaries():
    # eq. (2) by hand: lengths 1, 5, 9 under bounds 5, 9 → 5 + 5 + 9 = 19
    assert bucket_cost([1, 5, 9], [5, 9]) == 19
    for bounds in ([5, 8], []):
        with pytest.raises(ValueError, match="cover"):
            bucket_cost([1, 5, 9], bounds)


# kills: the n_buckets integer check dropped (1.5 buckets) or moved (1 refused)
def test_n_buckets_must_be_a_whole_number_from_one():
    assert optimal_buckets([2, 3, 9], 1).tolist() == [9]
    assert optimal_buckets([2, 3, 9], 2.0).tolist() == [3, 9]  # {2,3}{9}: 6 + 9 = 15 < 3 + 18
    for bad in (1.5, 0, -1):
        with pytest.raises(ValueError, match=rf"n_buckets must be an integer >= 1, got {bad!r}"):
            optimal_buckets([2, 3, 9], bad)


# ---- the orders ---------------------------------------------------------------------------

def test_random_order_permutes_the_batches_short_first_does_not():
    # kills: order="random" no longer shuffling the batches (the final permutation dropped)
    lengths = np.repeat([2, 4, 6, 8], 4)  # 4 buckets of 4, batches of 2: 8 batches
    kw = dict(bounds=[2, 4, 6, 8], shuffle_within=False)
    sf = epoch_batches(lengths, 2, rng(3), order="short_first", **kw)
    assert [b.pad_len for b in sf] == [2, 2, 4, 4, 6, 6, 8, 8]
    orders = {tuple(b.pad_len for b in epoch_batches(lengths, 2, rng(s), order="random", **kw))
              for s in range(5)}
    assert all(sorted(o) == [2, 2, 4, 4, 6, 6, 8, 8] for o in orders)  # the same batches …
    assert len(orders) > 1 and (2, 2, 4, 4, 6, 6, 8, 8) not in orders  # … not short first


# ---- LinearDistribution (paper4) ------------------------------------------------------------

def test_linear_distribution_boundaries():
    d = LinearDistribution(1, 1)  # the smallest accepted
    assert d.counts() == [1] and d.owner(0) == (0, 0)
    d = LinearDistribution(7, 3)  # counts 3, 2, 2 (N = 7 = 3·2 + 1)
    assert d.owner(6) == (2, 1) and d.global_index(2, 1) == 6
    with pytest.raises(IndexError):
        d.owner(-1)
    with pytest.raises(IndexError):
        d.global_index(0, 3)


def test_megabatches_are_sorted_before_they_are_cut():
    # the same permutation cut as random batches and as megabatches of 3 batches: sorted by
    # length inside each megabatch, the batches pad less (cutting a sorted run into groups
    # of k minimises the sum of the groups' longest lengths)
    lengths = [9, 1, 8, 2, 7, 3, 6, 4, 5, 10, 1, 9]

    def cells(bs):
        return sum(b.pad_len * len(b.idx) for b in bs)

    mega = epoch_batches(lengths, 2, rng(), method="megabatch", megabatch=3)
    rand = epoch_batches(lengths, 2, rng(), method="random")
    assert sorted(i for b in mega for i in b.idx) == list(range(12))
    assert cells(mega) < cells(rand)
    for b in mega:  # each batch holds neighbours in length order within its megabatch
        assert b.pad_len == max(lengths[i] for i in b.idx)
    # control: one batch per megabatch leaves nothing to sort: the same cells as random
    assert cells(epoch_batches(lengths, 2, rng(), method="megabatch", megabatch=1)) == cells(rand)


def test_owner_names_the_valid_range_when_a_node_is_outside():
    d = LinearDistribution(N=10, P=3)
    assert d.owner(9)[0] == 2  # the last node is the last processor's
    for n in (10, -1):
        with pytest.raises(IndexError, match=rf"node {n} outside 0\.\.9$"):
            d.owner(n)
