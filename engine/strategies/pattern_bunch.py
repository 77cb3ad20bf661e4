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

The worker is written once and runs unchanged on every backend of
:func:`engine.parallel.driver.run` (in-process, local, MPI, emulated); the
emulated run of paper1's Table 2 is the same worker with communication at no
cost (:data:`engine.perfmodel.FREE`).
"""
from __future__ import annotations

import numpy as np

from engine.losses import get_loss
from engine.nets.mlp import MLP
from engine.optim import SGD
from engine.parallel import driver
from engine.perfmodel import FREE
from engine.strategies.bunch import (BunchConfig, InputFeed, collect, data_rng, frame_accuracy,
                                     init_rng, schedule)


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
              init_scale: float = 0.1, cv=None, on_epoch=None) -> dict:
    """SPMD body of PP training on any communicator.

    Rounds (log rows): the utterance boundaries, sent once; each chunk; each bunch.
    Bytes are counted per slave as the master/slave protocol moves them. After every
    epoch, untimed: the training frame accuracy of that epoch and, with ``cv``, rank
    0's CV frame accuracy (every replica holds the same weights); then
    ``on_epoch(epoch)`` on rank 0.
    """
    P, rank = comm.size, comm.rank
    s = PPSlave(sizes, activation, cfg=cfg, seed=seed, init_scale=init_scale)
    feed = InputFeed(comm, corpus, cfg)
    rng = data_rng(seed)
    total = np.empty_like(s.msg)  # (n_params + 2,)
    clock = comm.clock
    right = seen = nb = 0
    sizes_b, tr_acc, cv_acc = [0], [], []  # bunch size per round (0: not a bunch)
    ep_right = ep_seen = 0
    comm.start_clock()
    clock.end_round(nbytes=feed.nbytes)  # the utterance boundaries, sent once
    for ev, val in schedule(corpus.n_frames, cfg, rng):
        if ev == "chunk":
            b0 = feed.nbytes
            feed.start_chunk(*val)
            if cfg.compressed:  # the chunk's labels, 1 value a frame (the slave's copy is used)
                feed.nbytes += (val[1] - val[0]) * cfg.value_bytes
            clock.end_round(nbytes=feed.nbytes - b0)
            sizes_b.append(0)
        elif ev == "bunch":
            idx = val
            b = idx.size
            sh = share(b, P, rank)
            b0 = feed.nbytes
            if cfg.compressed:
                x = feed.inputs(idx[sh])
            else:
                x = feed.inputs(idx, share=sh)[sh]
            msg = s.gradient(x, idx[sh], corpus)
            comm.allreduce(msg, total)
            s.apply(total, b)
            right += int(total[-2])
            seen += b
            clock.end_round(nbytes=feed.nbytes - b0 + _protocol_bytes(sh.stop - sh.start,
                                                                      s.net.n_params, sizes, cfg))
            sizes_b.append(b)
            nb += 1
        else:  # the end of an epoch
            with clock.untimed():
                tr_acc.append((right - ep_right) / max(seen - ep_seen, 1))
                ep_right, ep_seen = right, seen
                if cv is not None and rank == 0:
                    cv_acc.append(frame_accuracy(s.net, cv))
                if on_epoch is not None and rank == 0:
                    on_epoch(val)
    return {"bunches": nb, "params": s.net.params.copy() if rank == 0 else None,
            "train_acc": right / seen if seen else float("nan"), "train_acc_epochs": tr_acc,
            "cv_acc": cv_acc, "b": np.asarray(sizes_b)}


def train_pattern_bunch(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int,
                        workers: int, backend: str = "local", comm=None,
                        init_scale: float = 0.1, profile=None, cv=None, on_epoch=None
                        ) -> dict | None:
    """PP training on ``workers`` ranks of any backend of :func:`engine.parallel.driver.run`
    (``emulated``: every collective charged by ``profile``). Returns on rank 0 (None on
    other MPI ranks) the dict of :func:`engine.strategies.bunch.collect` plus "params"."""
    n_in = corpus.windows(np.zeros(1, np.int64)).shape[1]
    need = max(MLP(sizes).n_params + 2, cfg.bunch * n_in, (cfg.chunk_frames + 8) * 13)
    res = driver.run(pp_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=need, corpus=corpus, sizes=sizes, activation=activation, cfg=cfg,
                     seed=seed, init_scale=init_scale, cv=cv, on_epoch=on_epoch)
    if res is None:
        return None
    return {"params": res[0]["params"], **collect(res, backend)}


def pp_emulated(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int, slaves: int,
                cv=None, init_scale: float = 0.1, on_epoch=None, profile=None) -> dict:
    """:func:`train_pattern_bunch` on ``slaves`` emulated ranks, communication charged by
    ``profile`` (default: none, an emulation for the numbers). ``train_acc`` is per
    epoch here."""
    r = train_pattern_bunch(corpus, sizes=sizes, activation=activation, cfg=cfg, seed=seed,
                            workers=slaves, backend="emulated", init_scale=init_scale,
                            profile=profile or FREE, cv=cv, on_epoch=on_epoch)
    return {**r, "train_acc": r["train_acc_epochs"]}
