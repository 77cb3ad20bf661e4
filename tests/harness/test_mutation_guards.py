"""Guards against mutants that survived the project's mutation testing.

Each test checks behaviour against a worked example, a formula or a docstring, and carries
a negative control: either an in-test variant that shows the assertion fails on the broken
behaviour, or an assertion on a value the mutant changes. The comment above each test names
the mutant it kills.
"""
from __future__ import annotations

import errno
import math
import signal
import time

import numpy as np
import pandas as pd
import pytest

import engine.comm.local as local
import reproduce.store as store
from engine.comm.base import WorkerError
from engine.nets.mlp import MLP
from engine.schedule import epoch_batches, optimal_buckets
from reproduce import claims as C
from reproduce import report as R


# ---- 1. number formatting in reports ------------------------------------------------------
# Worked examples, each derived by reading reproduce/report.py fmt(x, digits=3):
#   None / NaN → "–"; a str as it is; an int, or an integral float below 1e7, → "{:,}";
#   |x| ≥ 1e4 or |x| < 1e-3 → "{:.{digits}g}"; |x| < 1 → "{:.{digits}g}";
#   else fixed with max(digits − ⌊log10 |x|⌋ − 1, 0) decimals and thousands separators.
FMT_CASES = [
    (None, 3, "–"),
    (float("nan"), 3, "–"),
    (np.float64("nan"), 3, "–"),  # numpy's float64 is a float
    ("n/a", 3, "n/a"),  # strings pass through
    (5, 3, "5"),
    (1234, 3, "1,234"),  # integers: thousands separators
    (-1234, 3, "-1,234"),
    (12345678, 3, "12,345,678"),  # a Python int is never put in e-notation
    (np.int64(1234), 3, "1,234"),  # not an int: 4 digits → 0 decimals, with separators
    (1234.0, 3, "1,234"),  # integral float below 1e7: as an integer
    (-1234.0, 3, "-1,234"),
    (0.0, 3, "0"),
    (-0.0, 3, "0"),  # int(-0.0) == 0: no "-0"
    (12345678.0, 3, "1.23e+07"),  # integral but ≥ 1e7: large-number branch
    (1e7, 3, "1e+07"),  # the 1e7 boundary is exclusive
    (1234.5, 3, "1,234"),  # 3 − 3 − 1 < 0 → 0 decimals; .0f rounds half to even
    (1234.56, 3, "1,235"),
    (9999.9, 3, "10,000"),  # still below 1e4: fixed-point branch
    (12345.6, 3, "1.23e+04"),  # ≥ 1e4: 3 significant digits
    (-12345.6, 3, "-1.23e+04"),
    (123.456, 3, "123"),  # 3 − 2 − 1 = 0 decimals
    (12.345, 3, "12.3"),  # 3 − 1 − 1 = 1 decimal
    (-12.345, 3, "-12.3"),
    (1.5, 3, "1.50"),  # 3 − 0 − 1 = 2 decimals (trailing zero kept)
    (np.float64(2.5), 3, "2.50"),
    (0.5, 3, "0.5"),  # below 1: .3g (trailing zeros dropped)
    (-0.5, 3, "-0.5"),
    (0.012345, 3, "0.0123"),
    (0.001, 3, "0.001"),  # the 1e-3 boundary is inclusive of the .g-below-1 branch
    (0.0001234, 3, "0.000123"),  # below 1e-3: .3g (still fixed at this exponent)
    (1.234e-5, 3, "1.23e-05"),
    (float("inf"), 3, "inf"),
    # the digits parameter
    (12.345, 5, "12.345"),  # 5 − 1 − 1 = 3 decimals
    (1234.56, 6, "1,234.56"),  # 6 − 3 − 1 = 2 decimals
    (12345.6, 5, "12346"),  # .5g
    (0.0123456, 2, "0.012"),  # .2g
]


