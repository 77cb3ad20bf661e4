"""MPI side of tests/equivalence/test_node.py: ``mpiexec -n P python tests/helpers/mpi_node_main.py --out F.npz``.

Runs train_node_parallel(backend="mpi") on the case of test_node.py and saves,
on rank 0, the outputs, the last bunch's activations and deltas, and both
assembled parameter vectors. A failing rank writes ``<out>.rank<r>.err`` and
aborts the job. Not collected by pytest.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--passes", default="train")
    ns = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path[:0] = [str(ROOT / "tests" / "equivalence"), str(ROOT / "tests" / "helpers")]
    import numpy as np

    from engine.comm.mpi import MPIComm
    from engine.strategies.node import assemble, train_node_parallel
    from test_node import ACT, CFG, EPOCHS, BUNCH, SIZES, case

    comm = MPIComm()
    try:
        X, T, params = case()
        rec = train_node_parallel(X, T, sizes=SIZES, activation=ACT, params=params, cfg=CFG,
                                  workers=comm.size, backend="mpi", comm=comm, epochs=EPOCHS,
                                  bunch=BUNCH, passes=ns.passes, keep=True)
        if comm.rank == 0:
            by_c, by_r = assemble(SIZES, ACT, rec.extra["blocks"])
            np.savez(ns.out, outputs=rec.extra["outputs"], by_c=by_c, by_r=by_r,
                     a=np.concatenate([x.ravel() for x in rec.extra["a"]]),
                     delta=np.concatenate([x.ravel() for x in rec.extra["delta"][1:]]),
                     size=comm.size, kind=rec.kind)
        comm.barrier()
    except BaseException:  # noqa: BLE001 - make every rank stop, never hang
        from mpi_ppt_main import fail_rank

        fail_rank(comm, ns.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
