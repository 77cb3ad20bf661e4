"""Worker clean-up of the local backend (engine/comm/local.py), observed directly on real
processes (issue 35): after run_local returns or raises, every worker is gone, and the way
it went says which step of ``_reap`` ended it: SIGTERM from ``terminate`` (at once), or
SIGKILL from the fallback after the grace period.

The grace period is cut to 0.5 s through a spy on ``_reap`` so the fallback is quick to
observe; the spy also times ``_reap``, which the fallback would keep for that grace.
"""
from __future__ import annotations

import os
import signal
import time

import pytest

import engine.comm.local as local
from engine.comm.base import WorkerError

GRACE = 0.5
pytestmark = pytest.mark.usefixtures("watchdog")


@pytest.fixture
def reaped(monkeypatch):
    """The workers run_local reaps, with their pids and exit codes, under a short grace."""
    seen = {}
    real = local._reap

    def spy(procs, results, grace=2.0):
        t0 = time.monotonic()
        real(procs, results, GRACE)
        seen["seconds"] = time.monotonic() - t0
        seen["pids"] = [p.pid for p in procs]
        seen["codes"] = [p.exitcode for p in procs]
        seen["alive"] = [p.is_alive() for p in procs]

    monkeypatch.setattr(local, "_reap", spy)
    return seen


def _gone(pid: int) -> bool:
    """The process no longer exists (not even as a zombie: join reaped it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _fail_fast_others_sleep(comm):
    if comm.rank == 0:
        raise ValueError("boom")
    time.sleep(30)


# kills: _reap without terminate (the sleepers would live until the kill fallback), the
# SIGTERM sent but the processes not joined (zombies, or run_local returning with them alive)
def test_stragglers_are_gone_right_after_a_failure(reaped):
    with pytest.raises(WorkerError, match="boom"):
        local.run_local(_fail_fast_others_sleep, 3, bind=False)
    assert reaped["alive"] == [False, False, False]
    assert all(_gone(pid) for pid in reaped["pids"])
    # terminate, not the fallback's kill after the grace: said by the exit codes, not by how long
    # _reap took (a wall-clock bound that load can break)
    assert reaped["codes"][1:] == [-signal.SIGTERM, -signal.SIGTERM]
    assert local._LIVE == []  # the SIGTERM handler's list no longer holds them


def _ignore_sigterm(comm):
    if comm.rank == 0:
        time.sleep(0.2)  # let rank 1 install its handler
        raise ValueError("boom")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(30)


# kills: the kill fallback dropped (a worker that ignores SIGTERM would outlive the call);
# and the control for the test above: what the exit code is when the fallback ended it
def test_a_worker_that_ignores_sigterm_is_killed_after_the_grace(reaped):
    with pytest.raises(WorkerError, match="boom"):
        local.run_local(_ignore_sigterm, 2, bind=False)
    assert reaped["codes"][1] == -signal.SIGKILL and _gone(reaped["pids"][1])
    assert reaped["seconds"] >= GRACE  # it waited for the grace first


def _stop_self(comm):
    if comm.rank == 0:
        time.sleep(0.3)  # rank 1 is stopped by then
        raise ValueError("boom")
    os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(30)


# kills: the SIGCONT after terminate dropped: a stopped worker only acts on its SIGTERM once
# continued, so without it only the kill fallback would end it (-SIGKILL, after the grace)
def test_a_stopped_worker_is_continued_and_ends_by_its_sigterm(reaped):
    with pytest.raises(WorkerError, match="boom"):
        local.run_local(_stop_self, 2, bind=False)
    assert reaped["codes"][1] == -signal.SIGTERM and _gone(reaped["pids"][1])


def _rank_squared(comm):
    return comm.rank ** 2


# kills: finished workers terminated instead of joined (the join-before-terminate loop
# dropped): they would end by SIGTERM instead of exiting 0 on their own
def test_a_finished_run_lets_every_worker_exit_by_itself(reaped):
    assert local.run_local(_rank_squared, 3, bind=False) == [0, 1, 4]
    assert reaped["codes"] == [0, 0, 0]
    assert all(_gone(pid) for pid in reaped["pids"]) and local._LIVE == []


# kills: the SIGTERM handler's hook not killing the live workers
def test_the_sigterm_hook_kills_live_workers():
    import multiprocessing as mp

    p = mp.get_context("fork").Process(target=time.sleep, args=(30,), daemon=True)
    p.start()
    local._LIVE.append(p)
    try:
        local._kill_live()
        p.join(5)
        assert p.exitcode == -signal.SIGKILL
    finally:
        local._LIVE.remove(p)
        if p.is_alive():
            p.kill()
            p.join()


def _wait_past_sigterm(comm, flag):
    if comm.rank == 0:
        time.sleep(0.2)  # rank 1 is inside its barrier by then
        raise ValueError("boom")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only the abort word (or the kill) can end it
    try:
        comm.barrier()
    except local.CommAborted:
        with open(flag, "w") as f:
            f.write("aborted")
        raise


# kills: the abort word not set when a run fails (the waiting peer would spin until the kill
# fallback): the peer leaves its barrier by CommAborted and exits by itself
def test_a_failure_sets_the_abort_word_and_waiting_peers_leave(reaped, tmp_path):
    flag = tmp_path / "aborted"
    with pytest.raises(WorkerError, match="boom"):
        local.run_local(_wait_past_sigterm, 2, flag=str(flag), bind=False)
    assert flag.read_text() == "aborted"
    assert reaped["codes"][1] == 0 and _gone(reaped["pids"][1])


def _run_then_exit_zero(target, *args):
    """A forked child's body: ``target(*args)``, then exit 0 had it returned."""
    target(*args)
    os._exit(0)


