"""Pattern-parallel (PP) bunch training, Quicknet style (Färber 1997, §2.2).

Every slave holds the whole net. A bunch of B patterns is split into P
contiguous shares (B/P each, in presentation order); slave p sums the gradient
of its share; the master gathers the P gradient sums, adds them in rank order
and sends the update back, so every replica takes the same step, the bunch's
step of sequential training. The gather–sum–send is the communicator's
allreduce (summed in rank order on every backend). Each slave's frame count
right and squared error ride along as two extra elements.

Per bunch and slave the master/slave protocol moves the slave's share of the
inputs and targets ((B/P)·(N_i + N_o) values, or its chunk of frames with
compressed input) and 2·N_wts values (the update read, the weights written):
the T_d of §2.5.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from engine.comm.base import InProcessComm
from engine.losses import get_loss
from engine.nets.mlp import MLP
from engine.optim import SGD
from engine.strategies.bunch import (BunchConfig, InputFeed, data_rng, frame_accuracy, init_rng,
                                     schedule)
from engine.timing import RoundLog, Stopwatch


def share(b: int, P: int, p: int) -> slice:
    """Rank p's contiguous share of a bunch of b patterns (sizes differ by at most one)."""
    cuts = np.linspace(0, b, P + 1).round().astype(int)
    return slice(int(cuts[p]), int(cuts[p + 1]))


class PPSlave:
    """A full replica: the summed gradient of a share, plus its frame count and error."""

    def __init__(self, sizes, activation, *, cfg: BunchConfig, seed: int, init_scale: float,
                 loss: str = "mse"):
        self.net = MLP(sizes, activation)
        self.net.init_uniform(init_rng(seed), scale=init_scale)  # identical on every slave
        self.act = self.net.acts[-1]
        self.loss = get_loss(loss)
        self.cfg = cfg
        self.opt = SGD(self.net.n_params, lr=cfg.lr, momentum=cfg.momentum)
        self.msg = np.zeros(self.net.n_params + 2)  # (n_params + 2,): gradient sum, right, sse
        self.g = self.msg[:-2]
        self.wss: dict = {}

    def gradient(self, x: np.ndarray, idx: np.ndarray, corpus) -> np.ndarray:
        """Fill and return the message for the patterns ``idx`` with inputs x (m, N_i)."""
        m = idx.size
        if m == 0:
            self.msg[:] = 0.0
            return self.msg
        ws = self.wss.get(m) or self.wss.setdefault(m, self.net.workspace(m))
        t = corpus.targets(idx, low=self.act.low, high=self.act.high)  # (m, N_o)
        y, cache = self.net.forward(x, ws=ws)
        self.msg[-2] = np.sum(np.argmax(y, axis=1) == corpus.labels[idx])
        self.msg[-1] = np.sum((y - t) ** 2)
        self.net.backward(self.loss.grad(y, t), cache, out=self.g)
        return self.msg

    def apply(self, total: np.ndarray, b: int) -> None:
        self.opt.step(self.net.params, total[:-2], self.cfg.count(b))


def _protocol_bytes(m: int, n_params: int, sizes, cfg: BunchConfig) -> float:
    """Values the master moves for one slave and one bunch, beyond the input feed:
    its share's targets (uncompressed: N_o each) and 2·N_wts (update in, weights out)."""
    tgt = 0 if cfg.compressed else m * sizes[2]
    return (tgt + 2 * n_params) * cfg.value_bytes


def pp_worker(comm, *, corpus, sizes, activation: str, cfg: BunchConfig, seed: int,
              init_scale: float = 0.1) -> dict:
    """SPMD body of PP training on any communicator."""
    P, rank = comm.size, comm.rank
    s = PPSlave(sizes, activation, cfg=cfg, seed=seed, init_scale=init_scale)
    feed = InputFeed(comm, corpus, cfg)
    rng = data_rng(seed)
    total = np.empty_like(s.msg)  # (n_params + 2,)
    log = RoundLog(4096)
    right = seen = nb = 0
    log.add(0.0, 0.0, feed.nbytes)  # the utterance boundaries, sent once
    sw = Stopwatch()
    comm.barrier()
    t0 = perf_counter()
    for ev, val in schedule(corpus.n_frames, cfg, rng):
        if ev == "chunk":
            sw.lap()
            b0 = feed.nbytes
            feed.start_chunk(*val)
            if cfg.compressed:  # the chunk's labels, 1 value a frame (the slave's copy is used)
                feed.nbytes += (val[1] - val[0]) * cfg.value_bytes
            log.add(0.0, sw.lap(), feed.nbytes - b0)
        elif ev == "bunch":
            idx = val
            b = idx.size
            sh = share(b, P, rank)
            b0 = feed.nbytes
            if cfg.compressed:
                x = feed.inputs(idx[sh])
            else:
                x = feed.inputs(idx, share=sh)[sh]
            tm = sw.lap()
            msg = s.gradient(x, idx[sh], corpus)
            tc = sw.lap()
            comm.allreduce(msg, total)
            tm += sw.lap()
            s.apply(total, b)
            right += int(total[-2])
            seen += b
            tc += sw.lap()
            log.add(tc, tm, feed.nbytes - b0 + _protocol_bytes(sh.stop - sh.start,
                                                               s.net.n_params, sizes, cfg))
            nb += 1
    wall = perf_counter() - t0
    return {"log": log.array, "wall": wall, "bunches": nb,
            "params": s.net.params.copy() if rank == 0 else None,
            "train_acc": right / seen if seen else float("nan")}


