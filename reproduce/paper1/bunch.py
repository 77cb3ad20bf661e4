"""What the Quicknet strategies share (Färber 1997, §2): the bunch-mode update, the
presentation order in chunks, the input feed with and without compressed input,
and the sequential reference.

**Bunch mode** (§2): weights change once per bunch of B patterns. Quicknet
*accumulates* the bunch's updates (§3.5: "accumulating thousands of updates"),
so ``update="sum"`` steps by −η·Σ_bunch ∂E/∂w; ``"mean"`` divides by B.

**Presentation order** (§2.4, §3.2): the training frames are cut into
contiguous chunks of ``chunk`` frames (rounded up to a multiple of B, so no
bunch straddles two chunks); each epoch the chunk order is shuffled and the
frames inside a chunk are permuted, all from the shared data-order stream.
Every rank draws the same order, so compressed and uncompressed input present
the same patterns in the same order.

**Compressed input** (§2.4): instead of B·156 input values per bunch, the
master sends each slave one chunk of 13-value frames (plus the 4-frame margins
either side a window needs) and the slave builds the windows itself. The
utterance boundaries go once at the start.

Bytes are counted as MultiSpert would move them, master to each slave and
back (broadcast = P sequential writes, §2.1), in ``value_bytes`` per value;
our local backend moves the same arrays through shared memory.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from time import perf_counter

import numpy as np

from datasets.speech import HALF, N_STATIC, windows_from_frames


@dataclass(frozen=True)
class BunchConfig:
    bunch: int  # B
    lr: float  # η
    momentum: float = 0.0  # not mentioned by the paper; Quicknet's default is none
    epochs: int = 1
    update: str = "sum"  # Quicknet accumulates the bunch's updates (§3.5)
    pipelined: bool = False  # NP only: §2.3
    compressed: bool = False  # §2.4
    chunk: int = 10_000  # §3.2: "sending 10,000 patterns to each node before starting"
    max_bunches: int | None = None  # stop early (timing runs)
    value_bytes: int = 8  # bytes per value in the byte counts (ours: float64)

    def __post_init__(self):
        if not isinstance(self.bunch, (int, np.integer)) or self.bunch < 1:
            raise ValueError(f"bunch must be an integer >= 1, got {self.bunch!r}")
        if self.update not in ("sum", "mean"):
            raise ValueError(f"update must be 'sum' or 'mean', got {self.update!r}")
        if self.epochs < 1 or self.chunk < 1:
            raise ValueError("epochs and chunk must be >= 1")

    def count(self, b: int) -> int:
        """The divisor of the summed gradient of a bunch of b patterns (engine.optim.SGD)."""
        return 1 if self.update == "sum" else b

    @property
    def chunk_frames(self) -> int:
        return self.bunch * math.ceil(self.chunk / self.bunch)


ORDER_KEY, INIT_KEY = (2,), (3,)  # the spawn keys of the two shared streams below


def data_rng(seed: int) -> np.random.Generator:
    """The shared data-order stream: every rank draws the same order from it."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=ORDER_KEY))


def init_rng(seed: int) -> np.random.Generator:
    """The shared initial-weight stream."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=INIT_KEY))


def epoch_chunks(n: int, cfg: BunchConfig, rng: np.random.Generator) -> list[tuple[int, int, np.ndarray]]:
    """One epoch's order: [(lo, hi, perm)] per chunk, perm a permutation of lo..hi−1."""
    c = cfg.chunk_frames
    bounds = [(lo, min(lo + c, n)) for lo in range(0, n, c)]
    out = []
    for k in rng.permutation(len(bounds)):
        lo, hi = bounds[k]
        out.append((lo, hi, lo + rng.permutation(hi - lo)))
    return out


def bunches(perm: np.ndarray, B: int):
    for s in range(0, perm.size, B):
        yield perm[s:s + B]


def schedule(n: int, cfg: BunchConfig, rng: np.random.Generator):
    """The whole run as events: ``("chunk", (lo, hi))`` before a chunk's bunches,
    ``("bunch", idx)`` for every bunch, ``("end", epoch)`` after every epoch; it stops
    after ``cfg.max_bunches`` bunches (ending that epoch early)."""
    nb = 0
    for e in range(1, cfg.epochs + 1):
        for lo, hi, perm in epoch_chunks(n, cfg, rng):
            yield "chunk", (lo, hi)
            for idx in bunches(perm, cfg.bunch):
                yield "bunch", idx
                nb += 1
                if cfg.max_bunches and nb >= cfg.max_bunches:
                    yield "end", e
                    return
        yield "end", e


