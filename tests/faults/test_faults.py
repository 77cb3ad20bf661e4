"""Process faults (issue 15): each is injected and the test asserts the error (or exit
code), its one line, the time the run took to end, and that no process of ours
outlives it.

- a local worker SIGKILLed, SIGTERMed or SIGSTOPped (by its peer, from inside the run),
  or stuck computing; a single worker stopped (only the parent can notice);
- the main process SIGTERMed (with and without the termination handler) or
  SIGKILLed during a local run (a small script run as a subprocess), also with
  the kernel's parent-death signal switched off so the workers' own parent check
  must do it, and with workers that send a large result to a dead parent;
- an MPI rank SIGSTOPped, SIGKILLed or SIGTERMed under 2-rank mpiexec
  (tests/helpers/mpi_fault_main.py), also SIGTERMed while the launcher's proxy is held
  stopped, so that it reads the abort and the rank's stderr line late.

Negative controls: without the stall timeout a stopped worker or rank is still
waiting when the timeout would have fired (the test ends it itself); the check
that finds surviving processes finds an unprotected child left behind on purpose.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from engine.comm.base import WorkerError, set_stall_timeout, stall_timeout
from engine.comm.local import run_local

ROOT = Path(__file__).resolve().parents[2]
END_S = 30  # a hang guard: a job that has not ended within this fails its test (end_mpi,
# kill_main); no test asserts how fast a fault ends a run (load may slow it), only how it does
STALL_S = 2.0

pytestmark = [pytest.mark.usefixtures("watchdog"),
              pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                 reason="process checks read /proc (Linux)")]


# -- process checks -----------------------------------------------------------------------
def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a zombie has ended: only its
    exit status waits to be collected, by whoever adopted it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:][:1] not in (b"Z", b"X")


def wait_gone(pids, within: float) -> float:
    """Seconds until every pid in ``pids`` has ended; fails the test after ``within``."""
    t0 = time.monotonic()
    while any(alive(p) for p in pids):
        if time.monotonic() - t0 > within:
            left = [p for p in pids if alive(p)]
            for p in left:  # never leave them behind, even when failing
                os.kill(p, signal.SIGKILL)
            pytest.fail(f"processes {left} outlived the run by more than {within} s")
        time.sleep(0.05)
    return time.monotonic() - t0


def read_pids(folder: Path, names, within: float = 20.0) -> list[int]:
    t0 = time.monotonic()
    while not all((folder / n).exists() for n in names):
        if time.monotonic() - t0 > within:
            pytest.fail(f"no pid files {names} in {folder} after {within} s")
        time.sleep(0.05)
    return [int((folder / n).read_text()) for n in names]


@pytest.fixture
def stall():
    """Set a short stall timeout for the test and restore the old one after it."""
    old = stall_timeout()
    yield set_stall_timeout
    set_stall_timeout(old)


# -- worker bodies (module level: the local backend forks) -------------------------------
def _pids(comm) -> list[int]:
    return [int(p) for p in comm.allgather(np.array([float(os.getpid())]))[:, 0]]


def _peer_signals_one(comm, sig: int, folder: str):
    """Worker 0 sends ``sig`` to worker 1; everyone then loops on allreduces."""
    pids = _pids(comm)
    if comm.rank == 0:
        Path(folder, "pids").write_text(" ".join(map(str, pids)))
        os.kill(pids[1], sig)
    x = np.ones(1000)
    while True:
        comm.allreduce(x)


def _one_computes_forever(comm, folder: str):
    pids = _pids(comm)
    if comm.rank == 0:
        Path(folder, "pids").write_text(" ".join(map(str, pids)))
    if comm.rank == 1:
        time.sleep(600)  # a deadlock's stand-in: it never reaches the next collective
    comm.allgather(np.ones(3))


def _stops_itself(comm, folder: str):
    Path(folder, "pids").write_text(str(os.getpid()))
    os.kill(os.getpid(), signal.SIGSTOP)


def _run_local_fault(body, size: int, folder: Path, *args, **kw):
    """(message, seconds, worker pids) of a run_local that must fail."""
    t0 = time.monotonic()
    with pytest.raises(WorkerError) as ei:
        run_local(body, size, *args, str(folder), **kw)
    dt = time.monotonic() - t0
    pids = [int(p) for p in (folder / "pids").read_text().split()]
    return str(ei.value), dt, pids


# -- a local worker fails ----------------------------------------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_local_worker_killed(sig, tmp_path):
    msg, _, pids = _run_local_fault(_peer_signals_one, 2, tmp_path, int(sig))
    assert msg == f"worker 1 died (killed by {sig.name})"
    wait_gone(pids, 5)


def test_local_worker_stopped_without_watchdog_waits(stall, tmp_path):
    """Negative control: with the stall timeout off, the peer of a stopped worker is
    still waiting at twice the stall time; only the run's own deadline ends it."""
    stall(None)
    msg, dt, pids = _run_local_fault(_peer_signals_one, 2, tmp_path, int(signal.SIGSTOP),
                                     timeout=2 * STALL_S)
    assert msg == f"local run timed out after {2 * STALL_S} s"
    assert dt >= 2 * STALL_S
    wait_gone(pids, 5)


