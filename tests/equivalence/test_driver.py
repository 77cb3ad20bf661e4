"""The driver and its backends: one worker function, four backends, one set of answers.

The collectives of every backend are checked against numpy; the emulated
backend's virtual clock against a worked example (workers that sleep known
times, a profile with a known cost); faults against their messages.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from engine.comm.base import WorkerError, set_stall_timeout, stall_timeout
from engine.parallel import driver
from engine.perfmodel import MachineProfile

FREE = MachineProfile("free", 0.0, float("inf"), "test: free communication")
SLOW = MachineProfile("slow", 1e-3, 1e6, "test: 1 ms a step, 1 MB/s")


def collectives(comm, *, n: int):
    r, P = comm.rank, comm.size
    x = np.arange(n, dtype=float) + 10.0 * r  # (n,)
    comm.start_clock()
    g = comm.allgather(x)  # (P, n)
    s = comm.allreduce(x)
    b = x.copy()
    comm.broadcast(b, root=P - 1)
    comm.barrier()
    comm.clock.end_round()
    objs = comm.gather_objects({"rank": r, "name": "w" * r})
    return {"g": g, "s": s, "b": b, "objs": objs}


@pytest.mark.parametrize("backend,P", [("inprocess", 1), ("local", 2), ("local", 3),
                                       ("emulated", 1), ("emulated", 4), ("emulated", 7)])
def test_collectives_on_every_backend(backend, P):
    res = driver.run(collectives, workers=P, backend=backend, profile=FREE, n=5)
    xs = np.stack([np.arange(5.0) + 10.0 * r for r in range(P)])  # (P, 5)
    for r, out in enumerate(res):
        np.testing.assert_array_equal(out["g"], xs)
        np.testing.assert_array_equal(out["s"], xs.sum(axis=0))
        np.testing.assert_array_equal(out["b"], xs[P - 1])
        assert out["log"].shape == (1, 3)
        assert (out["objs"] is None) == (r != 0)
    assert res[0]["objs"] == [{"rank": r, "name": "w" * r} for r in range(P)]


def test_gather_objects_larger_than_the_local_slot():
    def fn(comm):
        return {"o": comm.gather_objects(list(range(3000 * (comm.rank + 1))))}

    res = driver.run(fn, workers=2, backend="local", max_elems=64)
    assert res[0]["o"] == [list(range(3000)), list(range(6000))]


class FakeClock:
    """perf_counter that moves only when a worker 'computes': exact arithmetic."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def sleepy(comm, *, naps, rounds: int = 2, fake=None, tails=None):
    """Rank r computes naps[r] seconds (a sleep, or a step of a fake clock) before each
    allgather of 100 float64, and tails[r] after it, before the round ends."""
    work = (lambda s: setattr(fake, "t", fake.t + s)) if fake else time.sleep
    comm.start_clock()
    for _ in range(rounds):
        work(naps[comm.rank])
        comm.allgather(np.zeros(100))
        if tails:
            work(tails[comm.rank])
        comm.clock.end_round()
    with comm.clock.untimed():
        work(0.02)  # never booked
        comm.allreduce(np.zeros(3))
    return {}


def emulate(naps, profile, monkeypatch, tails=None):
    fake = FakeClock()
    monkeypatch.setattr("engine.timing.perf_counter", fake)
    res = driver.run(sleepy, workers=len(naps), backend="emulated", profile=profile, naps=naps,
                     fake=fake, tails=tails)
    return driver.record(res, strategy="t", backend="emulated", profile=profile, converged=True,
                         epochs=1, final_mse=0.0, loss_curve=[])


def test_emulated_virtual_clock_worked_example(monkeypatch):
    naps = [0.002, 0.010, 0.005]
    cost = SLOW.allgather_time(3, 800)  # 2·1 ms + 2·800 B / 1 MB/s = 3.6 ms
    assert cost == pytest.approx(3.6e-3)
    rec = emulate(naps, SLOW, monkeypatch)
    assert rec.kind == "emulated" and rec.profile == "slow" and np.isnan(rec.wall_s)
    np.testing.assert_allclose(rec.compute_s, [naps, naps], rtol=1e-12)
    # every worker leaves the allgather when the slowest arrives, plus the cost
    np.testing.assert_allclose(rec.comm_s, [[0.008 + cost, cost, 0.005 + cost]] * 2, rtol=1e-12)
    assert rec.time_s == pytest.approx(2 * (0.010 + cost), rel=1e-12)  # the untimed 20 ms: not in it
    assert rec.comm_share == pytest.approx((0.013 / 3 + cost) / (0.010 + cost), rel=1e-12)
    # negative control: another profile gives another time
    assert emulate(naps, FREE, monkeypatch).time_s == pytest.approx(0.020, rel=1e-12)


