"""paper3's tasks: serial and Pattern Parallel Training (PPT) runs on 8-bit parity,
measured on local processes or MPI ranks, or emulated compute-only, and the machine
profiles the emulated runs are composed with (the composition itself is report-time:
reproduce/paper3/report.py ``emulated_time``)."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from datasets.parity import parity
from engine.nets.mlp import MLP
from engine.perfmodel import FREE, measure_here
from reproduce.paper3.ppt import PPTConfig, train_pattern_parallel, worker_seeds
from engine.strategies.serial import train_serial
from reproduce.paper3.setup import gige2008
from reproduce.result_schema import Count, Fraction, Result, Seconds
from reproduce.runner import Task


def prepare(run) -> None:
    """The profiles emulated runs are timed on: ``--profile``'s (``run.profile``), else this
    machine measured on rank 0 (``here``); and the paper's cluster
    (:func:`~reproduce.paper3.setup.gige2008`)."""
    here = (run.profile if run.profile is not None
            else run.measured(("here",), lambda: [measure_here()])[0] if run.rank == 0 else None)
    run.context["here"] = here  # the profile whose emulated rows are validated against measured ones
    run.context["profiles"] = [p for p in (here, gige2008(run.setup)) if p is not None]


# ---- tasks ----------------------------------------------------------------
def make_tasks(run) -> list[Task]:
    setup, workers, seed = run.setup, run.workers, run.seed
    T = []
    for i in range(setup.runs):
        T.append(Task("serial", "measured", 1, {"nodes": 1, "run": i, "seed": seed + i}))
    for P in setup.nodes:
        if P == 1:
            continue
        for m in setup.local_epochs:
            for i in range(setup.runs):
                p = {"nodes": P, "local_epoch": m, "run": i, "seed": seed + i}
                if P <= workers:
                    T.append(Task("pattern", "measured", P, p))
                T.append(Task("pattern", "emulated", 1, p))
    for i in range(setup.ablation_runs):
        T.append(Task("serial", "measured", 1,
                      {"nodes": 1, "run": i, "seed": seed + i, "init": "fann0.1"}))
        T.append(Task("pattern", "emulated", 1, {"nodes": 8, "local_epoch": 32, "run": i,
                                                 "seed": seed + i, "combine": "mean"}))
        for f in setup.lr_scales:  # serial at η·P: the summed update's step without the nodes
            T.append(Task("serial", "measured", 1, {"nodes": 1, "run": i, "seed": seed + i, "lr_scale": f}))
    return T


def first_cap(setup) -> float:
    return min(setup.first_cap, setup.max_epochs)


def failed_run_cap(setup, results: list[dict]) -> float:
    """The epochs after which a run of one configuration counts as failed: cap_factor × the
    median epochs over its seeds, a run that did not converge counting as never (so more
    than half failing gives the ceiling), within [first_cap, max_epochs] (setup.py)."""
    med = float(np.median([r["epochs"] if r["converged"] else math.inf for r in results]))
    return max(first_cap(setup), min(setup.max_epochs, setup.cap_factor * med))


def _configuration(task: Task) -> tuple:
    return (task.name, task.kind, *sorted((k, v) for k, v in task.params.items()
                                          if k not in ("run", "seed", "max_epochs")))


def extend(run, results) -> dict:
    """{index: task}: the runs that stopped at the first cap unconverged, to run again up to
    their configuration's :func:`failed_run_cap` (harness.extend runs them)."""
    groups: dict = {}
    for i, (t, _) in enumerate(results):
        groups.setdefault(_configuration(t), []).append(i)
    redo = {}
    for idx in groups.values():
        cap = failed_run_cap(run.setup, [results[i][1] for i in idx])
        for i in idx:
            t, res = results[i]
            if not res["converged"] and res.get("max_epochs", run.setup.max_epochs) < cap:
                redo[i] = replace(t, params={**t.params, "max_epochs": cap})
    return redo


def run_task(task: Task, comm, run) -> dict | None:
    """One training run; returns the numbers the tables need (JSON-able). It stops at the
    first cap unless the task carries its configuration's cap (``extend``)."""
    setup, backend, p = run.setup, run.backend, task.params
    cap = p.get("max_epochs", first_cap(setup))
    X, T = parity(setup.bits, activation=setup.activation)
    if task.name == "serial":
        net = MLP(setup.sizes, setup.activation)
        scale = 0.1 if p.get("init") == "fann0.1" else setup.init_scale
        init_rng, _ = worker_seeds(p["seed"], 0)  # same initial weights as PPT with this seed
        net.init_uniform(init_rng, scale=scale)
        rec = train_serial(net, X, T, lr=setup.lr * p.get("lr_scale", 1), momentum=setup.momentum,
                           threshold=setup.threshold, max_epochs=cap)
        return {**_common(rec, cap), "time_s": rec.wall_s}
    cfg = PPTConfig(local_epoch=p["local_epoch"], lr=setup.lr, momentum=setup.momentum, k=setup.k,
                    threshold=setup.threshold, max_epochs=cap,
                    combine=p.get("combine", setup.combine))
    kw = dict(sizes=setup.sizes, activation=setup.activation, cfg=cfg, seed=p["seed"],
              workers=p["nodes"], init_scale=setup.init_scale)
    if task.kind == "emulated":
        # The communication model is applied later per profile; any profile works here.
        rec = train_pattern_parallel(X, T, backend="emulated", profile=FREE, **kw)
        return {**_common(rec, cap), "sum_max_compute_s": float(rec.compute_s.max(axis=1).sum()),
                "msg_bytes": float(rec.bytes_sent[0, 0])}
    rec = train_pattern_parallel(X, T, backend=backend, comm=comm, **kw)
    if rec is None:  # MPI ranks other than 0
        return None
    return {**_common(rec, cap), "time_s": rec.wall_s, "comm_share": rec.comm_share,
            "msg_bytes": float(rec.bytes_sent[0, 0])}


def _common(rec, cap: float) -> dict:
    return {"converged": bool(rec.converged), "rounds": int(rec.rounds), "epochs": float(rec.epochs),
            "final_mse": float(rec.final_mse), "max_epochs": float(cap)}


# ---- what run_task returns, checked on a cached result (reproduce/result_schema.py) ----
class _Common(Result):
    converged: bool
    rounds: Count
    epochs: float
    final_mse: float
    max_epochs: float


class SerialResult(_Common):
    time_s: Seconds


class EmulatedResult(_Common):
    sum_max_compute_s: Seconds
    msg_bytes: float


class MeasuredResult(_Common):
    time_s: Seconds
    comm_share: Fraction
    msg_bytes: float


def result_model(task: Task):
    if task.name == "serial":
        return SerialResult
    return EmulatedResult if task.kind == "emulated" else MeasuredResult