# kills: any change to a branch of report.fmt (e.g. 1234.5 printed as "1.23e+03", separators
# dropped, the 1e4 / 1e-3 / 1e7 thresholds moved, digits ignored, NaN not shown as "–")
@pytest.mark.parametrize("x,digits,want", FMT_CASES)
def test_fmt_worked_examples(x, digits, want):
    assert R.fmt(x, digits=digits) == want


# kills: fmt printing mid-size numbers in e-notation ("1.23e+03"); control: that variant
# fails the worked examples above
def test_fmt_table_catches_e_notation_variant():
    def e_notation(x, digits=3):  # the surviving mutant: mid-size numbers via .g
        mid = isinstance(x, float) and not math.isnan(x) and not x.is_integer() and 1e3 <= abs(x) < 1e4
        return f"{x:.{digits}g}" if mid else R.fmt(x, digits)

    assert e_notation(1234.5) == "1.23e+03"
    assert [c for c in FMT_CASES if e_notation(c[0], c[1]) != c[2]], "table must catch it"
    assert R.fmt(1234.5) == "1,234"


# kills: markdown_table not formatting numbers through fmt, or mangling string cells
def test_markdown_table_worked_example():
    df = pd.DataFrame({"quantity": ["speedup", "time"], "ours": [1234.5, 0.012345],
                       "runs": [3, 12345678.0]})
    want = ("| quantity | ours | runs |\n"
            "|---|---|---|\n"
            "| speedup | 1,234 | 3 |\n"
            "| time | 0.0123 | 1.23e+07 |")
    assert R.markdown_table(df) == want
    assert R.markdown_table(df, ["runs"]).splitlines()[0] == "| runs |"  # a column subset
    assert R.markdown_table(df) != "\n".join(  # control: raw str() cells differ
        ["| quantity | ours | runs |", "|---|---|---|", "| speedup | 1234.5 | 3.0 |",
         "| time | 0.012345 | 12345678.0 |"])


# kills: comparison_markdown dropping or misformatting the "(min–max)" spread beside ours
def test_comparison_markdown_ours_with_spread():
    rows = [R.row("p", "t1", "speedup", "nodes=2", "x", reported=2.0, ours=1.9, low=1.75,
                  high=2.05, kind="modeled"),
            R.row("p", "t1", "speedup", "nodes=4", "x", reported=4.0, ours=3.0, kind="modeled")]
    lines = R.comparison_markdown(R.frame(rows)).splitlines()
    assert lines[0] == ("| table | quantity | condition | unit | reported | ours (min–max) | ratio "
                        "| kind | runs | verdict | note |")
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    assert cells[4:7] == ["2", "1.90 (1.75–2.05)", "0.95"]  # 2.0 integral; 1.9/2 = 0.95 (.3g)
    assert cells[9] == "close"
    cells = [c.strip() for c in lines[3].strip("|").split("|")]
    assert cells[5] == "3" and cells[6] == "0.75" and cells[9] == "differs"  # no spread: no "( – )"


# kills: quick_banner printing a banner for a full run, or dropping the shrunk settings
def test_quick_banner_worked_example():
    assert R.quick_banner([]) == []  # a full run: no banner
    lines = R.quick_banner(["epochs 100 → 5", "runs 10 → 2"])
    assert lines[-1] == "" and len(lines) == 2
    assert lines[0].startswith(f"> {R.QUICK_MARK}: ")
    assert lines[0].endswith("Shrunk: epochs 100 → 5; runs 10 → 2.")


# kills: parse_condition splitting on every "=" or failing on an empty condition
def test_parse_condition_worked_examples():
    assert R.parse_condition("nodes=2;profile=here") == {"nodes": "2", "profile": "here"}
    assert R.parse_condition("note=a=b;x") == {"note": "a=b"}  # split once; no "=": dropped
    assert R.parse_condition("") == {} and R.parse_condition(None) == {}
    assert R.parse_condition(R.condition(workers=4, Q=2)) == {"workers": "4", "Q": "2"}  # round trip


