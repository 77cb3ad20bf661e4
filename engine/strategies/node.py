"""Node-parallel training of an MLP.

Every worker p owns a block of nodes in every layer, chosen by the linear data
distribution (:class:`engine.schedule.LinearDistribution`). Per pattern
bunch of B patterns:

forward
    for l = 1..L: worker p computes o_{l,n} = φ(Σ_i w_{l,n,i} o_{l−1,i} + b_{l,n})
    for its nodes n, then the blocks are exchanged so every worker holds the
    whole layer o_l (B, N(l)) before layer l+1.
backward
    δ_{L,n} = ∂E/∂o_{L,n} · φ'(o_{L,n}) for its output nodes, exchanged; then
    for l = L−1..1: δ_{l,n} = (Σ_k w_{l+1,k,n} δ_{l+1,k}) · φ'(o_{l,n}) for its
    nodes, exchanged.
weight update
    w_{l,n,i} ← w_{l,n,i} − η/B · Σ_patterns o_{l−1,i} δ_{l,n}, no communication.

The exchange of a layer is one allgather of every worker's block, padded to
the largest block K + [R > 0] (the same data movement as P broadcasts, or as
broadcasting node by node, in one collective).

Which weights a worker holds. The forward pass of node n needs w_{l,n,·}
(its incoming weights, a row of ``Wc``); the backward pass of node n in layer
l needs w_{l+1,·,n} (its outgoing weights, a row of ``Wr``). Were a worker
to update only the incoming weights of its own nodes, the outgoing weights it
uses in the next backward pass would be stale (another worker updated them).
So each worker keeps both blocks it uses, ``Wc[l]`` (I_{p,l}, N(l−1)) and
``Wr[l]`` (I_{p,l−1}, N(l)), and updates both itself: after the exchanges it
has the whole o_{l−1} and δ_l it needs, so the update stays free of
communication, costs 2/P of the serial update instead of 1/P, and every
weight a worker uses equals the serial net's (tests/equivalence/test_node.py). Memory
per worker: 2/P of the weights plus the full activations and deltas.

The worker (:func:`node_worker`) is written once and runs unchanged on every
backend of :func:`engine.parallel.driver.run`: in-process (P = 1), local
processes, MPI, and emulated (all P workers in this process, each worker's
compute timed between its exchanges and every exchange charged by a
:class:`engine.perfmodel.MachineProfile`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from engine.activations import get_activation
from engine.losses import get_loss, per_pattern_squared_error
from engine.nets.mlp import MLP
from engine.parallel import driver
from engine.schedule import LinearDistribution
from engine.timing import RunRecord

PASSES = ("forward", "forward_backward", "train")
_F8 = 8  # bytes per float64


# -- memory: refuse before allocating -----------------------------------------------------
def required_bytes(sizes, P: int, *, B: int = 1, emulated: bool = False) -> dict:
    """Bytes a node-parallel run of ``sizes`` on P workers needs, before allocating any.

    Per worker: its ``Wc`` and ``Wr`` blocks and biases (the largest block of
    each layer), plus the whole activations, deltas and one exchange buffer
    (B, N(l)) per layer. The set-up also holds the full flat parameter vector
    once (the initial weights every worker copies its blocks from). An
    emulated run keeps all P workers in one process.
    """
    sizes = [int(s) for s in sizes]
    L = len(sizes) - 1
    d = [LinearDistribution(n, P) for n in sizes]
    own = sum(d[l].max_count * sizes[l - 1] + d[l].max_count for l in range(1, L + 1))  # Wc, b
    own += sum(d[l - 1].max_count * sizes[l] for l in range(2, L + 1))  # Wr
    act = 3 * B * sum(sizes)  # a, δ, and own/scratch blocks (at most a layer each)
    act += sum((P + 1) * B * k for k in {x.max_count for x in d})  # send (B·k) and recv (P, B·k)
    full = sum(sizes[l - 1] * sizes[l] + sizes[l] for l in range(1, L + 1))  # the flat params
    per_worker = (own + act) * _F8
    total = full * _F8 + (P * per_worker if emulated or P > 1 else per_worker)
    return {"per_worker": per_worker, "params": full * _F8, "total": total}


def available_bytes() -> int:
    """Memory the kernel says is available now (MemAvailable), else physical pages free."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _gib(b: float) -> str:
    return f"{b / 2**30:,.2f} GiB"


