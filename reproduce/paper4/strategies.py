"""paper4's strategy on a small instance, for ``python -m reproduce validate``
(reproduce/validate.py holds it against the emulator; ``Paper.strategies`` registers it)."""
from __future__ import annotations

import numpy as np

from engine.nets.mlp import MLP
from engine.strategies.node import train_node_parallel
from reproduce.paper4.setup import DEFAULT as S
from reproduce.validate import Case, from_record


def node_case(quick: bool) -> Case:
    """Node-parallel forward passes (Hlynsson & Schmitz 2016, Table 2): the paper's depth
    and input at width 512, one pattern per pass."""
    width, n = 512, (10 if quick else 400)
    sizes = S.sizes(width)
    rng = np.random.default_rng(1)
    net = MLP(sizes, S.activation)
    net.init_uniform(rng, scale=0.1)
    X = rng.uniform(-1, 1, (n, sizes[0]))  # (n, 132)
    T = np.zeros((n, sizes[-1]))  # (n, width)

    def run(backend, P, profile):
        return from_record(train_node_parallel(
            X, T, sizes=sizes, activation=S.activation, params=net.params, workers=P,
            backend=backend, passes="forward", profile=profile))

    return Case("paper4", f"{sizes[0]}-{width}×{len(sizes) - 1}, forward, {n} patterns", run)


STRATEGIES = {"node-parallel": node_case}
