"""MPI side of tests/test_faults.py: ``mpiexec -n 2 python tests/mpi_fault_main.py --out DIR``.

Every rank installs the SIGTERM handler, sets the stall timeout, writes its pid
to ``DIR/rank<r>.pid`` and then runs allreduces until it is killed, stopped or
aborted: the test injects the fault from outside. Not collected by pytest.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--stall", type=float, default=None, help="stall timeout, s (omit: disabled)")
    ap.add_argument("--grace", type=float, default=2.0)
    ns = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from engine.comm.base import install_termination_handler, set_stall_timeout
    from engine.comm.mpi import MPIComm

    set_stall_timeout(ns.stall)
    comm = MPIComm()
    install_termination_handler("terminated (SIGTERM): mpi fault test", say=comm.rank == 0,
                                grace=ns.grace)
    out = Path(ns.out)
    tmp = out / f"rank{comm.rank}.pid.tmp"
    tmp.write_text(str(os.getpid()))
    tmp.rename(out / f"rank{comm.rank}.pid")  # the test reads whole files only
    x = np.ones(1000)
    while True:
        comm.allreduce(x)


if __name__ == "__main__":
    sys.exit(main())
