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
them (:mod:`engine.strategies.bunch`).
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
              dedicated_master: bool = False, loss: str = "mse", init_scale: float = 0.1) -> dict:
    """SPMD body of NP training on any communicator (rank 0 is the master)."""
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
    log = RoundLog(4096)
    right = seen = nb = 0
    pending = None  # (slot, error buffer) of the bunch whose update waits (pipelined)
    log.add(0.0, 0.0, feed.nbytes)  # the utterance boundaries, sent once
    sw = Stopwatch()
    comm.barrier()
    t0 = perf_counter()
    for ev, val in schedule(corpus.n_frames, cfg, rng):
        if ev == "chunk":
            sw.lap()
            b0 = feed.nbytes
            feed.start_chunk(*val)
            log.add(0.0, sw.lap(), feed.nbytes - b0)
        elif ev == "bunch":
            idx = val
            b = idx.size
            b0 = feed.nbytes
            x = feed.inputs(idx)
            tm = sw.lap()
            z, s = slave.forward(x)
            if pending is not None:  # §2.3: the update of bunch k after the forward of k+1
                slave.update(pending[1][:pending[2]], pending[0])
            tc = sw.lap()
            r = recv.get(b)
            if r is None:
                r = recv[b] = np.empty((P, b, N_o))  # (P, b, N_o)
            comm.allgather(z, r)
            tm += sw.lap()
            e = errs[nb % 2][:b]
            if master is not None:
                ok, _ = master.error(r, corpus.targets(idx, low=act.low, high=act.high),
                                     corpus.labels[idx], e)
                right += ok
                seen += b
            tc += sw.lap()
            comm.broadcast(e, root=0)
            tm += sw.lap()
            if cfg.pipelined:
                pending = (s, errs[nb % 2], b)
            else:
                slave.update(e, s)
            tc += sw.lap()
            log.add(tc, tm, feed.nbytes - b0 + 2 * b * N_o * cfg.value_bytes)
            nb += 1
    if pending is not None:
        slave.update(pending[1][:pending[2]], pending[0])
    wall = perf_counter() - t0
    return {"log": log.array, "wall": wall, "bunches": nb, "block": slave.block_params(),
            "train_acc": right / seen if seen else float("nan"), "n_block": slave.n_block}


def train_network_parallel(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int,
                           workers: int, backend: str = "local", comm=None,
                           dedicated_master: bool = False, init_scale: float = 0.1) -> dict | None:
    """NP training on ``workers`` ranks: backend ``inprocess`` (1), ``local`` or ``mpi``.

    Returns {"params" (full net), "wall", "bunches", "log" (rounds, ranks, 3), ...}
    on rank 0 (None on other MPI ranks).
    """
    from engine.comm.local import run_local

    kw = dict(corpus=corpus, sizes=sizes, activation=activation, cfg=cfg, seed=seed,
              dedicated_master=dedicated_master, init_scale=init_scale)
    if backend == "inprocess":
        if workers != 1:
            raise ValueError("the inprocess backend runs exactly 1 worker")
        res = [np_worker(InProcessComm(), **kw)]
    elif backend == "local":
        B = cfg.bunch
        need = max(B * sizes[2], B * corpus.windows(np.zeros(1, np.int64)).shape[1],
                   (cfg.chunk_frames + 8) * 13)
        res = run_local(np_worker, workers, max_elems=need, **kw)
    elif backend == "mpi":
        if comm is None or comm.size != workers:
            raise ValueError(f"mpi backend needs a communicator of {workers} ranks")
        res = comm.gather_objects(np_worker(comm, **kw))
        if comm.rank != 0:
            return None
    else:
        raise ValueError(f"unknown backend {backend!r}; use inprocess, local or mpi")
    return _collect(res, sizes)


def _collect(res: list[dict], sizes) -> dict:
    n = min(len(r["log"]) for r in res)
    return {"params": assemble(sizes, [r["block"] for r in res]),
            "wall": max(r["wall"] for r in res), "bunches": res[0]["bunches"],
            "log": np.stack([r["log"][:n] for r in res], axis=1),  # (rounds, ranks, 3)
            "train_acc": res[0]["train_acc"], "n_block": [r["n_block"] for r in res]}


def np_emulated(corpus, *, sizes, activation: str, cfg: BunchConfig, seed: int, slaves: int,
                cv=None, init_scale: float = 0.1, on_epoch=None, loss: str = "mse") -> dict:
    """All ``slaves`` slaves and the master in this process, one after another, each
    timed on its own; numerically the SPMD run with ``slaves`` ranks (no dedicated
    master). Per bunch it records the slowest slave's compute (forward + update), the
    master's error time and the bytes per slave; with ``cv`` the CV frame accuracy
    after every epoch.
    """
    full = _init_net(sizes, activation, seed, init_scale)
    blocks = hidden_blocks(sizes[1], slaves)
    S = [NPSlave(full, lo, hi, holds_bias2=(p == 0), cfg=cfg) for p, (lo, hi) in enumerate(blocks)]
    master = NPMaster(full, loss=loss)
    act = full.acts[-1]
    feed = InputFeed(InProcessComm(), corpus, cfg)
    rng = data_rng(seed)
    N_o, B = sizes[2], cfg.bunch
    errs = [np.empty((B, N_o)), np.empty((B, N_o))]
    part = np.empty((slaves, B, N_o))  # (P, B, N_o)
    tc = np.zeros(slaves)  # (P,)
    rows, cv_acc, tr_acc = [], [], []
    pending, nb = None, 0
    net = MLP(sizes, activation)
    right = seen = 0
    for ev, val in schedule(corpus.n_frames, cfg, rng):
        if ev == "chunk":
            feed.start_chunk(*val)
        elif ev == "bunch":
            idx = val
            b = idx.size
            b0 = feed.nbytes
            x = feed.inputs(idx)
            sl = []
            for p, s in enumerate(S):
                t = perf_counter()
                z, k = s.forward(x)
                part[p, :b] = z
                if pending is not None:
                    s.update(pending[1][:pending[2]], pending[0])
                tc[p] = perf_counter() - t
                sl.append(k)
            e = errs[nb % 2][:b]
            t = perf_counter()
            ok, _ = master.error(part[:, :b], corpus.targets(idx, low=act.low, high=act.high),
                                 corpus.labels[idx], e)
            th = perf_counter() - t
            right += ok
            seen += b
            if cfg.pipelined:
                pending = (sl[0], errs[nb % 2], b)
            else:
                for p, s in enumerate(S):
                    t = perf_counter()
                    s.update(e, sl[p])
                    tc[p] += perf_counter() - t
            rows.append((tc.max(), th, b, feed.nbytes - b0 + 2 * b * N_o * cfg.value_bytes))
            nb += 1
        else:  # the end of an epoch
            tr_acc.append(right / max(seen, 1))
            right = seen = 0
            if cv is not None:
                # the weights as they stand after the epoch (a pipelined update may still wait)
                net.params[:] = assemble(sizes, [s.block_params() for s in S])
                cv_acc.append(frame_accuracy(net, cv))
            if on_epoch is not None:
                on_epoch(val)
    if pending is not None:
        for s in S:
            s.update(pending[1][:pending[2]], pending[0])
    return {"params": assemble(sizes, [s.block_params() for s in S]),
            "steps": np.asarray(rows),  # (bunches, 4): max slave compute s, master s, b, bytes/slave
            "cv_acc": cv_acc, "train_acc": tr_acc, "bunches": nb, "chunk_bytes": feed.nbytes}
