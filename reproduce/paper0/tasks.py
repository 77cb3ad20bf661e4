"""paper0's tasks: the network partition (§2.1, Figs 2–3) and the training-sequence
partition (§2.2, Figs 4–5) of Elman nets on shared memory, measured on local
processes or emulated from per-worker compute; the derivative-loop timings; and
CG training of the recurrent NETtalk net."""
from __future__ import annotations

import math
import os
import time
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import Field, create_model

from engine.perfmodel import MachineProfile, measure_here
from reproduce.paper0.barrier import measure_barrier_here
from reproduce.harness import UsageError
from reproduce.paper0.setup import NETS, NETTALK, Setup
from reproduce.result_schema import Count, Fraction, LoadAvg, Result, Seconds
from reproduce.runner import Task


def prepare(run) -> None:
    """Refuse MPI (a usage error); the machine profiles of the emulated rows: ``--profile``'s
    when given, else this machine's barrier measured (the α of the best burst and of the
    overall median); plus a bound with free synchronisation. The tasks do not use them:
    the report composes every emulated row from the cached compute."""
    if run.backend != "local" or run.comm is not None:
        raise UsageError("paper0 studies shared-memory strategies: use --backend local")
    setup = run.setup
    if run.profile is not None:
        profiles = [run.profile]
    else:
        profiles = run.measured(("here-best", "here-median"), lambda: measure_barrier_here(
            measure_here(reps=4 * setup.profile_reps), reps=setup.profile_reps))  # α: best burst, overall median
    profiles.append(MachineProfile("compute-only", 0.0, math.inf,
                                   source="bound, not a machine: synchronisation and reduction free"))
    run.context["profiles"] = profiles
    from datasets import nettalk

    run.meta["nettalk_source"] = str(nettalk.data_dir())


def seeds(setup: Setup) -> int:
    return max(setup.runs, setup.train_runs)


# ---- tasks ---------------------------------------------------------------------------------
def make_tasks(run) -> list[Task]:
    setup, workers, seed = run.setup, run.workers, run.seed
    T = []
    for i in range(setup.runs):
        s = seed + i
        for net in NETS:
            T.append(Task("netpart", "emulated", 1, {"net": net, "run": i, "seed": s}))
            for P in range(2, min(workers, NETS[net]["n_hidden"]) + 1):
                T.append(Task("netpart", "measured", P, {"net": net, "workers": P, "run": i, "seed": s}))
        T.append(Task("seqpart", "emulated", 1, {"run": i, "seed": s}))
        for P in range(2, workers + 1):
            T.append(Task("seqpart", "measured", P, {"workers": P, "run": i, "seed": s}))
        T.append(Task("vectorise", "measured", 1, {"run": i, "seed": s}))
    for i in range(setup.train_runs):
        T.append(Task("train", "measured", min(2, workers), {"run": i, "seed": seed + i}))
    return T


def _nettalk_net(seed: int, setup: Setup):
    from engine.nets.elman import Elman

    net = Elman(**NETTALK)
    net.init_uniform(np.random.default_rng(seed), scale=setup.init_scale)
    return net


def _corpus():
    from datasets import nettalk

    return nettalk.load()


