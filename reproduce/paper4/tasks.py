"""paper4's tasks: calibration of the §6 model on this machine (t_startup, t_data of
the communicators; t_a of the serial passes), node-parallel passes timed against the
serial MLP (measured up to the cores, emulated beyond), and the §5 typical run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from time import perf_counter
from typing import Annotated, Literal, Union

import numpy as np
from pydantic import Discriminator, Field, RootModel, Tag

from engine.nets.mlp import MLP
from engine.perfmodel import FREE, MachineProfile
from reproduce.paper4.blocked import calibrate_exchange, node_profile
from reproduce.paper4.model import NodeModel, calibrate_t_a
from engine.strategies.node import NodeConfig, check_fits, train_node_parallel
from reproduce.paper4.setup import PASSES, TYPICAL_TARGETS, Setup
from reproduce.result_schema import Count, Fraction, LoadAvg, Result, Seconds
from reproduce.runner import Task


def prepare(run) -> None:
    """Refuse a width this machine cannot hold, before anything runs or is written."""
    for w in run.setup.widths:
        check_fits(run.setup.sizes(w), max(run.setup.procs), emulated=True)


# ---- tasks ------------------------------------------------------------------
def make_tasks(run) -> list[Task]:
    setup, workers, seed, backend = run.setup, run.workers, run.seed, run.backend
    T = [Task("calibrate_exchange", "measured", 2 if workers >= 2 else 1,
              {"backend": backend if workers >= 2 else "inprocess", "seed": seed}),
         Task("calibrate_exchange", "measured", 1, {"backend": "inprocess", "seed": seed})]
    if backend == "local":
        T.append(Task("calibrate_exchange_mpi", "measured", 1, {"backend": "mpi", "seed": seed}))
    for w in setup.widths:
        T.append(Task("calibrate_t_a", "measured", 1, {"width": w, "seed": seed}))
    for w in setup.widths:
        for passes in PASSES:
            for i in range(setup.runs):
                base = {"width": w, "passes": passes, "run": i, "seed": seed + i}
                T.append(Task("sweep", "measured", 1, base))
                if backend == "mpi":  # measured runs on MPI sub-communicators
                    T += [Task("node_mpi", "measured", P, {**base, "nodes": P})
                          for P in setup.procs if 1 < P <= workers]
    if wide_fits(setup):  # the widest-net ablation (setup.py wide_width): emulated at the largest P
        T += [Task("wide", "emulated", 1, {"width": setup.wide_width, "passes": passes, "run": i,
                                           "seed": seed + i, "timed": setup.wide_passes_timed})
              for passes in PASSES for i in range(setup.runs)]
    T.append(Task("typical", "measured", min(2, workers), {"seed": seed, "nodes": min(2, workers)}))
    # more §5 seeds for the sec5-targets claim (reproduce/paper4/claims.py); the first is the
    # report's §5 run, the task above, unchanged
    T += [Task("typical", "measured", min(2, workers), {"seed": seed + i, "nodes": min(2, workers)})
          for i in range(1, setup.typical_runs)]
    return T


def wide_fits(setup: Setup, available: int | None = None) -> bool:
    """Whether the widest-net ablation runs: a width is set and its emulated run at the largest
    P fits this machine's memory (engine/strategies/node.py check_fits, asked before anything is
    allocated)."""
    if not setup.wide_width:
        return False
    try:
        check_fits(setup.sizes(setup.wide_width), max(setup.procs), emulated=True, available=available)
    except MemoryError:
        return False
    return True


def _pattern(sizes, seed: int):
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(4,)))
    net = MLP(sizes, Setup.activation)
    net.init_uniform(rng, scale=0.1)
    x = rng.uniform(-1, 1, (1, sizes[0]))  # (1, N(0)): one pattern, as in §5
    t = rng.choice([-1.0, 1.0], (1, sizes[-1]))  # (1, N(L))
    return net, x, t


def _serial_passes(comm, sizes, activation, seed, passes, reps):
    """The serial MLP's passes (engine/nets/mlp.py's weights and activations), timed
    layer by layer; call with one BLAS thread.

    The backward pass is §2's: the deltas of every layer, no weight gradients
    (those belong to the update, §4.3), the same work the node-parallel
    ``forward_backward`` passes do. Each layer is timed on its own so the pass time
    can be taken as Σ_layers median over passes, the estimator the emulated runs
    use (:func:`node_emulated`); the first pass is checked against ``MLP.forward``.
    """
    net, x, t = _pattern(sizes, seed)
    ws = net.workspace(1)
    acts, L = net.acts, net.L
    a = [x] + [np.empty((1, n)) for n in sizes[1:]]  # a[l]: (1, N(l))
    d = [None] + [np.empty((1, n)) for n in sizes[1:]]  # d[l]: (1, N(l)) deltas
    tmp = [None] + [np.empty((1, n)) for n in sizes[1:]]
    nph = L + (L if passes == "forward_backward" else 0)
    times = np.empty((reps, nph))  # (reps, phases)
    for r in range(reps + 1):
        row = times[r - 1] if r else np.empty(nph)  # pass 0 warms up, untimed
        for l in range(1, L + 1):
            t0 = perf_counter()
            np.matmul(a[l - 1], net.W[l], out=a[l])
            a[l] += net.b[l]
            acts[l - 1].f(a[l], a[l])
            row[l - 1] = perf_counter() - t0
        if r == 0:
            np.testing.assert_allclose(a[L], net.forward(x, ws=ws)[0], rtol=1e-12, atol=1e-15)
        if passes == "forward_backward":
            t0 = perf_counter()
            np.multiply(a[L] - t, acts[L - 1].df(a[L], tmp[L]), out=d[L])  # δ_L
            row[L] = perf_counter() - t0
            for l in range(L - 1, 0, -1):
                t0 = perf_counter()
                np.matmul(d[l + 1], net.W[l + 1].T, out=d[l])  # (1, N(l))
                d[l] *= acts[l - 1].df(a[l], tmp[l])
                row[L + L - l] = perf_counter() - t0
    per = times.sum(axis=1)  # (reps,)
    return {"time_per_pass_s": float(np.median(times, axis=0).sum()),
            "fastest_pass_s": float(per.min()), "median_pass_s": float(np.median(per))}


def _mpi_calibration(reps: int) -> dict:
    """t_startup, t_data of MPI (mpich) between 2 ranks, via mpiexec next to this Python."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    if not mpiexec.exists():
        return {"available": False, "why": f"no {mpiexec}"}
    root = Path(__file__).resolve().parents[2]  # the project root
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    cmd = [str(mpiexec), "-n", "2", sys.executable, "-m", "reproduce.paper4.mpi", str(reps)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=root)
    except subprocess.TimeoutExpired:
        return {"available": False, "why": "mpiexec -n 2 timed out after 120 s"}
    if p.returncode != 0:
        return {"available": False, "why": f"mpiexec exit {p.returncode}: {p.stderr.strip()[-300:]}"}
    return {"available": True, **json.loads(p.stdout.strip().splitlines()[-1])}


