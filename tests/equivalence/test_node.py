"""Node-parallel training (Hlynsson & Schmitz 2016, §3–4) against the serial MLP.

The reference is engine/nets/mlp.py's forward/backward on the whole net with
the plain gradient step of §2 (w ← w − η/B · Σ o δ). For every backend and
P = 1..4, and for splits where N(l) mod P ≠ 0 (7 nodes over 3 workers, more
workers than nodes), the node-parallel run must give the same outputs for
every bunch, the same activations and deltas, and the same weights after
several updates, in float64 to 1e-12. A negative control updates only the
incoming weights, as §4.3 reads literally, and must drift from the reference.
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.nets.mlp import MLP
from engine.perfmodel import MachineProfile
from engine.strategies.node import (NodeConfig, NodeWorker, assemble, check_fits, required_bytes,
                                    train_node_parallel)

SIZES = (5, 7, 6, 3)  # 7 nodes over 3 workers in layer 1; 3 outputs over 4 workers: one idle
ACT = "symmetric_sigmoid"
CFG = NodeConfig(lr=0.3)
EPOCHS, BUNCH, N_PAT = 3, 2, 5  # bunches of 2, 2, 1 per epoch: 9 updates
RTOL, ATOL = 1e-12, 1e-14
PROFILE = MachineProfile("test", 1e-6, 1e9, "test")


pytestmark = pytest.mark.usefixtures("watchdog")  # tests/conftest.py


def case(seed: int = 3, sizes=SIZES):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (N_PAT, sizes[0]))  # (n, N(0))
    T = rng.choice([-1.0, 1.0], (N_PAT, sizes[-1]))  # (n, N(L))
    net = MLP(sizes, ACT)
    net.init_uniform(rng, scale=0.8)
    return X, T, net.params.copy()


def serial_reference(X, T, params, *, sizes=SIZES, epochs=EPOCHS, bunch=BUNCH, lr=CFG.lr,
                     passes="train", train_bias=True):
    """(outputs of every bunch, last activations, last deltas δ_1..δ_L, final params)."""
    net = MLP(sizes, ACT, params=params.copy())
    outs = []
    for _ in range(epochs):
        for s in range(0, X.shape[0], bunch):
            x, t = X[s:s + bunch], T[s:s + bunch]
            y, cache = net.forward(x)
            outs.append(y.copy())
            a = [v.copy() for v in cache[0]]
            if passes == "forward":
                continue
            g = net.backward(y - t, cache)  # dE/dy of ½Σ(y − t)²
            deltas = [cache[1].delta[l].copy() for l in range(1, net.L + 1)]
            if passes == "train":
                if not train_bias:
                    for l in range(1, net.L + 1):
                        net.view(g, f"b{l}")[:] = 0.0
                net.params -= lr / x.shape[0] * g
    return np.concatenate(outs), a, (deltas if passes != "forward" else None), net.params.copy()


def check_against_serial(rec, X, T, params, *, sizes=SIZES, passes="train", train_bias=True):
    outs, a, deltas, final = serial_reference(X, T, params, sizes=sizes, passes=passes,
                                              train_bias=train_bias)
    np.testing.assert_allclose(rec.extra["outputs"], outs, rtol=RTOL, atol=ATOL)
    for l in range(1, len(sizes)):
        np.testing.assert_allclose(rec.extra["a"][l], a[l], rtol=RTOL, atol=ATOL)
        if deltas is not None:
            np.testing.assert_allclose(rec.extra["delta"][l], deltas[l - 1], rtol=RTOL, atol=ATOL)
    by_c, by_r = assemble(sizes, ACT, rec.extra["blocks"])
    np.testing.assert_allclose(by_c, final, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(by_r, final, rtol=RTOL, atol=ATOL)


def run(P, backend, passes="train", **kw):
    X, T, params = case()
    rec = train_node_parallel(X, T, sizes=SIZES, activation=ACT, params=params, cfg=CFG,
                              workers=P, backend=backend, epochs=EPOCHS, bunch=BUNCH,
                              passes=passes, keep=True, profile=PROFILE, **kw)
    return rec, X, T, params


def test_inprocess_equals_serial():
    rec, X, T, params = run(1, "inprocess")
    check_against_serial(rec, X, T, params)
    assert rec.kind == "measured" and rec.workers == 1


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_local_equals_serial(P):
    rec, X, T, params = run(P, "local")
    check_against_serial(rec, X, T, params)
    assert rec.compute_s.shape[1] == P and rec.kind == "measured"


@pytest.mark.parametrize("P", [1, 2, 3, 4, 7, 9])
def test_emulated_equals_serial(P):
    rec, X, T, params = run(P, "emulated")
    check_against_serial(rec, X, T, params)
    assert rec.kind == "emulated" and rec.profile == "test"


@pytest.mark.parametrize("passes", ["forward", "forward_backward"])
def test_partial_passes_equal_serial(passes):
    rec, X, T, params = run(3, "local", passes=passes)
    outs, a, deltas, _ = serial_reference(X, T, params, passes=passes)
    np.testing.assert_allclose(rec.extra["outputs"], outs, rtol=RTOL, atol=ATOL)
    if deltas is not None:
        for l in range(1, len(SIZES)):
            np.testing.assert_allclose(rec.extra["delta"][l], deltas[l - 1], rtol=RTOL, atol=ATOL)
    by_c, _ = assemble(SIZES, ACT, rec.extra["blocks"])
    np.testing.assert_array_equal(by_c, params)  # no update in these passes


def test_frozen_bias_equals_serial_without_bias_update():
    X, T, params = case()
    rec = train_node_parallel(X, T, sizes=SIZES, activation=ACT, params=params,
                              cfg=NodeConfig(lr=CFG.lr, train_bias=False), workers=3,
                              backend="emulated", profile=PROFILE, epochs=EPOCHS, bunch=BUNCH,
                              keep=True)
    check_against_serial(rec, X, T, params, train_bias=False)


def test_literal_update_drifts(monkeypatch):
    """Negative control: updating only the incoming weights (§4.3 read literally) leaves
    each worker's outgoing weights stale, and the run leaves the serial reference."""
    def incoming_only(self, a, delta, *, lr, B, train_bias=True):
        for l in range(1, self.L + 1):
            d_own = delta[l][:, self.own[l]]
            self.Wc[l] -= lr / B * (d_own.T @ a[l - 1])
            self.b[l] -= lr / B * d_own.sum(axis=0)

    monkeypatch.setattr(NodeWorker, "update", incoming_only)
    rec, X, T, params = run(3, "emulated")
    with pytest.raises(AssertionError):
        check_against_serial(rec, X, T, params)
    outs, *_ = serial_reference(X, T, params)
    assert np.abs(rec.extra["outputs"] - outs).max() > 1e-6


