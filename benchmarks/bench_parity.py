"""8-bit parity (Dahl et al. 2008): one full-batch epoch and epochs to converge.

Epoch: the 8-100-1 net with the symmetric sigmoid (FANN's SIGMOID_SYMMETRIC),
all 256 patterns as one batch: forward + backward + one SGD step, one BLAS
thread (FANN, the C library it is compared with in targets.py, has one).

Convergence: the serial batch reference (train_serial, lr 0.1, momentum 0.3,
threshold 0.01, weights uniform in [-1, 1]) and pattern-parallel training on
2 emulated workers (local_epoch 32, the same settings), fixed seeds.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np
from threadpoolctl import threadpool_limits

from datasets.parity import parity
from engine.losses import get_loss, per_pattern_squared_error
from engine.nets.mlp import MLP
from engine.optim import SGD

SIZES = (8, 100, 1)
ACT = "symmetric_sigmoid"
SEED = 0


class ParityEpoch:
    """One module-level object per run; ``epoch()`` is the unit that is timed."""

    def __init__(self, seed: int = SEED):
        self.X, self.T = parity(8, activation=ACT)  # (256, 8), (256, 1)
        n = self.X.shape[0]
        self.net = MLP(SIZES, ACT)
        self.net.init_uniform(np.random.default_rng(seed), scale=1.0)
        self.opt = SGD(self.net.n_params, lr=0.1, momentum=0.3)
        self.loss = get_loss("mse")
        self.ws = self.net.workspace(n)
        self.g = np.empty(self.net.n_params)  # (n_params,)
        self.dy = np.empty((n, 1))  # (256, 1)
        self.n = n

    def epoch(self) -> None:
        y, cache = self.net.forward(self.X, ws=self.ws)
        self.net.backward(self.loss.grad(y, self.T, out=self.dy), cache, out=self.g)
        self.opt.step(self.net.params, self.g, self.n)

    def mse(self) -> float:
        y, _ = self.net.forward(self.X, ws=self.ws)
        return float(per_pattern_squared_error(y, self.T).mean())


def epoch_seconds(job: ParityEpoch, *, epochs: int = 1000, repeats: int = 5) -> float:
    """Best over ``repeats`` of the mean time of ``epochs`` consecutive epochs."""
    for _ in range(max(1, epochs // 10)):
        job.epoch()
    best = float("inf")
    for _ in range(repeats):
        t = perf_counter()
        for _ in range(epochs):
            job.epoch()
        best = min(best, (perf_counter() - t) / epochs)
    return best


class TimeParityEpoch:
    """8-100-1 full-batch epoch on all 256 parity patterns, one thread."""

    def setup(self):
        self._limits = threadpool_limits(1)
        self.job = ParityEpoch()

    def teardown(self):
        self._limits.restore_original_limits()

    def time_epoch(self):
        self.job.epoch()

    def peakmem_epoch(self):
        self.job.epoch()

    def track_epoch_us(self):
        """Best-of-5 mean epoch time measured inside the benchmark (µs)."""
        return epoch_seconds(self.job, epochs=500) * 1e6

    track_epoch_us.unit = "µs"

    def track_mcups(self):
        """Connection updates per second: 256 patterns × 1001 connections / epoch time."""
        return self.job.n * self.job.net.n_connections / epoch_seconds(self.job, epochs=500) / 1e6

    track_mcups.unit = "MCUPS"


# -- epochs to converge --------------------------------------------------------

def serial_epochs(seed: int = SEED, *, max_epochs: int = 50_000):
    """Epochs of serial batch training to MSE < 0.01 (returns the RunRecord)."""
    from engine.strategies.serial import train_serial

    X, T = parity(8, activation=ACT)
    net = MLP(SIZES, ACT)
    net.init_uniform(np.random.default_rng(seed), scale=1.0)
    return train_serial(net, X, T, lr=0.1, momentum=0.3, threshold=0.01, max_epochs=max_epochs)


def ppt_epochs(seed: int = SEED, *, workers: int = 2, local_epoch: int = 32,
               max_epochs: float = 50_000):
    """Pattern-parallel training on ``workers`` emulated workers (returns the RunRecord).

    Epochs do not depend on the machine profile (it only sets the emulated
    communication time), so a fixed one is used.
    """
    from engine.perfmodel import MachineProfile
    from reproduce.paper3.ppt import PPTConfig, train_pattern_parallel

    X, T = parity(8, activation=ACT)
    profile = MachineProfile("bench-fixed", latency_s=1e-5, bandwidth_Bps=1e9,
                             source="fixed for the benchmark: epochs do not depend on it")
    cfg = PPTConfig(local_epoch=local_epoch, lr=0.1, momentum=0.3, threshold=0.01,
                    max_epochs=max_epochs)
    return train_pattern_parallel(X, T, sizes=SIZES, activation=ACT, cfg=cfg, seed=seed,
                                  workers=workers, backend="emulated", profile=profile)


class ParityConvergence:
    """Epochs to MSE < 0.01 on 8-bit parity, fixed seed (a fidelity track)."""

    timeout = 600

    def setup(self):
        self._limits = threadpool_limits(1)  # same rounding on every run of one machine

    def teardown(self):
        self._limits.restore_original_limits()

    def track_epochs_serial_batch(self):
        rec = serial_epochs()
        return rec.epochs if rec.converged else float("nan")

    track_epochs_serial_batch.unit = "epochs"

    def track_epochs_ppt_2_emulated(self):
        rec = ppt_epochs()
        return rec.epochs if rec.converged else float("nan")

    track_epochs_ppt_2_emulated.unit = "epochs"

    def time_serial_batch_to_converge(self):
        serial_epochs()

    time_serial_batch_to_converge.number = 1
    time_serial_batch_to_converge.repeat = (1, 3, 30.0)
    time_serial_batch_to_converge.warmup_time = 0.0
