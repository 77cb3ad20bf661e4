"""Network-parallel (NP) bunch training of a one-hidden-layer MLP (Färber 1997, §2.1, §2.3).

Roles on any communicator: rank 0 is the **master** (the host); the **slaves**
hold blocks of hidden units. With ``dedicated_master`` rank 0 holds no hidden
units (the MultiSpert host); otherwise rank 0 is master and slave 0 at once.

One bunch of B patterns (§2.1):

1. the master sends the inputs to every slave (or, with compressed input, the
   slaves build them from the chunk they hold: :class:`InputFeed`);
2. slave p computes its hidden block h_p = f(x·W1[:, p] + b1[p]) and the partial
   output sums z_p = h_p·W2[p, :] (rank 0 adds the output bias b2);
3. the master gathers the partials, sums them in rank order, applies the output
   nonlinearity y = f(Σ_p z_p), computes the error e = ∂E/∂y ⊙ f'(y) and sends it
   back;
4. each slave updates its block: ∂W2[p] = h_pᵀe, ∂h_p = (e·W2[p]ᵀ) ⊙ f'(h_p),
   ∂W1[:, p] = xᵀ∂h_p, and SGD on its own slice of the parameters.

**Software pipelining** (§2.3, the table): the update for bunch k runs *after* the
forward pass of bunch k+1, so the forward pass of bunch k+1 still sees the weights
before update k. The update for bunch k is the exact gradient of bunch k at the
weights its forward pass used (the slave keeps that bunch's inputs, hidden
activations and its W2 block: §2.3, "the slaves also need to keep the previous
forward pass activations"). The last pending update runs after the last bunch.

Collectives: the partials travel by allgather (the master reads them), the error
by broadcast from the master. Bytes are counted per slave as MultiSpert moves
them (:mod:`reproduce.paper1.bunch`).

The worker is written once and runs unchanged on every backend of
:func:`engine.parallel.driver.run` (in-process, local, MPI, emulated); an
emulated run for the numbers alone is the same worker with communication at no
cost (:data:`engine.perfmodel.FREE`).
"""
from __future__ import annotations

import numpy as np

from engine.losses import get_loss
from engine.nets.mlp import MLP
from engine.optim import SGD
from engine.parallel import driver
from engine.perfmodel import FREE
from reproduce.paper1.bunch import (BunchConfig, InputFeed, collect, data_rng,
                                     frame_accuracy, init_rng, schedule)


def hidden_blocks(n_hidden: int, size: int, *, dedicated_master: bool = False) -> list[tuple[int, int]]:
    """(lo, hi) hidden units of each rank; rank 0 gets none with a dedicated master."""
    n_slaves = size - 1 if dedicated_master else size
    if n_slaves < 1:
        raise ValueError("network-parallel training needs at least one slave")
    if n_slaves > n_hidden:
        raise ValueError(f"{n_slaves} slaves for {n_hidden} hidden units")
    cuts = np.linspace(0, n_hidden, n_slaves + 1).round().astype(int)
    blocks = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
    return ([(0, 0)] + blocks) if dedicated_master else blocks


class NPSlave:
    """One slave's block of hidden units of a (N_i, N_h, N_o) net, with its own SGD."""

    def __init__(self, full: MLP, lo: int, hi: int, *, holds_bias2: bool, cfg: BunchConfig):
        if full.L != 2:
            raise ValueError("network-parallel training is for one-hidden-layer nets (§2)")
        N_i, N_h, N_o = full.sizes
        self.lo, self.hi, self.cfg = lo, hi, cfg
        nh = hi - lo
        self.f_h, self.f_o = full.acts
        parts = [full.W[1][:, lo:hi].ravel(), full.b[1][lo:hi], full.W[2][lo:hi].ravel()]
        if holds_bias2:
            parts.append(full.b[2])
        self.params = np.concatenate(parts)  # (n_block,)
        o = np.cumsum([0, N_i * nh, nh, nh * N_o])
        self.W1 = self.params[o[0]:o[1]].reshape(N_i, nh)
        self.b1 = self.params[o[1]:o[2]]
        self.W2 = self.params[o[2]:o[3]].reshape(nh, N_o)
        self.b2 = self.params[o[3]:] if holds_bias2 else None
        self._o = o
        self.g = np.zeros_like(self.params)  # (n_block,)
        self.gW1 = self.g[o[0]:o[1]].reshape(N_i, nh)
        self.gb1 = self.g[o[1]:o[2]]
        self.gW2 = self.g[o[2]:o[3]].reshape(nh, N_o)
        self.gb2 = self.g[o[3]:] if holds_bias2 else None
        self.opt = SGD(self.params.size, lr=cfg.lr, momentum=cfg.momentum)
        B = cfg.bunch
        # Two slots so a pipelined slave keeps bunch k while it runs bunch k+1.
        self.slots = [{"x": np.empty((B, N_i)), "h": np.empty((B, nh)), "z": np.empty((B, N_o)),
                       "W2": np.empty((nh, N_o)), "b": 0} for _ in range(2)]  # (B, ·) each
        self.k = 0
        self.dh = np.empty((B, nh))  # (B, nh)
        self.tmp = np.empty((B, nh))  # (B, nh)

    @property
    def n_block(self) -> int:
        return self.params.size

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        """Step 2: (partial output sums (b, N_o), slot id to pass to :meth:`update`)."""
        s = self.k % 2
        self.k += 1
        slot = self.slots[s]
        b = x.shape[0]
        slot["b"] = b
        np.copyto(slot["x"][:b], x)
        h = np.matmul(x, self.W1, out=slot["h"][:b])  # (b, nh)
        h += self.b1
        self.f_h.f(h, h)
        z = np.matmul(h, self.W2, out=slot["z"][:b])  # (b, N_o)
        if self.b2 is not None:
            z += self.b2
        if self.cfg.pipelined:
            np.copyto(slot["W2"], self.W2)  # the weights this forward pass used
        return z, s

    def update(self, e: np.ndarray, s: int) -> None:
        """Step 4: gradient of the bunch in slot ``s`` given the output error e (b, N_o)."""
        slot = self.slots[s]
        b = slot["b"]
        x, h = slot["x"][:b], slot["h"][:b]
        W2 = slot["W2"] if self.cfg.pipelined else self.W2
        np.matmul(h.T, e, out=self.gW2)
        if self.gb2 is not None:
            np.sum(e, axis=0, out=self.gb2)
        dh = np.matmul(e, W2.T, out=self.dh[:b])  # (b, nh)
        dh *= self.f_h.df(h, self.tmp[:b])
        np.matmul(x.T, dh, out=self.gW1)
        np.sum(dh, axis=0, out=self.gb1)
        self.opt.step(self.params, self.g, self.cfg.count(b))

    def block_params(self) -> dict:
        return {"lo": self.lo, "hi": self.hi, "params": self.params.copy(),
                "bias2": self.b2 is not None}


