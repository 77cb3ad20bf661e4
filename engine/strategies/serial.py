"""Serial reference: online, bunch or batch back-propagation with momentum."""
from __future__ import annotations

import math
from time import perf_counter

import numpy as np

from engine.losses import get_loss, per_pattern_squared_error
from engine.nets.mlp import MLP
from engine.optim import SGD
from engine.timing import RoundLog, RunRecord, Stopwatch


def train_serial(net: MLP, X: np.ndarray, T: np.ndarray, *, lr: float, momentum: float = 0.0,
                 bunch: int | None = None, threshold: float = 0.0, max_epochs: float = 1000,
                 loss: str = "mse", rng: np.random.Generator | None = None) -> RunRecord:
    """Train ``net`` in place until the training-set MSE is below ``threshold``.

    ``bunch`` = None or n is batch training in data order (Dahl et al.'s 1-node
    baseline); a smaller bunch shuffles the data order each epoch with ``rng``
    (the shared data-order stream). The MSE checked is the one of the epoch
    just presented, as in sequential batch training (Dahl et al. 2008, §4.1).
    """
    n = X.shape[0]
    bunch = n if bunch is None else int(bunch)
    if not 1 <= bunch <= n:
        raise ValueError(f"bunch must be in 1..{n}, got {bunch}")
    if bunch < n and rng is None:
        raise ValueError("bunch mode needs rng for the data order")
    lossf = get_loss(loss)
    opt = SGD(net.n_params, lr=lr, momentum=momentum)
    g = np.empty(net.n_params)  # (n_params,)
    err = np.empty(n)  # (n,) per-pattern squared error of this epoch
    wss = {}
    log = RoundLog()
    curve = []
    converged, epoch = False, 0
    max_epochs = int(math.ceil(max_epochs))
    sw = Stopwatch()
    t0 = perf_counter()
    for epoch in range(1, max_epochs + 1):
        sw.lap()
        order = np.arange(n) if bunch == n else rng.permutation(n)
        for s in range(0, n, bunch):
            idx = order[s:s + bunch]
            x, t = (X, T) if bunch == n else (X[idx], T[idx])
            ws = wss.get(len(idx)) or wss.setdefault(len(idx), net.workspace(len(idx)))
            y, cache = net.forward(x, ws=ws)
            err[s:s + len(idx)] = per_pattern_squared_error(y, t)
            if bunch == n and err.mean() < threshold:
                break  # this epoch's error is already below the target: no update
            net.backward(lossf.grad(y, t), cache, out=g)
            opt.step(net.params, g, len(idx))
        mse = float(err.mean())
        curve.append(mse)
        log.add(sw.lap(), 0.0, 0.0)
        if mse < threshold:
            converged = True
            break
    wall = perf_counter() - t0
    a = log.array
    return RunRecord(
        strategy="serial", workers=1, kind="measured", converged=converged, rounds=epoch,
        epochs=float(epoch), final_mse=curve[-1] if curve else float("nan"),
        loss_curve=np.asarray(curve), compute_s=a[:, :1], comm_s=a[:, 1:2], bytes_sent=a[:, 2:3],
        wall_s=wall, params=net.params.copy(), extra={"bunch": bunch})
