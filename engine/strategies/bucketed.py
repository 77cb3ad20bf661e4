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

An **emulated** run (more workers than cores) runs the P workers one after
another in this process, times each one's compute, and adds the allreduce
time of a :class:`engine.perfmodel.MachineProfile`; numerically it is the same
run as the SPMD one with the same seed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from time import perf_counter

import numpy as np

from engine.comm.base import InProcessComm
from engine.decoding import best_path, edit_distance
from engine.data import SeqData
from engine.losses import ctc_loss_and_grad
from engine.nets.lstm import LSTM
from engine.optim import Adadelta
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
    ss = lambda *k: np.random.default_rng(np.random.SeedSequence(seed, spawn_key=k))  # noqa: E731
    return ss(0), ss(1), ss(2, rank)


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
    """SPMD body of both schemes: the same code on every rank of any communicator."""
    P, r = comm.size, comm.rank
    w = SeqWorker(data, n_out, cfg=cfg, seed=seed, rank=r, size=P)
    train_idx = np.asarray(train_idx)
    bounds = _bounds(data, train_idx, cfg)
    log = np.zeros((cfg.epochs, 3))  # (epochs, [compute s, comm s, bytes])
    evals = np.zeros((cfg.epochs, 5))  # (epochs, [train loss sum, val loss, n, edits, chars])
    cells = np.zeros(cfg.epochs)
    n_par = w.net.n_params
    buf = np.empty(n_par + 2)  # (n_params + 2,): gradient or params, then loss and count
    ev0 = comm.allreduce(w.evaluate(np.asarray(val_idx)[r::P]))  # before training
    comm.barrier()
    t0 = perf_counter()
    for e in range(cfg.epochs):
        t = perf_counter()
        comm_s = nbytes = 0.0
        if cfg.scheme == "average":
            perm = w.order_rng.permutation(train_idx)
            portion = perm[r::P]  # step 3: one portion per worker
            batches = w.schedule(portion, bounds, batch_size=cfg.batch_size, rng=w.rng)
            loss, cells[e] = w.train_portion(batches)
            tc = perf_counter() - t
            buf[:n_par] = w.net.params
            buf[n_par], buf[n_par + 1] = loss, 0.0
            tm = perf_counter()
            comm.allreduce(buf, out=buf)
            comm_s += perf_counter() - tm
            nbytes += buf.nbytes
            buf[:n_par] /= P
            w.decay(buf[:n_par])
            evals[e, 0] = buf[n_par]
        else:
            batches = w.schedule(train_idx, bounds, batch_size=cfg.batch_size * P, rng=w.order_rng)
            tc, tot = 0.0, 0.0
            for bt in batches:
                mine = bt.idx[r::P]
                tb = perf_counter()
                if mine.size:
                    loss, g = w.grad(mine, bt.pad_len)
                    buf[:n_par] = g
                    cells[e] += mine.size * bt.pad_len
                else:
                    loss, buf[:n_par] = 0.0, 0.0
                buf[n_par], buf[n_par + 1] = loss, mine.size
                tm = perf_counter()
                tc += tm - tb
                comm.allreduce(buf, out=buf)
                ta = perf_counter()
                comm_s += ta - tm
                nbytes += buf.nbytes
                w.opt.step(w.net.params, buf[:n_par], int(buf[n_par + 1]))
                tot += buf[n_par]
                tc += perf_counter() - ta
            ta = perf_counter()
            w.decay(w.net.params.copy())
            tc += perf_counter() - ta
            evals[e, 0] = tot
        log[e] = (tc, comm_s, nbytes)
        ev = w.evaluate(np.asarray(val_idx)[r::P])
        evals[e, 1:] = comm.allreduce(ev)
    wall = perf_counter() - t0
    return {"log": log, "evals": evals, "ev0": ev0, "cells": cells, "wall": wall,
            "params": w.net.params.copy() if r == 0 else None}


def _record(results: list, *, kind: str, P: int, cfg: SeqConfig, n_train: int,
            profile: str = "") -> RunRecord:
    logs = np.stack([x["log"] for x in results], axis=1)  # (epochs, P, 3)
    ev = results[0]["evals"]
    val = ev[:, 1] / ev[:, 2]
    return RunRecord(
        strategy=f"bucketed-{cfg.scheme}", workers=P, kind=kind, converged=True,
        rounds=cfg.epochs, epochs=float(cfg.epochs), final_mse=float(val[-1]), loss_curve=val,
        compute_s=logs[:, :, 0], comm_s=logs[:, :, 1], bytes_sent=logs[:, :, 2],
        wall_s=max(x["wall"] for x in results), profile=profile, params=results[0]["params"],
        extra={"val_loss": val, "val_cer": ev[:, 3] / ev[:, 4], "train_loss": ev[:, 0] / n_train,
               "val_loss0": float(results[0]["ev0"][0] / results[0]["ev0"][1]),
               "cells": np.sum([x["cells"] for x in results], axis=0),
               **{f"cfg_{k}": v for k, v in asdict(cfg).items()}})


