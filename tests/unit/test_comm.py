"""Communicators: in-process, local processes over shared memory, and MPI.

Every test runs under a 60 s watchdog (SIGALRM) that turns a hang into a
failure; nothing here asserts on speed.
"""
from __future__ import annotations

import os
import signal
import sys
import time

import multiprocess
import numpy as np
import pytest

from engine.comm import Communicator, InProcessComm, LocalComm, WorkerError, cma, local, run_local
from engine.comm.base import set_stall_timeout, stall_timeout

WATCHDOG_S = 60


@pytest.fixture(autouse=True)
def watchdog():
    def on_alarm(signum, frame):
        raise TimeoutError(f"test hung: watchdog fired after {WATCHDOG_S} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(WATCHDOG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# -- worker bodies (module level; the local backend forks) ---------------------------
SHAPES = [(1,), (3,), (17,), (2, 5), (64,), (4, 4)]


def data(seed: int, i: int, rank: int, shape) -> np.ndarray:
    """What rank ``rank`` sends in iteration ``i``: any rank can recompute it."""
    return np.random.default_rng([seed, i, rank]).normal(size=shape)


def rank_order_sum(xs):
    out = np.add(xs[0], xs[1]) if len(xs) > 1 else xs[0].copy()
    for x in xs[2:]:
        out += x
    return out


def _collectives(comm, iters: int, seed: int, *, inplace: bool = True):
    P, me = comm.size, comm.rank
    checked = 0
    for i in range(iters):
        shape = SHAPES[i % len(SHAPES)]
        xs = [data(seed, i, r, shape) for r in range(P)]
        mine = xs[me].copy()
        if (i + me) % 13 == 0:
            time.sleep(0.001)  # ranks drift apart: a fast rank runs into the next slot set
        # allgather, fresh and into a given buffer
        got = comm.allgather(mine)
        if got.shape != (P,) + shape or not np.array_equal(got, np.stack(xs)):
            raise AssertionError(f"allgather wrong at iteration {i} on rank {me}")
        recv = np.full((P,) + shape, np.nan)
        if comm.allgather(mine, recv) is not recv or not np.array_equal(recv, np.stack(xs)):
            raise AssertionError(f"allgather(recvbuf) wrong at iteration {i} on rank {me}")
        # allreduce, fresh and in place
        want = rank_order_sum(xs)
        s = comm.allreduce(mine)
        if s.shape != shape or not np.allclose(s, want, rtol=1e-14, atol=1e-14):
            raise AssertionError(f"allreduce wrong at iteration {i} on rank {me}")
        if inplace:
            buf = mine.copy()
            if comm.allreduce(buf, buf) is not buf or not np.allclose(buf, want, rtol=1e-14,
                                                                       atol=1e-14):
                raise AssertionError(f"in-place allreduce wrong at iteration {i} on rank {me}")
        if not np.array_equal(mine, xs[me]):
            raise AssertionError("allreduce changed its send buffer")
        # broadcast from every root in turn
        root = i % P
        b = mine.copy()
        if comm.broadcast(b, root=root) is not b or not np.array_equal(b, xs[root]):
            raise AssertionError(f"broadcast from {root} wrong at iteration {i} on rank {me}")
        comm.barrier()
        checked += 1
    return {"rank": me, "size": P, "checked": checked, "last_sum": s}


def _tight_loop(comm, iters: int, n: int):
    """Back-to-back collectives with nothing in between, on large messages.

    The root of a broadcast leaves as soon as the barrier opens and writes its
    next message at once, while the others are still copying the last one out;
    a rank preempted just after a barrier lags a whole collective behind. Only
    separate slot sets for consecutive collectives keep what they read intact.
    Returns the number of corrupted results this rank saw.
    """
    P, me = comm.size, comm.rank
    src = [np.zeros(n), np.ones(n)]
    buf = np.empty(n)
    x = np.empty(n)
    recv = np.empty((P, n))
    bad = 0
    for i in range(iters):
        b = src[i % 2] if me == 0 else buf
        comm.broadcast(b, root=0)
        if me != 0 and not np.all(buf == i % 2):
            bad += 1
        x.fill(me * 1_000_000 + i)
        comm.allgather(x, recv)
        if not np.array_equal(recv, np.broadcast_to(np.arange(P)[:, None] * 1_000_000 + i,
                                                    recv.shape)):
            bad += 1
    return bad


def _barrier_files(comm, folder: str, rounds: int):
    for i in range(rounds):
        if comm.rank == comm.size - 1:
            time.sleep(0.01)  # the last rank arrives late
        with open(os.path.join(folder, f"{i}_{comm.rank}"), "w"):
            pass
        comm.barrier()
        for r in range(comm.size):
            if not os.path.exists(os.path.join(folder, f"{i}_{r}")):
                raise AssertionError(f"rank {comm.rank} left barrier {i} before rank {r} arrived")
    return True


def _raise_at(comm, bad_rank: int, after: int):
    x = np.ones(4)
    for _ in range(after):
        comm.allreduce(x)
    if comm.rank == bad_rank:
        raise ValueError(f"boom from rank {comm.rank}")
    while True:  # the others wait for a peer that never comes: only the abort ends this
        comm.allreduce(x)


def _kill_self(comm, bad_rank: int):
    x = np.ones(4)
    for _ in range(3):
        comm.allgather(x)
    if comm.rank == bad_rank:
        os.kill(os.getpid(), signal.SIGKILL)
    while True:
        comm.allgather(x)


def _exit_silently(comm):
    comm.barrier()
    if comm.rank == 1:
        os._exit(3)
    while True:
        comm.barrier()


def _sleep(comm, seconds):
    time.sleep(seconds)


def _too_big(comm):
    comm.allgather(np.zeros(5))


def _echo(comm, a, *, b):
    return (comm.rank, comm.size, comm.kind, isinstance(comm, Communicator), a, b)


def assert_no_children_left():
    for p in multiprocess.active_children():
        p.join(2)
    assert multiprocess.active_children() == []


# -- local backend: right values --------------------------------------------------------
@pytest.mark.parametrize("P,iters", [(1, 200), (2, 200), (3, 40)])
def test_local_collectives_match_numpy(P, iters):
    res = run_local(_collectives, P, iters, 1234)
    assert [r["rank"] for r in res] == list(range(P))
    assert all(r["size"] == P and r["checked"] == iters for r in res)
    # the summed-in-rank-order allreduce gives identical bits on every rank
    shape = SHAPES[(iters - 1) % len(SHAPES)]
    want = rank_order_sum([data(1234, iters - 1, r, shape) for r in range(P)])
    for r in res:
        np.testing.assert_array_equal(r["last_sum"], res[0]["last_sum"])
        np.testing.assert_allclose(r["last_sum"], want, rtol=1e-14)


# kills: the barrier of machines without total store order (a multiprocessing Barrier, not the
# spin on generation words) not waited on: ranks would read slots their peers have not written
@pytest.mark.parametrize("P", [2, 3])
def test_local_collectives_without_tso_use_the_process_barrier(P, monkeypatch):
    monkeypatch.setattr(local, "_TSO", False)  # what run_local decides on arm64 or POWER
    res = run_local(_collectives, P, 60, 4321)
    shape = SHAPES[59 % len(SHAPES)]
    want = rank_order_sum([data(4321, 59, r, shape) for r in range(P)])
    assert all(r["checked"] == 60 for r in res)
    for r in res:
        np.testing.assert_allclose(r["last_sum"], want, rtol=1e-14)


@pytest.mark.parametrize("allgather", ["copy", "auto"])
@pytest.mark.parametrize("P,iters", [(2, 500), (3, 300)])
def test_local_slots_survive_ranks_racing_ahead(P, iters, allgather):
    """With ``auto``, the 60,000-element allgather reads peers' buffers (cma) where allowed."""
    assert run_local(_tight_loop, P, iters, 60_000, allgather=allgather) == [0] * P


def _allreduce_bits(comm, sizes, seed: int, reps: int):
    """Every allreduce of ``sizes`` elements, fresh and in place, against the rank-order
    loop sum bit for bit; returns the number of mismatches this rank saw."""
    P, me = comm.size, comm.rank
    bad = 0
    for rep in range(reps):
        for i, n in enumerate(sizes):
            xs = [spread_data(seed, rep * 1000 + i, r, n) for r in range(P)]
            want = rank_order_sum(xs)
            if not np.array_equal(comm.allreduce(xs[me]), want):
                bad += 1
            buf = xs[me].copy()
            comm.allreduce(buf, buf)
            if not np.array_equal(buf, want):
                bad += 1
    return bad


def spread_data(seed: int, i: int, rank: int, n: int) -> np.ndarray:
    """Values over 16 orders of magnitude, so any change of summation order shows in the bits."""
    g = np.random.default_rng([seed, i, rank])
    return g.normal(size=n) * 10.0 ** g.uniform(-8, 8, size=n)


def _tight_allreduce(comm, iters: int, n: int):
    """Back-to-back allreduces of large messages, ranks drifting apart: the shared result
    row of rsag must not be overwritten while a slow rank still copies it out."""
    P, me = comm.size, comm.rank
    x, out, bad = np.empty(n), np.empty(n), 0
    for i in range(iters):
        x.fill(float(1 << me) * (i + 1))
        if (i + me) % 7 == 0:
            time.sleep(0.0005)
        comm.allreduce(x, out)
        if not np.all(out == float((1 << P) - 1) * (i + 1)):
            bad += 1
    return bad


ALLREDUCE_SIZES = [1, 2, 3, 7, 17, 64, 1000, 4099]


@pytest.mark.parametrize("algo", ["flat", "rsag", "auto", "cma"])
@pytest.mark.parametrize("P", [2, 3, 5, 8, 16])
def test_local_allreduce_algorithms_give_the_rank_order_bits(algo, P):
    """Every algorithm, at P up to 16 (oversubscribed here: correctness only), equals the
    serial loop x0 + x1 + ... bit for bit, with blocks of 0 elements (n < P) and uneven
    ones; at P = 2 also above auto's cma threshold."""
    if algo == "cma" and not cma.available():
        pytest.skip("process_vm_readv between workers refused here")
    sizes = ALLREDUCE_SIZES + ([local._CMA_MIN + 1] if P == 2 else [])
    assert run_local(_allreduce_bits, P, sizes, 7, 2, max_elems=max(sizes), allreduce=algo) == [0] * P


def test_spread_data_detects_a_change_of_summation_order():
    """Negative control for the test above: on its data, a pairwise (tree) sum and numpy's
    own reduction (pairwise over an innermost rank axis) differ from the rank-order loop."""
    P, n = 16, 1000
    xs = [spread_data(7, 0, r, n) for r in range(P)]
    loop = rank_order_sum(xs)
    tree = list(xs)
    while len(tree) > 1:
        tree = [tree[i] + tree[i + 1] if i + 1 < len(tree) else tree[i] for i in range(0, len(tree), 2)]
    assert not np.array_equal(tree[0], loop)
    innermost = np.add.reduce(np.stack(xs).T.copy(), axis=1)  # (n,): ranks contiguous, summed pairwise
    assert not np.array_equal(innermost, loop)


@pytest.mark.parametrize("algo", ["flat", "rsag", "cma"])
@pytest.mark.parametrize("P", [2, 4])
def test_local_allreduce_slots_survive_ranks_racing_ahead(algo, P):
    if algo == "cma" and not cma.available():
        pytest.skip("process_vm_readv between workers refused here")
    assert run_local(_tight_allreduce, P, 300, 20_000, max_elems=20_000, allreduce=algo) == [0] * P


# kills: asking for cma where the kernel refuses process_vm_readv falling through to a run
# (it must refuse, naming the collective); auto still runs, on copies
@pytest.mark.parametrize("op", ["allreduce", "allgather"])
def test_cma_asked_for_where_the_kernel_refuses_it_is_an_error(op, monkeypatch):
    monkeypatch.setattr(local, "cma_available", lambda: False)
    with pytest.raises(ValueError, match=f"{op}='cma': process_vm_readv"):
        run_local(_rank_squared, 2, **{op: "cma"})
    assert run_local(_rank_squared, 2) == [0, 1]


def _rank_squared(comm):
    return comm.rank ** 2


def _gather_ran(comm, n):
    comm.allgather(np.full(n, 1.0 + comm.rank))
    return comm.ran["allgather"]


# kills: `allgather = "copy" if allgather == "auto" else allgather` negated (a seed-45
# survivor): where the kernel refuses process_vm_readv, auto must gather on copies, also for
# two workers and a message big enough that auto would otherwise read the peer's memory
def test_auto_gathers_on_copies_where_the_kernel_refuses_cma(monkeypatch):
    monkeypatch.setattr(local, "cma_available", lambda: False)
    assert run_local(_gather_ran, 2, local._CMA_MIN + 1) == ["copy", "copy"]


def _affinity(comm):
    return sorted(os.sched_getaffinity(0))


def test_local_workers_are_bound_one_to_a_core_where_there_are_enough():
    cpus = sorted(os.sched_getaffinity(0))
    P = min(2, len(cpus))
    got = run_local(_affinity, P, bind=True)
    assert got == ([[c] for c in cpus[:P]] if P >= 2 else [cpus])
    # negative controls: not asked, or more workers than CPUs, leaves them unbound
    assert run_local(_affinity, P, bind=False) == [cpus] * P
    assert run_local(_affinity, len(cpus) + 1, bind=True) == [cpus] * (len(cpus) + 1)


def test_run_local_rejects_an_unknown_algorithm():
    with pytest.raises(ValueError, match="allreduce must be one of"):
        run_local(_echo, 2, 1, b=2, allreduce="ring")
    with pytest.raises(ValueError, match="allgather must be one of"):
        run_local(_echo, 2, 1, b=2, allgather="ring")


needs_cma = pytest.mark.skipif(not cma.available(), reason="process_vm_readv between workers refused here")


def _allgather_check(comm, shapes, seed: int, reps: int):
    """Allgather of each shape, fresh, into a given buffer and into a strided one, against
    np.stack of what every rank sent; returns the number of mismatches this rank saw."""
    P, me = comm.size, comm.rank
    bad = 0
    for rep in range(reps):
        for i, shape in enumerate(shapes):
            xs = [data(seed, rep * 100 + i, r, shape) for r in range(P)]
            want = np.stack(xs)
            bad += not np.array_equal(comm.allgather(xs[me]), want)
            recv = np.full((P,) + shape, np.nan)
            bad += comm.allgather(xs[me], recv) is not recv or not np.array_equal(recv, want)
            wide = np.full((P,) + shape[:-1] + (2 * shape[-1],), np.nan)
            strided = wide[..., ::2]  # recvbuf not contiguous
            comm.allgather(xs[me], strided)
            bad += not np.array_equal(strided, want)
            bad += not np.array_equal(comm.allgather(xs[me][::-1].copy()[::-1]), want)  # strided send
    return bad


@needs_cma
@pytest.mark.parametrize("algo", ["copy", "cma", "auto"])
@pytest.mark.parametrize("P", [2, 3, 8, 16])
def test_local_allgather_algorithms_agree_with_stack(algo, P):
    """Copy and single-copy (cma) allgather at P up to 16 (oversubscribed here), below and
    above auto's cma threshold, with strided send and receive buffers."""
    shapes = [(1,), (17,), (3, 5), (local._CMA_MIN + 3,)]
    assert run_local(_allgather_check, P, shapes, 11, 2, max_elems=local._CMA_MIN + 3,
                     allgather=algo) == [0] * P


@needs_cma
def test_cma_reads_what_the_other_process_holds():
    """The wrapper against a known buffer of a forked child (and a negative control: a
    pid that does not exist raises instead of leaving the buffer as it was)."""
    src = np.arange(50_000, dtype=np.float64)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        mine = src * 3.0  # the child's own memory
        os.write(w, int(mine.ctypes.data).to_bytes(8, "little"))
        time.sleep(5)
        os._exit(0)
    os.close(w)
    try:
        addr = int.from_bytes(os.read(r, 8), "little")
        dst = np.zeros_like(src)
        cma.read_into(pid, dst, addr, dst.nbytes)
        np.testing.assert_array_equal(dst, src * 3.0)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
    with pytest.raises(OSError):
        cma.read_into(pid, dst, addr, dst.nbytes)  # the child is gone: ESRCH


def test_consecutive_collectives_use_alternating_slot_sets():
    """White-box: collective k+1 must not overwrite what collective k left for its readers."""
    ctrl = bytearray(2 * 8 * 8)  # (size + abort) cache lines of 8 int64 words
    data = bytearray(2 * 2 * 16 * 8)  # (2 slot sets, size 1 + result row, 16 elements) float64
    c = LocalComm(0, 1, ctrl, data, 16)
    slots = np.frombuffer(data).reshape(2, 2, 16)
    a, b = np.full(5, 1.0), np.full(5, 2.0)
    np.testing.assert_array_equal(c.allgather(a), [a])
    np.testing.assert_array_equal(c.allgather(b), [b])
    np.testing.assert_array_equal(slots[:, 0, :5], [a, b])  # a is still intact
    c.allreduce(np.full(5, 3.0))  # back to the first set
    np.testing.assert_array_equal(slots[:, 0, :5], [np.full(5, 3.0), b])
    with pytest.raises(ValueError, match="exceeds the local slot of 16"):
        c.allgather(np.zeros(17))


@pytest.mark.parametrize("P", [1, 2, 3])
def test_local_barrier_waits_for_every_rank(P, tmp_path):
    assert run_local(_barrier_files, P, str(tmp_path), 8) == [True] * P


def test_run_local_passes_arguments_and_returns_by_rank():
    assert run_local(_echo, 3, "a", b=7) == [(r, 3, "local", True, "a", 7) for r in range(3)]


def test_run_local_rejects_zero_workers():
    with pytest.raises(ValueError, match="workers must be >= 1, got 0"):
        run_local(_echo, 0, 1, b=2)


# -- local backend: faults -----------------------------------------------------------
@pytest.mark.parametrize("P,bad,after", [(1, 0, 0), (2, 1, 0), (2, 0, 5), (3, 2, 5), (3, 1, 0)])
def test_worker_that_raises_fails_the_run_with_its_error(P, bad, after):
    with pytest.raises(WorkerError) as ei:
        run_local(_raise_at, P, bad, after)
    msg = str(ei.value)
    assert f"worker {bad}" in msg
    assert "ValueError" in msg and f"boom from rank {bad}" in msg
    assert "Traceback" in str(ei.value.__cause__)  # the full traceback rides along
    assert_no_children_left()


@pytest.mark.parametrize("P", [2, 3])
def test_worker_killed_by_sigkill(P):
    with pytest.raises(WorkerError, match=r"worker 1 died \(killed by SIGKILL\)"):
        run_local(_kill_self, P, 1)
    assert_no_children_left()


def test_worker_that_exits_without_a_result():
    with pytest.raises(WorkerError, match=r"worker 1 died"):
        run_local(_exit_silently, 2)
    assert_no_children_left()


def test_run_local_timeout():
    with pytest.raises(WorkerError, match="timed out"):
        run_local(_sleep, 2, 50.0, timeout=0.5)
    assert_no_children_left()


def test_message_larger_than_the_slot():
    with pytest.raises(WorkerError, match="exceeds the local slot of 4"):
        run_local(_too_big, 2, max_elems=4)


def _slot_edge(comm):
    comm.allgather(np.zeros(1 << 16))  # fills the default slot exactly
    try:
        comm.allgather(np.zeros((1 << 16) + 1))
    except ValueError as e:
        return str(e)


# kills: run_local's default slot `1 << 16` changed (a seed-44 survivor): by default a rank's
# message holds 65,536 float64, and one element more is refused, naming both sizes
def test_the_default_slot_holds_65536_elements_and_no_more():
    assert run_local(_slot_edge, 1) == ["message of 65537 elements exceeds the local slot of 65536"]


def test_a_run_after_a_failure_is_clean():
    with pytest.raises(WorkerError):
        run_local(_raise_at, 2, 1, 2)
    res = run_local(_collectives, 2, 20, 5)
    assert [r["checked"] for r in res] == [20, 20]


# -- in-process communicator -----------------------------------------------------------
def test_inprocess_comm_semantics():
    c = InProcessComm()
    assert isinstance(c, Communicator)
    assert (c.rank, c.size, c.kind) == (0, 1, "inprocess")
    x = np.arange(6.0).reshape(2, 3)
    g = c.allgather(x)
    assert g.shape == (1, 2, 3)
    np.testing.assert_array_equal(g[0], x)
    assert not np.shares_memory(g, x)  # a copy, like every other backend
    recv = np.empty((1, 2, 3))
    assert c.allgather(x, recv) is recv
    np.testing.assert_array_equal(recv[0], x)
    s = c.allreduce(x)
    np.testing.assert_array_equal(s, x)
    assert not np.shares_memory(s, x)
    out = np.empty((2, 3))
    assert c.allreduce(x, out) is out
    np.testing.assert_array_equal(out, x)
    assert c.broadcast(x) is x
    np.testing.assert_array_equal(x, np.arange(6.0).reshape(2, 3))
    assert c.barrier() is None


# kills: the base class without its kind (a backend that sets none would have no kind to print)
def test_base_communicator_is_abstract():
    c = Communicator()
    assert c.kind == "abstract" and InProcessComm.kind != "abstract"
    for call in (lambda: c.allgather(np.zeros(1)), lambda: c.allreduce(np.zeros(1)),
                 lambda: c.broadcast(np.zeros(1)), c.barrier):
        with pytest.raises(NotImplementedError):
            call()


def test_local_comm_is_a_communicator():
    assert issubclass(LocalComm, Communicator) and LocalComm.kind == "local"


# -- MPI communicator (through mpiexec) ----------------------------------------------------
def test_mpi_collectives(tmp_path):
    from mpi_ppt_main import launch_or_skip  # the test folders are on sys.path (tests/conftest.py)

    out = tmp_path / "comm.npz"
    launch_or_skip(2, ["comm", "--out", str(out), "--iters", "30", "--seed", "99"])
    z = np.load(out)
    assert int(z["checked"]) == 30 and int(z["size"]) == 2
    shape = SHAPES[29 % len(SHAPES)]
    want = rank_order_sum([data(99, 29, r, shape) for r in range(2)])
    np.testing.assert_allclose(z["last_sum"], want, rtol=1e-14)


def test_mpi_allreduce_in_place(tmp_path):
    """Regression: allreduce(buf, out=buf) used to hand MPI_Allreduce the same buffer
    twice ("Buffers must not be aliased"); the other backends always allowed it."""
    from mpi_ppt_main import launch_or_skip, rank_errors

    out = tmp_path / "comm.npz"
    args = ["comm", "--out", str(out), "--iters", "12", "--inplace"]
    res = launch_or_skip(2, args, check=False)
    text = res.stdout + res.stderr + rank_errors(args)
    assert "Buffers must not be aliased" not in text, text[-2000:]
    assert res.returncode == 0, text
    assert int(np.load(out)["checked"]) == 12


# kills: split's COMM_NULL test turned round (rank 0 would get None, rank 1 a null
# communicator), split leaving its collective armed (the watchdog would abort the rank that
# computes past the stall timeout afterwards), allgather ignoring the caller's buffer, and
# allreduce treating an output that starts inside its input as the same buffer (MPI's
# IN_PLACE would sum the output's old contents), wait_for_peers not waiting or spinning
def test_mpi_split_and_caller_buffers(tmp_path):
    from mpi_ppt_main import launch_or_skip

    out = tmp_path / "edges.npz"
    launch_or_skip(2, ["edges", "--out", str(out), "--stall", "1.5", "--compute", "4"])
    z = np.load(out)
    assert bool(z["ok"]) and int(z["size"]) == 2


class _FakeWorld:
    def __init__(self):
        self.codes = []

    def Abort(self, code):  # noqa: N802 - mpi4py's name
        self.codes.append(code)


# kills: the watchdog starting without an op (its thread would die on its first look, and no
# stall would ever abort); and its negative control: an armed collective past the timeout aborts
def test_mpi_watchdog_idles_until_armed_then_aborts_a_stall():
    from engine.comm import mpi

    old = stall_timeout()
    w, world = mpi._Watchdog(), _FakeWorld()
    try:
        set_stall_timeout(0.2)
        w.start("rank 0 of 1", world)
        time.sleep(0.5)  # several looks with nothing armed
        assert w.thread.is_alive() and not w.fired and world.codes == []
        w.since = time.monotonic()
        w.op = "allreduce"
        t0 = time.monotonic()
        while not world.codes and time.monotonic() - t0 < 10:
            time.sleep(0.02)
        assert w.fired and world.codes[0] == 1
        assert time.monotonic() - w.since >= 0.2
    finally:
        w.op = None  # the daemon thread lives on, idle
        set_stall_timeout(old)


# kills: the MPI SIGTERM hook doing nothing where a communicator registered its world (or
# failing where none did): it must abort the job with the terminated exit code
def test_mpi_sigterm_hook_aborts_the_registered_world(monkeypatch):
    from engine.comm import mpi
    from engine.comm.base import TERMINATED_EXIT

    monkeypatch.setattr(mpi, "_let_launcher_read_stderr", lambda: None)
    monkeypatch.setattr(mpi, "_abort_hook", [])
    mpi._abort_on_sigterm()  # no communicator yet: nothing to abort, no error
    world = _FakeWorld()
    mpi._abort_hook.append(world)
    mpi._abort_on_sigterm()
    assert world.codes == [TERMINATED_EXIT]


class _FakeMPIWorld(_FakeWorld):
    def Get_rank(self):  # noqa: N802 - mpi4py's names
        return 0

    def Get_size(self):  # noqa: N802
        return 1


# kills: MPIComm not registering its SIGTERM hook (`on_termination(_abort_on_sigterm)` dropped,
# a seed-44 survivor: a scheduler's SIGTERM would leave the peers in their collective): the
# first communicator registers it with its world, a second one registers nothing more
def test_the_first_mpi_communicator_registers_the_sigterm_hook(monkeypatch):
    import types

    from engine.comm import mpi

    world = _FakeMPIWorld()
    monkeypatch.setitem(sys.modules, "mpi4py", types.SimpleNamespace(MPI=types.SimpleNamespace(COMM_WORLD=world)))
    monkeypatch.setattr(mpi, "_abort_hook", [])
    monkeypatch.setattr(mpi, "_watchdog", types.SimpleNamespace(start=lambda who, w: None))
    hooks = []
    monkeypatch.setattr(mpi, "on_termination", hooks.append)
    c = mpi.MPIComm()
    assert (c.rank, c.size) == (0, 1) and hooks == [mpi._abort_on_sigterm] and mpi._abort_hook == [world]
    mpi.MPIComm()  # control: one hook per process, however many communicators
    assert hooks == [mpi._abort_on_sigterm] and mpi._abort_hook == [world]


def _uneven_allgather(comm):
    return comm.allgather(np.zeros(3 + comm.rank))


# kills: the cma allgather reading a peer's buffer of another size (it would read past that
# buffer, or leave rows unread): it must refuse, naming both sizes
@needs_cma
def test_cma_allgather_refuses_buffers_of_different_sizes():
    with pytest.raises(WorkerError, match=r"allgather: rank \d sends \d+ bytes, rank \d \d+"):
        run_local(_uneven_allgather, 2, allgather="cma")


# kills: the /proc reader raising for a process that is gone, and the exit description of a
# signal number Python has no name for
def test_process_state_and_exit_descriptions():
    assert local._proc_state(os.getpid()) in ("R", "S")
    assert local._proc_state(2 ** 22 + 12345) is None  # beyond pid_max's default: no such process

    class P:
        def __init__(self, exitcode):
            self.exitcode = exitcode

    assert local._died(P(-9)) == "killed by SIGKILL" and local._died(P(3)) == "exit code 3"
    assert local._died(P(-99)) == "killed by signal 99"


# kills: one SIGTERM hook that raises stopping the others (a dying process stops what it can)
def test_termination_hooks_all_run_even_when_one_raises(monkeypatch):
    from engine.comm import base

    ran = []

    def bad():
        raise RuntimeError("hook failed")

    monkeypatch.setattr(base, "_term_hooks", [])
    base.on_termination(bad)
    base.on_termination(lambda: ran.append(1))
    base.on_termination(bad)  # registered once only
    base._run_term_hooks()
    assert ran == [1] and len(base._term_hooks) == 2


class _FakeMPI:
    """An mpi4py communicator stand-in that notes which collective the watchdog has armed
    while each call runs (and can fail inside it)."""

    def __init__(self, fail: bool = False):
        self.seen, self.fail = [], fail

    def _see(self, *args, **kwargs):
        from engine.comm import mpi

        self.seen.append(mpi._watchdog.op)
        if self.fail:
            raise RuntimeError("MPI error")
        return "null"

    Barrier = Allgather = Allreduce = Bcast = Split = gather = _see


# kills: any collective of the MPI backend that does not arm the stall watchdog for its call, or
# leaves it armed after (the watchdog would abort a rank computing past the timeout afterwards),
# also when the call fails
@pytest.mark.parametrize("fail", [False, True])
def test_mpi_collectives_arm_the_watchdog_only_while_they_run(fail, monkeypatch):
    from types import SimpleNamespace

    from engine.comm import mpi
    from engine.timing import WorkerClock

    monkeypatch.setattr(mpi._watchdog, "op", None)
    fake = _FakeMPI(fail)
    me = SimpleNamespace(comm=fake, rank=0, size=1, clock=WorkerClock(),
                         _MPI=SimpleNamespace(IN_PLACE="in place", SUM="sum", COMM_NULL="null", UNDEFINED=-1))
    calls = {"barrier": lambda: mpi.MPIComm._barrier(me),
             "allgather": lambda: mpi.MPIComm._allgather(me, np.zeros(2), None),
             "allreduce": lambda: mpi.MPIComm._allreduce(me, np.zeros(2), None),
             "broadcast": lambda: mpi.MPIComm._broadcast(me, np.zeros(2), 0),
             "split": lambda: mpi.MPIComm.split(me, 1),
             "gather": lambda: mpi.MPIComm.gather_objects(me, 1)}
    for op, call in calls.items():
        if fail:
            with pytest.raises(RuntimeError, match="MPI error"):
                call()
        else:
            call()
        assert fake.seen[-1] == op and mpi._watchdog.op is None, op
    assert fake.seen == list(calls)
