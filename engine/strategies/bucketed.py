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

Both run as one SPMD worker (:func:`seq_worker`) on every backend of
:func:`engine.parallel.driver.run`; an **emulated** run (more workers than
cores) is that worker on the emulated backend: each worker's compute is timed
between its allreduces and every allreduce is charged by a
:class:`engine.perfmodel.MachineProfile`, and numerically it is the same run as
the SPMD one with the same seed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from engine.decoding import best_path, edit_distance
from engine.data import SeqData
from engine.losses import ctc_loss_and_grad
from engine.nets.lstm import LSTM
from engine.optim import Adadelta
from engine.parallel import driver
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
    """One worker's replica of the LSTM, its ADADELTA state and its streams."""

    def __init__(self, data: SeqData, n_out: int, *, cfg: SeqConfig, seed: int, rank: int = 0,
                 size: int = 1):
        self.data, self.cfg, self.rank, self.size = data, cfg, rank, size
        init_rng, self.order_rng, self.rng = streams(seed, rank)
        self.net = LSTM(data.n_in, cfg.n_hidden, n_out)
        self.net.init(init_rng, scale=cfg.init_scale)  # identical on every worker
        self.opt = Adadelta(self.net.n_params, lr=cfg.lr, rho=cfg.rho, eps=cfg.eps)
        self.V_prev = self.net.params.copy()  # V(e−1) of eq. (3)
        self.g = np.empty(self.net.n_params)  # (n_params,)

    def grad(self, idx, pad_len: int | None = None) -> tuple[float, np.ndarray]:
        """(Σ CTC loss, Σ gradient) over the sequences ``idx`` padded to ``pad_len``."""
        x, mask, tgt = self.data.batch(idx, pad_len)
        y, cache = self.net.forward(x, mask)
        loss, dy = ctc_loss_and_grad(y, tgt)
        self.net.backward(dy, cache, out=self.g)
        return float(loss.sum()), self.g

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

    def decay(self, mean_params: np.ndarray) -> None:
        """Eq. (3): V(e) = v̄(e) − β·V(e−1)."""
        p = self.net.params
        np.subtract(mean_params, self.cfg.beta * self.V_prev, out=p)
        self.V_prev[:] = p

    def evaluate(self, idx: np.ndarray, *, batch_size: int = 32) -> np.ndarray:
        """[Σ CTC loss, sequences, Σ edit distance (best path), Σ reference chars] over ``idx``."""
        out = np.zeros(4)
        idx = np.asarray(idx)
        for s in range(0, idx.size, batch_size):
            part = idx[np.argsort(self.data.lengths[idx])][s:s + batch_size]  # similar lengths
            x, mask, tgt = self.data.batch(part)
            y, _ = self.net.forward(x, mask)
            loss, _ = ctc_loss_and_grad(y, tgt, need_grad=False)
            out[0] += loss.sum()
            out[1] += part.size
            for h, i in zip(best_path(y, tgt.input_lengths), part):
                out[2] += edit_distance(h, self.data.labels[i])
                out[3] += len(self.data.labels[i])
        return out


def _bounds(data: SeqData, train_idx, cfg: SeqConfig):
    if cfg.method not in BUCKETINGS:
        return None
    return BUCKETINGS[cfg.method](data.lengths[train_idx], cfg.n_buckets)


def seq_worker(comm, *, data: SeqData, n_out: int, train_idx, val_idx, cfg: SeqConfig,
               seed: int) -> dict:
    """SPMD body of both schemes: the same code on every rank of any communicator, one
    round per epoch. The validation after each epoch (each rank evaluates every P-th
    validation sequence, the sums are allreduced) is not training: it is untimed."""
    P, r = comm.size, comm.rank
    w = SeqWorker(data, n_out, cfg=cfg, seed=seed, rank=r, size=P)
    train_idx = np.asarray(train_idx)
    my_val = np.asarray(val_idx)[r::P]
    bounds = _bounds(data, train_idx, cfg)
    evals = np.zeros((cfg.epochs, 5))  # (epochs, [train loss sum, val loss, n, edits, chars])
    cells = np.zeros(cfg.epochs)
    n_par = w.net.n_params
    buf = np.empty(n_par + 2)  # (n_params + 2,): gradient or params, then loss and count
    ev0 = comm.allreduce(w.evaluate(my_val))  # before training (the clock is not running)
    comm.start_clock()
    for e in range(cfg.epochs):
        if cfg.scheme == "average":
            perm = w.order_rng.permutation(train_idx)
            portion = perm[r::P]  # step 3: one portion per worker
            batches = w.schedule(portion, bounds, batch_size=cfg.batch_size, rng=w.rng)
            loss, cells[e] = w.train_portion(batches)
            buf[:n_par] = w.net.params
            buf[n_par], buf[n_par + 1] = loss, 0.0
            comm.allreduce(buf, out=buf)
            buf[:n_par] /= P
            w.decay(buf[:n_par])
            evals[e, 0] = buf[n_par]
        else:
            batches = w.schedule(train_idx, bounds, batch_size=cfg.batch_size * P, rng=w.order_rng)
            tot = 0.0
            for bt in batches:
                mine = bt.idx[r::P]
                if mine.size:
                    loss, g = w.grad(mine, bt.pad_len)
                    buf[:n_par] = g
                    cells[e] += mine.size * bt.pad_len
                else:
                    loss, buf[:n_par] = 0.0, 0.0
                buf[n_par], buf[n_par + 1] = loss, mine.size
                comm.allreduce(buf, out=buf)
                w.opt.step(w.net.params, buf[:n_par], int(buf[n_par + 1]))
                tot += buf[n_par]
            w.decay(w.net.params.copy())
            evals[e, 0] = tot
        comm.clock.end_round()
        with comm.clock.untimed():
            evals[e, 1:] = comm.allreduce(w.evaluate(my_val))
    return {"evals": evals, "ev0": ev0, "cells": cells,
            "params": w.net.params.copy() if r == 0 else None}


def train_bucketed(data: SeqData, n_out: int, *, train_idx, val_idx, cfg: SeqConfig, seed: int,
                   workers: int = 1, backend: str = "inprocess", comm=None, profile=None) -> RunRecord | None:
    """Run ``cfg.scheme`` on ``workers`` workers of any backend of
    :func:`engine.parallel.driver.run` (``mpi``: ``comm`` has exactly ``workers`` ranks and
    the record comes back on rank 0, None elsewhere; ``emulated``: each worker's compute
    timed between its allreduces, which ``profile`` charges). One round per epoch;
    ``val_loss`` is the mean CTC loss per validation sequence after each epoch."""
    n_par = LSTM(data.n_in, cfg.n_hidden, n_out).n_params
    res = driver.run(seq_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=n_par + 2, data=data, n_out=n_out, train_idx=np.asarray(train_idx),
                     val_idx=np.asarray(val_idx), cfg=cfg, seed=seed)
    if res is None:
        return None
    r0 = res[0]
    ev = r0["evals"]
    val = ev[:, 1] / ev[:, 2]
    return driver.record(
        res, strategy=f"bucketed-{cfg.scheme}", backend=backend, profile=profile, converged=True,
        epochs=cfg.epochs, final_mse=val[-1], loss_curve=val, params=r0["params"],
        extra={"val_loss": val, "val_cer": ev[:, 3] / ev[:, 4], "train_loss": ev[:, 0] / len(train_idx),
               "val_loss0": float(r0["ev0"][0] / r0["ev0"][1]),
               "cells": np.sum([x["cells"] for x in res], axis=0),
               **{f"cfg_{k}": v for k, v in asdict(cfg).items()}})
