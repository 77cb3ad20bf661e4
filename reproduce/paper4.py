"""paper4 — Hlynsson & Schmitz (2016), *A Parallel Implementation of the Training of a
Backpropagation Multilayer Perceptron*: node-parallel MLP training (§3–4), the analytic
speedup model (§6, Table 1), measured speedups (Tables 2–3) and a typical run (§5).

The paper's setup and reported numbers are data here; :func:`run` calibrates the
model on this machine, times the node-parallel passes (measured up to the cores,
emulated beyond), and :mod:`reproduce.paper4_report` writes tables, plots and
report.md. Every deviation from the paper is commented where it is defined.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from time import perf_counter

import numpy as np

from engine.nets.mlp import MLP
from engine.perfmodel import (MachineProfile, NodeModel, calibrate_exchange, calibrate_t_a,
                              node_profile)
from engine.strategies.node import NodeConfig, check_fits, train_node_parallel
from reproduce.runner import Task

NAME = "paper4"

# ---- what the paper reports ----------------------------------------------------
TABLE1 = [  # (P, speedup n = 132, speedup n = 32k); §6.2, L = 7, t_startup = t_data = t_a = 1
    (1, 1.02, 1.00), (2, 2.01, 2.00), (4, 3.79, 4.00), (8, 6.58, 7.99), (16, 9.88, 15.95)]
# Table 2 (§7): forward pass speedup at the PDC centre; 7 layers, input 132, width 64,000.
# Its column header says "PDC time in seconds", but the values (1.00 at P = 1) are speedups.
TABLE2 = [(1, 1.00), (2, 2.78), (4, 5.49), (8, 10.40), (16, 15.72)]
# Table 3 (§7): "Then we did the same with the backward pass as well" (forward + backward).
# Its caption repeats "Forward pass speedup"; the text says it is forward plus backward.
TABLE3 = [(1, 1.00), (2, 1.98), (4, 3.92), (8, 7.07), (16, 9.95)]
TYPICAL_TARGETS = (1.0, -1.0)  # §5
TYPICAL_OUTPUTS = {1: (0.494420, -0.322816), 10_000: (0.953876, -0.953714)}  # §5
PAPER_LAYERS = 7  # §7: "a network with the depth of 7 layers"; Table 1: L = 7
PAPER_INPUT = 132  # §7: "input with dimension 132"
PAPER_WIDTH = 64_000  # §7: "a width of 64,000 nodes in every subsequent layer"
TABLE1_N = (132, 32_000)  # §6.2: "first for n = 132 then n = 32000"


@dataclass(frozen=True)
class Setup:
    # Our net for Tables 2–3: the paper's depth and input, widths this machine holds.
    # 7 layers read as the input layer plus 6 computed layers (the Σ_{l=1}^{L−1} of §6.1.1).
    # 2048 is the widest tried here: its weights take 0.16 GiB, an emulated run holds them
    # three times (the initial vector, then incoming and outgoing blocks), and one forward
    # pass takes ~7 ms, so 16 emulated workers × 3 runs stay within minutes on a machine
    # shared by five people. The paper's 64,000 needs 153 GiB of float64 weights: modeled.
    widths: tuple = (132, 512, 2048)
    paper_width: int = PAPER_WIDTH
    layers: int = PAPER_LAYERS
    n_input: int = PAPER_INPUT
    activation: str = "symmetric_sigmoid"  # §2: φ(x) = 2/(1+e^(−x)) − 1
    procs: tuple = (1, 2, 4, 8, 16)  # Tables 1–3
    passes_timed: int = 40  # passes per timed run (one pattern each: the paper trains online)
    runs: int = 3  # timed runs per configuration (spread: min/median/max)
    log_base: str = "2"  # base of log(P) in our model predictions (engine/perfmodel.py)
    # §5 typical run. Not stated: the net, η, the initial weights, the input pattern.
    # We use the paper's depth and input size with a narrow width, η = 0.1 (online,
    # one pattern), uniform ±0.5 initial weights, an input drawn uniform in [−1, 1].
    typical_sizes: tuple = (132, 32, 32, 32, 32, 32, 2)
    typical_lr: float = 0.1
    typical_init: float = 0.5
    typical_epochs: int = 10_000
    calib_reps: int = 400

    def sizes(self, width: int) -> tuple:
        return (self.n_input,) + (int(width),) * (self.layers - 1)


DEFAULT = Setup()
FULL = replace(DEFAULT, runs=10, passes_timed=100)
# --quick shrinks: widths 132 and 512, 1 run of 10 passes, P up to 8, §5 run of 1,000 epochs.
QUICK = replace(DEFAULT, widths=(132, 512), runs=1, passes_timed=10, procs=(1, 2, 4, 8),
                typical_epochs=1_000, calib_reps=100)
QUICK_SHRUNK = ["widths 132, 512, 2048 → 132, 512", "runs 3 → 1", "timed passes 40 → 10",
                "processors up to 16 → up to 8", "§5 typical run 10,000 → 1,000 epochs "
                "(the 10,000-epoch row is missing)", "calibration repetitions 400 → 100"]

PASSES = ("forward", "forward_backward")  # Table 2, Table 3


# ---- tasks ------------------------------------------------------------------
def make_tasks(setup: Setup, *, workers: int, seed: int, backend: str) -> list[Task]:
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
    T.append(Task("typical", "measured", min(2, workers), {"seed": seed, "nodes": min(2, workers)}))
    return T


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
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    cmd = [str(mpiexec), "-n", "2", sys.executable, "-m", "reproduce.paper4_mpi", str(reps)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=root)
    except subprocess.TimeoutExpired:
        return {"available": False, "why": "mpiexec -n 2 timed out after 120 s"}
    if p.returncode != 0:
        return {"available": False, "why": f"mpiexec exit {p.returncode}: {p.stderr.strip()[-300:]}"}
    return {"available": True, **json.loads(p.stdout.strip().splitlines()[-1])}


def run_task(task: Task, comm, *, setup: Setup, backend: str) -> dict | None:
    from threadpoolctl import threadpool_limits

    from engine.comm.base import InProcessComm
    from engine.comm.local import run_local

    p = task.params
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
                     workers=task_workers(backend), backend=backend)
    if task.name == "node_mpi":
        return node_measured(setup, width=p["width"], passes=p["passes"], seed=p["seed"],
                             P=p["nodes"], backend="mpi", comm=comm)
    raise ValueError(f"unknown task {task.name!r}")


_WORKERS = {"n": 1}


def task_workers(backend: str) -> int:
    """Measured local workers for this run (set by :func:`run`; MPI runs measure separately)."""
    return _WORKERS["n"] if backend == "local" else 1


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
    exchanges are composed later from a profile by :func:`emulated_time_per_pass`)."""
    from threadpoolctl import threadpool_limits

    sizes = setup.sizes(width)
    reps = setup.passes_timed
    serial_s = _timed_serial(sizes, setup, seed, passes)
    net, x, t = _pattern(sizes, seed)
    with threadpool_limits(1):
        rec = train_node_parallel(x, t, sizes=sizes, activation=setup.activation,
                                  params=net.params, workers=P, epochs=reps, passes=passes,
                                  cfg=NodeConfig(), backend="emulated", profile=_ZERO)
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


