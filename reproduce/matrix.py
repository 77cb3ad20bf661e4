"""``python -m reproduce matrix``: every strategy × network × backend cell that applies.

Each cell runs a few steps of one strategy on a small instance of one network and
compares the final parameters with the serial run of the same data order
(:func:`engine.parallel.reference.serial_reference` for the data-parallel family,
the serial network for the model-parallel ones). A cell passes when the largest
absolute deviation is at most 1e-10 (float64). Cells that cannot apply are listed
with the reason. Written to ``<out>/matrix.csv`` (default ``results/local/``, git-ignored;
the committed one: ``--out results``) with the columns
``strategy, net, backend, workers, max_abs_dev, status``.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from datasets.handwriting import ALPHABET, handwriting
from datasets.parity import parity
from datasets.synthetic_seq import sequences
from engine.data import Patterns, SeqData
from engine.nets.elman import Elman
from engine.nets.lstm import LSTM
from engine.nets.mlp import MLP
from engine.parallel.data_parallel import (AVERAGING, BUCKETED, BUNCHES, CG_LONGEST_FIRST,
                                           LOCAL_EPOCHS, AdadeltaRule, Buckets, CGRule, DataParallel,
                                           SGDRule, train_data_parallel)
from engine.parallel.reference import serial_reference
from engine.perfmodel import MachineProfile

TOL = 1e-10
BACKEND_ORDER = ["inprocess", "local", "emulated", "mpi"]
COLUMNS = ["strategy", "net", "backend", "workers", "max_abs_dev", "status"]
# the emulated cells check numbers, not time: a free machine keeps the run short
PROFILE = MachineProfile("matrix", 1e-6, 1e9, "placeholder: the matrix checks numbers only")


# ---- the small instances -------------------------------------------------------------------
@dataclass(frozen=True)
class Workload:
    net: str
    data: object
    make_net: object  # make_net(rng) -> an initialised network


def _mlp(rng):
    net = MLP((4, 5, 1), "symmetric_sigmoid")
    net.init_uniform(rng, scale=0.5)
    return net


def _elman(rng):
    net = Elman(34, 5, 39, method="forward", loss="mse")
    net.init_uniform(rng, scale=0.3)
    return net


def _lstm(rng):
    net = LSTM(3, 4, len(ALPHABET) + 1)  # pen (dx, dy, up) in; the letters and the CTC blank out
    net.init(rng, scale=0.3)
    return net



def workloads() -> dict[str, Workload]:
    X, T = parity(4)
    seqs = sequences("parsing", np.random.default_rng(11), n_seq=9, min_len=2, max_len=7)
    hw = handwriting(10, seed=3, n_writers=3, mean_extra_words=0.0, max_words=1)
    return {"mlp": Workload("mlp", Patterns(X, T), _mlp),
            "elman": Workload("elman", seqs, _elman),
            "lstm": Workload("lstm", SeqData(hw.seqs, hw.labels), _lstm)}


# ---- the strategies --------------------------------------------------------------------------
DATA_PARALLEL = {  # name: configuration; what it stands for in the comment
    "data-parallel/gradients": replace(BUNCHES, batch=6, optimizer=SGDRule(0.02, 0.5)),  # pattern-parallel bunch
    "data-parallel/updates": replace(LOCAL_EPOCHS, batch=3, optimizer=SGDRule(0.02, 0.3)),  # summed local epochs
    "data-parallel/average": replace(AVERAGING, batch=3, optimizer=SGDRule(0.02),
                                     beta=1e-3),  # model averaging, unbucketed
    "bucketed/gradients": replace(BUCKETED, batch=4, optimizer=AdadeltaRule(lr=0.1),
                                  buckets=Buckets(n=2)),  # bucketed gradient allreduce
    "bucketed/average": replace(BUCKETED, combine="params", batch=2, optimizer=AdadeltaRule(lr=0.1),
                                buckets=Buckets(n=2), beta=1e-3),  # bucketed model averaging
    "data-parallel/cg": replace(CG_LONGEST_FIRST,
                                optimizer=CGRule(iterations=2)),  # sequences longest first, CG
}


def data_parallel_cell(name: str, w: Workload, *, backend: str, workers: int, comm=None,
                       seed: int = 1) -> tuple[float | None, str]:
    """(max |Δparams| against the serial reference, status) of one cell."""
    cfg = DATA_PARALLEL[name]
    why = cfg.problem(w.data)
    if why:
        return None, f"n/a: {why}"
    rec = train_data_parallel(w.make_net, w.data, cfg=cfg, seed=seed, workers=workers,
                              backend=backend, comm=comm, profile=PROFILE)
    if rec is None:  # MPI ranks other than 0
        return None, ""
    ref = serial_reference(w.make_net, w.data, cfg, workers=workers, seed=seed)
    dev = float(np.max(np.abs(rec.params - ref)))
    return dev, "pass" if dev <= TOL else "FAIL"


# ---- the model-parallel family: each on the networks where it makes sense -------------------
def node_cell(w: Workload, *, backend: str, workers: int, comm=None, seed: int = 1,
              ref_lr: float | None = None):
    """The nodes of every layer over workers (engine/strategies/node.py); the trained
    weights against serial SGD, w ← w − η/B·Σ∇E over bunches of B in data order
    (``ref_lr``: another η for the reference, a negative control)."""
    from engine.strategies.node import NodeConfig, assemble, train_node_parallel

    net = w.make_net(np.random.default_rng(seed))
    X, T = w.data
    B, lr = 4, 0.1
    rec = train_node_parallel(X, T, sizes=net.sizes, activation=NODE_ACTIVATION,
                              params=net.params.copy(), workers=workers, backend=backend, comm=comm,
                              profile=PROFILE, cfg=NodeConfig(lr=lr), epochs=2, bunch=B, keep=True)
    if rec is None:
        return None, ""
    g = np.empty(net.n_params)
    for _ in range(2):
        for s in range(0, len(X), B):
            net.loss_and_grad(Patterns(X[s:s + B], T[s:s + B]), g)
            net.params -= (ref_lr or lr) / len(X[s:s + B]) * g
    dev = max(float(np.max(np.abs(p - net.params))) for p in assemble(net.sizes, NODE_ACTIVATION,
                                                                       rec.extra["blocks"]))
    return dev, "pass" if dev <= TOL else "FAIL"


NODE_ACTIVATION = "symmetric_sigmoid"


# name: (runner, {net: why it cannot apply}); the engine's node-parallel strategy here, the
# papers' own model-parallel configurations registered by them (``Paper.matrix_cells``, each
# package's strategies.py), in the order of the paper list. A test may set it.
MODEL_PARALLEL: dict = {}
NODE = {"model-parallel/node": (node_cell, {
    "elman": "the nodes of a layer are exchanged once per layer and pattern; the Elman "
             "net's context feeds every hidden unit back at every step (not implemented)",
    "lstm": "the LSTM's gates couple every unit of a step (not implemented)"})}


def model_parallel() -> dict:
    """The model-parallel strategies of the matrix: :data:`MODEL_PARALLEL` where set, else
    :data:`NODE` and every paper's ``matrix_cells``."""
    if MODEL_PARALLEL:
        return MODEL_PARALLEL
    from reproduce import papers

    out = dict(NODE)
    for entry in papers.PAPERS:
        out.update(papers.load(entry["name"]).matrix_cells)
    return out


