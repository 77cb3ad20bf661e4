"""paper2, Fig. 4 at other mini-batch sizes k: measured epoch times, timing only.

§IV.B ties its baseline ("4 hours per epoch") and its "speed up factor close to 4" at
Q = 3 to a "purely random split of sequences on mini-batches". How much a random split
pads, and so what bucketing can save against it, grows with k (the modeled
``padded_cell_bound_by_k`` rows), and the paper does not state its k. This module
times, per k in :data:`BATCH_SIZES`, one full epoch of forward + backward passes (the
LSTM and CTC gradient of every mini-batch, no parameter update, so no training) for
random batches, eq. 1's one bucket padded to the longest sequence and optimal Q = 2, 3,
configurations interleaved ``timing_k_reps`` times so the machine's load hits all alike,
each timed after one untimed warm-up pass over its largest mini-batch.

Why a separate module: the task cache keys every task on the hash of setup.py and
tasks.py, so these tasks carry their own code hash in their parameters instead, and a
rebuild from an existing cache computes only them.
"""
from __future__ import annotations

import os
import time
from dataclasses import replace

import numpy as np

from engine.schedule import BUCKETINGS
from reproduce.paper2.bucketed import SeqWorker
import reproduce.paper2.tasks as tasks
from reproduce.runner import Task, code_hash

NAME = "epoch_times_k"
BATCH_SIZES = (4, 16, 64, 256)  # issue 13: the k of the modeled bound rows, k = 1 left out
# (method, Q): random batches (the paper's stated baseline), eq. 1 (one bucket, every
# batch padded to the longest sequence), optimal buckets Q = 2 and 3 (Fig. 3's rivals)
CONFIGS = (("random", 1), ("optimal", 1), ("optimal", 2), ("optimal", 3))


def make_tasks(run) -> list[Task]:
    """paper2's tasks (tasks.make_tasks) and one timing task per k."""
    own = code_hash("reproduce/paper2/timing_k")
    # CONFIGS and BATCH_SIZES live here, so this module's hash covers them
    extra = [Task(NAME, "measured", 1, {"seed": run.seed, "k": k, "reps": run.setup.timing_k_reps,
                                        "timing_code": own})
             for k in BATCH_SIZES]
    return tasks.make_tasks(run) + extra


def run_task(task: Task, comm, run) -> dict | None:
    """The timing tasks here, on one BLAS thread like every paper2 task; the rest by tasks.py."""
    if task.name != NAME:
        return tasks.run_task(task, comm, run)
    from threadpoolctl import threadpool_limits

    p = task.params
    with threadpool_limits(1):
        return epoch_times_k(run.setup, seed=p["seed"], k=p["k"],
                             configs=CONFIGS, reps=p["reps"])


def epoch_times_k(setup, *, seed: int, k: int, configs, reps: int) -> dict:
    """Per configuration, every repetition's seconds for one epoch of forward + backward
    passes at mini-batch size ``k``, its padded cells Σ k_b·T_pad (the cost of eq. 1–2) and
    its CTC lattice cells (tasks.lattice_cells).
    Every configuration starts from the same initial model (seed) and sees the same
    permutation of the training set in a repetition; the weights are never updated."""
    d, data = tasks._seq(setup)
    tr = np.asarray(d.train)
    real = int(data.lengths[tr].sum())
    sk = replace(setup, batch_size=k)
    out = {f"{m}:{q}": {"method": m, "Q": q, "k": k, "time_s": [], "cells": [], "waste": [],
                        "lattice": [], "batches": 0} for m, q in configs}
    lab = data.label_lengths
    for rep in range(reps):
        perm = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(10, k, rep))).permutation(tr)
        for m, q in configs:
            cfg = tasks.cfg_for(sk, Q=q, epochs=1, method=m)
            w = SeqWorker(data, tasks._n_out(), cfg=cfg, seed=seed, rank=0, size=1)
            bounds = BUCKETINGS[m](data.lengths[tr], q) if m in BUCKETINGS else None
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(11, k, rep)))
            batches = w.schedule(perm, bounds, batch_size=k, rng=rng)
            big = max(batches, key=lambda b: b.idx.size * b.pad_len)
            w.grad(big.idx, big.pad_len)  # untimed warm-up: the first configuration pays no first touch
            t = time.perf_counter()
            for bt in batches:
                w.grad(bt.idx, bt.pad_len)  # forward + backward, no update
            dt = time.perf_counter() - t
            cells = int(sum(bt.idx.size * bt.pad_len for bt in batches))
            r = out[f"{m}:{q}"]
            r["time_s"].append(dt)
            r["cells"].append(cells)
            r["waste"].append(1 - real / cells)
            r["lattice"].append(tasks.lattice_cells(batches, lab))
            r["batches"] = len(batches)
    out["_load"] = list(os.getloadavg())
    return out
