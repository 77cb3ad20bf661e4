"""The equivalence suite: every strategy × network × backend cell equals serial.

One parametrised suite (the tinygrad way): each data-parallel configuration of
``reproduce.matrix`` on the MLP, the Elman net and the LSTM, on the in-process
backend, local processes (1–3), the emulated backend (up to 7 workers) and MPI
(2 ranks under mpiexec), against :func:`engine.parallel.reference.serial_reference`
to 1e-10 in float64. The negative controls show that the comparison can fail.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from engine.parallel.data_parallel import AdadeltaRule, CGRule, train_data_parallel
from engine.parallel.reference import serial_reference
from reproduce import matrix as M

WORKLOADS = M.workloads()
BACKENDS = [("inprocess", 1), ("local", 1), ("local", 2), ("local", 3),
            ("emulated", 2), ("emulated", 5), ("emulated", 7)]
CELLS = [(s, n) for s in [*M.DATA_PARALLEL, *M.model_parallel()] for n in WORKLOADS
         if M.why_not(s, WORKLOADS[n]) is None]
DP_CELLS = [(s, n) for s, n in CELLS if s in M.DATA_PARALLEL]


@pytest.mark.parametrize("backend,P", BACKENDS, ids=[f"{b}{p}" for b, p in BACKENDS])
@pytest.mark.parametrize("strategy,net", CELLS, ids=[f"{s}-{n}" for s, n in CELLS])
def test_cell_equals_serial(strategy, net, backend, P):
    dev, status = M.cell(strategy, WORKLOADS[net], backend=backend, workers=P)
    assert status == "pass", f"max |Δ| = {dev}"


def test_every_network_has_a_data_parallel_cell_and_bucketing_on_both_sequence_nets():
    assert {n for _, n in DP_CELLS} == {"mlp", "elman", "lstm"}
    assert {n for s, n in CELLS if s in M.model_parallel()} == {"mlp", "elman"}
    for s in ("bucketed/gradients", "bucketed/average"):
        assert {n for t, n in CELLS if t == s} == {"elman", "lstm"}


def test_cells_that_cannot_apply_say_why():
    dev, status = M.data_parallel_cell("bucketed/gradients", WORKLOADS["mlp"], backend="inprocess",
                                       workers=1)
    assert dev is None and status.startswith("n/a:") and "sequences" in status


PERTURB = {  # a change the comparison must notice, per strategy
    "data-parallel/gradients": dict(reduce="sum"),
    "data-parallel/updates": dict(reduce="mean"),
    "data-parallel/average": dict(beta=0.0),
    "bucketed/gradients": dict(optimizer=AdadeltaRule(lr=0.9)),
    "bucketed/average": dict(beta=0.0),
    "data-parallel/cg": dict(optimizer=CGRule(iterations=1)),
}


@pytest.mark.parametrize("strategy,net", DP_CELLS, ids=[f"{s}-{n}" for s, n in DP_CELLS])
def test_negative_control_a_wrong_reference_fails(strategy, net):
    w, cfg = WORKLOADS[net], M.DATA_PARALLEL[strategy]
    rec = train_data_parallel(w.make_net, w.data, cfg=cfg, seed=1, workers=2, backend="emulated",
                              profile=M.PROFILE)
    wrong = serial_reference(w.make_net, w.data, dataclasses.replace(cfg, **PERTURB[strategy]),
                             workers=2, seed=1)
    assert np.max(np.abs(rec.params - wrong)) > 1e3 * M.TOL


def test_negative_control_model_parallel_against_the_wrong_method():
    """The hidden-unit partition computes eqs. 1–4; a reference from a perturbed net fails."""
    import reproduce.paper0.network_partition as NP

    w = WORKLOADS["elman"]
    net = w.make_net(np.random.default_rng(1))
    grad, _ = NP.run_partitioned(net, NP.prepare(net, w.data, loss=net.loss), 2, repeats=1,
                                 backend="emulated", profile=M.PROFILE)
    other = net.copy()
    other.params *= 1.001
    g = np.empty(net.n_params)
    other.loss_and_grad(w.data.batch(np.arange(w.data.n_seq)), g)
    assert np.max(np.abs(grad - other.view(g, "Wz"))) > 1e3 * M.TOL


def test_negative_control_node_against_another_learning_rate():
    dev, status = M.node_cell(WORKLOADS["mlp"], backend="emulated", workers=3, ref_lr=0.1001)
    assert status == "FAIL" and dev > 1e3 * M.TOL


def test_negative_control_pipelined_np_is_not_plain_sequential_training():
    from reproduce.paper1.strategies import np_cell

    dev, status = np_cell(WORKLOADS["mlp"], backend="emulated", workers=2, pipelined=True)
    assert status == "FAIL" and dev > 1e3 * M.TOL


def test_negative_control_another_worker_count_differs():
    w, cfg = WORKLOADS["mlp"], M.DATA_PARALLEL["data-parallel/updates"]
    rec = train_data_parallel(w.make_net, w.data, cfg=cfg, seed=1, workers=2, backend="local")
    ref3 = serial_reference(w.make_net, w.data, cfg, workers=3, seed=1)
    assert np.max(np.abs(rec.params - ref3)) > 1e3 * M.TOL


@pytest.mark.skipif(shutil.which("mpiexec", path=os.path.dirname(sys.executable)) is None
                    and shutil.which("mpiexec") is None, reason="no mpiexec")
def test_matrix_under_mpiexec_2_ranks(tmp_path):
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
    out = tmp_path / "matrix.csv"
    p = subprocess.run([mpiexec, "-n", "2", sys.executable, "-m", "reproduce", "matrix",
                        "--backend", "mpi", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = out.read_text().splitlines()
    mpi = [r for r in rows[1:] if ",mpi,2," in r]
    assert mpi and all(r.endswith(",pass") or ",n/a" in r for r in mpi), rows


def test_the_docs_matrix_table_is_the_committed_matrix():
    # docs/engine.md quotes results/matrix.csv as summary_markdown formats it; a regenerated
    # matrix must be quoted anew. Control: one cell changed is no longer found
    import csv
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    with open(root / "results" / "matrix.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    doc = (root / "docs" / "engine.md").read_text()
    assert M.summary_markdown(rows) in doc
    rows[0] = {**rows[0], "max_abs_dev": "1e-11"}
    assert M.summary_markdown(rows) not in doc