def check_fits(sizes, P: int, *, B: int = 1, emulated: bool = False,
               available: int | None = None, headroom: float = 0.8) -> dict:
    """Raise MemoryError, naming the size it would need, if the run cannot fit.

    Called before anything is allocated. ``available`` defaults to
    :func:`available_bytes`; at most ``headroom`` of it may be used.
    """
    need = required_bytes(sizes, P, B=B, emulated=emulated)
    have = available_bytes() if available is None else int(available)
    if need["total"] > headroom * have:
        raise MemoryError(
            f"node-parallel net {tuple(int(s) for s in sizes)} on {P} worker(s), bunch {B}"
            f"{' (emulated in one process)' if emulated else ''} needs {_gib(need['total'])} "
            f"({need['total']:,} bytes: {_gib(need['params'])} of weights, "
            f"{_gib(need['per_worker'])} per worker) but only {_gib(have)} is available "
            f"(limit {headroom:.0%} of it); refused before allocating")
    return need


# -- one worker -------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeConfig:
    lr: float = 0.1  # η, the learning rate
    train_bias: bool = True  # False keeps the biases at their initial value (a net without biases)

    def __post_init__(self):
        if not self.lr > 0:
            raise ValueError(f"learning rate must be > 0, got {self.lr}")


class NodeWorker:
    """Worker p's blocks of a net ``sizes`` over P workers, copied out of ``params``
    (a flat vector in :class:`engine.nets.mlp.MLP`'s layout)."""

    def __init__(self, sizes, activation, params: np.ndarray, *, rank: int, size: int):
        self.sizes = tuple(int(s) for s in sizes)
        self.L = len(self.sizes) - 1
        self.rank, self.P = rank, size
        acts = [activation] * self.L if isinstance(activation, str) else list(activation)
        self.acts = [None] + [get_activation(a) for a in acts]
        self.dist = [LinearDistribution(n, size) for n in self.sizes]
        self.own = [d.block(rank) for d in self.dist]  # own[l]: slice of layer l
        net = MLP(self.sizes, activation, params=params)  # views only, no copy
        self.Wc, self.Wr, self.b = [None], [None, None], [None]
        for l in range(1, self.L + 1):
            self.Wc.append(np.ascontiguousarray(net.W[l].T[self.own[l]]))  # (I_{p,l}, N(l−1))
            self.b.append(net.b[l][self.own[l]].copy())  # (I_{p,l},)
            if l >= 2:
                self.Wr.append(net.W[l][self.own[l - 1]].copy())  # (I_{p,l−1}, N(l))

    # -- compute of one phase (no communication) ------------------------------------------
    def forward_layer(self, l: int, a_prev: np.ndarray, out: np.ndarray) -> np.ndarray:
        """o_l for own nodes from the whole o_{l−1} (B, N(l−1)): out (B, I_{p,l})."""
        np.matmul(a_prev, self.Wc[l].T, out=out)
        out += self.b[l]
        return self.acts[l].f(out, out)

    def output_delta(self, a_L: np.ndarray, t: np.ndarray, loss, out: np.ndarray) -> np.ndarray:
        """δ_L = ∂E/∂o_L · φ'(o_L) for own output nodes: out (B, I_{p,L})."""
        own = self.own[self.L]
        y = a_L[:, own]
        dy = loss.grad(y, t[:, own])  # (B, I_{p,L})
        return np.multiply(dy, self.acts[self.L].df(y, out), out=out)

    def backward_layer(self, l: int, delta_next: np.ndarray, a_l: np.ndarray,
                       out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
        """δ_l = (Σ_k w_{l+1,k,n} δ_{l+1,k}) · φ'(o_{l,n}) for own nodes n: out (B, I_{p,l})."""
        np.matmul(delta_next, self.Wr[l + 1].T, out=out)  # (B, N(l+1)) @ (N(l+1), I)
        out *= self.acts[l].df(a_l[:, self.own[l]], tmp)
        return out

    def update(self, a: list, delta: list, *, lr: float, B: int, train_bias: bool = True) -> None:
        """The weight update of own incoming weights, and the same update of own outgoing weights."""
        step = -lr / B
        for l in range(1, self.L + 1):
            d_own = delta[l][:, self.own[l]]  # (B, I_{p,l})
            self.Wc[l] += step * (d_own.T @ a[l - 1])  # (I_{p,l}, N(l−1))
            if train_bias:
                self.b[l] += step * d_own.sum(axis=0)
            if l >= 2:
                self.Wr[l] += step * (a[l - 1][:, self.own[l - 1]].T @ delta[l])  # (I_{p,l−1}, N(l))

    def blocks(self) -> dict:
        """This worker's own blocks (for assembling the full net)."""
        return {"rank": self.rank, "Wc": self.Wc[1:], "Wr": self.Wr[2:], "b": self.b[1:]}


def assemble(sizes, activation, blocks: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """(params from the Wc/b blocks, params from the Wr blocks) in MLP's flat layout.

    The second vector has the rows of W_l (l ≥ 2) the workers hold as outgoing
    weights and the first layer and biases copied from the first; both equal
    the serial net's parameters when the strategy is right.
    """
    net = MLP(sizes, activation)
    L = net.L
    blocks = sorted(blocks, key=lambda b: b["rank"])
    P = len(blocks)
    dist = [LinearDistribution(n, P) for n in net.sizes]
    for bl in blocks:
        p = bl["rank"]
        for l in range(1, L + 1):
            net.W[l][:, dist[l].block(p)] = bl["Wc"][l - 1].T
            net.b[l][dist[l].block(p)] = bl["b"][l - 1]
    by_c = net.params.copy()
    for bl in blocks:
        p = bl["rank"]
        for l in range(2, L + 1):
            net.W[l][dist[l - 1].block(p), :] = bl["Wr"][l - 2]
    return by_c, net.params.copy()


# -- buffers and the exchange ------------------------------------------------------------
class _Buffers:
    def __init__(self, sizes, dist, rank, B):
        self.a = [np.empty((B, n)) for n in sizes]  # a[l]: (B, N(l)) whole layer, every worker
        self.delta = [np.empty((B, n)) for n in sizes]  # delta[l]: (B, N(l))
        self.own = [np.empty((B, d.count(rank))) for d in dist]  # (B, I_{p,l})
        self.tmp = [np.empty((B, d.count(rank))) for d in dist]  # (B, I_{p,l})
        ks = {d.max_count for d in dist}  # one contiguous pair per padded block size k
        self.send = {k: np.zeros(B * k) for k in ks}  # (B·k,) padded block
        self.recv = {k: np.empty((dist[0].P, B * k)) for k in ks}  # (P, B·k)


def exchange(comm, own: np.ndarray, full: np.ndarray, dist: LinearDistribution,
             buf: _Buffers) -> int:
    """Allgather every worker's (B, I_{q,l}) block into ``full`` (B, N(l)); returns bytes sent."""
    B, k = own.shape[0], dist.max_count
    send, recv = buf.send[k], buf.recv[k]
    send.reshape(B, k)[:, : own.shape[1]] = own
    comm.allgather(send, recv)
    for q in range(dist.P):
        full[:, dist.block(q)] = recv[q].reshape(B, k)[:, : dist.count(q)]
    return send.nbytes


def _phases(L: int, passes: str) -> list[tuple[str, int]]:
    ph = [("forward", l) for l in range(1, L + 1)]
    if passes != "forward":
        ph += [("backward", l) for l in range(L, 0, -1)]
    if passes == "train":
        ph.append(("update", 0))
    return ph


# -- SPMD body -----------------------------------------------------------------------
def node_worker(comm, *, sizes, activation, params, X, T, cfg: NodeConfig, epochs: int,
                bunch: int = 1, passes: str = "train", loss: str = "mse",
                keep: bool = False) -> dict:
    """The same code on every rank of any communicator (:func:`engine.parallel.driver.run`).
    Presents the n patterns of X in order, ``bunch`` at a time, ``epochs`` times; one
    round (log row) per phase: each layer's exchange of the forward and backward
    passes, and the update. With ``keep``, rank 0 returns the outputs of every bunch
    and the last bunch's activations and deltas, every rank its blocks."""
    P, rank = comm.size, comm.rank
    w = NodeWorker(sizes, activation, params, rank=rank, size=P)
    lossf = get_loss(loss)
    n = X.shape[0]
    Bs = sorted({min(bunch, n - s) for s in range(0, n, bunch)})
    bufs = {B: _Buffers(w.sizes, w.dist, rank, B) for B in Bs}
    L = w.L
    clock = comm.clock
    outputs, errors = [], []
    last = None
    comm.start_clock()
    for _ in range(epochs):
        err = 0.0
        for s in range(0, n, bunch):
            x, t = X[s:s + bunch], T[s:s + bunch]
            bf = last = bufs[x.shape[0]]
            bf.a[0] = x
            for l in range(1, L + 1):
                w.forward_layer(l, bf.a[l - 1], bf.own[l])
                exchange(comm, bf.own[l], bf.a[l], w.dist[l], bf)
                clock.end_round()
            with clock.untimed():
                if keep and rank == 0:
                    outputs.append(bf.a[L].copy())
                err += float(per_pattern_squared_error(bf.a[L], t).sum())
            if passes == "forward":
                continue
            w.output_delta(bf.a[L], t, lossf, bf.own[L])
            exchange(comm, bf.own[L], bf.delta[L], w.dist[L], bf)
            clock.end_round()
            for l in range(L - 1, 0, -1):
                w.backward_layer(l, bf.delta[l + 1], bf.a[l], bf.own[l], bf.tmp[l])
                exchange(comm, bf.own[l], bf.delta[l], w.dist[l], bf)
                clock.end_round()
            if passes == "train":
                w.update(bf.a, bf.delta, lr=cfg.lr, B=x.shape[0], train_bias=cfg.train_bias)
                clock.end_round()
        errors.append(err / n)
    first = keep and rank == 0
    return {"errors": np.asarray(errors),
            "outputs": np.concatenate(outputs) if first else None,
            "blocks": w.blocks() if keep else None,
            "a": [x.copy() for x in last.a] if first else None,
            "delta": [x.copy() for x in last.delta] if first else None}


def train_node_parallel(X, T, *, sizes, activation: str, params: np.ndarray, workers: int,
                        backend: str = "local", cfg: NodeConfig = NodeConfig(), epochs: int = 1,
                        bunch: int = 1, passes: str = "train", comm=None, profile=None,
                        keep: bool = False) -> RunRecord | None:
    """Node-parallel passes over (X, T) from the initial ``params`` (MLP's flat layout),
    on ``workers`` workers of any backend of :func:`engine.parallel.driver.run`
    (``mpi``: ``comm`` has exactly ``workers`` ranks and the record comes back on rank 0,
    None elsewhere; ``emulated``: every exchange charged by ``profile``).

    ``passes``: ``forward``, ``forward_backward`` or ``train`` (forward,
    backward and update). ``keep`` returns the outputs
    of every bunch, the last bunch's activations and deltas, and every
    worker's blocks (for assembling the trained net) in ``record.extra``.
    The memory the run needs is checked before anything is allocated.
    """
    if passes not in PASSES:
        raise ValueError(f"passes must be one of {PASSES}, got {passes!r}")
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if not 1 <= bunch <= X.shape[0]:
        raise ValueError(f"bunch must be in 1..{X.shape[0]}, got {bunch}")
    P = int(workers)
    check_fits(sizes, P, B=bunch, emulated=backend == "emulated")
    kmax = max(LinearDistribution(int(s), P).max_count for s in sizes)
    # emulated: a calibrated profile's memory-bound kernel stands for matrix–vector layers
    res = driver.run(node_worker, workers=P, backend=backend, comm=comm, profile=profile,
                     kernel="gemv", max_elems=bunch * kmax, sizes=sizes, activation=activation, params=params,
                     X=X, T=T, cfg=cfg, epochs=epochs, bunch=bunch, passes=passes, keep=keep)
    if res is None:
        return None
    r0 = res[0]
    errors = r0["errors"]
    return driver.record(
        res, strategy="node", backend=backend, profile=profile, converged=False,
        epochs=epochs, final_mse=errors[-1] if len(errors) else np.nan, loss_curve=errors,
        extra={"passes": passes, "patterns": X.shape[0], "outputs": r0["outputs"],
               "blocks": [r["blocks"] for r in res] if keep else None,
               "a": r0["a"], "delta": r0["delta"]})
