"""Forward-only NP and PP passes (Färber 1997, §3.4, Fig. 5) against the serial MLP forward."""
import numpy as np
import pytest

from engine.nets.mlp import MLP
from engine.perfmodel import MachineProfile
from reproduce.paper1.bunch import init_rng
from reproduce.paper1.forward_parallel import forward_parallel, serial_forward

SIZES = (13, 10, 5)


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(3).standard_normal((25, SIZES[0]))  # (n, N_i)


def test_serial_forward_is_the_mlp_forward(x):
    net = MLP(SIZES, "logistic")
    net.init_uniform(init_rng(4), scale=0.5)
    y_ref, _ = net.forward(x)
    r = serial_forward(x, sizes=SIZES, activation="logistic", seed=4, bunch=7, init_scale=0.5)
    np.testing.assert_allclose(r["y"], y_ref, rtol=0, atol=1e-14)


@pytest.mark.parametrize("strategy", ["NP", "PP"])
@pytest.mark.parametrize("backend,workers,bunch", [("inprocess", 1, 7), ("local", 2, 7),
                                                   ("local", 3, 2), ("emulated", 4, 7)])
def test_forward_parallel_equals_serial(x, strategy, backend, workers, bunch):
    # bunch 7 over 25 patterns leaves a last bunch of 4; bunch 2 on 3 PP ranks leaves a rank idle
    ref = serial_forward(x, sizes=SIZES, activation="logistic", seed=4, bunch=bunch, init_scale=0.5)
    r = forward_parallel(x, strategy=strategy, sizes=SIZES, activation="logistic", seed=4, bunch=bunch,
                         workers=workers, backend=backend, init_scale=0.5,
                         profile=MachineProfile("test", 1e-6, 1e9, "test"))
    assert r["patterns"] == x.shape[0] and r["log"].shape == (-(-x.shape[0] // bunch), workers, 3)
    np.testing.assert_allclose(r["y"], ref["y"], rtol=0, atol=1e-12)


def test_negative_control_other_weights_differ(x):
    ref = serial_forward(x, sizes=SIZES, activation="logistic", seed=4, bunch=7, init_scale=0.5)
    r = forward_parallel(x, strategy="NP", sizes=SIZES, activation="logistic", seed=5, bunch=7,
                         workers=2, backend="local", init_scale=0.5)
    assert np.max(np.abs(r["y"] - ref["y"])) > 1e-6