def train_bucketed(data: SeqData, n_out: int, *, train_idx, val_idx, cfg: SeqConfig, seed: int,
                   workers: int = 1, backend: str = "inprocess", comm=None, profile=None) -> RunRecord | None:
    """Run ``cfg.scheme`` on ``workers`` workers; backends as in
    :func:`engine.strategies.pattern.train_pattern_parallel` (inprocess, local, mpi, emulated).
    ``val_loss`` is the mean CTC loss per validation sequence after each epoch."""
    from engine.comm.local import run_local

    kw = dict(data=data, n_out=n_out, train_idx=np.asarray(train_idx), val_idx=np.asarray(val_idx),
              cfg=cfg, seed=seed)
    P, n = workers, len(train_idx)
    if backend == "inprocess":
        if P != 1:
            raise ValueError("the inprocess backend runs exactly 1 worker")
        return _record([seq_worker(InProcessComm(), **kw)], kind="measured", P=1, cfg=cfg, n_train=n)
    if backend == "local":
        n_par = LSTM(data.n_in, cfg.n_hidden, n_out).n_params
        res = run_local(seq_worker, P, max_elems=n_par + 2, **kw)
        return _record(res, kind="measured", P=P, cfg=cfg, n_train=n)
    if backend == "mpi":
        if comm is None or comm.size != P:
            raise ValueError(f"mpi backend needs a communicator of {P} ranks")
        res = comm.gather_objects(seq_worker(comm, **kw))
        return _record(res, kind="measured", P=P, cfg=cfg, n_train=n) if comm.rank == 0 else None
    if backend == "emulated":
        if profile is None:
            raise ValueError("emulated runs need a machine profile")
        return _emulate(P, profile=profile, **kw)
    raise ValueError(f"unknown backend {backend!r}; use inprocess, local, mpi or emulated")


def _emulate(P, *, profile, data, n_out, train_idx, val_idx, cfg: SeqConfig, seed) -> RunRecord:
    """P workers run one after another here, numerically the same run as the SPMD one.

    Model averaging: per epoch each worker's compute is timed; communication is one
    allreduce of the parameters. Gradient allreduce: per global batch each worker's
    share is timed, the batch costs the slowest share plus one allreduce of the
    gradient, and one ADADELTA step is applied (all replicas are identical, so one
    net and one optimizer stand for all P). Allreduce times come from ``profile``
    (:func:`engine.perfmodel.allreduce_time`)."""
    from engine.perfmodel import allreduce_time

    ws = [SeqWorker(data, n_out, cfg=cfg, seed=seed, rank=p, size=P)
          for p in range(P if cfg.scheme == "average" else 1)]
    bounds = _bounds(data, train_idx, cfg)
    n_par = ws[0].net.n_params
    nbytes = (n_par + 2) * 8
    t_comm = allreduce_time(profile, P, nbytes)
    comp = np.zeros((cfg.epochs, P))  # each worker's own compute
    comm_s = np.zeros((cfg.epochs, P))  # modelled allreduce + waiting for the slowest share
    n_msgs = np.zeros(cfg.epochs)  # allreduces per epoch
    evals = np.zeros((cfg.epochs, 5))
    cells = np.zeros(cfg.epochs)

    def evaluate():
        ev = np.zeros(4)
        for p in range(P):  # rank p evaluates every P-th validation sequence
            ev += ws[p % len(ws)].evaluate(np.asarray(val_idx)[p::P])
        return ev

    ev0 = evaluate()
    for e in range(cfg.epochs):
        if cfg.scheme == "average":
            perms = [w.order_rng.permutation(train_idx) for w in ws]  # identical: shared stream
            acc = np.zeros(n_par + 2)
            for p, w in enumerate(ws):
                t = perf_counter()
                batches = w.schedule(perms[p][p::P], bounds, batch_size=cfg.batch_size, rng=w.rng)
                loss, c = w.train_portion(batches)
                comp[e, p] = perf_counter() - t
                cells[e] += c
                acc[:n_par] += w.net.params  # rank order, as LocalComm sums
                acc[n_par] += loss
            acc[:n_par] /= P
            for w in ws:
                w.decay(acc[:n_par])
            evals[e, 0] = acc[n_par]
            comm_s[e] = t_comm + comp[e].max() - comp[e]
            n_msgs[e] = 1
        else:
            w = ws[0]
            batches = w.schedule(train_idx, bounds, batch_size=cfg.batch_size * P, rng=w.order_rng)
            tot = 0.0
            for bt in batches:
                acc = np.zeros(n_par + 2)
                tb = np.zeros(P)  # (P,) this batch's compute per worker
                for p in range(P):
                    mine = bt.idx[p::P]
                    if not mine.size:
                        continue
                    t = perf_counter()
                    loss, g = w.grad(mine, bt.pad_len)
                    acc[:n_par] += g  # rank order, as LocalComm sums
                    tb[p] = perf_counter() - t
                    acc[n_par] += loss
                    acc[n_par + 1] += mine.size
                    cells[e] += mine.size * bt.pad_len
                comp[e] += tb
                comm_s[e] += t_comm + tb.max() - tb  # the step waits for the slowest share
                t = perf_counter()
                w.opt.step(w.net.params, acc[:n_par], int(acc[n_par + 1]))
                comp[e] += perf_counter() - t  # every replica applies the step
                tot += acc[n_par]
            t = perf_counter()
            w.decay(w.net.params.copy())
            comp[e] += perf_counter() - t
            evals[e, 0] = tot
            n_msgs[e] = len(batches)
        evals[e, 1:] = evaluate()
    res = [{"log": np.stack([comp[:, p], comm_s[:, p], n_msgs * nbytes], axis=1),
            "evals": evals, "ev0": ev0, "cells": cells if p == 0 else np.zeros(cfg.epochs),
            "wall": float("nan"), "params": ws[0].net.params.copy() if p == 0 else None}
           for p in range(P)]
    return _record(res, kind="emulated", P=P, cfg=cfg, n_train=len(train_idx), profile=profile.name)
