"""Serial reference: online, bunch or batch back-propagation with momentum, one worker's
body run on the in-process backend of the driver."""
from __future__ import annotations

import math

import numpy as np

from engine.losses import get_loss, per_pattern_squared_error
from engine.nets.mlp import MLP
from engine.optim import SGD
from engine.parallel import driver
from engine.timing import RunRecord


def serial_worker(comm, *, net: MLP, X: np.ndarray, T: np.ndarray, lr: float, momentum: float,
                  bunch: int, threshold: float, max_epochs: int, loss: str, rng) -> dict:
    """One worker's body: one round per epoch (compute only; a 1-worker run has no
    collectives). Trains ``net`` in place."""
    n = X.shape[0]
    lossf = get_loss(loss)
    opt = SGD(net.n_params, lr=lr, momentum=momentum)
    g = np.empty(net.n_params)  # (n_params,)
    err = np.empty(n)  # (n,) per-pattern squared error of this epoch
    wss = {}
    curve = []
    converged, epoch = False, 0
    comm.start_clock()
    for epoch in range(1, max_epochs + 1):
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
        comm.clock.end_round()
        if mse < threshold:
            converged = True
            break
    return {"converged": converged, "epochs": epoch, "curve": np.asarray(curve)}


def train_serial(net: MLP, X: np.ndarray, T: np.ndarray, *, lr: float, momentum: float = 0.0,
                 bunch: int | None = None, threshold: float = 0.0, max_epochs: float = 1000,
                 loss: str = "mse", rng: np.random.Generator | None = None) -> RunRecord:
    """Train ``net`` in place until the training-set MSE is below ``threshold``.

    ``bunch`` = None or n is batch training in data order (the 1-node baseline
    of pattern-parallel training); a smaller bunch shuffles the data order each
    epoch with ``rng`` (the shared data-order stream). The MSE checked is the
    one of the epoch just presented, as in sequential batch training.
    Runs :func:`serial_worker` on the in-process backend of
    :func:`engine.parallel.driver.run`.
    """
    n = X.shape[0]
    bunch = n if bunch is None else int(bunch)
    if not 1 <= bunch <= n:
        raise ValueError(f"bunch must be in 1..{n}, got {bunch}")
    if bunch < n and rng is None:
        raise ValueError("bunch mode needs rng for the data order")
    r = driver.run(serial_worker, workers=1, backend="inprocess", net=net, X=X, T=T, lr=lr,
                   momentum=momentum, bunch=bunch, threshold=threshold,
                   max_epochs=int(math.ceil(max_epochs)), loss=loss, rng=rng)[0]
    curve = r["curve"]
    return driver.record([r], strategy="serial", backend="inprocess", converged=r["converged"],
                         epochs=r["epochs"], final_mse=curve[-1] if len(curve) else float("nan"),
                         loss_curve=curve, params=net.params.copy(), extra={"bunch": bunch})