class InputFeed:
    """The input side of one rank: the master's corpus, or the windows a slave builds.

    ``start_chunk`` and ``inputs`` are collective calls (every rank, same order).
    ``nbytes`` counts what the master writes to ONE slave under the master/slave
    protocol: with compressed input the chunk of frames, else the bunch's windows
    (or, with ``share``, only the slave's share of them).
    """

    def __init__(self, comm, corpus, cfg: BunchConfig, *, root: int = 0):
        self.comm, self.corpus, self.cfg, self.root = comm, corpus, cfg, root
        self.ctx = corpus.ctx  # (n, 9): derived from the utterance starts, sent once
        n_in = corpus.windows(np.zeros(1, np.int64)).shape[1]
        self.n_in = n_in
        self.nbytes = float(corpus.starts.size * cfg.value_bytes)  # the boundaries, once
        self.xbuf = np.empty((cfg.bunch, n_in))  # (B, n_in)
        if cfg.compressed:
            rows = cfg.chunk_frames + 2 * HALF
            self.cbuf = np.empty((rows, N_STATIC))  # (chunk + 8, 13)
        self.c_lo = 0

    def start_chunk(self, lo: int, hi: int) -> None:
        if not self.cfg.compressed:
            return
        n = self.corpus.n_frames
        a, b = max(0, lo - HALF), min(n, hi + HALF)
        buf = self.cbuf[: b - a]
        if self.comm.rank == self.root:
            np.copyto(buf, self.corpus.frames[a:b])
        self.comm.broadcast(buf, root=self.root)
        self.c_lo = a
        self.nbytes += buf.size * self.cfg.value_bytes

    def inputs(self, idx: np.ndarray, *, share: slice | None = None) -> np.ndarray:
        """(len(idx), n_in) windows of the frames ``idx`` (global indices)."""
        b = idx.size
        if self.cfg.compressed:  # the slave builds them from its chunk
            return windows_from_frames(self.cbuf, self.ctx[idx] - self.c_lo)
        x = self.xbuf[:b]
        if self.comm.rank == self.root:
            np.copyto(x, self.corpus.windows(idx))
        self.comm.broadcast(x, root=self.root)
        n = x.size if share is None else x[share].size
        self.nbytes += n * self.cfg.value_bytes
        return x


def collect(res: list[dict], backend: str) -> dict:
    """What the NP and PP entry points return from their workers' results (with the
    driver's ``log`` and ``wall``): the log (rounds, ranks, 3), the measured wall of the
    slowest rank, ``time_s`` (that wall, or for an emulated run the slowest worker's
    virtual finish time, Σ compute + communication), and ``steps`` (bunches, 4): per
    bunch the slowest rank's compute s, the slowest rank's communication s (waiting
    included), the bunch size and the bytes per slave."""
    log = np.stack([r["log"] for r in res], axis=1)  # (rounds, ranks, 3)
    b = res[0]["b"]  # (rounds,) bunch size, 0 for the boundary and chunk rounds
    rows = log[b > 0]  # (bunches, ranks, 3)
    wall = max(r["wall"] for r in res)
    time_s = (wall if backend != "emulated"
              else float((log[:, :, 0] + log[:, :, 1]).sum(axis=0).max()))
    r0 = res[0]
    return {"wall": wall, "time_s": time_s, "bunches": r0["bunches"], "log": log,
            "train_acc": r0["train_acc"], "train_acc_epochs": r0["train_acc_epochs"],
            "cv_acc": r0["cv_acc"],
            "steps": np.column_stack([rows[:, :, 0].max(axis=1), rows[:, :, 1].max(axis=1),
                                      b[b > 0], rows[:, -1, 2]])}


def frame_accuracy(net, corpus, *, block: int = 8192) -> float:
    """Share of frames whose largest output is the labelled class (§3.5)."""
    right = 0
    for s in range(0, corpus.n_frames, block):
        idx = np.arange(s, min(s + block, corpus.n_frames))
        y, _ = net.forward(corpus.windows(idx))
        right += int(np.sum(np.argmax(y, axis=1) == corpus.labels[idx]))
    return right / max(1, corpus.n_frames)


def train_sequential(net, corpus, *, cfg: BunchConfig, seed: int, cv=None, loss: str = "mse",
                     on_epoch=None) -> dict:
    """Sequential Quicknet: bunch-mode back-propagation on one net, in place (§2, steps
    1–3), in the chunked order of :func:`epoch_chunks`. With ``cv`` the frame accuracy
    on it after every epoch. Returns {"cv_acc": [...], "train_acc": [...], "bunches", "wall"}.
    """
    from engine.losses import get_loss
    from engine.optim import SGD

    lossf = get_loss(loss)
    act = net.acts[-1]
    opt = SGD(net.n_params, lr=cfg.lr, momentum=cfg.momentum)
    g = np.empty(net.n_params)  # (n_params,)
    rng = data_rng(seed)
    wss = {}
    cv_acc, tr_acc, nb = [], [], 0
    right = seen = 0
    t0 = perf_counter()
    for ev, val in schedule(corpus.n_frames, cfg, rng):
        if ev == "bunch":
            idx = val
            b = idx.size
            ws = wss.get(b) or wss.setdefault(b, net.workspace(b))
            x, t = corpus.windows(idx), corpus.targets(idx, low=act.low, high=act.high)
            y, cache = net.forward(x, ws=ws)
            right += int(np.sum(np.argmax(y, axis=1) == corpus.labels[idx]))
            seen += b
            net.backward(lossf.grad(y, t), cache, out=g)
            opt.step(net.params, g, cfg.count(b))
            nb += 1
        elif ev == "end":
            tr_acc.append(right / max(seen, 1))
            right = seen = 0
            if cv is not None:
                cv_acc.append(frame_accuracy(net, cv))
            if on_epoch is not None:
                on_epoch(val)
    return {"cv_acc": cv_acc, "train_acc": tr_acc, "bunches": nb, "wall": perf_counter() - t0}