# claims._num: same as fmt for None/NaN/str/integers below 1e7, else .3g below 999.5 and
# fixed ",.0f" from there (never e-notation above 1000, unlike fmt).
NUM_CASES = [
    (None, "–"), (float("nan"), "–"), ("64", "64"), (5, "5"), (np.int64(5), "5"),
    (1234, "1,234"), (1234.0, "1,234"), (-1234.0, "-1,234"), (12345678.0, "12,345,678"),
    (1234.5, "1,234"), (1234.56, "1,235"), (12345.6, "12,346"), (-12345.6, "-12,346"),
    (999.5, "1,000"), (999.4, "999"),  # 999.5 rounds to 1000: fixed, not .3g's "1e+03"
    (12.345, "12.3"), (1.5, "1.5"), (0.012345, "0.0123"), (-0.5, "-0.5"), (1.234e-5, "1.23e-05"),
]


# kills: any change to a branch of claims._num (threshold 1000, .3g, separators, "–")
@pytest.mark.parametrize("x,want", NUM_CASES)
def test_claims_num_worked_examples(x, want):
    assert C._num(x) == want


def _claim_row(**kw):
    r = {"test": "ratio", "ours": float("nan"), "ours_low": float("nan"),
         "ours_high": float("nan"), "reported": None, "best": None}
    r.update(kw)
    return r


# kills: ours_text dropping the interval, printing an interval with a missing end, or
# printing "-0 %" for a zero shortfall (the "+ 0.0" removed)
def test_ours_text_worked_examples():
    assert C.ours_text(_claim_row(ours=1.234, ours_low=1.1, ours_high=1.4)) == "1.23 [1.1, 1.4]"
    assert C.ours_text(_claim_row(ours=1234.5, ours_low=1000.0, ours_high=1500.0)) == "1,234 [1,000, 1,500]"
    assert C.ours_text(_claim_row(ours=1.234, ours_low=1.1)) == "1.23"  # one end missing: none shown
    assert C.ours_text(_claim_row(ours=1.234, ours_low=None, ours_high=1.4)) == "1.23"
    assert C.ours_text(_claim_row()) == "–"
    # a choice: the paper's option short of our best (the case with both ends is in test_claims)
    choice = dict(test="choice", best=64, reported=32)
    assert C.ours_text(_claim_row(**choice)) == "best 64"  # no shortfall estimated
    assert C.ours_text(_claim_row(**choice, ours=0.12)) == "best 64; 32 short of it by 12 %"
    zero = C.ours_text(_claim_row(**choice, ours=-0.0, ours_low=-0.0, ours_high=0.05))
    assert zero == "best 64; 32 short of it by 0 % [0 %, 5 %]"
    assert f"{100 * -0.0:.3g} %" == "-0 %"  # control: without "+ 0.0" it would read "-0 %"
    assert C.ours_text(_claim_row(test="choice", best=None, reported=32)) == "best –"


# ---- 2. Nguyen–Widrow initialisation ------------------------------------------------------
def _beta(net, l):
    return 0.7 * net.sizes[l] ** (1.0 / net.sizes[l - 1])  # β = 0.7 · H^(1/n_in)


def _nw(sizes, seed):
    net = MLP(sizes)
    net.init_nguyen_widrow(np.random.default_rng(seed))
    return net


def _without_bias_step(net, rng):
    """The surviving mutant, for the controls: init_nguyen_widrow minus its hidden-bias line."""
    for l in range(1, net.L + 1):
        W, b = net.W[l], net.b[l]
        if l < net.L:
            beta = _beta(net, l)
            W[:] = rng.uniform(-0.5, 0.5, size=W.shape)
            W *= beta / np.linalg.norm(W, axis=0, keepdims=True)
        else:
            W[:] = rng.uniform(-0.5, 0.5, size=W.shape)
            b[:] = rng.uniform(-0.5, 0.5, size=b.shape)


