"""``mpiexec -n 2 python -m reproduce.paper4.mpi [REPS]``: t_startup and t_data of the
MPI communicator (reproduce.paper4.blocked.calibrate_exchange); rank 0 prints one JSON line."""
from __future__ import annotations

import json
import sys


def main(argv=None) -> int:
    from engine.comm.mpi import MPIComm
    from reproduce.paper4.blocked import calibrate_exchange

    argv = sys.argv[1:] if argv is None else argv
    reps = int(argv[0]) if argv else 400
    comm = MPIComm()
    res = calibrate_exchange(comm, reps=reps)
    if comm.rank == 0:
        print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
