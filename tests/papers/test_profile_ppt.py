"""benchmarks/profile_ppt.py: its phase timers split a short emulated PPT run without
changing it, and count what the run did (checked against the run's own record)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))

import profile_ppt  # noqa: E402
from engine.nets.mlp import MLP  # noqa: E402
from reproduce.paper3.setup import DEFAULT  # noqa: E402


def test_phases_count_what_the_run_did():
    P, m, rounds = 8, 32, 1500
    r = profile_ppt.profile(P, m, seed=1, rounds=rounds)
    wr = r["rec"].rounds * P
    calls = r["calls"]
    # one draw, one forward and one backward per worker and round; the verification's own
    # forward pass (256 patterns) is the verification's, not the forward phase's
    assert calls["sampling"] == calls["forward"] == calls["backward"] == wr
    assert calls["error history"] == calls["update"] == 2 * wr
    # §4.1: every worker verifies in each round whose mean estimate is below the threshold
    below = int((r["curve"] < DEFAULT.threshold).sum())
    assert below > 0  # seed 1 converges in 1,287 rounds at P = 8: there are checks
    assert calls["verification"] == P * below
    # the phases are inside the booked compute
    assert 0 < sum(r["phases"].values()) < r["booked"]
    # the timers are gone afterwards
    assert MLP.forward.__name__ == "forward"
    assert profile_ppt.data_parallel.random_steps.__name__ == "random_steps"


def test_verification_forward_counted_once_control():
    """Control: the forward passes of the verification exist and are left out of 'forward'.
    Counting MLP.forward calls directly during a run gives the local epochs plus one per
    verification."""
    P, m, rounds = 8, 32, 1500
    seen = []
    orig = MLP.forward

    def counting(self, x, **kw):
        seen.append(x.shape[0])
        return orig(self, x, **kw)

    MLP.forward = counting
    try:
        rec, _ = profile_ppt.run(P, m, 1, rounds)
    finally:
        MLP.forward = orig
    n = 2 ** DEFAULT.bits
    below = int((np.asarray(rec.loss_curve) < DEFAULT.threshold).sum())
    assert below > 0 and rec.converged
    assert seen.count(m) == rec.rounds * P
    # the verifications, and train_pattern_parallel's own report of a failed run (none here)
    assert seen.count(n) == P * below + (0 if rec.converged else 1)


def test_inlined_round_computes_what_the_engine_methods_do():
    """methods_vs_inline times two writings of one worker's round: both must leave the same
    weights (bit for bit). Control: one round fewer on the inlined side is caught."""
    a, pa = profile_ppt._round_runner(8, 32, inline=False, verify=0.35)
    b, pb = profile_ppt._round_runner(8, 32, inline=True, verify=0.35)
    a(300)
    b(300)
    assert np.array_equal(pa, pb)
    a(1)
    assert not np.array_equal(pa, pb)
