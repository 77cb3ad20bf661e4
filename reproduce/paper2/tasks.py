"""paper2's tasks: LSTM + CTC training runs per bucketing and worker count (model
averaging or gradient allreduce; measured on local processes or MPI ranks, or
emulated), the interleaved epoch timings of Fig. 4, the padded-cell layouts, and
the validation-loss curves the report reads."""
from __future__ import annotations

import os
import time
from functools import lru_cache
from typing import Annotated, Literal

import numpy as np
from pydantic import ConfigDict, Field, model_validator

from engine.perfmodel import measure_here
from engine.profile_schema import ProfileModel
from engine.schedule import BUCKETINGS, epoch_batches, padded_cells
from reproduce.paper2.bucketed import SeqConfig, SeqData, SeqWorker, train_bucketed
from reproduce.paper2.setup import DATA_SEED, VAL_FRACTION, Setup
from reproduce.result_schema import Count, Fraction, Load, LoadAvg, Result, Seconds
from reproduce.runner import Task


def prepare(run) -> None:
    """The machine profile the emulated runs run under: ``--profile``'s when given, else
    this machine's (measured on rank 0, shared with every rank)."""
    if run.profile is not None:
        here = run.profile
    else:
        here = run.measured(("here",), lambda: [measure_here(reps=500)])[0] if run.rank == 0 else None
        if run.comm is not None:
            here = run.comm.comm.bcast(here, root=0)
    run.context["profiles"] = [here]
    run.meta["data_seed"] = DATA_SEED


@lru_cache(maxsize=4)
def dataset(n: int, n_writers: int, seed: int):
    from datasets.handwriting import handwriting

    return handwriting(n, seed=seed, n_writers=n_writers, val_fraction=VAL_FRACTION)


def dataset_of(setup: Setup):
    """The handwriting data set of this setup (the same for every run: ``DATA_SEED``)."""
    return dataset(setup.n_samples, setup.n_writers, DATA_SEED)


def _seq(setup: Setup):
    d = dataset_of(setup)
    return d, SeqData(d.seqs, d.labels)


def cfg_for(setup: Setup, *, Q: int, epochs: int, method: str | None = None,
            scheme: str = "average", order: str = "short_first") -> SeqConfig:
    return SeqConfig(n_hidden=setup.n_hidden, batch_size=setup.batch_size, n_buckets=Q,
                     method=method or ("random" if Q == 1 else "optimal"), beta=setup.beta,
                     epochs=epochs, scheme=scheme, order=order)


# ---- tasks ----------------------------------------------------------------
def profile_key(profile) -> dict:
    """What an emulated task's cache key holds of ``--profile``: its name and a hash of
    all its numbers, so a result emulated under one profile is never served for another.
    Without ``--profile`` nothing (the emulated runs use ``here``, measured at start-up;
    their results record it in ``profile_params``)."""
    if profile is None:
        return {}
    import hashlib
    import json

    body = json.dumps(profile.as_dict(), sort_keys=True, default=str)
    return {"profile": profile.name, "profile_sha1": hashlib.sha1(body.encode()).hexdigest()[:16]}


def make_tasks(run) -> list[Task]:
    """Per seed (``setup.runs`` of them): the 1-worker run of every Q and the measured
    model-averaging runs (P ≤ workers), which the training claims need; the emulated
    model-averaging runs beyond the workers (the paper's 6 GPUs: a claim) on every seed too;
    on the first ``emulated_runs`` seeds the emulated twin of every measured P-worker run
    (under the same profile as the runs beyond the workers: the emulator's validation); on
    the first ``ablation_runs`` seeds the bucket-order ablation and the gradient-allreduce
    runs (setup.py says why)."""
    setup, workers, seed = run.setup, run.workers, run.seed
    pk = profile_key(run.profile)
    T = [Task("epoch_times", "measured", 1, {"seed": seed})]
    for i in range(setup.runs):
        s = seed + i
        for Q in sorted(set(setup.Qs) | {setup.fig5_Q}):
            T.append(Task("train", "measured", 1, {"Q": Q, "workers": 1, "run": i, "seed": s}))
        if i < setup.ablation_runs:
            T.append(Task("train", "measured", 1, {"Q": setup.order_Q, "workers": 1, "run": i,
                                                   "seed": s, "order": "random"}))
        for name, Ps in (("train", setup.fig5_workers), ("allreduce", setup.allreduce_workers)):
            if name == "allreduce" and i >= setup.ablation_runs:
                continue
            for P in Ps:
                p = {"Q": setup.fig5_Q, "workers": P, "run": i, "seed": s}
                if P <= workers:
                    T.append(Task(name, "measured", P, p))
                if P > workers or i < setup.emulated_runs or name == "allreduce":
                    T.append(Task(name, "emulated", 1, {**p, **pk}))
    return T


