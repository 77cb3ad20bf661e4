"""benchmarks/profile_mlp.py lists the engine's numpy calls one by one: its composed
activation ops must give the engine's f and df bit for bit, or it refuses to run.

Negative control: a listing that drops one op (the ½ of the symmetric sigmoid) is
caught.
"""
from __future__ import annotations

import numpy as np
import pytest

from benchmarks import profile_mlp
from engine.nets.mlp import MLP


def _net_and_values(activation: str):
    rng = np.random.default_rng(3)
    net = MLP((5, 7, 2), activation)
    net.init_uniform(rng, scale=1.0)
    X = rng.standard_normal((11, 5))  # (B, n_0)
    y, (a, _) = net.forward(X)
    a = [x.copy() for x in a]
    z_pre = [None] + [a[l - 1] @ net.W[l] + net.b[l] for l in range(1, net.L + 1)]
    return net, z_pre, a


@pytest.mark.parametrize("activation", ["logistic", "symmetric_sigmoid", "tanh"])
def test_listed_ops_match_the_engine(activation):
    net, z_pre, a = _net_and_values(activation)
    profile_mlp._check(net, z_pre, a)  # raises SystemExit on a mismatch


def test_a_listing_that_drops_an_op_is_caught(monkeypatch):
    net, z_pre, a = _net_and_values("symmetric_sigmoid")
    monkeypatch.setitem(profile_mlp.F_OPS, "symmetric_sigmoid", profile_mlp.F_OPS["tanh"])
    with pytest.raises(SystemExit, match="no longer match"):
        profile_mlp._check(net, z_pre, a)


@pytest.mark.parametrize("job", ["parity", "bunch"])
def test_every_call_of_a_step_is_listed_and_runs(job):
    make, method, _, _ = profile_mlp.JOBS[job]
    j = make()
    listed = profile_mlp.ops(j, getattr(j, method))
    L = j.net.L
    # per layer: matmul, + b, f's ops; loss; df of the last layer, delta; per layer the
    # weight gradient and Σ delta, and below the top the input delta, df's ops, *=; SGD
    n_f = sum(len(profile_mlp.F_OPS[act.name]) for act in j.net.acts)
    n_df = sum(len(profile_mlp._df_ops_of(act.name, None)) for act in j.net.acts)
    assert len(listed) == 2 * L + n_f + 1 + n_df + 1 + 2 * L + 2 * (L - 1) + 1
    for _, fn in listed:
        fn()
