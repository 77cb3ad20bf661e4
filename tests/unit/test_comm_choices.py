"""The local backend's choices that no result shows (issue 35: the communicators' mutation
survivors): which algorithm a collective ran (every one gives the same bits, so only
``LocalComm.ran`` tells them apart), where the untimed start of the clock synchronises, and
the cross-memory-attach wrapper's error paths with a stand-in for the system call."""
from __future__ import annotations

import ctypes
import os
import time

import numpy as np
import pytest

from engine.comm import LocalComm, cma, local, run_local

needs_cma = pytest.mark.skipif(not cma.available(), reason="process_vm_readv between workers refused here")


def _ran(comm, sizes):
    out = []
    for n in sizes:
        x = np.full(n, 1.0 + comm.rank)
        comm.allgather(x)
        comm.allreduce(x)
        out.append((n, comm.ran["allgather"], comm.ran["allreduce"]))
    return out


def test_a_communicator_reads_no_peer_memory_unless_told_it_may():
    ctrl, data = bytearray(2 * 8 * 8), bytearray(2 * 2 * 16 * 8)
    assert LocalComm(0, 1, ctrl, data, 16)._cma is False  # run_local tells it where cma.available()
    assert LocalComm(0, 1, ctrl, data, 16, cma=True)._cma is True
    assert LocalComm(0, 1, ctrl, data, 16, allgather="cma")._cma is True  # asked for: allowed


def test_a_communicator_built_directly_checks_its_algorithms():
    ctrl, data = bytearray(2 * 8 * 8), bytearray(2 * 2 * 16 * 8)
    with pytest.raises(ValueError, match="allreduce must be one of"):
        LocalComm(0, 1, ctrl, data, 16, allreduce="ring")
    with pytest.raises(ValueError, match="allgather must be one of"):
        LocalComm(0, 1, ctrl, data, 16, allgather="ring")


def test_one_worker_copies_whatever_was_asked():
    ctrl, data = bytearray(2 * 8 * 8), bytearray(2 * 2 * 16 * 8)
    c = LocalComm(0, 1, ctrl, data, 16, allgather="cma", allreduce="rsag")
    c.allgather(np.ones(4))
    c.allreduce(np.ones(4))
    assert c.ran == {"allgather": "copy", "allreduce": "one"}  # no peer to read or to sum with


@pytest.mark.parametrize("P", [2, 3])
def test_copy_and_flat_below_the_thresholds_rsag_above(P):
    assert local._RSAG_MIN == 4096  # the measured crossing (module docstring): stated, so a change is seen
    small, big = 4095, 4096
    got = run_local(_ran, P, [small, big], max_elems=big, allgather="copy", allreduce="auto")
    for rank in got:
        assert rank[0] == (small, "copy", "flat")
        assert rank[1] == (big, "copy", "rsag" if P > 2 else "flat")  # P = 2 without cma: flat
    # control: asked for, flat is what runs at any size
    assert run_local(_ran, P, [big], max_elems=big, allgather="copy", allreduce="flat")[0][0][2] == "flat"


def test_many_workers_use_rsag_whatever_the_size():
    # from 12 workers on (local._RSAG_ANY_P, the measured crossing), auto sums 8 elements by rsag
    assert local._RSAG_ANY_P == 12
    assert run_local(_ran, 12, [8], allgather="copy", allreduce="auto")[0] == [(8, "copy", "rsag")]
    assert run_local(_ran, 11, [8], allgather="copy", allreduce="auto")[0] == [(8, "copy", "flat")]  # control


@needs_cma
def test_auto_reads_the_peer_only_at_two_workers_and_large_messages():
    assert local._CMA_MIN == 1 << 15
    n = 1 << 15
    got = run_local(_ran, 2, [n - 1, n], max_elems=n, allgather="auto", allreduce="auto")
    assert got[0] == [(n - 1, "copy", "flat"), (n, "cma", "pair")]
    # the allreduce reads the peer by itself: with the allgather told to copy, auto still pairs
    assert run_local(_ran, 2, [n], max_elems=n, allgather="copy", allreduce="auto")[0] == [(n, "copy", "pair")]
    # three workers: auto keeps the copy however large; asked for, cma reads at any size
    assert run_local(_ran, 3, [n], max_elems=n, allgather="auto", allreduce="auto")[0] == [(n, "copy", "rsag")]
    assert run_local(_ran, 3, [8], allgather="cma", allreduce="cma")[0] == [(8, "cma", "rsag")]


def _late_start(comm, late_before: bool):
    if comm.rank == 1 and late_before:
        time.sleep(0.6)
    comm.start_clock()
    if comm.rank == 1 and not late_before:
        time.sleep(0.6)
    comm.barrier()
    return comm.clock.wall()


def test_start_clock_waits_for_every_worker_before_counting():
    early = run_local(_late_start, 2, True)
    assert early[0] < 0.3  # the wait for the late rank (0.6 s) was untimed
    # control: the same lateness after the start is counted
    assert run_local(_late_start, 2, False)[0] >= 0.55