def run_task(task: Task, comm, run) -> dict:
    from threadpoolctl import threadpool_limits

    from engine.nets.elman import Elman
    import reproduce.paper0.network_partition as network
    import reproduce.paper0.sequence as sequence

    setup, p = run.setup, task.params
    load = os.getloadavg()
    with threadpool_limits(1):  # one BLAS thread per worker: workers are the parallelism
        if task.name == "netpart":
            from datasets.synthetic_seq import sequences

            rng = np.random.default_rng(p["seed"])
            data = sequences(p["net"], rng, n_seq=setup.synth_seqs, min_len=setup.synth_len[0],
                             max_len=setup.synth_len[1])
            net = Elman(**NETS[p["net"]])
            net.init_uniform(rng, scale=setup.init_scale)
            t0 = time.perf_counter()
            prep = network.prepare(net, data)
            seq_s = time.perf_counter() - t0
            H = net.n_hidden
            if task.kind == "emulated":
                ks = {k: network.block_seconds(net, prep, k, repeats=setup.block_repeats)
                      for k in range(1, H + 1)}
                batches = [data.batch([i]) for i in range(data.n_seq)]
                fwd = _best(lambda: [net.forward(b.X) for b in batches], setup.repeats)
                return {"block_s": {str(k): v for k, v in ks.items()}, "steps": data.n_patterns,
                        "patterns": data.n_patterns, "prep_s": seq_s, "fwd_s": fwd,
                        "n_params": net.n_params, "load": load}
            serial = network.block_seconds(net, prep, H, repeats=setup.repeats)
            _, par = network.run_partitioned(net, prep, p["workers"], repeats=setup.repeats)
            return {"serial_s": serial, "parallel_s": par, "load": load}
        corpus = _corpus()
        data = corpus.data
        net = _nettalk_net(p["seed"], setup)
        if task.name == "seqpart" and task.kind == "emulated":
            out = {"deriv": {}, "fwd": {}, "load": load}
            for P in range(1, setup.max_workers + 1):
                out["deriv"][str(P)] = sequence.worker_seconds(
                    net, data, P, deriv=True, chunk=setup.chunk, repeats=setup.repeats).tolist()
                out["fwd"][str(P)] = sequence.worker_seconds(
                    net, data, P, deriv=False, chunk=setup.chunk, repeats=setup.repeats).tolist()
            out["n_params"] = net.n_params
            return out
        if task.name == "seqpart":  # measured: 1 process vs P processes, same CG iterations
            res = {}
            for P in (1, p["workers"]):
                r = sequence.run_local_cg(data, net.params.copy(), sizes=NETTALK, workers_deriv=P,
                                          workers_fwd=P, iterations=setup.measure_cg_iters,
                                          chunk=setup.chunk, cg=_cg(setup))
                d = r["deriv_compute_s"] + r["deriv_reduce_s"]
                f = r["fwd_compute_s"] + r["fwd_reduce_s"]
                res[str(P)] = {"deriv_s": float(np.min(d)), "fwd_s": float(np.min(f))}
            return {**res, "load": load}
        if task.name == "vectorise":
            return _vectorise(net, data, setup) | {"load": load}
        if task.name == "train":
            return _train(net, corpus, setup, workers=task.workers) | {"load": load}
    raise ValueError(f"unknown task {task}")


def _cg(setup: Setup) -> dict:
    return {"max_evals": setup.cg_max_evals, "tol": setup.cg_tol}


