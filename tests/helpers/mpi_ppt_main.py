"""MPI side of the test suite: run under ``mpiexec -n P python tests/helpers/mpi_ppt_main.py ...``.

Three modes, each writing an .npz on rank 0:

- ``ppt``: train_pattern_parallel(backend="mpi", comm=MPIComm()) on n-bit parity
  with tracing on; saves the final params, rounds, loss curve and every
  worker's sampled indices (traces, shape (P, rounds, local_epoch)).
- ``comm``: the collective checks of tests/unit/test_comm.py over an MPIComm
  (``--inplace`` adds allreduce with out = sendbuf).
- ``edges``: ``split``, computing past the stall timeout after it, ``allgather``
  into a caller's buffer and ``allreduce`` into an output that partly overlaps
  its input, ``wait_for_peers`` for a late rank; raises on the first check that fails
  (rank 0 writes ``ok``).

A failure on any rank prints its traceback (also to ``<out>.rank<r>.err``) and
aborts the whole job, so the launching test sees a non-zero exit, never a hang.

The test modules import :func:`launch_or_skip` from here (no mpi4py needed
for that); this file is not collected by pytest.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent  # tests/helpers
ROOT = HERE.parents[1]
# the test folders, so that a script run under mpiexec imports a test module by name as pytest does
TEST_DIRS = sorted(p for p in HERE.parent.iterdir() if p.is_dir() and p.name[0] not in "._")


# -- launcher, used by the tests ------------------------------------------------------
def find_mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    return shutil.which("mpiexec")


def launch_or_skip(n: int, args: list[str], *, timeout: float = 45.0,
                   check: bool = True, script: str | Path | None = None) -> subprocess.CompletedProcess:
    """Run this script (or ``script``) on ``n`` MPI ranks; skip if MPI is unavailable.

    Fails the calling test on a timeout, and on a non-zero exit when ``check``.
    """
    import pytest

    mpiexec = find_mpiexec()
    if mpiexec is None:
        pytest.skip("no mpiexec next to the Python interpreter or on PATH")
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not importable")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), *map(str, TEST_DIRS), env.get("PYTHONPATH")) if p)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"  # ranks oversubscribe the cores already
    target = Path(__file__).resolve() if script is None else Path(script).resolve()
    cmd = [mpiexec, "-n", str(n), sys.executable, str(target), *args]
    # own session, so a hang can be ended for mpiexec and every rank it started
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:  # the timeout, or the test's watchdog
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        stdout, stderr = proc.communicate()
        pytest.fail(f"mpiexec -n {n} did not finish in {timeout} s (hang?)\n"
                    f"stdout: {stdout}\nstderr: {stderr}\nrank errors:\n{rank_errors(args)}")
    res = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    if check and res.returncode != 0:
        pytest.fail(f"mpiexec -n {n} failed with exit code {res.returncode}\n"
                    f"command: {' '.join(cmd)}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}\n"
                    f"rank errors:\n{rank_errors(args)}")
    return res


def _err_path(out: str, rank: int) -> Path:
    return Path(f"{out}.rank{rank}.err")


def fail_rank(comm, out: str) -> None:
    """In an MPI test program's ``except``: write this rank's traceback next to
    ``out`` (read back by :func:`rank_errors`), print it, and abort every rank."""
    msg = f"rank {comm.rank} failed:\n{traceback.format_exc()}"
    _err_path(out, comm.rank).write_text(msg)
    print(msg, file=sys.stderr, flush=True)
    comm.abort(1)


def rank_errors(args: list[str]) -> str:
    """The tracebacks the failed ranks wrote next to ``--out`` (mpiexec may drop
    their stderr when MPI_Abort kills the job)."""
    if "--out" not in args:
        return ""
    out = args[args.index("--out") + 1]
    return "\n".join(p.read_text() for p in sorted(Path(out).parent.glob(Path(out).name + ".rank*.err")))


# -- MPI programs ------------------------------------------------------------------
def _ppt(ns, comm):
    import numpy as np

    from datasets.parity import parity
    from reproduce.paper3.ppt import PPTConfig, train_pattern_parallel

    X, T = parity(ns.bits, activation=ns.activation)
    cfg = PPTConfig(local_epoch=ns.local_epoch, lr=ns.lr, momentum=ns.momentum, k=ns.k,
                    threshold=ns.threshold, max_epochs=ns.max_epochs, combine=ns.combine)
    sizes = tuple(int(s) for s in ns.sizes.split(","))
    rec = train_pattern_parallel(X, T, sizes=sizes, activation=ns.activation, cfg=cfg,
                                 seed=ns.seed, workers=comm.size, backend="mpi", comm=comm,
                                 trace=True)
    if comm.rank == 0:
        traces = np.array([np.stack(t) for t in rec.extra["traces"]])  # (P, rounds, m)
        np.savez(ns.out, params=rec.params, rounds=rec.rounds, loss_curve=rec.loss_curve,
                 final_mse=rec.final_mse, converged=rec.converged, traces=traces,
                 workers=rec.workers, bytes_sent=rec.bytes_sent, kind=rec.kind)
    elif rec is not None:
        raise AssertionError(f"rank {comm.rank} got a record; only rank 0 should")


def _comm(ns, comm):
    import numpy as np

    sys.path.insert(0, str(HERE.parent / "unit"))
    from test_comm import _collectives

    res = _collectives(comm, ns.iters, ns.seed, inplace=ns.inplace)
    everyone = comm.gather_objects(res)
    if comm.rank == 0:
        for r in everyone[1:]:  # identical bits on every rank
            if not np.array_equal(r["last_sum"], everyone[0]["last_sum"]):
                raise AssertionError("allreduce results differ between ranks")
        np.savez(ns.out, checked=res["checked"], last_sum=res["last_sum"], size=comm.size)


def _edges(ns, comm):
    import time

    import numpy as np

    from engine.comm.base import set_stall_timeout

    n, P = 5, comm.size
    sub = comm.split(1)  # rank 0 alone gets a communicator; the others None
    if comm.rank == 0:
        if sub is None or (sub.rank, sub.size) != (0, 1):
            raise AssertionError(f"split(1) on rank 0 gave {sub!r}")
        np.testing.assert_array_equal(sub.allreduce(np.arange(3.0)), np.arange(3.0))
    elif sub is not None:
        raise AssertionError(f"split(1) on rank {comm.rank} gave a communicator")
    # split has returned: no collective is armed, so computing past the stall timeout
    # must not trip the watchdog
    set_stall_timeout(ns.stall)
    time.sleep(ns.compute)
    x = np.arange(n, dtype=np.float64) + 10 * comm.rank
    recv = np.full((P, n), np.nan)
    if comm.allgather(x, recv) is not recv:
        raise AssertionError("allgather did not return the caller's buffer")
    np.testing.assert_array_equal(recv, [np.arange(n) + 10 * r for r in range(P)])
    buf = np.arange(n + 1, dtype=np.float64) * (comm.rank + 1)
    comm.allreduce(buf[:-1], out=buf[1:])  # the output starts one element into the input
    np.testing.assert_array_equal(buf[1:], sum(np.arange(n) * (r + 1) for r in range(P)))
    set_stall_timeout(None)
    # wait_for_peers: rank 0 waits for a late rank 1 in Python, polling, not spinning
    t0, c0 = time.monotonic(), time.process_time()
    if comm.rank == 1:
        time.sleep(0.6)
    comm.wait_for_peers()
    waited, cpu = time.monotonic() - t0, time.process_time() - c0
    if comm.rank == 0 and not (waited >= 0.5 and cpu < 0.5 * waited):
        raise AssertionError(f"wait_for_peers: {waited:.2f} s waited, {cpu:.2f} s of CPU")
    if comm.rank == 0:
        np.savez(ns.out, ok=True, size=P)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("ppt")
    p.add_argument("--bits", type=int, default=4)
    p.add_argument("--sizes", default="4,6,1")
    p.add_argument("--activation", default="symmetric_sigmoid")
    p.add_argument("--local-epoch", type=int, required=True)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.3)
    p.add_argument("--k", type=float, default=2.0)
    p.add_argument("--threshold", type=float, default=0.0)
    p.add_argument("--max-epochs", type=float, required=True)
    p.add_argument("--combine", default="sum")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    c = sub.add_parser("comm")
    c.add_argument("--iters", type=int, default=30)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--out", required=True)
    c.add_argument("--inplace", action="store_true", help="also check allreduce(buf, out=buf)")
    e = sub.add_parser("edges")
    e.add_argument("--stall", type=float, default=1.5, help="stall timeout after split (s)")
    e.add_argument("--compute", type=float, default=4.0, help="seconds computed after split")
    e.add_argument("--out", required=True)
    ns = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from engine.comm.mpi import MPIComm

    comm = MPIComm()
    try:
        {"ppt": _ppt, "comm": _comm, "edges": _edges}[ns.mode](ns, comm)
        comm.barrier()
    except BaseException:  # noqa: BLE001 - make every rank stop, never hang
        fail_rank(comm, ns.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