def train_pattern_bunch(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int,
                        workers: int, backend: str = "local", comm=None,
                        init_scale: float = 0.1) -> dict | None:
    """PP training on ``workers`` ranks: backend ``inprocess`` (1), ``local`` or ``mpi``."""
    from engine.comm.local import run_local

    kw = dict(corpus=corpus, sizes=sizes, activation=activation, cfg=cfg, seed=seed,
              init_scale=init_scale)
    if backend == "inprocess":
        if workers != 1:
            raise ValueError("the inprocess backend runs exactly 1 worker")
        res = [pp_worker(InProcessComm(), **kw)]
    elif backend == "local":
        n_in = corpus.windows(np.zeros(1, np.int64)).shape[1]
        need = max(MLP(sizes).n_params + 2, cfg.bunch * n_in, (cfg.chunk_frames + 8) * 13)
        res = run_local(pp_worker, workers, max_elems=need, **kw)
    elif backend == "mpi":
        if comm is None or comm.size != workers:
            raise ValueError(f"mpi backend needs a communicator of {workers} ranks")
        res = comm.gather_objects(pp_worker(comm, **kw))
        if comm.rank != 0:
            return None
    else:
        raise ValueError(f"unknown backend {backend!r}; use inprocess, local or mpi")
    n = min(len(r["log"]) for r in res)
    return {"params": res[0]["params"], "wall": max(r["wall"] for r in res),
            "bunches": res[0]["bunches"], "log": np.stack([r["log"][:n] for r in res], axis=1),
            "train_acc": res[0]["train_acc"]}


def pp_emulated(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int, slaves: int,
                cv=None, init_scale: float = 0.1, on_epoch=None) -> dict:
    """All ``slaves`` shares computed in this process on one replica (the replicas are
    identical), each timed on its own and summed in rank order: numerically the SPMD
    run. Per bunch: the slowest share's compute, the summing/step time and bytes."""
    s = PPSlave(sizes, activation, cfg=cfg, seed=seed, init_scale=init_scale)
    feed = InputFeed(InProcessComm(), corpus, cfg)
    rng = data_rng(seed)
    total = np.empty_like(s.msg)  # (n_params + 2,)
    rows, cv_acc, tr_acc, nb = [], [], [], 0
    right = seen = 0
    for ev, val in schedule(corpus.n_frames, cfg, rng):
        if ev == "chunk":
            feed.start_chunk(*val)
        elif ev == "bunch":
            idx = val
            b = idx.size
            b0 = feed.nbytes
            x_all = feed.inputs(idx) if not cfg.compressed else None
            tcs = []
            for p in range(slaves):
                sh = share(b, slaves, p)
                x = feed.inputs(idx[sh]) if cfg.compressed else x_all[sh]
                t = perf_counter()
                msg = s.gradient(x, idx[sh], corpus)
                if p == 0:
                    np.copyto(total, msg)
                else:
                    total += msg
                tcs.append(perf_counter() - t)
            t = perf_counter()
            s.apply(total, b)
            th = perf_counter() - t
            right += int(total[-2])
            seen += b
            rows.append((max(tcs), th, b, (feed.nbytes - b0) / slaves if not cfg.compressed else 0.0))
            nb += 1
        else:  # the end of an epoch
            tr_acc.append(right / max(seen, 1))
            right = seen = 0
            if cv is not None:
                cv_acc.append(frame_accuracy(s.net, cv))
            if on_epoch is not None:
                on_epoch(val)
    return {"params": s.net.params.copy(), "steps": np.asarray(rows), "cv_acc": cv_acc,
            "train_acc": tr_acc, "bunches": nb}