class NPMaster:
    """Step 3 on the host: sum the partials, output nonlinearity, error."""

    def __init__(self, full: MLP, *, loss: str = "mse"):
        self.f_o = full.acts[-1]
        self.loss = get_loss(loss)

    def error(self, partials: np.ndarray, t: np.ndarray, labels: np.ndarray,
              out: np.ndarray) -> tuple[int, float]:
        """partials (P, b, N_o) → error ``out`` (b, N_o); returns (frames right, Σ squared error)."""
        z = out
        np.copyto(z, partials[0])
        for p in range(1, partials.shape[0]):  # rank order
            z += partials[p]
        y = self.f_o.f(z, z)  # (b, N_o), in place
        right = int(np.sum(np.argmax(y, axis=1) == labels))
        sse = float(np.sum((y - t) ** 2))
        d = self.f_o.df(y, np.empty_like(y))
        self.loss.grad(y, t, out=out)
        out *= d
        return right, sse


def assemble(sizes, blocks: list[dict]) -> np.ndarray:
    """The full net's flat parameters from the slaves' blocks (layout of engine.nets.mlp)."""
    net = MLP(sizes)
    N_i, N_h, N_o = sizes
    for blk in blocks:
        lo, hi, p = blk["lo"], blk["hi"], blk["params"]
        nh = hi - lo
        o = np.cumsum([0, N_i * nh, nh, nh * N_o])
        net.W[1][:, lo:hi] = p[o[0]:o[1]].reshape(N_i, nh)
        net.b[1][lo:hi] = p[o[1]:o[2]]
        net.W[2][lo:hi] = p[o[2]:o[3]].reshape(nh, N_o)
        if blk["bias2"]:
            net.b[2][:] = p[o[3]:]
    return net.params.copy()


def _init_net(sizes, activation, seed, init_scale) -> MLP:
    full = MLP(sizes, activation)
    full.init_uniform(init_rng(seed), scale=init_scale)
    return full