# kills: a worker started after its parent died carrying on (the parent-death signal was asked
# for too late to cover it): it must exit at once with the orphan's code
def test_a_worker_whose_parent_is_already_gone_exits_at_once():
    import multiprocessing as mp

    not_my_parent = os.getpid() + 10 ** 6  # no parent has this pid
    p = mp.get_context("fork").Process(target=_run_then_exit_zero,
                                       args=(local._die_with_parent, not_my_parent), daemon=True)
    p.start()
    p.join(10)
    assert p.exitcode == local._ORPHANED_EXIT
    # and its control: with the right parent the check lets the worker run on
    q = mp.get_context("fork").Process(target=_run_then_exit_zero,
                                       args=(local._die_with_parent, os.getpid()), daemon=True)
    q.start()
    q.join(10)
    assert q.exitcode == 0


def _slow_result(comm):
    time.sleep(0.3)  # the parent closes its end meanwhile
    return 1


# kills: a worker whose result cannot be sent (its parent is gone: EPIPE) returning normally
# instead of exiting with the orphan's code
def test_a_worker_that_cannot_send_its_result_exits_as_an_orphan():
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    ctrl = ctx.RawArray("b", 2 * local._LINE * 8)
    data = ctx.RawArray("b", 2 * 2 * 16 * 8)
    parent_end, child_end = ctx.Pipe(duplex=False)
    algorithms = {"allreduce": "auto", "allgather": "copy", "cma": False}
    p = ctx.Process(target=local._child, daemon=True,
                    args=(0, 1, ctrl, data, 16, None, child_end, [parent_end], os.getpid(),
                          algorithms, None, _slow_result, (), {}))
    p.start()
    parent_end.close()  # nobody reads: the worker's send fails with EPIPE
    child_end.close()
    p.join(10)
    assert p.exitcode == local._ORPHANED_EXIT


def _live_seen(comm):
    return len(local._LIVE)


# kills: a worker keeping its copy of the parent's list of live workers (its SIGTERM hook would
# then kill its siblings, or itself, by the parent's list)
def test_a_worker_starts_with_no_list_of_live_workers():
    assert local.run_local(_live_seen, 3, bind=False) == [0, 0, 0]


def _rank_or_raise(comm):
    if comm.rank == 1:
        raise ValueError("rank 1 refuses")
    return comm.rank + 10


def _exits_first(real):
    """multiprocess's wait, but it reports only processes that ended, never a pipe: the
    order of events where a worker's exit is seen before its result's message (its pipe is
    read after its sentinel fired), which run_local otherwise meets only by chance."""
    def wait(objs, timeout=None):
        ends = [o for o in objs if isinstance(o, int)]  # a Process.sentinel is a file descriptor
        return real(ends if ends else objs, timeout)
    return wait


# kills: _collect's path for an exit seen before its message: the pipe not read after the exit
# (`if pipes[r].poll(0.5)` negated: every finished worker reported dead), an error read there
# not ending the loop (its `break` dropped: the error replaced by "worker 1 died")
def test_a_result_read_after_its_workers_exit_counts(monkeypatch):
    monkeypatch.setattr(local, "wait", _exits_first(local.wait))
    assert local.run_local(_rank_squared, 3, bind=False) == [0, 1, 4]
    with pytest.raises(WorkerError) as e:
        local.run_local(_rank_or_raise, 2, bind=False)
    assert "rank 1 refuses" in str(e.value) and "died" not in str(e.value)
    # control: without the patch the same runs give the same answers by the usual path
    monkeypatch.undo()
    assert local.run_local(_rank_squared, 3, bind=False) == [0, 1, 4]


def _wait_or_sleep_past_sigterm(comm, flag):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only the abort word (or the kill) can end them
    if comm.rank == 0:
        time.sleep(30)
    _wait_past_sigterm(comm, flag)


def _interrupt_after(real, seconds: float):
    """multiprocess's wait, raising KeyboardInterrupt in the parent (a Ctrl-C) once ``seconds``
    have passed since the run started."""
    end = time.monotonic() + seconds

    def wait(objs, timeout=None):
        if time.monotonic() >= end:
            raise KeyboardInterrupt
        return real(objs, min(timeout, 0.05) if timeout is not None else 0.05)
    return wait


# kills: an interrupted run not setting the abort word (`error = error or "local run
# interrupted"` dropped, a seed-44 survivor): its waiting peer would spin until the kill
# fallback; with it, the peer leaves its barrier by CommAborted and exits by itself
def test_an_interrupt_sets_the_abort_word_and_waiting_peers_leave(reaped, tmp_path, monkeypatch):
    flag = tmp_path / "aborted"
    monkeypatch.setattr(local, "wait", _interrupt_after(local.wait, 0.5))
    with pytest.raises(KeyboardInterrupt):
        local.run_local(_wait_or_sleep_past_sigterm, 2, flag=str(flag), bind=False)
    assert flag.read_text() == "aborted"
    assert reaped["codes"][1] == 0 and _gone(reaped["pids"][1])
    assert reaped["codes"][0] == -signal.SIGKILL  # control: the sleeper, no collective, is killed