def lattice_cells(batches, label_lengths) -> int:
    """Σ_batches |batch| · padded length · (2 · longest label in the batch + 1): the cells of
    the CTC lattices a layout's batches make, over which α and β run (Graves et al. 2006,
    eqs. 6–11; engine/losses.py pads every label to the batch's longest)."""
    L = np.asarray(label_lengths)
    return int(sum(b.idx.size * b.pad_len * (2 * int(L[b.idx].max()) + 1) for b in batches))


def epoch_times(setup: Setup, seed: int) -> dict:
    """Fig. 4: one training epoch per configuration from the same initial model,
    configurations interleaved ``timing_reps`` times so machine load hits all alike.
    Returns per configuration the seconds and padded cells of every repetition."""
    d, data = _seq(setup)
    tr = np.asarray(d.train)
    out = {f"{m}:{q}": {"method": m, "Q": q, "time_s": [], "cells": [], "waste": [], "lattice": []}
           for m, q in setup.timing}
    lab = data.label_lengths
    for rep in range(setup.timing_reps):
        for m, q in setup.timing:
            cfg = cfg_for(setup, Q=q, epochs=1, method=m)
            w = SeqWorker(data, _n_out(), cfg=cfg, seed=seed, rank=0, size=1)
            bounds = BUCKETINGS[m](data.lengths[tr], q) if m in BUCKETINGS else None
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(9, rep)))
            batches = w.schedule(rng.permutation(tr), bounds, batch_size=cfg.batch_size, rng=rng)
            t = time.perf_counter()
            _, cells = w.train_portion(batches)
            dt = time.perf_counter() - t
            real = int(data.lengths[tr].sum())
            r = out[f"{m}:{q}"]
            r["time_s"].append(dt)
            r["cells"].append(int(cells))
            r["waste"].append(1 - real / cells)
            r["lattice"].append(lattice_cells(batches, lab))
    out["_load"] = list(os.getloadavg())
    return out


def _n_out():
    from datasets.handwriting import N_CLASSES

    return N_CLASSES


def run_task(task: Task, comm, run) -> dict | None:
    """One task on one BLAS thread (the workers are the parallelism); JSON-able numbers."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _run_task(task, comm, setup=run.setup, backend=run.backend,
                         profile=run.context["profiles"][0])


def _run_task(task: Task, comm, *, setup: Setup, backend: str, profile) -> dict | None:
    p = task.params
    if task.name == "epoch_times":
        return epoch_times(setup, p["seed"])
    d, data = _seq(setup)
    P = p["workers"]
    # With P workers an epoch ideally takes 1/P of the time (each worker sees n/P
    # sequences): run P times the epochs so every configuration covers about the
    # same wall clock as the 1-worker run.
    scheme = "allreduce" if task.name == "allreduce" else "average"
    epochs = setup.epochs * P
    cfg = cfg_for(setup, Q=p["Q"], epochs=epochs, scheme=scheme, order=p.get("order", "short_first"))
    kw = dict(train_idx=d.train, val_idx=d.val, cfg=cfg, seed=p["seed"])
    load0 = os.getloadavg()[0]
    if task.kind == "emulated":
        rec = train_bucketed(data, _n_out(), workers=P, backend="emulated", profile=profile, **kw)
    elif P == 1:
        rec = train_bucketed(data, _n_out(), **kw)
    else:
        rec = train_bucketed(data, _n_out(), workers=P, backend=backend, comm=comm, **kw)
    if rec is None:
        return None
    comp = rec.compute_s.max(axis=1)  # (epochs,) slowest worker's compute
    comm_s = rec.comm_s.max(axis=1)  # (epochs,) longest allreduce time, waiting included
    epoch_s = (rec.compute_s + rec.comm_s).max(axis=1)  # (epochs,) the epoch ends with the last worker
    return {"epochs": epochs, "compute_s": comp.tolist(), "comm_s": comm_s.tolist(),
            "time_s": np.cumsum(epoch_s).tolist(),  # training time, validation excluded
            "val_loss": rec.extra["val_loss"].tolist(), "val_loss0": rec.extra["val_loss0"], "val_cer": rec.extra["val_cer"].tolist(),
            "train_loss": rec.extra["train_loss"].tolist(), "cells": rec.extra["cells"].tolist(),
            "profile": rec.profile, "kind": rec.kind, "load": [load0, os.getloadavg()[0]],
            # the profile this run's allreduce was modelled with (measured at the start of the
            # invocation that ran it, so cached runs may carry different ones)
            "profile_params": profile.as_dict() if task.kind == "emulated" else None}


def layout_table(lengths, *, batch_size: int, Qs=(1, 2, 3, 4, 6), seed: int = 0) -> list[dict]:
    """Modeled: padded cells and padding waste of one epoch's layout per method and Q
    (no training; the bound a bucketing can give is random cells / its cells)."""
    lengths = np.asarray(lengths)
    rng = np.random.default_rng(seed)
    rows = []
    rand = [padded_cells(epoch_batches(lengths, batch_size, rng, method="random")) for _ in range(5)]
    base = float(np.mean(rand))
    real = int(lengths.sum())
    rows.append({"method": "random", "Q": 1, "cells": base, "waste": 1 - real / base, "bound": 1.0})
    mb = float(np.mean([padded_cells(epoch_batches(lengths, batch_size, rng, method="megabatch"))
                        for _ in range(5)]))
    rows.append({"method": "megabatch", "Q": 1, "cells": mb, "waste": 1 - real / mb, "bound": base / mb})
    for m in BUCKETINGS:
        for q in Qs:
            c = padded_cells(epoch_batches(lengths, batch_size, rng, method=m, n_buckets=q))
            rows.append({"method": m, "Q": q, "cells": float(c), "waste": 1 - real / c,
                         "bound": base / c})
    return rows


def loss_at(res: dict, t: float) -> float:
    """Validation loss at training time t, linear between epochs (from the initial model's
    loss at t = 0; NaN after the last epoch)."""
    ts, vs = curve(res)
    if t > ts[-1] * (1 + 1e-9):
        return float("nan")
    return float(np.interp(t, ts, vs))


def curve(res: dict, key: str = "time_s"):
    """(x, validation loss) with the untrained model's loss at x = 0 first."""
    x = np.concatenate([[0.0], np.asarray(res[key], dtype=float)])
    return x, np.concatenate([[res["val_loss0"]], np.asarray(res["val_loss"])])