def np_worker(comm, *, corpus, sizes, activation: str, cfg: BunchConfig, seed: int,
              dedicated_master: bool = False, loss: str = "mse", init_scale: float = 0.1,
              cv=None, on_epoch=None) -> dict:
    """SPMD body of NP training on any communicator (rank 0 is the master).

    Rounds (log rows): the utterance boundaries, sent once; each chunk's broadcast;
    each bunch. Bytes are counted per slave as MultiSpert moves them. After every
    epoch, untimed: the master's training frame accuracy of that epoch and, with
    ``cv``, the CV frame accuracy of the weights as they stand (a pipelined update
    may still wait; the blocks are gathered to rank 0); then ``on_epoch(epoch)`` on
    rank 0.
    """
    P, rank = comm.size, comm.rank
    full = _init_net(sizes, activation, seed, init_scale)
    lo, hi = hidden_blocks(sizes[1], P, dedicated_master=dedicated_master)[rank]
    slave = NPSlave(full, lo, hi, holds_bias2=(rank == 0), cfg=cfg)
    master = NPMaster(full, loss=loss) if rank == 0 else None
    act = full.acts[-1]
    feed = InputFeed(comm, corpus, cfg)
    rng = data_rng(seed)
    N_o, B = sizes[2], cfg.bunch
    errs = [np.empty((B, N_o)), np.empty((B, N_o))]  # (B, N_o) each: this and the previous bunch
    recv: dict[int, np.ndarray] = {}
    net = MLP(sizes, activation) if (cv is not None and rank == 0) else None
    clock = comm.clock
    right = seen = nb = 0
    sizes_b, tr_acc, cv_acc = [0], [], []  # bunch size per round (0: not a bunch)
    ep_right = ep_seen = 0
    pending = None  # (slot, error buffer) of the bunch whose update waits (pipelined)
    comm.start_clock()
    clock.end_round(nbytes=feed.nbytes)  # the utterance boundaries, sent once
    for ev, val in schedule(corpus.n_frames, cfg, rng):
        if ev == "chunk":
            b0 = feed.nbytes
            feed.start_chunk(*val)
            clock.end_round(nbytes=feed.nbytes - b0)
            sizes_b.append(0)
        elif ev == "bunch":
            idx = val
            b = idx.size
            b0 = feed.nbytes
            x = feed.inputs(idx)
            z, s = slave.forward(x)
            if pending is not None:  # §2.3: the update of bunch k after the forward of k+1
                slave.update(pending[1][:pending[2]], pending[0])
            r = recv.get(b)
            if r is None:
                r = recv[b] = np.empty((P, b, N_o))  # (P, b, N_o)
            comm.allgather(z, r)
            e = errs[nb % 2][:b]
            if master is not None:
                ok, _ = master.error(r, corpus.targets(idx, low=act.low, high=act.high),
                                     corpus.labels[idx], e)
                right += ok
                seen += b
            comm.broadcast(e, root=0)
            if cfg.pipelined:
                pending = (s, errs[nb % 2], b)
            else:
                slave.update(e, s)
            clock.end_round(nbytes=feed.nbytes - b0 + 2 * b * N_o * cfg.value_bytes)
            sizes_b.append(b)
            nb += 1
        else:  # the end of an epoch
            with clock.untimed():
                tr_acc.append((right - ep_right) / max(seen - ep_seen, 1))
                ep_right, ep_seen = right, seen
                if cv is not None:
                    blocks = comm.gather_objects(slave.block_params())
                    if rank == 0:
                        net.params[:] = assemble(sizes, blocks)
                        cv_acc.append(frame_accuracy(net, cv))
                if on_epoch is not None and rank == 0:
                    on_epoch(val)
    if pending is not None:
        slave.update(pending[1][:pending[2]], pending[0])
    return {"bunches": nb, "block": slave.block_params(), "n_block": slave.n_block,
            "train_acc": right / seen if seen else float("nan"), "train_acc_epochs": tr_acc,
            "cv_acc": cv_acc, "b": np.asarray(sizes_b), "feed_bytes": feed.nbytes}


def train_network_parallel(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int,
                           workers: int, backend: str = "local", comm=None,
                           dedicated_master: bool = False, init_scale: float = 0.1,
                           loss: str = "mse", profile=None, cv=None, on_epoch=None
                           ) -> dict | None:
    """NP training on ``workers`` ranks of any backend of :func:`engine.parallel.driver.run`
    (``emulated``: every collective charged by ``profile``).

    Returns on rank 0 (None on other MPI ranks): {"params" (full net), "wall" (measured,
    slowest rank), "time_s" (measured wall, or the emulated slowest worker's virtual
    finish time), "bunches", "log" (rounds, ranks, 3), "train_acc" (whole run),
    "train_acc_epochs", "cv_acc" (per epoch, with ``cv``), "steps", "n_block"}.
    """
    B = cfg.bunch
    need = max(B * sizes[2], B * corpus.windows(np.zeros(1, np.int64)).shape[1],
               (cfg.chunk_frames + 8) * 13)
    res = driver.run(np_worker, workers=workers, backend=backend, comm=comm, profile=profile,
                     max_elems=need, corpus=corpus, sizes=sizes, activation=activation, cfg=cfg,
                     seed=seed, dedicated_master=dedicated_master, loss=loss,
                     init_scale=init_scale, cv=cv, on_epoch=on_epoch)
    if res is None:
        return None
    return {"params": assemble(sizes, [r["block"] for r in res]), **collect(res, backend),
            "n_block": [r["n_block"] for r in res], "feed_bytes": res[0]["feed_bytes"]}


def np_emulated(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int, slaves: int,
                cv=None, init_scale: float = 0.1, on_epoch=None, loss: str = "mse",
                profile=None) -> dict:
    """:func:`train_network_parallel` on ``slaves`` emulated ranks (no dedicated master),
    communication charged by ``profile`` (default: none, an emulation for the numbers).
    ``train_acc`` is per epoch here; ``chunk_bytes`` what the input feed sent one slave."""
    r = train_network_parallel(corpus, sizes=sizes, activation=activation, cfg=cfg, seed=seed,
                               workers=slaves, backend="emulated", init_scale=init_scale,
                               loss=loss, profile=profile or FREE, cv=cv, on_epoch=on_epoch)
    return {**r, "train_acc": r["train_acc_epochs"], "chunk_bytes": r["feed_bytes"]}