def test_compute_after_a_rounds_last_collective_delays_the_next_one(monkeypatch):
    naps, tails = [0.002, 0.010, 0.005], [0.006, 0.0, 0.001]
    cost = SLOW.allgather_time(3, 800)
    rec = emulate(naps, SLOW, monkeypatch, tails=tails)
    np.testing.assert_allclose(rec.compute_s, [np.add(naps, tails)] * 2, rtol=1e-12)
    # round 1: everyone leaves at 0.010 + cost; round 2 arrivals: tail + nap = 8, 10, 6 ms
    np.testing.assert_allclose(rec.comm_s[1], [0.002 + cost, cost, 0.004 + cost], rtol=1e-12)
    # the slowest finishes at round 1's end + 10 ms + cost + its 6 ms tail
    assert rec.time_s == pytest.approx(0.010 + cost + 0.010 + cost + 0.006, rel=1e-12)


def test_emulated_with_free_profile_is_the_compute_only_composition(monkeypatch):
    rec = emulate([0.001, 0.004, 0.002], FREE, monkeypatch)
    # the old composition: Σ_rounds max_p compute
    assert rec.time_s == pytest.approx(rec.compute_s.max(axis=1).sum(), rel=1e-12)
    assert rec.time_s == pytest.approx(0.008, rel=1e-12)


def test_emulated_real_clock_books_each_workers_own_compute():
    res = driver.run(sleepy, workers=2, backend="emulated", profile=FREE, naps=[0.001, 0.02])
    rec = driver.record(res, strategy="t", backend="emulated", profile=FREE, converged=True,
                        epochs=1, final_mse=0.0, loss_curve=[])
    assert rec.compute_s[:, 1].min() >= 0.02 and rec.compute_s[:, 0].max() < 0.015


def test_measured_clock_books_compute_and_communication():
    rec = driver.record(driver.run(sleepy, workers=2, backend="local", naps=[0.001, 0.05]),
                        strategy="t", backend="local", converged=True, epochs=1, final_mse=0.0,
                        loss_curve=[])
    assert rec.kind == "measured" and rec.wall_s >= 0.1
    assert rec.compute_s[:, 1].min() >= 0.05 and rec.compute_s[:, 0].max() < 0.03
    assert rec.comm_s[:, 0].min() >= 0.02  # rank 0 waits for rank 1 in the allgather
    assert np.all(rec.bytes_sent == 800)


def raiser(comm, *, bad: int):
    comm.start_clock()
    comm.barrier()
    if comm.rank == bad:
        raise ValueError("boom")
    comm.barrier()
    return {}


@pytest.mark.parametrize("backend,P", [("emulated", 3), ("local", 2)])
def test_a_worker_that_raises_is_named(backend, P):
    with pytest.raises(WorkerError, match=f"worker {P - 1}: ValueError: boom"):
        driver.run(raiser, workers=P, backend=backend, profile=FREE, bad=P - 1)


def test_mismatched_collectives_fail_on_the_emulated_backend():
    def fn(comm):
        comm.barrier()
        if comm.rank == 0:
            comm.barrier()
        return {}

    with pytest.raises(WorkerError, match="collectives do not match"):
        driver.run(fn, workers=2, backend="emulated", profile=FREE)

    def other_op(comm):
        comm.allreduce(np.zeros(2)) if comm.rank else comm.barrier()
        return {}

    with pytest.raises(WorkerError, match="do not match"):
        driver.run(other_op, workers=2, backend="emulated", profile=FREE)


def _interrupted(comm):
    if comm.rank == 1:
        raise KeyboardInterrupt
    comm.barrier()
    return {}


