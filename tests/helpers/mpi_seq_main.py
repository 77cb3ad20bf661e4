"""MPI side of tests/equivalence/test_bucketed.py: run under ``mpiexec -n P python tests/helpers/mpi_seq_main.py``.

Trains the bucketed LSTM+CTC with ``train_bucketed(backend="mpi")`` on a small
handwriting set and saves rank 0's final parameters and curves to ``--out``.
Not collected by pytest.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scheme", required=True)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out", required=True)
    ns = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path[:0] = [str(ROOT / "tests" / "equivalence"), str(ROOT / "tests" / "helpers")]
    from engine.comm.mpi import MPIComm

    comm = MPIComm()
    try:
        import numpy as np

        from test_bucketed import small_problem

        from reproduce.paper2.bucketed import train_bucketed

        data, n_out, tr, va, cfg = small_problem(ns.scheme)
        rec = train_bucketed(data, n_out, train_idx=tr, val_idx=va, cfg=cfg, seed=ns.seed,
                             workers=comm.size, backend="mpi", comm=comm)
        if comm.rank == 0:
            np.savez(ns.out, params=rec.params, val=rec.extra["val_loss"])
        comm.barrier()
    except BaseException:  # noqa: BLE001 - make every rank stop, never hang
        from mpi_ppt_main import fail_rank

        fail_rank(comm, ns.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