# ---- what run_task returns, checked on a cached result (reproduce/result_schema.py) ----
class EpochTiming(Result):  # epoch_times, one configuration
    method: str
    Q: Count
    time_s: list[Seconds]  # one per repetition
    cells: list[Count]
    waste: list[Fraction]
    lattice: list[Count] = []  # CTC lattice cells (lattice_cells); absent from older caches


class EpochTimingK(EpochTiming):  # timing_k.epoch_times_k, one configuration
    k: Count
    batches: Count


class _PerConfiguration(Result):
    """{"<method>:<Q>": one configuration's timings, ..., "_load": os.getloadavg()}."""

    model_config = ConfigDict(extra="allow")  # the configurations; their type: the subclass's
    load: LoadAvg = Field(alias="_load")

    @model_validator(mode="after")
    def _named_by_configuration(self):
        if not self.__pydantic_extra__:
            raise ValueError("no configuration")
        for key, c in self.__pydantic_extra__.items():
            if key != f"{c.method}:{c.Q}":
                raise ValueError(f"configuration {key!r} holds {c.method}:{c.Q}")
        return self


class EpochTimesResult(_PerConfiguration):
    __pydantic_extra__: dict[str, EpochTiming] = Field(init=False)


class EpochTimesKResult(_PerConfiguration):
    __pydantic_extra__: dict[str, EpochTimingK] = Field(init=False)


class _Training(Result):  # train and allreduce
    epochs: Count
    compute_s: list[Seconds]  # per epoch
    comm_s: list[Seconds]
    time_s: list[Seconds]
    val_loss: list[float]  # CTC losses: not finite where a run diverged
    val_loss0: float
    val_cer: list[float]
    train_loss: list[float]
    cells: list[float]  # padded cells per epoch, summed in float64
    load: Annotated[list[Load], Field(min_length=2, max_length=2)]  # 1-min load before, after


class TrainMeasuredResult(_Training):
    profile: Literal[""]
    kind: Literal["measured"]
    profile_params: None


class TrainEmulatedResult(_Training):
    profile: str
    kind: Literal["emulated"]
    profile_params: ProfileModel  # the profile as_dict, as engine/profile_schema.py checks one


def result_model(task: Task):
    if task.name in ("train", "allreduce"):
        return TrainEmulatedResult if task.kind == "emulated" else TrainMeasuredResult
    # "epoch_times_k" is timing_k.NAME (timing_k imports this module, not the other way;
    # tests/harness/test_result_models.py checks every task make_tasks gives has a model)
    return {"epoch_times": EpochTimesResult, "epoch_times_k": EpochTimesKResult}.get(task.name)