STALLS = {  # fault -> (worker body, workers, its arguments, the one line)
    "a stopped worker": (_peer_signals_one, 2, (int(signal.SIGSTOP),),
                         "worker 1 made no progress for 2 s in allreduce (stopped or deadlocked?)"),
    "a worker that never reaches the collective": (
        _one_computes_forever, 3, (),
        "worker 1 made no progress for 2 s in allgather (stopped or deadlocked?)"),
    # P = 1: no peer waits for it, so the parent's own check must see it stopped
    "a lone stopped worker": (_stops_itself, 1, (),
                              "worker 0 made no progress for 2 s: it is stopped (SIGSTOP?)"),
}


@pytest.mark.parametrize("fault", list(STALLS))
def test_local_stall_ends_the_run_naming_the_worker(fault, stall, tmp_path):
    body, size, args, line = STALLS[fault]
    stall(STALL_S)
    msg, dt, pids = _run_local_fault(body, size, tmp_path, *args)
    assert msg == line
    assert dt >= STALL_S  # it waited the stall time first (load can only lengthen that)
    wait_gone(pids, 5)  # a stopped worker too: SIGTERM alone would stay pending


def test_stall_timeout_is_validated(stall):
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="stall timeout must be > 0"):
            set_stall_timeout(bad)
    for bad in ("5", True):
        with pytest.raises(TypeError, match="stall timeout must be a number"):
            set_stall_timeout(bad)
    assert stall_timeout() == 600.0  # the default, untouched by the refusals
    set_stall_timeout(3)
    assert stall_timeout() == 3.0
    set_stall_timeout(0.25)  # any positive time, below a second too
    assert stall_timeout() == 0.25


# -- the main process dies ------------------------------------------------------------------
MAIN = textwrap.dedent("""
    import os, subprocess, sys, time
    from pathlib import Path
    import numpy as np
    from engine.comm.base import install_termination_handler, set_stall_timeout
    from engine.parallel import driver
    import engine.comm.local as local

    out, flags = Path(sys.argv[1]), sys.argv[2].split(",")
    if "handler" in flags:
        install_termination_handler("terminated (SIGTERM): fault test")
    if "no-pdeathsig" in flags:  # as where prctl does not exist: the spin's parent check
        def parent_check_only(parent):
            if os.getppid() != parent:
                os._exit(70)
        local._die_with_parent = parent_check_only
    if "control" in flags:  # an unprotected child, for the orphan check's negative control
        c = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (out / "control.pid").write_text(str(c.pid))
    set_stall_timeout(60)

    def worker(comm):
        Path(out, f"w{comm.rank}.tmp").write_text(str(os.getpid()))
        os.rename(out / f"w{comm.rank}.tmp", out / f"w{comm.rank}.pid")
        if "big-result" in flags:  # computing when the parent dies; the result fills the pipe
            time.sleep(3)
            return {"big": np.zeros(1 << 20)}
        if "long-compute" in flags:  # computing, far from any collective, when the parent dies
            time.sleep(600)
        x = np.ones(1000)
        if "finite" in flags:  # a run that ends: 3 s of collectives (rank 0's clock decides
            t_end = time.monotonic() + 3  # for all, so the ranks stop together), then a
            go = np.ones(1)               # pipe-filling result
            while True:
                go[0] = float(comm.rank == 0 and time.monotonic() < t_end)
                if comm.allreduce(go)[0] == 0.0:
                    return {"big": np.zeros(1 << 20)}
        while True:
            comm.allreduce(x)

    driver.run(worker, workers=2, backend="local")
    print("the run returned", file=sys.stderr)
""")


