"""Pattern-parallel (PP) bunch training, Quicknet style (Färber 1997, §2.2).

Every slave holds the whole net. A bunch of B patterns is split into P
contiguous shares (B/P each, in presentation order); slave p sums the gradient
of its share; the master gathers the P gradient sums, adds them in rank order
and sends the update back, so every replica takes the same step, the bunch's
step of sequential training. The gather–sum–send is the communicator's
allreduce (summed in rank order on every backend). Each slave's frame count
right rides along as an extra element, its squared error as the step's loss.

PP is a configuration of the data-parallel family (:func:`as_data_parallel`,
:func:`engine.parallel.data_parallel.dp_worker`): its training loop is
``dp_worker``'s; what is Quicknet's (the chunked order, the input feed with
and without compressed input, the frame counts, the accuracies after every
epoch) is the component :class:`QuicknetFeed`.

Per bunch and slave the master/slave protocol moves the slave's share of the
inputs and targets ((B/P)·(N_i + N_o) values, or its chunk of frames with
compressed input) and 2·N_wts values (the update read, the weights written):
the T_d of §2.5.

The worker is written once and runs unchanged on every backend of
:func:`engine.parallel.driver.run` (in-process, local, MPI, emulated); an
emulated run for the numbers alone is the same worker with communication at no
cost (:data:`engine.perfmodel.FREE`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.losses import get_loss
from engine.nets.mlp import MLP
from engine.parallel import driver
from engine.parallel.data_parallel import BUNCHES, DataParallel, Hooks, SGDRule, dp_worker
from engine.perfmodel import FREE
from reproduce.paper1.bunch import (INIT_KEY, BunchConfig, InputFeed, bunches, collect, data_rng,
                                     epoch_chunks, frame_accuracy)


def share(b: int, P: int, p: int) -> slice:
    """Rank p's contiguous share of a bunch of b patterns (sizes differ by at most one).

    The cuts are rounded from b·p/P, so which ranks get the larger shares differs
    from :func:`engine.parallel.data_parallel.share` (the first b mod P); PP's
    numbers were made with this rule, and forward_parallel uses it too."""
    cuts = np.linspace(0, b, P + 1).round().astype(int)
    return slice(int(cuts[p]), int(cuts[p + 1]))


def make_mlp(sizes, activation: str, *, init_scale: float):
    """``make_net`` of :func:`dp_worker`: the MLP, every weight uniform in ±init_scale."""
    def make(rng):
        net = MLP(sizes, activation)
        net.init_uniform(rng, scale=init_scale)  # identical on every slave
        return net
    return make


def _protocol_bytes(m: int, n_params: int, sizes, cfg: BunchConfig) -> float:
    """Values the master moves for one slave and one bunch, beyond the input feed:
    its share's targets (uncompressed: N_o each) and 2·N_wts (update in, weights out)."""
    tgt = 0 if cfg.compressed else m * sizes[2]
    return (tgt + 2 * n_params) * cfg.value_bytes


def as_data_parallel(cfg: BunchConfig) -> DataParallel:
    """PP is the data-parallel family's ``shares``/``gradients`` SGD: every slave
    takes the same step, the bunch's, with Quicknet's divisor (:meth:`BunchConfig.count`).
    The split's order is replaced by :meth:`QuicknetFeed.steps`."""
    return replace(BUNCHES, reduce=cfg.update, optimizer=SGDRule(cfg.lr, cfg.momentum),
                   batch=cfg.bunch, epochs=cfg.epochs)