def run_task(task: Task, comm, run) -> dict | None:
    """One task; JSON-able numbers for the report (None on MPI ranks other than 0)."""
    from threadpoolctl import threadpool_limits

    from engine.comm.base import InProcessComm
    from engine.comm.local import run_local

    setup, backend, p = run.setup, run.backend, task.params
    if task.name == "calibrate_exchange":
        if p["backend"] == "inprocess":
            return calibrate_exchange(InProcessComm(), reps=setup.calib_reps)
        if backend == "mpi":
            res = calibrate_exchange(comm, reps=setup.calib_reps)
            return res if comm.rank == 0 else None
        return run_local(calibrate_exchange, 2, reps=setup.calib_reps, max_elems=32768)[0]
    if task.name == "calibrate_exchange_mpi":
        return _mpi_calibration(setup.calib_reps)
    if task.name == "calibrate_t_a":
        with threadpool_limits(1):
            return calibrate_t_a(setup.sizes(p["width"]), reps=max(10, setup.passes_timed // 2),
                                 rng=np.random.default_rng(p["seed"]))
    if task.name == "typical":
        return typical_run(setup, workers=task.workers, seed=p["seed"], backend=backend, comm=comm)
    if task.name == "sweep":
        return sweep(setup, width=p["width"], passes=p["passes"], seed=p["seed"],
                     workers=run.workers if backend == "local" else 1, backend=backend)
    if task.name == "wide":  # the ablation: the largest P, emulated, with fewer timed passes
        P = max(setup.procs)
        return {"emulated": {str(P): node_emulated(replace(setup, passes_timed=p["timed"]),
                                                   width=p["width"], passes=p["passes"], seed=p["seed"], P=P)},
                "measured": {}}
    if task.name == "node_mpi":
        return node_measured(setup, width=p["width"], passes=p["passes"], seed=p["seed"],
                             P=p["nodes"], backend="mpi", comm=comm)
    raise ValueError(f"unknown task {task.name!r}")


def _timed_serial(sizes, setup, seed, passes) -> float:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _serial_passes(None, sizes, setup.activation, seed, passes,
                              setup.passes_timed)["time_per_pass_s"]


def node_measured(setup: Setup, *, width: int, passes: str, seed: int, P: int, backend: str,
                  comm=None) -> dict | None:
    """Serial passes, then node-parallel passes on P real workers: one adjacent pair,
    so the speedup is a ratio taken under the same machine load."""
    from threadpoolctl import threadpool_limits

    sizes = setup.sizes(width)
    reps = setup.passes_timed
    rank = 0 if comm is None else comm.rank
    if comm is not None:
        comm.barrier()
    serial_s = _timed_serial(sizes, setup, seed, passes) if rank == 0 else float("nan")
    net, x, t = _pattern(sizes, seed)
    kw = dict(sizes=sizes, activation=setup.activation, params=net.params, workers=P,
              epochs=reps, passes=passes, cfg=NodeConfig())
    if P == 1:
        with threadpool_limits(1):
            rec = train_node_parallel(x, t, backend="inprocess", **kw)
    else:
        rec = train_node_parallel(x, t, backend=backend, comm=comm, **kw)
        if rec is None:
            return None
    ph = per_pass(rec.compute_s + rec.comm_s, reps).max(axis=2)  # (reps, phases) slowest worker
    cm = per_pass(rec.comm_s, reps).mean(axis=2)  # (reps, phases) mean over workers
    t_pass = float(np.median(ph, axis=0).sum())  # Σ_phases median over passes, as the serial
    return {"serial_s": serial_s, "time_per_pass_s": t_pass,
            "fastest_pass_s": float(ph.sum(axis=1).min()), "mean_s": rec.wall_s / reps,
            "comm_share": float(np.median(cm, axis=0).sum() / t_pass),
            "loadavg": os.getloadavg()}


def node_emulated(setup: Setup, *, width: int, passes: str, seed: int, P: int) -> dict:
    """Serial passes, then the P workers emulated in this process (compute only; the
    exchanges are composed later from a profile by reproduce/paper4/report.py
    ``emulated_time_per_pass``)."""
    from threadpoolctl import threadpool_limits

    sizes = setup.sizes(width)
    reps = setup.passes_timed
    serial_s = _timed_serial(sizes, setup, seed, passes)
    net, x, t = _pattern(sizes, seed)
    with threadpool_limits(1):
        rec = train_node_parallel(x, t, sizes=sizes, activation=setup.activation,
                                  params=net.params, workers=P, epochs=reps, passes=passes,
                                  cfg=NodeConfig(), backend="emulated", profile=FREE)
    c = per_pass(rec.compute_s, reps)  # (reps, phases, P)
    nb = rec.bytes_sent[: c.shape[1], 0]  # (phases,) bytes of one pass
    b, counts = np.unique(nb, return_counts=True)
    per = c.max(axis=2).sum(axis=1)  # (reps,) Σ_phases max_p compute, pass by pass
    return {"serial_s": serial_s, "compute_per_pass_s": float(np.median(c, axis=0).max(axis=1).sum()),
            "compute_fastest_pass_s": float(per.min()),
            "compute_per_pass_mean_s": float(c.max(axis=2).sum(axis=1).mean()), "reps": reps,
            "exchanges": {str(int(x)): int(k) for x, k in zip(b, counts) if x > 0},
            "loadavg": os.getloadavg()}


def sweep(setup: Setup, *, width: int, passes: str, seed: int, workers: int, backend: str) -> dict:
    """One run of a (width, passes) configuration: for every P, a serial timing right
    before an emulated one, and (local backend, P ≤ workers) before a measured one."""
    out = {"emulated": {}, "measured": {}}
    for P in setup.procs:
        out["emulated"][str(P)] = node_emulated(setup, width=width, passes=passes, seed=seed, P=P)
        if P <= workers:
            out["measured"][str(P)] = node_measured(setup, width=width, passes=passes, seed=seed,
                                                    P=P, backend="local")
    return out




def per_pass(x: np.ndarray, reps: int) -> np.ndarray:
    """(reps·phases, P) per-phase log rows → (reps, phases, P)."""
    return x.reshape(reps, -1, x.shape[1])


# ---- §5 typical run ---------------------------------------------------------------
def typical_run(setup: Setup, *, workers: int, seed: int, backend: str, comm=None) -> dict | None:
    """One pattern, targets [1, −1] (§5), trained online for ``typical_epochs`` on
    ``workers`` node-parallel workers, checked against the serial MLP on the same weights."""
    sizes = setup.typical_sizes
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(5,)))
    net = MLP(sizes, setup.activation)
    net.init_uniform(rng, scale=setup.typical_init)
    x = rng.uniform(-1, 1, (1, sizes[0]))  # (1, 132)
    t = np.array([TYPICAL_TARGETS])  # (1, 2)
    p0 = net.params.copy()
    E = setup.typical_epochs
    kw = dict(sizes=sizes, activation=setup.activation, params=p0, workers=workers, epochs=E,
              cfg=NodeConfig(lr=setup.typical_lr), keep=True)
    if workers == 1:
        rec = train_node_parallel(x, t, backend="inprocess", **kw)
    else:
        rec = train_node_parallel(x, t, backend=backend, comm=comm, **kw)
        if rec is None:
            return None
    outs = rec.extra["outputs"]  # (E, 2): the output of the forward pass of every epoch
    # the output after E updates: one more forward pass with the final weights
    from engine.strategies.node import assemble

    final, _ = assemble(sizes, setup.activation, rec.extra["blocks"])
    after = MLP(sizes, setup.activation, params=final).forward(x)[0][0]
    # serial reference on the same weights: same outputs, same final weights
    ref = MLP(sizes, setup.activation, params=p0.copy())
    ref_outs = np.empty((E, 2))
    for e in range(E):
        y, cache = ref.forward(x)
        ref_outs[e] = y[0]
        ref.params -= setup.typical_lr * ref.backward(y - t, cache)
    return {"epoch1_output": outs[0].tolist(), "after_1_update": outs[1].tolist() if E > 1 else None,
            "epoch_outputs": {str(e): outs[e - 1].tolist() for e in (1, 10, 100, 1000, 10_000) if e <= E},
            "after_all_updates": after.tolist(), "epochs": E, "workers": workers,
            "max_abs_diff_vs_serial_outputs": float(np.abs(outs - ref_outs).max()),
            "max_abs_diff_vs_serial_params": float(np.abs(final - ref.params).max()),
            "wall_s": rec.wall_s, "backend": backend if workers > 1 else "inprocess"}