def _best(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _vectorise(net, data, setup: Setup) -> dict:
    """Derivative-epoch seconds: forward-propagated derivatives per chunk size, BPTT,
    a forward epoch, and the share of the §2.1 loop in one CG iteration."""
    from engine.nets import elman as E
    import reproduce.paper0.network_partition as network

    out = {"forward_deriv_s": {}, "n_params": net.n_params, "patterns": data.n_patterns}
    for c in setup.vec_chunks:
        b = data.batches(chunk=c)
        out["forward_deriv_s"][str(c)] = _best(lambda: E.phi_grad(net, b, method="forward"), setup.repeats)
    b = data.batches(chunk=setup.chunk)
    out["bptt_s"] = _best(lambda: E.phi_grad(net, b, method="bptt"), setup.repeats)
    out["fwd_s"] = _best(lambda: E.phi(net, b), setup.repeats)
    # loop share: time the §2.1 loop alone over the same batches
    preps = [_prep(net, x) for x in b]
    buf = np.empty((net.nz, net.n_hidden))
    out["loop_s"] = _best(lambda: [net.hidden_block_grad(*pr, 0, net.n_hidden, out=buf) for pr in preps],
                          setup.repeats)
    return out


def _prep(net, batch):
    from engine.nets import elman as E

    Y, cache = net.forward(batch.X)
    _, dY = E.loss_and_dy(net, Y, batch)
    v, u = net.output_grads(cache, dY, np.zeros(net.n_params))
    return cache, v, u


def _train(net, corpus, setup: Setup, *, workers: int) -> dict:
    from datasets import nettalk
    import reproduce.paper0.sequence as sequence

    x0 = net.params.copy()
    r = sequence.run_local_cg(corpus.data, x0, sizes=NETTALK, workers_deriv=workers, workers_fwd=1,
                              iterations=setup.iterations, chunk=setup.chunk, cg=_cg(setup))
    net.params[:] = r["params"]
    b = corpus.data.batch(np.arange(corpus.data.n_seq))  # every word, in corpus order
    Y = net.forward(b.X)[0].transpose(1, 0, 2)[b.mask.T > 0]  # (N, 27), word by word
    acc = nettalk.accuracy(Y, corpus)
    h = r["history"]
    return {"accuracy": acc, "phi": [float(v) for v in h["phi"]], "final_phi": float(h["final_phi"]),
            "evals": [int(e) for e in h["evals"]], "restarts": int(r["restarts"]),
            "wall_s": float(r["wall_s"]), "iterations": setup.iterations, "workers_deriv": workers,
            # CG's stopping rule (engine/optim.py): iterations run, those that lowered Φ, why it stopped
            "iterations_run": len(h["phi"]), "useful": int(h["useful"]), "stopped": h["stopped"],
            "workers_fwd": 1, "deriv_s": float(np.median(r["deriv_compute_s"] + r["deriv_reduce_s"])),
            "fwd_s": float(np.median(r["fwd_compute_s"] + r["fwd_reduce_s"]))}


# ---- what run_task returns, checked on a cached result (reproduce/result_schema.py) ----
class NetpartEmulatedResult(Result):
    block_s: dict[str, Seconds]  # {"k": loop seconds of a block of k hidden units}, k = 1..H
    steps: Count
    patterns: Count
    prep_s: Seconds
    fwd_s: Seconds
    n_params: Count
    load: LoadAvg


class NetpartMeasuredResult(Result):
    serial_s: Seconds
    parallel_s: Seconds
    load: LoadAvg


class SeqpartEmulatedResult(Result):
    # {"P": each of the P workers' compute seconds}, P = 1..setup.max_workers
    deriv: dict[str, list[Seconds]]
    fwd: dict[str, list[Seconds]]
    load: LoadAvg
    n_params: Count


class EpochSeconds(Result):
    deriv_s: Seconds
    fwd_s: Seconds


@lru_cache(maxsize=None)
def seqpart_measured_result(P: int) -> type[Result]:
    """The measured seqpart result of P workers: {"1": EpochSeconds, "<P>": EpochSeconds,
    "load"} (one process, then P processes)."""
    epochs = {f"p{n}": (EpochSeconds, Field(alias=str(n))) for n in sorted({1, P})}
    return create_model("SeqpartMeasuredResult", __base__=Result, load=(LoadAvg, ...), **epochs)


class VectoriseResult(Result):
    forward_deriv_s: dict[str, Seconds]  # {"chunk": seconds}, chunk in setup.vec_chunks
    n_params: Count
    patterns: Count
    bptt_s: Seconds
    fwd_s: Seconds
    loop_s: Seconds
    load: LoadAvg


class Accuracy(Result):
    phoneme: Fraction
    stress: Fraction
    both: Fraction


class TrainResult(Result):
    accuracy: Accuracy
    phi: list[float]  # Φ before each iteration (not finite if training diverged)
    final_phi: float
    evals: list[Count]
    restarts: Count
    wall_s: Seconds
    iterations: Count
    workers_deriv: Count
    iterations_run: Count
    useful: Count
    stopped: Literal["iterations", "tolerance", "stall"]
    workers_fwd: Count
    deriv_s: Seconds
    fwd_s: Seconds
    load: LoadAvg


def result_model(task: Task):
    if task.name == "netpart":
        return NetpartEmulatedResult if task.kind == "emulated" else NetpartMeasuredResult
    if task.name == "seqpart":
        if task.kind == "emulated":
            return SeqpartEmulatedResult
        return seqpart_measured_result(task.params.get("workers", task.workers))  # the same P
    return {"vectorise": VectoriseResult, "train": TrainResult}.get(task.name)
