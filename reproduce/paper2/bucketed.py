"""Bucketed LSTM+CTC training, serial and data-parallel (Khomenko et al. 2016, §III).

Two data-parallel schemes, both SPMD over any :class:`Communicator`:

- **model averaging** (the paper's, §III.B): every epoch the training set is
  re-shuffled with the shared data-order stream and split into one portion per
  worker (step 3); each worker trains its portion with ADADELTA over bucketed
  mini-batches, shortest bucket first (step 4); then the parameters are
  averaged with eq. (3), V(e) = v̄(e) − β·V(e−1): v̄ the mean over workers,
  V(e−1) the previous epoch's parameters (the initial ones for e = 1), β a small
  weight-decay term (the paper's value is garbled, "1·10^-?"; a parameter here).
  Each worker keeps its own ADADELTA accumulators across epochs (the paper does
  not say; its processes are re-spawned each epoch, which would reset them).
- **gradient allreduce** (for comparison): one global bucketed schedule of
  batches of P·k sequences from the shared stream; worker p takes every P-th
  sequence of each batch, the gradient sums are allreduced and every worker
  applies the same ADADELTA step, so P workers compute exactly what one worker
  does with batches of P·k. The same eq. (3) decay is applied at epoch end.

The bucket bounds are computed once from the whole training set (step 2
builds the Q models before the data is split) with ``method``.

Both are configurations of the data-parallel family (:func:`dp_config`): they run
as :func:`engine.parallel.data_parallel.dp_worker` on every backend of
:func:`engine.parallel.driver.run`, with the paper's measurements (validation
before training and after each epoch, padded cells) as the :class:`Validation`
component. An **emulated** run (more workers than cores) is that worker on the
emulated backend: each worker's compute is timed between its allreduces and
every allreduce is charged by a :class:`engine.perfmodel.MachineProfile`, and
numerically it is the same run as the SPMD one with the same seed.
:class:`SeqWorker` is one serial replica for timing single epochs (Fig. 4).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from functools import partial

import numpy as np

from engine.decoding import best_path, edit_distance
from engine.data import SeqData
from engine.losses import ctc_loss_and_grad
from engine.nets.lstm import LSTM
from engine.optim import Adadelta
from engine.parallel import driver
from engine.parallel.data_parallel import (BUCKETED, AdadeltaRule, Buckets, DataParallel, Hooks,
                                           dp_worker)
from engine.schedule import BUCKETINGS, Batch, epoch_batches
from engine.timing import RunRecord


@dataclass(frozen=True)
class SeqConfig:
    n_hidden: int = 64
    batch_size: int = 16  # k, per worker
    n_buckets: int = 6  # Q
    method: str = "optimal"  # optimal | quantile | equal_width | megabatch | random
    order: str = "short_first"  # §IV.A; or "random"
    shuffle_within: bool = True
    pad_to: str = "bucket"  # the paper's Q models pad to the bucket bound
    beta: float = 1e-6  # eq. (3); garbled in the text ("1·10^-?")
    lr: float = 1.0  # ADADELTA, Lasagne's defaults
    rho: float = 0.95
    eps: float = 1e-6
    init_scale: float = 0.1
    epochs: int = 10
    scheme: str = "average"  # average (eq. 3) | allreduce (gradients)

    def __post_init__(self):
        if self.scheme not in ("average", "allreduce"):
            raise ValueError(f"scheme must be 'average' or 'allreduce', got {self.scheme!r}")
        if self.method not in BUCKETINGS and self.method not in ("random", "megabatch"):
            raise ValueError(f"unknown method {self.method!r}")
        if self.epochs < 1 or self.batch_size < 1 or self.n_buckets < 1:
            raise ValueError("epochs, batch_size and n_buckets must be >= 1")


def streams(seed: int, rank: int):
    """(init stream shared by all workers, data-order stream shared by all workers,
    this rank's own stream)."""
    return driver.stream(seed, 0), driver.stream(seed, 1), driver.stream(seed, 2, rank)


class SeqWorker:
    """One serial replica of the LSTM, its ADADELTA state and its streams: the single
    epochs a timing needs (the benchmarks, a report's epoch times); training runs are
    :func:`train_bucketed`."""

    def __init__(self, data: SeqData, n_out: int, *, cfg: SeqConfig, seed: int, rank: int = 0,
                 size: int = 1):
        self.data, self.cfg, self.rank, self.size = data, cfg, rank, size
        init_rng, self.order_rng, self.rng = streams(seed, rank)
        self.net = LSTM(data.n_in, cfg.n_hidden, n_out)
        self.net.init(init_rng, scale=cfg.init_scale)  # identical on every worker
        self.opt = Adadelta(self.net.n_params, lr=cfg.lr, rho=cfg.rho, eps=cfg.eps)
        self.g = np.empty(self.net.n_params)  # (n_params,)

    def grad(self, idx, pad_len: int | None = None) -> tuple[float, np.ndarray]:
        """(Σ CTC loss, Σ gradient) over the sequences ``idx`` padded to ``pad_len``."""
        return self.net.loss_and_grad(self.data.batch(idx, pad_len), self.g), self.g

    def schedule(self, train_idx: np.ndarray, bounds, *, batch_size: int, rng) -> list[Batch]:
        c = self.cfg
        b = epoch_batches(self.data.lengths[train_idx], batch_size, rng, method=c.method,
                          n_buckets=c.n_buckets, bounds=bounds if c.method in BUCKETINGS else None,
                          order=c.order, shuffle_within=c.shuffle_within, pad_to=c.pad_to)
        return [Batch(train_idx[x.idx], x.pad_len) for x in b]

    def train_portion(self, batches: list[Batch]) -> tuple[float, int]:
        """Step 4 of §III.B: ADADELTA over this worker's bucketed mini-batches."""
        tot, cells = 0.0, 0
        for bt in batches:
            loss, g = self.grad(bt.idx, bt.pad_len)
            self.opt.step(self.net.params, g, bt.idx.size)
            tot += loss
            cells += bt.idx.size * bt.pad_len
        return tot, cells


def evaluate(net: LSTM, data: SeqData, idx, *, batch_size: int = 32) -> np.ndarray:
    """[Σ CTC loss, sequences, Σ edit distance (best path), Σ reference chars] of ``net``
    over the sequences ``idx`` of ``data``."""
    out = np.zeros(4)
    idx = np.asarray(idx)
    for s in range(0, idx.size, batch_size):
        part = idx[np.argsort(data.lengths[idx])][s:s + batch_size]  # similar lengths
        x, mask, tgt = data.batch(part)
        y, _ = net.forward(x, mask)
        loss, _ = ctc_loss_and_grad(y, tgt, need_grad=False)
        out[0] += loss.sum()
        out[1] += part.size
        for h, i in zip(best_path(y, tgt.input_lengths), part):
            out[2] += edit_distance(h, data.labels[i])
            out[3] += len(data.labels[i])
    return out


# ---- the paper's configuration of the data-parallel family ---------------------------------
def dp_config(cfg: SeqConfig, workers: int) -> DataParallel:
    """``cfg`` as a :class:`DataParallel`: bucketed batches with bounds from the whole
    training set (§III.B step 2) and ADADELTA; ``average`` combines the parameters with
    eq. (3) each epoch (each worker's batches of k), ``allreduce`` the gradients of global
    batches of P·k with the same decay at epoch end, one round per epoch."""
    avg = cfg.scheme == "average"
    return replace(
        BUCKETED, combine="params" if avg else "gradients",
        optimizer=AdadeltaRule(cfg.lr, cfg.rho, cfg.eps),
        batch=cfg.batch_size * (1 if avg else workers), epochs=cfg.epochs, beta=cfg.beta,
        buckets=Buckets(n=cfg.n_buckets, method=cfg.method, order=cfg.order,
                        shuffle_within=cfg.shuffle_within, pad_to=cfg.pad_to, bounds_from="all"),
        round_every="epoch")


def _make_net(rng, *, n_in: int, n_hidden: int, n_out: int, scale: float) -> LSTM:
    net = LSTM(n_in, n_hidden, n_out)
    net.init(rng, scale=scale)  # stream (seed, 0): identical on every worker
    return net


def net_maker(data: SeqData, n_out: int, cfg: SeqConfig):
    """``make_net(rng)`` of :func:`dp_worker` for this configuration's LSTM."""
    return partial(_make_net, n_in=data.n_in, n_hidden=cfg.n_hidden, n_out=n_out,
                   scale=cfg.init_scale)


class Validation(Hooks):
    """Khomenko et al.'s per-epoch measurements as a :class:`Hooks` component.

    - the validation set's CTC loss and character errors (best path) before training
      and after each epoch (untimed): rank p evaluates every P-th validation sequence,
      the sums are allreduced;
    - the padded cells each worker computes per epoch (the cost bucketing lowers,
      eqs. 1–2);
    - under model averaging, the count of sequences a worker trained, appended to its
      parameters: the paper's message is (params, loss, count) in both schemes.

    One object serves every worker of an emulated run (one process), so the
    per-worker state is kept by rank.
    """

    def __init__(self, data: SeqData, val_idx, *, epochs: int, average: bool):
        self.data, self.val_idx, self.epochs = data, np.asarray(val_idx), epochs
        self.extra = 1 if average else 0
        self._w: dict[int, dict] = {}

    def start(self, comm, rep) -> None:
        w = self._w[comm.rank] = {
            "val": self.val_idx[comm.rank::comm.size], "e": 0,
            "evals": np.zeros((self.epochs, 4)),  # (epochs, [val loss, n, edits, chars])
            "cells": np.zeros(self.epochs)}  # (epochs,)
        w["ev0"] = comm.allreduce(evaluate(rep.net, self.data, w["val"]))

    def grad(self, comm, rep, idx, pad_len, out) -> float:
        w = self._w[comm.rank]
        w["cells"][w["e"]] += len(idx) * pad_len
        if self.extra:
            out[0] = len(idx)
        return rep.grad(idx, pad_len)

    def end_epoch(self, comm, rep, epoch: int) -> bool:
        w = self._w[comm.rank]
        w["evals"][epoch] = comm.allreduce(evaluate(rep.net, self.data, w["val"]))
        w["e"] = epoch + 1
        return False

    def result(self, comm, rep) -> dict:
        w = self._w.pop(comm.rank)
        return {"evals": w["evals"], "ev0": w["ev0"], "cells": w["cells"]}


def subset(data: SeqData, idx) -> SeqData:
    """The sequences ``idx`` of ``data`` as a data set (the arrays are shared)."""
    return SeqData([data.seqs[i] for i in idx], [data.labels[i] for i in idx])


def train_bucketed(data: SeqData, n_out: int, *, train_idx, val_idx, cfg: SeqConfig, seed: int,
                   workers: int = 1, backend: str = "inprocess", comm=None, profile=None) -> RunRecord | None:
    """Run ``cfg.scheme`` on ``workers`` workers of any backend of
    :func:`engine.parallel.driver.run` (``mpi``: ``comm`` has exactly ``workers`` ranks and
    the record comes back on rank 0, None elsewhere; ``emulated``: each worker's compute
    timed between its allreduces, which ``profile`` charges): :func:`dp_worker` with
    :func:`dp_config` and the :class:`Validation` component, on the training sequences.
    One round per epoch; ``val_loss`` is the mean CTC loss per validation sequence after
    each epoch."""
    train_idx = np.asarray(train_idx)
    if cfg.scheme == "average" and len(train_idx) < workers:  # eq. (3) would average in a
        # worker that never trained (its portion of the training sequences is empty)
        raise ValueError(f"model averaging on {workers} workers needs at least {workers} training "
                         f"sequences (one per worker), got {len(train_idx)}")
    make_net = net_maker(data, n_out, cfg)
    n_par = LSTM(data.n_in, cfg.n_hidden, n_out).n_params
    hooks = Validation(data, val_idx, epochs=cfg.epochs, average=cfg.scheme == "average")
    res = driver.run(dp_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=n_par + 2, make_net=make_net, data=subset(data, train_idx),
                     cfg=dp_config(cfg, workers), seed=seed, hooks=hooks)
    if res is None:
        return None
    r0 = res[0]
    ev = r0["evals"]
    val = ev[:, 0] / ev[:, 1]
    return driver.record(
        res, strategy=f"bucketed-{cfg.scheme}", backend=backend, profile=profile, converged=True,
        epochs=cfg.epochs, final_mse=val[-1], loss_curve=val, params=r0["params"],
        extra={"val_loss": val, "val_cer": ev[:, 2] / ev[:, 3],
               "train_loss": r0["curve"] / len(train_idx),
               "val_loss0": float(r0["ev0"][0] / r0["ev0"][1]),
               "cells": np.sum([x["cells"] for x in res], axis=0),
               **{f"cfg_{k}": v for k, v in asdict(cfg).items()}})