def _nw_failures(sizes, init) -> list[str]:
    """What is wrong with ``init`` against the Nguyen–Widrow promises (docstring of
    MLP.init_nguyen_widrow): hidden unit weight vectors of norm β = 0.7·H^(1/n_in), hidden
    biases uniform in [−β, β], output layer uniform in [−0.5, 0.5]; every value written."""
    bad = []
    sentinel = 100.0  # outside every range the initialisation promises
    net = MLP(sizes)
    net.params[:] = sentinel
    init(net, np.random.default_rng(11))
    fresh = MLP(sizes)  # zeros before the initialisation
    init(fresh, np.random.default_rng(11))
    if np.any(net.params == sentinel):
        bad.append("a value left as it was before the initialisation")
    for l in range(1, net.L):  # hidden layers
        beta = _beta(net, l)
        if not np.allclose(np.linalg.norm(net.W[l], axis=0), beta, rtol=1e-12, atol=0):
            bad.append(f"W{l} columns not of norm β")
        b = net.b[l]
        if not np.all(np.abs(b) <= beta):
            bad.append(f"b{l} outside [−β, β]")
        # uniform in [−β, β]: with ≥ 30 draws both sides are reached and the spread exceeds β
        if not (b.min() < -beta / 4 and b.max() > beta / 4 and np.ptp(b) > beta):
            bad.append(f"b{l} does not spread over [−β, β]")
        if np.count_nonzero(fresh.b[l]) != fresh.b[l].size:
            bad.append(f"b{l} left at zero on a fresh net")
    if not (np.all(np.abs(net.W[net.L]) <= 0.5) and np.all(np.abs(net.b[net.L]) <= 0.5)):
        bad.append("output layer outside [−0.5, 0.5]")
    return bad


# kills: init_nguyen_widrow without its hidden-bias step (biases left at their pre-step
# values); control: that variant fails the same checks
@pytest.mark.parametrize("sizes", [(2, 50, 1), (3, 40, 30, 2)])
def test_nguyen_widrow_ranges_and_bias_step(sizes):
    assert _nw_failures(sizes, MLP.init_nguyen_widrow) == []
    assert set(_nw_failures(sizes, _without_bias_step)) >= {
        "a value left as it was before the initialisation", "b1 left at zero on a fresh net",
        "b1 outside [−β, β]"}
    assert _nw_failures(sizes, lambda net, rng: net.init_uniform(rng, scale=0.5))  # control


# kills: init_nguyen_widrow ignoring its Generator (or reusing a fixed one), and the deleted
# bias step (which leaves b1 equal for every seed)
def test_nguyen_widrow_reproducible_per_seed():
    sizes = (3, 8, 2)
    a, a2, b = _nw(sizes, 5), _nw(sizes, 5), _nw(sizes, 6)
    np.testing.assert_array_equal(a.params, a2.params)  # same seed, same net, bit for bit
    for name in a.slices:  # another seed changes every block, the hidden biases included
        assert not np.array_equal(a.view(a.params, name), b.view(b.params, name)), name


# ---- 3. schedules' input checks ------------------------------------------------------------
# kills: _histogram accepting non-integer lengths (the integer check dropped: 1.5 → 1 silently)
def test_non_integer_lengths_raise():
    with pytest.raises(ValueError, match="lengths must be integers"):
        optimal_buckets([1.5, 2, 3], 2)
    with pytest.raises(ValueError, match="lengths must be integers"):
        epoch_batches([2.5, 3, 4], 2, np.random.default_rng(0), method="optimal", n_buckets=2)
    # where no bounds are computed (random, megabatch, bounds given) a fractional length was cut
    # down by int(): a sequence of 2.5 padded to 2; now refused everywhere
    for kw in (dict(method="random"), dict(method="megabatch"), dict(bounds=[3, 4], pad_to="batch")):
        with pytest.raises(ValueError, match="lengths must be integers"):
            epoch_batches([2.5, 3.7], 2, np.random.default_rng(0), **kw)
    # control: integral floats are integers and give the same bounds and batches as ints
    np.testing.assert_array_equal(optimal_buckets([1.0, 2.0, 3.0, 9.0], 2),
                                  optimal_buckets([1, 2, 3, 9], 2))
    a = epoch_batches([2.0, 3.0, 7.0], 1, np.random.default_rng(5), method="random")
    b = epoch_batches([2, 3, 7], 1, np.random.default_rng(5), method="random")
    assert [(list(x.idx), x.pad_len) for x in a] == [(list(x.idx), x.pad_len) for x in b]