def launch_main(tmp_path: Path, flags: str):
    """Start MAIN; its output goes to files (workers that outlive it would hold a pipe
    open, and reading it to the end would wait for them)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with open(tmp_path / "stdout", "w") as out, open(tmp_path / "stderr", "w") as err:
        proc = subprocess.Popen([sys.executable, "-c", MAIN, str(tmp_path), flags], cwd=ROOT,
                                env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    proc.out = tmp_path
    try:
        workers = read_pids(tmp_path, ["w0.pid", "w1.pid"])
    except BaseException:
        proc.kill()
        raise
    return proc, workers


def kill_main(proc, sig) -> tuple[int, str]:
    """Send ``sig`` to the main process; its exit code and stderr (the test fails if it has
    not exited within END_S)."""
    time.sleep(0.3)  # well inside the run
    proc.send_signal(sig)
    try:
        proc.wait(timeout=END_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"the main process did not exit within {END_S} s of {sig.name}")
    return proc.returncode, (proc.out / "stderr").read_text()


def test_main_sigterm_with_handler_exits_143_with_one_line(tmp_path):
    proc, workers = launch_main(tmp_path, "handler")
    rc, err = kill_main(proc, signal.SIGTERM)
    assert rc == 143, err
    assert err.splitlines() == ["terminated (SIGTERM): fault test"]
    wait_gone(workers, 5)


def test_main_stopped_then_continued_finishes_the_run(tmp_path):
    """SIGSTOP of the main process is job control (Ctrl-Z): the workers go on, then wait to
    hand over their results; after SIGCONT the run finishes normally, nobody left behind."""
    proc, workers = launch_main(tmp_path, "finite")
    time.sleep(0.3)
    proc.send_signal(signal.SIGSTOP)
    time.sleep(4)  # the workers finish their collectives and block on the full pipe
    assert proc.poll() is None and all(alive(p) for p in workers)
    proc.send_signal(signal.SIGCONT)
    assert proc.wait(timeout=END_S) == 0
    assert "the run returned" in (tmp_path / "stderr").read_text()
    wait_gone(workers, 5)


def test_main_stopped_then_killed_leaves_no_worker(tmp_path):
    """A stopped main process killed for good (a scheduler's SIGKILL after SIGSTOP): its
    workers, blocked or spinning, go with it."""
    proc, workers = launch_main(tmp_path, "finite")
    time.sleep(0.3)
    proc.send_signal(signal.SIGSTOP)
    time.sleep(1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=END_S)
    wait_gone(workers, 10)


def test_main_sigterm_without_handler_leaves_no_worker(tmp_path):
    proc, workers = launch_main(tmp_path, "")
    rc, err = kill_main(proc, signal.SIGTERM)
    assert rc == -signal.SIGTERM  # the default action: no line, no cleanup of its own
    wait_gone(workers, 5)


def test_main_sigkill_leaves_no_worker_and_the_check_sees_a_survivor(tmp_path):
    proc, workers = launch_main(tmp_path, "control")
    control = int((tmp_path / "control.pid").read_text())
    rc, err = kill_main(proc, signal.SIGKILL)
    assert rc == -signal.SIGKILL
    wait_gone(workers, 5)
    # negative control: the unprotected child is still there, and the check says so
    assert alive(control)
    os.kill(control, signal.SIGKILL)
    wait_gone([control], 5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_main_sigkill_while_workers_compute(tmp_path):
    """Far from any collective, only the kernel's parent-death signal ends them at once."""
    proc, workers = launch_main(tmp_path, "long-compute")
    rc, err = kill_main(proc, signal.SIGKILL)
    assert rc == -signal.SIGKILL
    wait_gone(workers, 5)


@pytest.mark.parametrize("flags", ["no-pdeathsig", "no-pdeathsig,big-result"])
def test_main_sigkill_workers_notice_by_themselves(flags, tmp_path):
    """Without the kernel's parent-death signal: spinning workers see their parent
    gone; a worker that finishes later gets EPIPE sending its result (it holds no
    read end of any pipe) instead of blocking forever."""
    proc, workers = launch_main(tmp_path, flags)
    rc, err = kill_main(proc, signal.SIGKILL)
    assert rc == -signal.SIGKILL
    assert wait_gone(workers, 15) < 15


# -- an MPI rank fails ----------------------------------------------------------------------
def launch_mpi(tmp_path: Path, *args: str):
    from mpi_ppt_main import find_mpiexec  # the test folders are on sys.path (tests/conftest.py)

    mpiexec = find_mpiexec()
    if mpiexec is None:
        pytest.skip("no mpiexec next to the Python interpreter or on PATH")
    pytest.importorskip("mpi4py")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = [mpiexec, "-n", "2", sys.executable, str(ROOT / "tests" / "helpers" / "mpi_fault_main.py"),
           "--out", str(tmp_path), *args]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        ranks = read_pids(tmp_path, ["rank0.pid", "rank1.pid"], within=30)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return proc, ranks


def end_mpi(proc, ranks, *, within: float = END_S):
    """(exit code, stderr) of a job that must end by itself (the test fails if it has not
    ended within ``within``)."""
    try:
        _, err = proc.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        for p in ranks:
            if alive(p):
                os.kill(p, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the MPI job did not end within {within} s")
    return proc.returncode, err


def test_mpi_rank_stopped_aborts_the_job_with_one_line(tmp_path):
    t_launch = time.monotonic()
    proc, ranks = launch_mpi(tmp_path, "--stall", "3")
    os.kill(ranks[1], signal.SIGSTOP)
    rc, err = end_mpi(proc, ranks)
    since_launch = time.monotonic() - t_launch
    assert rc == 1, err
    ours = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert ours == ["error: rank 0 of 2 waited more than 3 s in allreduce: a peer is stopped, "
                    "dead or deadlocked (MPI collectives cannot be interrupted); aborting the job"]
    assert "Traceback" not in err
    # The watchdog arms when rank 0 enters the stuck allreduce, which can be before the
    # signal (rank 1 already descheduled on two busy cores: one CI run ended 2.97 s after
    # it), but never before the launch: so at least 3 s from there.
    assert since_launch >= 3
    wait_gone(ranks, 5)


def test_mpi_rank_stopped_without_watchdog_waits(tmp_path):
    """Negative control: no stall timeout, and the job is still there after 6 s."""
    proc, ranks = launch_mpi(tmp_path)
    os.kill(ranks[1], signal.SIGSTOP)
    time.sleep(6)
    try:
        assert proc.poll() is None and alive(ranks[0])
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        for p in ranks:
            if alive(p):
                os.kill(p, signal.SIGKILL)
        proc.communicate()
    wait_gone(ranks, 5)


def test_mpi_rank_killed_ends_the_job(tmp_path):
    """SIGKILL cannot be handled: whatever the launcher reports, the job ends."""
    proc, ranks = launch_mpi(tmp_path, "--stall", "60")
    os.kill(ranks[1], signal.SIGKILL)
    rc, err = end_mpi(proc, ranks)
    assert rc != 0
    wait_gone(ranks, 5)


def test_mpi_rank_terminated_ends_the_job_with_143(tmp_path):
    proc, ranks = launch_mpi(tmp_path, "--stall", "60")
    os.kill(ranks[0], signal.SIGTERM)
    rc, err = end_mpi(proc, ranks)
    assert rc == 143, err
    assert "terminated (SIGTERM): mpi fault test" in err.splitlines()
    assert "Traceback" not in err
    wait_gone(ranks, 5)


def test_mpi_released_rank_terminated_keeps_its_line(tmp_path):
    """A rank that has finished its share and waits for its peers (MPIComm.wait_for_peers,
    as `python -m reproduce` does under MPI) still ends the job with its line and 143."""
    proc, ranks = launch_mpi(tmp_path, "--release", "wait")
    time.sleep(0.5)  # rank 0 is inside wait_for_peers: rank 1 never joins the barrier
    os.kill(ranks[0], signal.SIGTERM)
    rc, err = end_mpi(proc, ranks)
    assert rc == 143, err
    assert "terminated (SIGTERM): mpi fault test" in err.splitlines()
    assert "Traceback" not in err
    wait_gone(ranks, 5)


def test_mpi_released_rank_in_finalize_loses_its_line_control(tmp_path):
    """Control: the same rank sitting in MPI_Finalize instead, where no Python code runs,
    prints nothing on SIGTERM (the job is then ended by force here)."""
    proc, ranks = launch_mpi(tmp_path, "--release", "finalize")
    time.sleep(1.0)
    assert alive(ranks[0])  # still there: held in MPI_Finalize by its busy peer
    os.kill(ranks[0], signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        for p in ranks:
            if alive(p):
                os.kill(p, signal.SIGKILL)
        _, err = proc.communicate()
    assert "terminated (SIGTERM): mpi fault test" not in err.splitlines()


def test_mpi_rank_terminated_while_the_launcher_lags_keeps_its_line(tmp_path):
    """MPI_Abort and the stderr line reach the launcher on separate channels; with the
    rank's parent (mpich's proxy) stopped for 0.5 s across the SIGTERM, the line was
    lost in 3 runs of 5 before the rank waited for the launcher to read it."""
    proc, ranks = launch_mpi(tmp_path, "--stall", "60")
    proxy = int(Path(f"/proc/{ranks[0]}/stat").read_text().rsplit(")", 1)[1].split()[1])
    os.kill(proxy, signal.SIGSTOP)
    try:
        os.kill(ranks[0], signal.SIGTERM)
        time.sleep(0.5)
    finally:
        os.kill(proxy, signal.SIGCONT)
    rc, err = end_mpi(proc, ranks)
    assert rc == 143, err
    assert "terminated (SIGTERM): mpi fault test" in err.splitlines()
    wait_gone(ranks, 5)


class _FakeTime:
    """A clock for engine.comm.mpi that moves only when the code sleeps: the wait is checked by
    what it did (how long it polled, how often), not by wall time that load can stretch."""

    def __init__(self):
        self.now, self.sleeps = 100.0, 0

    def monotonic(self):
        return self.now

    def sleep(self, dt):
        self.sleeps += 1
        self.now += dt


def test_rank_waits_until_its_stderr_pipe_is_read(monkeypatch):
    import engine.comm.mpi as M
    from engine.comm.mpi import _let_launcher_read_stderr

    r, w = os.pipe()
    with os.fdopen(w, "w") as writer:
        monkeypatch.setattr(sys, "stderr", writer)  # here, not in a fixture: capture resets it
        print("error: why the job ends", file=writer)  # buffered: the wait must flush it
        clock = _FakeTime()
        monkeypatch.setattr(M, "time", clock)
        _let_launcher_read_stderr(limit=0.3)  # nobody reads: it polls until the limit, then gives up
        assert 0.3 <= clock.now - 100.0 < 0.3 + 0.006 and clock.sleeps == pytest.approx(60, abs=1)
        assert os.read(r, 1000) == b"error: why the job ends\n"  # flushed, and still unread until now
        clock = _FakeTime()
        monkeypatch.setattr(M, "time", clock)
        _let_launcher_read_stderr(limit=5)  # all read: it returns at once, without sleeping
        assert clock.sleeps == 0
        monkeypatch.undo()
    os.close(r)


def test_rank_does_not_wait_on_a_file(tmp_path, monkeypatch):
    import engine.comm.mpi as M
    from engine.comm.mpi import _let_launcher_read_stderr

    with open(tmp_path / "err", "w") as f:
        monkeypatch.setattr(sys, "stderr", f)
        f.write("error: why\n")
        clock = _FakeTime()
        monkeypatch.setattr(M, "time", clock)
        _let_launcher_read_stderr(limit=5)
        assert clock.sleeps == 0 and clock.now == 100.0  # a file: not even a deadline is set
    assert (tmp_path / "err").read_text() == "error: why\n"