# ---- run ------------------------------------------------------------------
def calibrated(results, setup: Setup) -> dict:
    """NodeModel per communicator and the emulation profile, from the calibration tasks."""
    ex, ta = {}, {}
    for t, res in results:
        if t.name == "calibrate_exchange":
            ex["inprocess" if t.params["backend"] == "inprocess" else t.params["backend"]] = res
        elif t.name == "calibrate_exchange_mpi" and res.get("available"):
            ex["mpi"] = res
        elif t.name == "calibrate_t_a":
            ta[t.params["width"]] = res
    return {"exchange": ex, "t_a": ta}


def models_for(cal: dict, width: int, setup: Setup) -> dict:
    """{communicator: NodeModel} with t_a measured at ``width`` (or the widest measured)."""
    ta = cal["t_a"].get(width) or cal["t_a"][max(cal["t_a"])]
    out = {}
    for name, e in cal["exchange"].items():
        out[name] = NodeModel(ta["t_a"], e["t_startup"], e["t_data"], setup.log_base,
                              source=f"t_a: serial forward at width {ta['sizes'][1]}; t_startup, "
                                     f"t_data: allgather fit on the {name} communicator")
    return out


def emulation_profile(cal: dict, backend: str) -> MachineProfile:
    """The allgather profile emulated runs are composed with: t_startup and t_data
    calibrated on this run's communicator (in-process when it has none)."""
    e = cal["exchange"].get(backend) or cal["exchange"]["inprocess"]
    return node_profile(e["t_startup"], e["t_data"], name=f"{backend}-calibrated",
                        source=f"t_startup, t_data fitted to allgathers of {e['sizes']} float64 "
                               f"between {e['P']} {backend} workers on this machine "
                               f"(fastest of {e['reps']} single calls per size)")