# kills: epoch_batches without its pad_to check (an unknown value silently pads per batch)
@pytest.mark.parametrize("bad", ["longest", "Bucket", "", None])
def test_pad_to_check_raises(bad):
    with pytest.raises(ValueError, match="pad_to must be 'bucket' or 'batch'"):
        epoch_batches([1, 2, 3, 10], 2, np.random.default_rng(0), bounds=[3, 10], pad_to=bad)


# kills: pad_to "bucket" and "batch" swapped or merged (and the control for the pad_to test:
# the two valid values, worked by hand). Bounds [3, 10]: bucket 0
# holds sequences 0, 1, 2 (lengths 1, 2, 3), bucket 1 holds sequence 3 (length 10); batches
# of 2 in ascending order: [0, 1], [2], [3].
def test_pad_to_valid_values_worked_example():
    rng = lambda: np.random.default_rng(0)  # noqa: E731
    kw = dict(bounds=[3, 10], shuffle_within=False)
    bucket = epoch_batches([1, 2, 3, 10], 2, rng(), pad_to="bucket", **kw)
    batch = epoch_batches([1, 2, 3, 10], 2, rng(), pad_to="batch", **kw)
    assert [b.idx.tolist() for b in bucket] == [[0, 1], [2], [3]]
    assert [b.pad_len for b in bucket] == [3, 3, 10]
    assert [b.pad_len for b in batch] == [2, 3, 10]  # "longest" would silently give this


LENGTHS = np.random.default_rng(3).integers(1, 40, size=120)


def _layout(batches):
    return [(b.idx.tolist(), b.pad_len) for b in batches]


# kills: short_first no longer shuffling inside its buckets (shuffle_within ignored), while
# the batches stay short-first: pad lengths non-decreasing, each sequence in its bucket
def test_short_first_shuffles_within_buckets():
    kw = dict(method="optimal", n_buckets=3, order="short_first")
    s1 = epoch_batches(LENGTHS, 8, np.random.default_rng(1), **kw)
    s1b = epoch_batches(LENGTHS, 8, np.random.default_rng(1), **kw)
    s2 = epoch_batches(LENGTHS, 8, np.random.default_rng(2), **kw)
    assert _layout(s1) == _layout(s1b)  # the same seed reproduces exactly
    bounds = optimal_buckets(LENGTHS, 3)
    for bs in (s1, s2):
        pads = [b.pad_len for b in bs]
        assert pads == sorted(pads) and set(pads) == set(bounds.tolist())  # short first (§IV.A)
        for b in bs:
            q = bounds.tolist().index(b.pad_len)
            lo = bounds[q - 1] if q else 0
            assert np.all((LENGTHS[b.idx] > lo) & (LENGTHS[b.idx] <= b.pad_len))
    # per bucket: the same members for every seed, in a different order for another seed
    for q in bounds:
        m1 = np.concatenate([b.idx for b in s1 if b.pad_len == q])
        m2 = np.concatenate([b.idx for b in s2 if b.pad_len == q])
        assert sorted(m1.tolist()) == sorted(m2.tolist())
        assert m1.tolist() != m2.tolist(), f"bucket {q} not shuffled"
    # control: without the shuffle the seeds agree, which the last assertion would catch
    plain = [epoch_batches(LENGTHS, 8, np.random.default_rng(s), shuffle_within=False, **kw)
             for s in (1, 2)]
    assert _layout(plain[0]) == _layout(plain[1])


