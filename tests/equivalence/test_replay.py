"""engine/comm/replay.py: an emulated run's trace, replayed under the run's own profile,
gives the run's per-round compute and communication bit for bit, for every strategy ×
network cell of the equivalence matrix (reproduce/matrix.py) on 2 and 3 emulated workers,
and under a calibrated profile (contention, straggler wait); a worked example on an α/β
profile; controls: another profile prices the same trace otherwise, and a trace that lost
a collective is refused."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import reproduce.matrix as M
from engine.comm.replay import replay, trace_of
from engine.parallel import driver
from engine.parallel.data_parallel import train_data_parallel
from engine.perfmodel import MachineProfile
from engine.timing import COLLECTIVE as C, ROUND as R

WORKLOADS = M.workloads()
CELLS = [(name, net) for name in [*M.DATA_PARALLEL, *M.model_parallel()] for net in WORKLOADS
         if M.why_not(name, WORKLOADS[net]) is None]


def emulated_runs(monkeypatch) -> list:
    """Every emulated driver.run of the test: (the workers' results, the profile)."""
    runs, real = [], driver.run

    def spy(worker, *, backend, **kw):
        res = real(worker, backend=backend, **kw)
        if backend == "emulated":
            runs.append((res, kw["profile"]))
        return res

    monkeypatch.setattr(driver, "run", spy)
    return runs


def accounts(results) -> tuple[np.ndarray, np.ndarray]:
    logs = np.stack([r["log"] for r in results], axis=1)  # (rounds, P, 3)
    return logs[:, :, 0], logs[:, :, 1]


def test_every_cell_is_in_the_list():
    assert {n for n, _ in CELLS} == {*M.DATA_PARALLEL, *M.model_parallel()}
    assert {w for _, w in CELLS} == set(WORKLOADS) and len(CELLS) == 19


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name,net", CELLS, ids=[f"{n}-{w}" for n, w in CELLS])
def test_a_replay_under_the_runs_profile_is_the_run(monkeypatch, name, net, workers):
    runs = emulated_runs(monkeypatch)
    dev, status = M.cell(name, WORKLOADS[net], backend="emulated", workers=workers)
    assert status == "pass" and runs
    for results, profile in runs:
        compute, comm = replay(trace_of([r["comm_trace"] for r in results]), profile)
        live = accounts(results)
        assert np.array_equal(compute, live[0]) and np.array_equal(comm, live[1])
        if profile.latency_s > 0 and workers > 1 and comm.size:  # the control: 10× α
            slow = MachineProfile("slow", profile.latency_s * 10, profile.bandwidth_Bps, "test")
            assert not np.array_equal(replay(trace_of([r["comm_trace"] for r in results]), slow)[1], live[1])


def test_a_calibrated_profile_replays_too():
    """Contention scales the compute and the straggler wait enters every collective."""
    prof = MachineProfile.load(Path(__file__).parents[2] / "engine" / "profiles" / "xeon16.json")
    w = WORKLOADS["mlp"]
    rec = train_data_parallel(w.make_net, w.data, cfg=M.DATA_PARALLEL["data-parallel/gradients"], seed=1,
                              workers=4, backend="emulated", profile=prof)
    assert prof.compute_scale(4) != 1.0 and prof.sync_wait(4, 1e-3) > 0
    compute, comm = replay(rec.trace, prof)
    assert np.array_equal(compute, rec.compute_s) and np.array_equal(comm, rec.comm_s)
    free = MachineProfile("free", 0.0, float("inf"), "test")
    assert not np.array_equal(replay(rec.trace, free)[0], rec.compute_s)  # no contention there


def worked_trace() -> dict:
    """Two workers, two rounds of one allreduce of 800 bytes each."""
    return {"P": 2, "kernel": "small", "ops": [["allreduce", 800, 2]],
            "events": [np.array([1e-3, C, R, 2e-3, C, R]), np.array([3e-3, C, R, 1e-3, C, R])]}


def test_a_worked_example():
    """α = 10 µs, β = 1e8 B/s: an allreduce of 2 workers costs 2α + 800/β = 28 µs. Round 1
    ends at 3 ms + 28 µs for both (worker 0 waits 2 ms for worker 1); round 2: worker 0
    arrives at 5.028 ms, worker 1 at 4.028 ms, both leave at 5.056 ms."""
    compute, comm = replay(worked_trace(), MachineProfile("ab", 1e-5, 1e8, "test"))
    np.testing.assert_allclose(compute, [[1e-3, 3e-3], [2e-3, 1e-3]], rtol=0, atol=1e-18)
    np.testing.assert_allclose(comm, [[2.028e-3, 2.8e-5], [2.8e-5, 1.028e-3]], rtol=1e-12)


def test_a_trace_that_lost_a_collective_is_refused():
    t = worked_trace()
    t["events"][1] = np.array([3e-3, C, R, 1e-3, R])
    with pytest.raises(ValueError, match="worker 1's trace ends before collective allreduce"):
        replay(t, MachineProfile("ab", 1e-5, 1e8, "test"))
    t = worked_trace()
    t["ops"] = [["allreduce", 800, 1]]
    with pytest.raises(ValueError, match="more collectives"):
        replay(t, MachineProfile("ab", 1e-5, 1e8, "test"))


def test_trace_of_compresses_repeated_collectives():
    parts = [{"P": 2, "kernel": "small", "ops": [("allgather", 8)] * 3 + [("barrier", 0)],
              "events": np.zeros(0)}] * 2
    assert trace_of(parts)["ops"] == [["allgather", 8, 3], ["barrier", 0, 1]]
