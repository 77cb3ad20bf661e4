"""The serial reference of every data-parallel configuration (the llm.c way: one
reference, several implementations, and every implementation checked against it).

Written from the descriptions in :mod:`engine.parallel.data_parallel`, not from
its code, and without a communicator: one network, plain loops, the same data
order (:func:`engine.parallel.data_parallel.local_steps` draws it, so both see the
same items).

- ``gradients``: one step over the union of the workers' items of a step (a
  gradient is linear in its items: Σ_p ∇E_p = ∇E of the union);
- ``updates`` with SGD: Σ_p −η·g_p/m = −η·g_union/m for P local epochs of m items
  (``reduce="sum"``), −η·g_union/(P·m) for ``"mean"``; momentum on the sum;
- ``cg``: conjugate gradients on the whole set's loss and gradient;
- ``params``: P replicas trained one after another on their portions, then
  averaged with the decay V(e) = v̄(e) − β·V(e−1) (the one case that needs P replicas);
  with ``beta`` ≠ 0 the per-step combines apply the same decay to the one replica at
  each epoch end.
"""
from __future__ import annotations

import numpy as np

from engine.optim import ConjugateGradient
from engine.parallel import driver
from engine.parallel.data_parallel import (DataParallel, _Portion, bucket_bounds, lengths,
                                           local_steps, n_items, take)


def serial_reference(make_net, data, cfg: DataParallel, *, workers: int, seed: int,
                     own_key: int = 2) -> np.ndarray:
    """The final parameters of ``cfg`` run by ``workers`` workers, computed serially
    (``own_key``: :func:`engine.parallel.data_parallel.dp_worker`'s)."""
    P = workers
    orders = [driver.stream(seed, 1) for _ in range(P)]  # each worker's copy of the shared stream
    own = [driver.stream(seed, own_key, p) for p in range(P)]
    nets = [make_net(driver.stream(seed, 0)) for _ in range(P if cfg.combine == "params" else 1)]
    net, n = nets[0], nets[0].n_params
    g = np.empty(n)  # (n_params,)
    opts = [cfg.optimizer.make(n) for _ in nets] if cfg.cg is None else []
    lpt = None
    if cfg.split == "longest_first":
        from engine.schedule import longest_first

        lpt = longest_first(lengths(data), P)
    V_prev = net.params.copy()
    bounds = bucket_bounds(cfg, data)
    for _ in range(cfg.epochs):
        if cfg.cg is not None:
            batch = take(data, np.arange(n_items(data)))

            def phi(x):
                net.params[:] = x
                return net.loss_and_grad(batch, g)

            def phi_grad(x):
                net.params[:] = x
                return net.loss_and_grad(batch, g), g.copy()

            x = net.params.copy()
            ConjugateGradient(n, **dict(cfg.cg.options)).minimize(x, phi, phi_grad,
                                                                  iterations=cfg.cg.iterations)
            net.params[:] = x
            continue
        if cfg.combine != "params":
            # every worker's steps of this epoch, drawn as the workers draw them
            per = [list(local_steps(cfg, data, P=P, rank=p, order_rng=orders[p],
                                    own_rng=own[p], lpt=lpt, bounds=bounds)) for p in range(P)]
            for s in range(len(per[0])):
                idx = np.concatenate([per[p][s][0] for p in range(P)])
                pad = per[0][s][1]
                net.loss_and_grad(take(data, idx, pad), g)
                if cfg.combine == "gradients":
                    count = len(idx) if cfg.reduce == "mean" else 1
                    opts[0].step(net.params, g, max(count, 1))
                else:  # updates: P local epochs of equal size m
                    m = len(per[0][s][0])
                    opts[0].step(net.params, g, m * (P if cfg.reduce == "mean" else 1))
            if cfg.beta != 0.0:  # the decay at epoch end
                net.params[:] = net.params - cfg.beta * V_prev
                V_prev[:] = net.params
            continue
        perm = orders[0].permutation(n_items(data))
        acc = np.zeros(n)
        for p in range(P):
            portion = perm[p::P]
            for idx, pad in local_steps(cfg, _Portion(data, portion), P=1, rank=0,
                                        order_rng=own[p], own_rng=own[p], bounds=bounds):
                nets[p].loss_and_grad(take(data, portion[idx], pad), g)
                c = max(len(idx), 1) if cfg.reduce == "mean" else 1
                opts[p].step(nets[p].params, g, c)
            acc += nets[p].params  # rank order
        new = acc / P - cfg.beta * V_prev  # V(e) = v̄(e) − β·V(e−1)
        for q in nets:
            q.params[:] = new
        V_prev[:] = new
    return net.params.copy()