# kills: megabatch with order="short_first" no longer visiting its batches in random order
# (the "megabatches are meant to be visited in random order" step removed)
def test_megabatch_short_first_is_visited_in_random_order():
    kw = dict(method="megabatch", megabatch=2)
    sf = epoch_batches(LENGTHS, 8, np.random.default_rng(4), order="short_first", **kw)
    rnd = epoch_batches(LENGTHS, 8, np.random.default_rng(4), order="random", **kw)
    assert _layout(sf) == _layout(rnd)
    # control: without that step each megabatch's batches come in ascending pad length
    mb = 2  # batches per megabatch: 120 / 8 = 15 batches, 8 megabatches
    sorted_within = all([b.pad_len for b in sf[s:s + mb]] == sorted(b.pad_len for b in sf[s:s + mb])
                        for s in range(0, len(sf), mb))
    assert not sorted_within


# ---- 4. atomic_write: a failing write is not swallowed ------------------------------------
# (tests/faults/test_store_faults.py::test_a_full_disk_names_the_file_and_leaves_no_temporary already
# fails without the final re-raise, through its control "Named"; these cover the other paths:
# os.replace failing, the old file intact, and an error that is not an OSError.)


# kills: atomic_write's error branch without its re-raise (a failed os.replace swallowed)
def test_atomic_write_failed_replace_propagates_and_keeps_old_file(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("old generation")

    def refuse(src, dst):
        raise PermissionError(errno.EPERM, "Operation not permitted", str(src), None, str(dst))

    monkeypatch.setattr(store.os, "replace", refuse)
    with pytest.raises(PermissionError) as e:
        store.atomic_write(target, "new generation")
    assert e.value.errno == errno.EPERM and e.value.filename2 == str(target)  # passed on as it is
    assert target.read_text() == "old generation"  # the old file intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]  # no temporary left
    monkeypatch.undo()  # control: without the fault the same call replaces the file
    store.atomic_write(target, "new generation")
    assert target.read_text() == "new generation"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


# kills: the same missing re-raise for an error that is not an OSError (a bad data type)
def test_atomic_write_non_oserror_propagates(tmp_path):
    target = tmp_path / "summary.json"
    target.write_text("{}")
    with pytest.raises(TypeError):
        store.atomic_write(target, 12345)  # neither str nor bytes
    assert target.read_text() == "{}" and sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


# ---- 5. worker clean-up -------------------------------------------------------------------
class _FakeProc:
    """A stand-in for a worker process: records the calls _reap makes on it."""

    def __init__(self, pid, *, finished=False, obeys_sigterm=True):
        self.pid, self.finished, self.obeys = pid, finished, obeys_sigterm
        self.alive, self.calls = True, []

    def is_alive(self):
        return self.alive

    def join(self, timeout=None):
        self.calls.append("join")
        if self.finished:  # it sent its result and exits
            self.alive = False

    def terminate(self):
        self.calls.append("terminate")
        if self.obeys:
            self.alive = False

    def kill(self):
        self.calls.append("kill")
        self.alive = False


# kills: _reap without its terminate call (hidden in a real run by the kill fallback)
def test_reap_terminates_running_workers_before_any_kill(monkeypatch):
    signals = []
    monkeypatch.setattr(local.os, "kill", lambda pid, sig: signals.append((pid, sig)))
    done, running, stopped = (_FakeProc(101, finished=True), _FakeProc(102),
                              _FakeProc(103, obeys_sigterm=False))
    local._reap([done, running, stopped], {0: "result"}, grace=0.0)
    assert "terminate" not in done.calls and "kill" not in done.calls  # it exited by itself
    assert "terminate" in running.calls and "kill" not in running.calls  # no fallback needed
    assert stopped.calls.index("terminate") < stopped.calls.index("kill")  # the fallback, last
    assert (102, signal.SIGCONT) in signals and (103, signal.SIGCONT) in signals
    assert not any(p.is_alive() for p in (done, running, stopped))
    # control: a worker that is never sent SIGTERM survives to the kill fallback
    never = _FakeProc(104)
    never.terminate = lambda: never.calls.append("terminate-ignored")
    local._reap([never], {}, grace=0.0)
    assert "kill" in never.calls


def _one_fails_one_sleeps(comm):
    if comm.rank == 0:
        raise ValueError("boom")
    time.sleep(30)  # a straggler that only a signal ends


# kills: the same mutant on real processes: the straggler must end by SIGTERM, not SIGKILL
def test_run_local_straggler_ends_by_sigterm(monkeypatch):
    codes = {}
    real = local._reap

    def spy(procs, results, grace=2.0):
        real(procs, results, grace)
        codes.update({r: p.exitcode for r, p in enumerate(procs)})

    monkeypatch.setattr(local, "_reap", spy)
    with pytest.raises(WorkerError, match="boom"):
        local.run_local(_one_fails_one_sleeps, 2, bind=False)
    assert codes[1] == -signal.SIGTERM  # without terminate() it would be -SIGKILL (the fallback)


# ---- survivors of the seed-35 runs (2026-11-27, results/quality/) -------------------------------
# kills engine/nets/base.py "constant: 0.1 -> 0.11" in FlatParams.init_uniform: the default
# range is FANN's ±0.1 (its docstring); control: the scale it is given is the bound it keeps
def test_init_uniform_defaults_to_plus_minus_a_tenth():
    rng = np.random.default_rng(0)
    net = MLP((50, 40, 30))
    net.init_uniform(rng)
    w = np.abs(net.params)
    assert w.max() <= 0.1 and w.max() > 0.0999  # 3,270 draws reach within 1e-4 of the bound
    net.init_uniform(rng, scale=0.11)
    assert np.abs(net.params).max() > 0.1  # control: a wider scale leaves ±0.1


# kills engine/nets/lstm.py "return: value -> None" in LSTM.loss_and_grad: the summed loss
# it returns is Σ over sequences of −ln p(z|x), computed here from the outputs it predicts;
# control: the same for a per-pattern loss on a SeqBatch
def test_lstm_loss_and_grad_returns_the_summed_loss():
    from engine.data import CTCBatch, SeqBatch
    from engine.losses import CTCTarget, ctc_loss_and_grad, masked_loss_and_grad
    from engine.nets.lstm import LSTM, pad_batch

    rng = np.random.default_rng(1)
    net = LSTM(3, 4, 5)
    net.init(rng, scale=0.5)
    lens = np.array([5, 3])
    x, mask = pad_batch([rng.normal(size=(n, 3)) for n in lens], length=6)
    tgt = CTCTarget(np.array([[1, 2], [3, 0]]), np.array([2, 1]), lens)
    g = np.zeros(net.n_params)
    got = net.loss_and_grad(CTCBatch(x, mask, tgt), g)
    want = float(ctc_loss_and_grad(net.predict(CTCBatch(x, mask, tgt)), tgt, need_grad=False)[0].sum())
    assert isinstance(got, float) and got == pytest.approx(want, rel=1e-12) and got > 0
    T = rng.normal(size=(6, 2, 5))
    mse = LSTM(3, 4, 5, params=net.params.copy(), loss="mse")
    sb = SeqBatch(x, T, mask, np.arange(2))
    got2 = mse.loss_and_grad(sb, np.zeros(net.n_params))
    assert got2 == pytest.approx(masked_loss_and_grad(mse.predict(sb), T, mask, loss="mse")[0], rel=1e-12)


# kills engine/schedule.py "constant: True -> False" (dataclass(frozen=...)) on
# LinearDistribution: a distribution is a value shared by every worker, hashable and never
# changed in place; control: a plain (non-frozen) dataclass of the same fields is neither
def test_a_linear_distribution_is_an_immutable_value():
    import dataclasses

    from engine.schedule import LinearDistribution

    d = LinearDistribution(24, 7)
    assert hash(d) == hash(LinearDistribution(24, 7)) and {d: 1}[LinearDistribution(24, 7)] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.N = 25
    Plain = dataclasses.make_dataclass("Plain", [(f.name, f.type) for f in dataclasses.fields(d)])
    p = Plain(24, 7)
    p.N = 25  # control: assignable, and unhashable (eq without frozen sets __hash__ to None)
    with pytest.raises(TypeError):
        hash(p)
