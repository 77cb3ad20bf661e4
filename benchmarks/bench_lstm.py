"""LSTM(64) + CTC gradient (paper2: Khomenko et al. 2016, §IV), one thread, float64.

One step = forward through the LSTM layer and its linear output, the CTC loss and
its gradient with respect to the outputs, and back-propagation through time into
the flat gradient (:meth:`engine.nets.LSTM.loss_and_grad`). Inputs are 3 pen
features (dx, dy, pen-up) as in paper2; 28 output classes (27 labels and the CTC
blank); every sequence has T steps (no padding) and T // 8 labels.

:class:`TorchLSTMStep` is the same computation in PyTorch (``nn.LSTM`` + a linear
layer + ``F.ctc_loss`` with ``reduction="sum"``, ``loss.backward()``), float64,
one thread: the comparison of benchmarks/targets.py.
"""
from __future__ import annotations


import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.bench_bunch import _best
from engine.data import CTCBatch
from engine.losses import CTCTarget
from engine.nets.lstm import LSTM

N_IN, HIDDEN, N_OUT = 3, 64, 28
SHAPES = [(200, 4), (200, 16), (200, 64), (400, 4), (400, 16), (400, 64)]  # (T, B)


def make_batch(T: int, B: int, *, seed: int = 0) -> CTCBatch:
    """Random inputs (T, B, N_IN) and random label strings of T // 8 labels in 1..N_OUT−1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, B, N_IN))  # (T, B, n_in)
    L = max(1, T // 8)
    labels = rng.integers(1, N_OUT, size=(B, L))  # (B, L)
    tgt = CTCTarget(labels, np.full(B, L, dtype=np.int64), np.full(B, T, dtype=np.int64))
    return CTCBatch(X, np.ones((T, B)), tgt)


class LSTMStep:
    """Our LSTM(64) + CTC loss and gradient on one fixed batch."""

    def __init__(self, T: int, B: int, *, seed: int = 0):
        self.batch = make_batch(T, B, seed=seed)
        self.net = LSTM(N_IN, HIDDEN, N_OUT)
        self.net.init(np.random.default_rng(seed + 1))
        self.g = np.empty(self.net.n_params)  # (n_params,)

    def step(self) -> float:
        return self.net.loss_and_grad(self.batch, self.g)


class TorchLSTMStep:
    """The same model and batch in PyTorch: nn.LSTM + nn.Linear + F.ctc_loss (sum), float64."""

    def __init__(self, T: int, B: int, *, seed: int = 0):
        import torch

        self.torch = torch
        b = make_batch(T, B, seed=seed)
        dt = torch.float64
        self.lstm = torch.nn.LSTM(N_IN, HIDDEN).to(dt)
        self.out = torch.nn.Linear(HIDDEN, N_OUT).to(dt)
        self.X = torch.from_numpy(b.X)
        self.labels = torch.from_numpy(b.target.labels)
        self.il = torch.from_numpy(b.target.input_lengths)
        self.ll = torch.from_numpy(b.target.label_lengths)

    def step(self) -> float:
        F = self.torch.nn.functional
        for p in (*self.lstm.parameters(), *self.out.parameters()):
            p.grad = None
        h, _ = self.lstm(self.X)  # (T, B, H)
        lp = F.log_softmax(self.out(h), dim=-1)  # (T, B, K)
        loss = F.ctc_loss(lp, self.labels, self.il, self.ll, blank=0, reduction="sum",
                          zero_infinity=False)
        loss.backward()
        return float(loss)


def best_seconds(fn, *, reps: int = 3, repeats: int = 3) -> float:
    """Best over ``repeats`` of the mean time of ``reps`` calls (after one warm-up call)."""
    fn()
    return _best(fn, reps, repeats)


class LSTMCTCStep:
    """asv: LSTM(64) + CTC loss and gradient, one thread."""

    params = [SHAPES]
    param_names = ["T, B"]
    timeout = 600

    def setup(self, shape):
        self._limits = threadpool_limits(1)
        self.job = LSTMStep(*shape)

    def teardown(self, shape):
        self._limits.restore_original_limits()

    def time_step(self, shape):
        self.job.step()

    def track_sequence_steps_per_s(self, shape):
        """T · B / (best-of-3 mean step time): sequence steps through forward + CTC + BPTT."""
        T, B = shape
        return T * B / best_seconds(self.job.step)

    track_sequence_steps_per_s.unit = "steps/s"

    def track_speed_vs_torch(self, shape):
        """torch's step time / ours (> 1: ours faster), best of 3 interleaved rounds; NaN
        where PyTorch is not importable."""
        try:
            import torch
        except ImportError:
            return float("nan")
        torch.set_num_threads(1)
        tj = TorchLSTMStep(*shape)
        ours = theirs = float("inf")
        for _ in range(3):
            ours = min(ours, best_seconds(self.job.step, reps=1, repeats=2))
            theirs = min(theirs, best_seconds(tj.step, reps=1, repeats=2))
        return theirs / ours

    track_speed_vs_torch.unit = "x"