class _FakeReadv:
    """process_vm_readv's stand-in: copies at most ``chunk`` bytes a call from ``src``, or
    returns ``fail`` (setting errno ``err``)."""

    def __init__(self, src: np.ndarray, chunk: int, fail: int | None = None, err: int = 0):
        self.src, self.chunk, self.fail, self.err, self.calls = src, chunk, fail, err, 0

    def __call__(self, pid, local_iov, n1, remote_iov, n2, flags):
        self.calls += 1
        if self.fail is not None:
            ctypes.set_errno(self.err)
            return self.fail
        lo, rem = local_iov._obj, remote_iov._obj
        k = min(self.chunk, lo.iov_len)
        ctypes.memmove(lo.iov_base, rem.iov_base, k)
        return k


def test_read_into_goes_on_after_a_short_read(monkeypatch):
    src = np.arange(10.0)
    fake = _FakeReadv(src, chunk=24)  # three float64 a call
    monkeypatch.setattr(cma, "_readv", fake)
    dst = np.zeros(10)
    cma.read_into(os.getpid(), dst, src.ctypes.data, src.nbytes)
    assert np.array_equal(dst, src) and fake.calls == 4  # 24 + 24 + 24 + 8 bytes
    with pytest.raises(ValueError, match="read of 88 bytes into a buffer of 80"):
        cma.read_into(os.getpid(), dst, src.ctypes.data, 88)


@pytest.mark.parametrize("fail,err,errno_,words", [(-1, 3, 3, os.strerror(3)), (0, 3, 0, "no progress")])
def test_read_into_raises_with_the_calls_errno(monkeypatch, fail, err, errno_, words):
    monkeypatch.setattr(cma, "_readv", _FakeReadv(np.zeros(1), 8, fail=fail, err=err))
    with pytest.raises(OSError) as e:
        cma.read_into(123, np.zeros(1), 0, 8)
    assert e.value.errno == errno_ and words in str(e.value)  # a call that read nothing is no errno's fault


# kills: the prototype's return type left at ctypes' default int (a read of 2 GiB or more in one
# call would come back truncated, and read_into would raise on a good read); the function not
# kept (_fn would return None, and cma would look refused: its tests skip, auto copies)
def test_process_vm_readv_is_declared_with_its_c_signature(monkeypatch):
    monkeypatch.setattr(cma, "_readv", None)
    f = cma._fn()
    assert callable(f) and cma._fn() is f
    assert f.restype is ctypes.c_ssize_t  # ssize_t process_vm_readv(pid_t, ..., unsigned long)
    assert f.argtypes[0] is ctypes.c_int and f.argtypes[2] is ctypes.c_ulong
    assert f.argtypes[-1] is ctypes.c_ulong and len(f.argtypes) == 6


def test_the_probe_agrees_with_a_read_of_its_own():
    # cma.available() tries once, in a forked child; a direct read here must agree with it
    src = np.arange(64.0)
    pid = os.fork()
    if pid == 0:
        try:
            dst = np.zeros(64)
            cma.read_into(os.getppid(), dst, src.ctypes.data, src.nbytes)
            os._exit(0 if np.array_equal(dst, src) else 1)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert cma._try() == (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0)


def _slow(ok: bool):
    def read(pid, dst, addr, nbytes):
        time.sleep(0.3)  # the parent is in waitpid by then
        if not ok:
            raise PermissionError(1, "refused")
        dst[:] = np.arange(dst.size, dtype=np.float64)
    return read


# kills: the probe not waiting for its child (WNOHANG: a child still reading would count as a
# success, and stay a zombie): a slow refused read is "not available", a slow good one is
@needs_cma
@pytest.mark.parametrize("ok", [False, True])
def test_the_probe_waits_for_its_childs_answer(ok, monkeypatch):
    monkeypatch.setattr(cma, "read_into", _slow(ok))
    assert cma._try() is ok


def _bytes_of_each(comm, n):
    """The bytes each collective books on this rank (one round each), in order."""
    comm.start_clock()
    x = np.ones(n)
    for op in (lambda: comm.allgather(x), lambda: comm.allreduce(x), lambda: comm.broadcast(x, root=1),
               comm.barrier):
        op()
        comm.clock.end_round()
    return comm.clock.log.array[:, 2].tolist()


def test_emulated_workers_book_the_same_bytes():
    # the emulated backend books each collective's bytes as the local one does (its times are
    # the profile's): a broadcast on its root only
    from engine.comm.emulated import run_emulated
    from engine.perfmodel import MachineProfile

    prof = MachineProfile("t", 1e-6, 1e9, source="test")
    got = run_emulated(_bytes_of_each, 2, 10, profile=prof)
    assert got == [[80.0, 80.0, 0.0, 0.0], [80.0, 80.0, 80.0, 0.0]]


def test_each_collective_books_what_this_rank_sends():
    # the bytes column of a worker's log (compute s, communication s, bytes): a broadcast is
    # booked on its root only, a barrier sends nothing
    n = 10
    got = run_local(_bytes_of_each, 2, n)
    for rank, row in enumerate(got):
        assert row[0] == row[1] == 8 * n and row[3] == 0, rank
        assert row[2] == (8 * n if rank == 1 else 0), rank