def model_parallel_cell(name: str, w: Workload, *, backend: str, workers: int, comm=None):
    runner, na = model_parallel()[name]
    if w.net in na:
        return None, f"n/a: {na[w.net]}"
    return runner(w, backend=backend, workers=workers, comm=comm)


def cells(backends: list[tuple[str, int]]):
    """(strategy, net, backend, workers) of every cell, in table order."""
    for name in [*DATA_PARALLEL, *model_parallel()]:
        for net in ("mlp", "elman", "lstm"):
            for backend, P in backends:
                yield name, net, backend, P


def why_not(name: str, w: Workload) -> str | None:
    """Why strategy ``name`` cannot apply to the workload, or None."""
    if name in DATA_PARALLEL:
        return DATA_PARALLEL[name].problem(w.data)
    return model_parallel()[name][1].get(w.net)


def cell(name: str, w: Workload, *, backend: str, workers: int, comm=None):
    """(max |Δ| against serial, status) of any cell."""
    if name in DATA_PARALLEL:
        return data_parallel_cell(name, w, backend=backend, workers=workers, comm=comm)
    return model_parallel_cell(name, w, backend=backend, workers=workers, comm=comm)


def run_matrix(backends: list[tuple[str, int]], *, comm=None) -> list[dict]:
    ws = workloads()
    rows = []
    for name, net, backend, P in cells(backends):
        dev, status = cell(name, ws[net], backend=backend, workers=P, comm=comm)
        rows.append({"strategy": name, "net": net, "backend": backend, "workers": P,
                     "max_abs_dev": "" if dev is None else f"{dev:.3g}", "status": status})
    return rows


def write_csv(rows: list[dict], path: Path) -> None:
    """Write ``rows``, keeping the rows of backends this run did not cover (so a run
    under mpiexec adds the MPI rows to those of a local run)."""
    from reproduce.store import atomic_write

    ran = {r["backend"] for r in rows}
    if path.exists():
        with open(path, newline="") as f:
            kept = [r for r in csv.DictReader(f) if r["backend"] not in ran]
        order = {(r["strategy"], r["net"]): i for i, r in enumerate(rows)}
        rows = sorted(kept + rows, key=lambda r: (order.get((r["strategy"], r["net"]), 1e9),
                                                  BACKEND_ORDER.index(r["backend"])
                                                  if r["backend"] in BACKEND_ORDER else 9))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write(path, buf.getvalue())


def summary_markdown(rows: list[dict]) -> str:
    """One line per strategy × network: the largest deviation per backend (P workers),
    and the reasons of the cells that cannot apply."""
    backends = sorted({(r["backend"], int(r["workers"])) for r in rows},
                      key=lambda b: BACKEND_ORDER.index(b[0]) if b[0] in BACKEND_ORDER else 9)
    head = ["strategy", "net"] + [f"{b} ({p})" for b, p in backends]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    why = {}
    for key in dict.fromkeys((r["strategy"], r["net"]) for r in rows):
        cells_ = {(r["backend"], int(r["workers"])): r for r in rows
                  if (r["strategy"], r["net"]) == key}
        if all(c["status"].startswith("n/a") for c in cells_.values()):
            why.setdefault(next(iter(cells_.values()))["status"][5:], []).append(" on ".join(key))
            continue
        out.append("| " + " | ".join([*key] + [
            (f"{c['status']} {c['max_abs_dev']}" if c else "") for c in
            (cells_.get(b) for b in backends)]) + " |")
    out.append("")
    out += [f"- n/a: {', '.join(ks)}: {w}" for w, ks in why.items()]
    return "\n".join(out)


def markdown(rows: list[dict]) -> str:
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(str(r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(out)