# ---- what run_task returns, checked on a cached result (reproduce/result_schema.py) ----
class ExchangeCalibration(Result):  # reproduce.paper4.blocked.calibrate_exchange
    t_startup: Seconds
    t_data: Seconds
    P: Count
    sizes: list[Count]
    seconds: list[Seconds]
    reps: Count


class MpiCalibration(ExchangeCalibration):
    available: Literal[True]


class MpiUnavailable(Result):
    available: Literal[False]
    why: str


def _availability(d):
    v = d.get("available") if isinstance(d, dict) else getattr(d, "available", None)
    return ("available" if v else "unavailable") if isinstance(v, bool) else None


class CalibrateExchangeMpiResult(RootModel):  # _mpi_calibration: the fit, or why there is none
    root: Annotated[Union[Annotated[MpiCalibration, Tag("available")],
                          Annotated[MpiUnavailable, Tag("unavailable")]],
                    Discriminator(_availability, custom_error_type="available",
                                  custom_error_message="available must be true or false")]


class TaCalibration(Result):  # reproduce.paper4.model.calibrate_t_a
    t_a: Seconds
    forward_s: Seconds
    forward_s_min: Seconds
    forward_s_max: Seconds
    ops: Count
    reps: Count
    sizes: list[Count]
    B: Count


