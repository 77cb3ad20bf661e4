"""MPI side of tests/faults/test_faults.py: ``mpiexec -n 2 python tests/helpers/mpi_fault_main.py --out DIR``.

Every rank installs the SIGTERM handler, sets the stall timeout, writes its pid
to ``DIR/rank<r>.pid`` and then runs allreduces until it is killed, stopped or
aborted: the test injects the fault from outside. With ``--release``, rank 0 has
finished instead (it waits for its peers, or sits in MPI_Finalize) while rank 1 stays
busy. Not collected by pytest.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--stall", type=float, default=None, help="stall timeout, s (omit: disabled)")
    ap.add_argument("--grace", type=float, default=2.0)
    ap.add_argument("--release", choices=("wait", "finalize"), default=None,
                    help="rank 0 has finished its share: it waits for its peers (wait_for_peers) "
                         "or goes straight to exit and MPI_Finalize; rank 1 stays busy")
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
    if ns.release is not None:
        import time

        if comm.rank == 0:
            if ns.release == "wait":
                comm.wait_for_peers()
            return 0  # "finalize": MPI_Finalize at exit, with rank 1 never arriving
        while True:
            time.sleep(0.1)
    x = np.ones(1000)
    while True:
        comm.allreduce(x)


if __name__ == "__main__":
    sys.exit(main())