# kills: an emulated worker's Ctrl-C (or SystemExit) caught like a worker's error, or swallowed:
# it must reach the caller as itself, not as a WorkerError
def test_an_interrupt_in_an_emulated_worker_reaches_the_caller():
    with pytest.raises(KeyboardInterrupt):
        driver.run(_interrupted, workers=2, backend="emulated", profile=FREE)


def _compute_then(comm, *, nap: float, then_barrier: bool):
    if comm.rank == 1:
        time.sleep(nap)
    if then_barrier:
        comm.barrier()
    return {}


# kills: the emulated stall check turned round (``w.dead`` for ``not w.dead``): a worker that
# computes past the stall timeout before its next collective fails the run, one that computes
# as long and then returns does not (nobody waits for it)
def test_emulated_stall_check_is_for_workers_still_to_reach_a_collective():
    old = stall_timeout()
    try:
        set_stall_timeout(0.2)
        with pytest.raises(WorkerError, match="worker 1 computed .* before reaching barrier"):
            driver.run(_compute_then, workers=2, backend="emulated", profile=FREE, nap=0.5,
                       then_barrier=True)
        assert driver.run(_compute_then, workers=2, backend="emulated", profile=FREE, nap=0.5,
                          then_barrier=False)
    finally:
        set_stall_timeout(old)


def test_bad_arguments():
    with pytest.raises(ValueError, match="exactly 1 worker"):
        driver.run(collectives, workers=2, backend="inprocess", n=1)
    with pytest.raises(ValueError, match="unknown backend"):
        driver.run(collectives, workers=1, backend="gpu", n=1)
    with pytest.raises(ValueError, match="machine profile"):
        driver.run(collectives, workers=2, backend="emulated", n=1)
    with pytest.raises(ValueError, match="workers must be"):
        driver.run(collectives, workers=True, backend="local", n=1)


def test_streams_are_keyed_by_seed_and_key():
    a = driver.stream(5, 1, 0).random(3)
    np.testing.assert_array_equal(a, driver.stream(5, 1, 0).random(3))
    assert not np.array_equal(a, driver.stream(5, 1, 1).random(3))  # another rank
    assert not np.array_equal(a, driver.stream(6, 1, 0).random(3))  # another seed
    ref = np.random.default_rng(np.random.SeedSequence(5, spawn_key=(1, 0))).random(3)
    np.testing.assert_array_equal(a, ref)


CAL = MachineProfile("cal", 1e-3, 1e6, "test: a calibrated machine", compute_ratio=2.0,
                     coll={"allgather": {3: [[800, 5e-4], [8000, 2e-3]]}, "barrier": {3: [[0, 1e-4]]}},
                     contention={"small": {3: 1.5}}, straggler={"small": {3: 1.2}})


def test_emulated_calibrated_profile_worked_example(monkeypatch):
    """Compute × ratio 2 × contention 1.5; each allgather waits for the slowest, then the
    straggler's expected extra 0.2 × the mean scaled compute, then the measured 0.5 ms."""
    naps = [0.002, 0.010, 0.005]
    rec = emulate(naps, CAL, monkeypatch)
    scaled = np.multiply(naps, 3.0)  # 6, 30, 15 ms
    end = scaled.max() + 0.2 * scaled.mean() + 5e-4  # 30 + 3.4 + 0.5 ms
    np.testing.assert_allclose(rec.compute_s, [scaled, scaled], rtol=1e-12)
    np.testing.assert_allclose(rec.comm_s, [end - scaled] * 2, rtol=1e-12)
    assert rec.time_s == pytest.approx(2 * end, rel=1e-12)
    # the same composition as a formula, what reports use for compute-only runs
    c, comm = CAL.emulate(3, 2 * 0.010, [("allgather", 800, 2)])
    assert c + comm == pytest.approx(2 * (0.030 + 0.2 * 0.030 + 5e-4), rel=1e-12)
    # negative control: without the tables (same α, β) the time is the α/β one
    ab = MachineProfile("ab", 1e-3, 1e6, "test")
    assert emulate(naps, ab, monkeypatch).time_s == pytest.approx(2 * (0.010 + ab.allgather_time(3, 800)))