def test_emulated_time_composition():
    """Emulated (engine/comm/emulated.py): one round per exchange; at every exchange the
    slowest worker is charged the modelled allgather, each other worker that plus its
    wait for the slowest; time = the slowest worker's Σ (compute + communication)."""
    rec, *_ = run(4, "emulated", passes="forward")
    L = len(SIZES) - 1
    assert rec.compute_s.shape == (EPOCHS * 3 * L, 4)
    nbytes = BUNCH * 2 * 8  # 7 nodes over 4 workers: blocks of at most 2
    assert rec.bytes_sent[0, 0] == nbytes
    cost = np.array([PROFILE.allgather_time(4, int(b)) for b in rec.bytes_sent[:, 0]])  # (rounds,)
    assert (cost > 0).all()
    np.testing.assert_allclose(rec.comm_s.min(axis=1), cost, rtol=1e-9)
    assert (rec.comm_s >= cost[:, None] * (1 - 1e-9)).all()
    assert rec.time_s == pytest.approx((rec.compute_s + rec.comm_s).sum(axis=0).max())
    assert rec.time_s >= cost.sum()  # never below the modelled exchanges


def test_mpi_equals_serial(tmp_path):
    from mpi_ppt_main import HERE, launch_or_skip

    for P in (2, 3):
        out = tmp_path / f"node{P}.npz"
        launch_or_skip(P, ["--out", str(out)], script=HERE / "mpi_node_main.py", timeout=60)
        z = np.load(out)
        assert int(z["size"]) == P and str(z["kind"]) == "measured"
        X, T, params = case()
        outs, a, deltas, final = serial_reference(X, T, params)
        np.testing.assert_allclose(z["outputs"], outs, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(z["a"], np.concatenate([v.ravel() for v in a]), rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(z["delta"], np.concatenate([d.ravel() for d in deltas]),
                                   rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(z["by_c"], final, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(z["by_r"], final, rtol=RTOL, atol=ATOL)


# -- memory refusal --------------------------------------------------------------------
def test_required_bytes_by_hand():
    # sizes (4, 6, 2), P = 2: blocks of 3 (layer 1) and 1 (layer 2)
    need = required_bytes((4, 6, 2), 2, B=1)
    own = (3 * 4 + 3) + (1 * 6 + 1) + 3 * 2  # Wc1 + b1, Wc2 + b2, Wr2 (rows of layer-1 nodes)
    act = 3 * 12 + 3 * (2 + 3 + 1)  # a, δ, scratch of (4 + 6 + 2); send + recv per block size
    assert need["per_worker"] == (own + act) * 8
    assert need["params"] == (4 * 6 + 6 + 6 * 2 + 2) * 8
    assert need["total"] == need["params"] + 2 * need["per_worker"]


def test_paper_width_refused_before_allocation():
    sizes = (132,) + (64_000,) * 6  # the paper's Tables 2–3 net
    weights = 132 * 64_000 + 5 * 64_000**2 + 6 * 64_000  # weights and biases
    need = required_bytes(sizes, 16, emulated=True)
    assert need["params"] == weights * 8
    with pytest.raises(MemoryError) as e:
        check_fits(sizes, 16, emulated=True, available=64 * 2**30)
    assert f"needs {need['total'] / 2**30:,.2f} GiB ({need['total']:,} bytes" in str(e.value)
    assert "only 64.00 GiB is available" in str(e.value)
    assert check_fits((132, 64, 64), 2, available=64 * 2**30)["total"] < 2**20  # a small net fits


def test_train_refuses_huge_net_without_allocating(monkeypatch):
    import engine.strategies.node as node

    monkeypatch.setattr(node, "available_bytes", lambda: 2**30)  # pretend 1 GiB
    monkeypatch.setattr(node, "NodeWorker", None)  # any allocation path would now fail differently
    X = np.zeros((1, 132))
    T = np.zeros((1, 20_000))
    with pytest.raises(MemoryError, match="needs .* GiB"):
        train_node_parallel(X, T, sizes=(132, 20_000, 20_000), activation=ACT,
                            params=np.zeros(1), workers=2, backend="emulated", profile=PROFILE)


@pytest.mark.parametrize("kw,msg", [
    (dict(workers=0), "workers must be an integer >= 1"),
    (dict(passes="sideways"), "passes must be one of"),
    (dict(bunch=9), "bunch must be in 1..5"),
    (dict(backend="carrier-pigeon"), "unknown backend"),
    (dict(backend="inprocess", workers=2), "exactly 1 worker"),
])
def test_bad_input(kw, msg):
    X, T, params = case()
    args = dict(sizes=SIZES, activation=ACT, params=params, workers=2, backend="emulated",
                profile=PROFILE)
    args.update(kw)
    with pytest.raises(ValueError, match=msg):
        train_node_parallel(X, T, **args)