class QuicknetFeed(Hooks):
    """What PP adds to the data-parallel loop (§2.2, §2.4, §3.2): Quicknet's chunked
    order, the input feed, the frames right, and the frame accuracies per epoch.

    Rounds (log rows): the utterance boundaries, sent once; each chunk; each bunch.
    Bytes are counted per slave as the master/slave protocol moves them (``nbytes``).
    Each slave's frame count right rides along as the extra value of its message,
    its squared error as the step's loss. After every epoch (untimed): the training
    frame accuracy of that epoch and, with ``cv``, rank 0's CV frame accuracy (every
    replica holds the same weights); then ``on_epoch(epoch)`` on rank 0. Training
    stops after ``cfg.max_bunches`` bunches, ending that epoch early.
    """

    extra = 1  # the frames right of the slave's share

    def __init__(self, corpus, *, sizes, cfg: BunchConfig, seed: int, cv=None, on_epoch=None):
        self.corpus, self.sizes, self.cfg, self.seed = corpus, sizes, cfg, seed
        self.cv, self.on_epoch = cv, on_epoch

    def start(self, comm, rep) -> None:
        self.feed = InputFeed(comm, self.corpus, self.cfg)
        self.rng = data_rng(self.seed)  # the shared data-order stream
        self.act, self.loss = rep.net.acts[-1], get_loss("mse")
        self.wss: dict = {}  # workspaces per share size
        self.bunch, self.sh = None, None  # the current bunch (all ranks) and this slave's share
        self.right = self.seen = self.nb = self.ep_right = self.ep_seen = 0
        self.sizes_b = [0]  # bunch size per round (0: not a bunch)
        self.tr_acc, self.cv_acc = [], []

    def steps(self, comm, rep, epoch: int):
        """One epoch of the chunked order (:func:`reproduce.paper1.bunch.epoch_chunks`):
        a round per chunk (its frames, with compressed input), then this slave's
        share of each bunch; before all, the round of the utterance boundaries."""
        cfg, feed, clock = self.cfg, self.feed, comm.clock
        if epoch == 0:
            clock.end_round(nbytes=feed.nbytes)  # the utterance boundaries, sent once
        for lo, hi, perm in epoch_chunks(self.corpus.n_frames, cfg, self.rng):
            b0 = feed.nbytes
            feed.start_chunk(lo, hi)
            if cfg.compressed:  # the chunk's labels, 1 value a frame (the slave's copy is used)
                feed.nbytes += (hi - lo) * cfg.value_bytes
            clock.end_round(nbytes=feed.nbytes - b0)
            self.sizes_b.append(0)
            for idx in bunches(perm, cfg.bunch):
                self.bunch, self.sh = idx, share(idx.size, comm.size, comm.rank)
                yield idx[self.sh], None

    def grad(self, comm, rep, idx, pad_len, out) -> float:
        """The share's inputs from the feed, its summed gradient into ``rep.g``, its
        frames right into ``out[0]``; returns its squared error."""
        cfg, feed, corpus = self.cfg, self.feed, self.corpus
        b0, m = feed.nbytes, idx.size
        if not cfg.compressed:  # a broadcast of the bunch: every slave, empty share or not
            x = feed.inputs(self.bunch, share=self.sh)[self.sh]
        elif m:  # the slave builds its windows from its chunk
            x = feed.inputs(idx)
        self.nbytes = feed.nbytes - b0 + _protocol_bytes(m, rep.net.n_params, self.sizes, cfg)
        if m == 0:
            rep.g[:] = 0.0
            out[0] = 0.0
            return 0.0
        ws = self.wss.get(m) or self.wss.setdefault(m, rep.net.workspace(m))
        t = corpus.targets(idx, low=self.act.low, high=self.act.high)  # (m, N_o)
        y, cache = rep.net.forward(x, ws=ws)
        out[0] = np.sum(np.argmax(y, axis=1) == corpus.labels[idx])
        sse = np.sum((y - t) ** 2)
        rep.net.backward(self.loss.grad(y, t), cache, out=rep.g)
        return sse

    def after_step(self, comm, rep, extras) -> bool:
        b = self.bunch.size
        self.right += int(extras[0])
        self.seen += b
        self.nb += 1
        self.sizes_b.append(b)
        return bool(self.cfg.max_bunches) and self.nb >= self.cfg.max_bunches

    def end_epoch(self, comm, rep, epoch: int) -> bool:
        self.tr_acc.append((self.right - self.ep_right) / max(self.seen - self.ep_seen, 1))
        self.ep_right, self.ep_seen = self.right, self.seen
        if self.cv is not None and comm.rank == 0:
            self.cv_acc.append(frame_accuracy(rep.net, self.cv))
        if self.on_epoch is not None and comm.rank == 0:
            self.on_epoch(epoch + 1)  # epochs count from 1 here
        return False

    def result(self, comm, rep) -> dict:
        return {"bunches": self.nb, "params": rep.net.params.copy() if comm.rank == 0 else None,
                "train_acc": self.right / self.seen if self.seen else float("nan"),
                "train_acc_epochs": self.tr_acc, "cv_acc": self.cv_acc,
                "b": np.asarray(self.sizes_b)}


def pp_worker(comm, *, corpus, sizes, activation: str, cfg: BunchConfig, seed: int,
              init_scale: float = 0.1, cv=None, on_epoch=None) -> dict:
    """SPMD body of PP training on any communicator: :func:`dp_worker` with
    :func:`as_data_parallel`'s configuration and :class:`QuicknetFeed`, the initial
    weights from the bunch strategies' stream (:func:`reproduce.paper1.bunch.init_rng`)."""
    return dp_worker(comm, make_net=make_mlp(sizes, activation, init_scale=init_scale), data=corpus,
                     cfg=as_data_parallel(cfg), seed=seed, init_key=INIT_KEY,
                     hooks=QuicknetFeed(corpus, sizes=sizes, cfg=cfg, seed=seed, cv=cv,
                                        on_epoch=on_epoch))


def train_pattern_bunch(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int,
                        workers: int, backend: str = "local", comm=None,
                        init_scale: float = 0.1, profile=None, cv=None, on_epoch=None
                        ) -> dict | None:
    """PP training on ``workers`` ranks of any backend of :func:`engine.parallel.driver.run`
    (``emulated``: every collective charged by ``profile``). Returns on rank 0 (None on
    other MPI ranks) the dict of :func:`reproduce.paper1.bunch.collect` plus "params"."""
    n_in = corpus.windows(np.zeros(1, np.int64)).shape[1]
    need = max(MLP(sizes).n_params + 2 + QuicknetFeed.extra, cfg.bunch * n_in,
               (cfg.chunk_frames + 8) * 13)
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