class NodeEmulated(Result):  # node_emulated
    serial_s: Seconds
    compute_per_pass_s: Seconds
    compute_fastest_pass_s: Seconds
    compute_per_pass_mean_s: Seconds
    reps: Count
    exchanges: dict[str, Count]  # {"bytes of an exchange": exchanges of that size per pass}
    loadavg: LoadAvg


class NodeMeasured(Result):  # node_measured (on rank 0, where serial_s is measured)
    serial_s: Seconds
    time_per_pass_s: Seconds
    fastest_pass_s: Seconds
    mean_s: Seconds
    comm_share: Fraction
    loadavg: LoadAvg


class SweepResult(Result):
    emulated: dict[str, NodeEmulated]  # {"P": ...}, P in setup.procs
    measured: dict[str, NodeMeasured]  # {"P": ...}, P in setup.procs up to the workers


Output = Annotated[list[float], Field(min_length=2, max_length=2)]  # the net's 2 outputs (§5)


class TypicalResult(Result):  # typical_run
    epoch1_output: Output
    after_1_update: Output | None  # None: a run of one epoch
    epoch_outputs: dict[str, Output]  # {"e": output of epoch e}, e in 1, 10, ..., 10,000 up to epochs
    after_all_updates: Output
    epochs: Count
    workers: Count
    max_abs_diff_vs_serial_outputs: float
    max_abs_diff_vs_serial_params: float
    wall_s: Seconds
    backend: Literal["local", "mpi", "inprocess"]


def result_model(task: Task):
    return {"calibrate_exchange": ExchangeCalibration,
            "calibrate_exchange_mpi": CalibrateExchangeMpiResult, "calibrate_t_a": TaCalibration,
            "sweep": SweepResult, "wide": SweepResult, "node_mpi": NodeMeasured,
            "typical": TypicalResult}.get(task.name)