_ZERO = MachineProfile("none", 0.0, math.inf, "placeholder: communication composed later")


def per_pass(x: np.ndarray, reps: int) -> np.ndarray:
    """(reps·phases, P) per-phase log rows → (reps, phases, P)."""
    return x.reshape(reps, -1, x.shape[1])


def emulated_time_per_pass(res: dict, P: int, profile: MachineProfile) -> float:
    """Σ_phases max_p compute + Σ_exchanges allgather_time(P, bytes), for one pass.

    The compute part is Σ_phases max_p (median over the timed passes of worker p's
    compute in that phase), and the serial time it is divided by is Σ_layers median
    over passes (:func:`_serial_passes`). On this shared machine a time slice lost
    to another job lands in one of the P·phases timings of a pass; taken pass by
    pass it would become that phase's maximum and charge P emulated workers with
    what one real process suffered. The median per (phase, worker) drops it; the
    minimum would instead pick the luckiest of many timings and overstate speedup.
    """
    comm = sum(c * profile.allgather_time(P, int(b)) for b, c in res["exchanges"].items())
    return res["compute_per_pass_s"] + comm


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


def run(*, setup: Setup, mode: str, workers: int, backend: str, seed: int, out, comm=None,
        progress_factory=None, meta_extra: dict | None = None):
    """Calibrate, time every configuration (cached), then write results/paper4/ on rank 0."""
    import time

    from reproduce import paper4_report
    from reproduce.runner import code_hash, execute
    from reproduce.store import RunCache

    t0 = time.perf_counter()
    rank = 0 if comm is None else comm.rank
    for w in setup.widths:  # refuse before allocating anything
        check_fits(setup.sizes(w), max(setup.procs), emulated=True)
    _WORKERS["n"] = workers
    tasks = make_tasks(setup, workers=workers, seed=seed, backend=backend)
    cache = RunCache(out / ".cache")
    extra = {"paper": NAME, "setup": {k: v for k, v in asdict(setup).items() if k not in ("runs",)},
             "backend": backend, "code": code_hash("engine", "datasets", "reproduce/paper4")}
    cached = sum(cache.get(t.config(extra)) is not None for t in tasks) if rank == 0 else 0
    progress = progress_factory(len(tasks), NAME) if (progress_factory and rank == 0) else None
    results = execute(tasks, lambda t, c: run_task(t, c, setup=setup, backend=backend),
                      cache=cache, extra=extra, progress=progress, comm=comm)
    if results is None:
        return None
    from reproduce.report import run_metadata

    cal = calibrated(results, setup)
    e = cal["exchange"].get(backend) or cal["exchange"]["inprocess"]
    prof = node_profile(e["t_startup"], e["t_data"], name=f"{backend}-calibrated",
                        source=f"t_startup, t_data fitted to allgathers of {e['sizes']} float64 "
                               f"between {e['P']} {backend} workers on this machine "
                               f"(fastest of {e['reps']} single calls per size)")
    meta = {**run_metadata(), "paper": NAME, "mode": mode, "seed": seed,
            "seeds": f"{seed}..{seed + setup.runs - 1}", "workers": workers, "backend": backend,
            "setup": asdict(setup), "profile": prof.as_dict(), "calibration": cal,
            "loadavg_end": os.getloadavg(), "wall_s": time.perf_counter() - t0,
            "tasks": len(tasks), "tasks_from_cache": cached, **(meta_extra or {})}
    return paper4_report.write(out, results, setup=setup, profile=prof, cal=cal, meta=meta,
                               quick_shrunk=QUICK_SHRUNK if mode == "quick" else None)


def default_workers() -> int:
    return os.cpu_count() or 1
