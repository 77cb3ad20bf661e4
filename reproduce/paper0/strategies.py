"""paper0's two partitions on small instances: for ``python -m reproduce validate``
(reproduce/validate.py holds them against the emulator; ``Paper.strategies`` registers them)
and, §2.1's loop, for the equivalence matrix (reproduce/matrix.py; ``Paper.matrix_cells``)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.parallel import driver
import reproduce.paper0.network_partition as NP
from reproduce.matrix import PROFILE, TOL, Workload
from reproduce.paper0.sequence import train_cg
from reproduce.validate import Case, from_log, from_record


@lru_cache(maxsize=1)
def _elman():
    """The matrix's Elman instance (reproduce/matrix.py): data and an initialised net."""
    from reproduce.matrix import workloads

    w = workloads()["elman"]
    return w.data, w.make_net(np.random.default_rng(1))


def partition_case(quick: bool) -> Case:
    """Network partition, one barrier per pattern (McCann & Kalman 1994, §2.1)."""
    data, net = _elman()
    preps = NP.prepare(net, data, loss=net.loss)
    repeats = 5 if quick else 150

    def run(backend, P, profile):
        res = driver.run(NP.netpart_worker, workers=P, backend=backend, profile=profile, net=net,
                         preps=preps, blocks=NP.split_even(net.n_hidden, P), repeats=repeats)
        return from_log(np.stack([r["log"] for r in res], axis=1), max(r["wall"] for r in res))

    return Case("paper0", f"Elman {net.n_in}-{net.n_hidden}-{net.n_out}, {data.n_seq} sequences, "
                f"{int(data.lengths.sum())} patterns × {repeats}", run)


def sequence_case(quick: bool) -> Case:
    """Training-sequence partition with CG (McCann & Kalman 1994, §2.2)."""
    data, net = _elman()
    sizes = dict(n_in=net.n_in, n_hidden=net.n_hidden, n_out=net.n_out, n_feedback=net.F,
                 n_hidden2=net.n_hidden2, skip=net.skip)
    iters = 3 if quick else 60

    def run(backend, P, profile):
        r = train_cg(data, net.params, sizes=sizes, workers_deriv=P, workers_fwd=P,
                     iterations=iters, chunk=4, backend=backend, profile=profile)
        return from_record(r["record"])

    return Case("paper0", f"Elman {net.n_in}-{net.n_hidden}-{net.n_out}, {data.n_seq} sequences, "
                f"{iters} CG iterations", run)


STRATEGIES = {"network partition": partition_case, "sequence partition (CG)": sequence_case}


def hidden_units_cell(w: Workload, *, backend: str, workers: int, comm=None, seed: int = 1):
    """§2.1: the hidden units of the derivative loop over workers, one barrier per pattern;
    ∂Φ/∂Wz against the serial gradient (eqs. 1–4)."""
    net = w.make_net(np.random.default_rng(seed))
    out = NP.run_partitioned(net, NP.prepare(net, w.data, loss=net.loss), workers, repeats=1,
                             backend=backend, profile=PROFILE, comm=comm)
    if out is None:
        return None, ""
    g = np.empty(net.n_params)
    net.loss_and_grad(w.data.batch(np.arange(w.data.n_seq)), g, method="forward")
    dev = float(np.max(np.abs(out[0] - net.view(g, "Wz"))))
    return dev, "pass" if dev <= TOL else "FAIL"


MATRIX_CELLS = {"model-parallel/hidden-units": (hidden_units_cell, {
    "mlp": "the §2.1 split is of the Elman derivative loop (eqs. 1–4); an MLP's hidden "
           "layer is split by model-parallel/node",
    "lstm": "the LSTM's gradient is by BPTT through gates; no derivative loop to split"})}
