"""Elman SRN (McCann & Kalman 1994): forward pass by hand, Kalman–Kwasny error, and the
gradient two ways (forward-propagated derivatives, eqs. 1–4, and BPTT) against each
other and against central differences in float64, with negative controls."""
from __future__ import annotations

import numpy as np
import pytest

from engine.losses import get_loss
from engine.nets.elman import Elman, Sequences, phi, phi_grad

H_FD = 1e-6


def make(n_hidden2=0, skip=True, F=2, lengths=(3, 1, 4, 2), seed=0):
    rng = np.random.default_rng(seed)
    net = Elman(3, 4, 2, n_feedback=F, n_hidden2=n_hidden2, skip=skip)
    net.init_uniform(rng, scale=0.6)
    N = sum(lengths)
    X = rng.uniform(-1, 1, size=(N, 3))  # (N, n_in)
    T = rng.choice([-0.8, 0.8], size=(N, 2))  # (N, n_out)
    data = Sequences(X, T, np.concatenate([[0], np.cumsum(lengths)]))
    return net, data


def central(net, batches):
    g = np.empty(net.n_params)
    p = net.params
    for i in range(net.n_params):
        old = p[i]
        p[i] = old + H_FD
        fp = phi(net, batches)
        p[i] = old - H_FD
        fm = phi(net, batches)
        p[i] = old
        g[i] = (fp - fm) / (2 * H_FD)
    return g


def rel_err(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-12))


ARCHS = [dict(), dict(n_hidden2=2), dict(skip=False), dict(F=4), dict(F=0), dict(n_hidden2=3, F=1)]


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: ",".join(f"{k}={v}" for k, v in a.items()) or "base")
@pytest.mark.parametrize("chunk", [1, 3])
def test_both_gradients_match_central_differences(arch, chunk):
    net, data = make(**arch)
    batches = data.batches(chunk=chunk)
    num = central(net, batches)
    p_f, g_f = phi_grad(net, batches, method="forward")
    p_b, g_b = phi_grad(net, batches, method="bptt")
    assert p_f == pytest.approx(phi(net, batches), rel=1e-14)
    assert p_b == p_f
    assert rel_err(g_f, num) < 1e-7
    assert rel_err(g_b, num) < 1e-7
    assert rel_err(g_f, g_b) < 1e-12


def test_negative_controls_fail_the_check():
    """Gradients with a term left out must be flagged by the same checker."""
    net, data = make()
    batches = data.batches(chunk=4)
    num = central(net, batches)
    # (1) drop the skip path through the context (u = 0 in eq. 4)
    b = batches[0]
    g = np.zeros(net.n_params)
    tot = np.zeros(net.n_params)
    from engine.nets.elman import loss_and_dy
    for b in batches:
        Y, cache = net.forward(b.X)
        _, dY = loss_and_dy(net, Y, b)
        v, u = net.output_grads(cache, dY, g)
        net.hidden_block_grad(cache, v, np.zeros_like(u), 0, net.n_hidden, out=net.view(g, "Wz"))
        tot += g
    assert rel_err(tot, num) > 1e-3
    # (2) truncate: treat every pattern as its own sequence (∂a/∂Y not carried)
    short = Sequences(data.X, data.T, np.arange(data.n_patterns + 1))
    _, g_trunc = phi_grad(net, short.batches(chunk=16), method="forward")
    assert rel_err(g_trunc, num) > 1e-3


def test_network_partition_blocks_sum_to_the_full_gradient():
    """§2.1: hidden units split unevenly (4 over 3 blocks) give the same ∂Φ/∂w_ih."""
    net, data = make(n_hidden2=2)
    b = data.batches(chunk=4)[0]
    from engine.nets.elman import loss_and_dy
    Y, cache = net.forward(b.X)
    _, dY = loss_and_dy(net, Y, b)
    g = np.zeros(net.n_params)
    v, u = net.output_grads(cache, dY, g)
    full = net.hidden_block_grad(cache, v, u, 0, 4, out=np.empty((net.nz, 4)))
    calls = []
    parts = [net.hidden_block_grad(cache, v, u, h0, h1, out=np.empty((net.nz, h1 - h0)),
                                   sync=lambda: calls.append(1))
             for h0, h1 in ((0, 2), (2, 3), (3, 4))]
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, rtol=1e-13, atol=1e-15)
    assert len(calls) == 3 * b.X.shape[0]  # one synchronisation per pattern step and block


def test_forward_worked_example():
    """1-1-1 net with a self-fed hidden unit, two patterns, worked by hand."""
    net = Elman(1, 1, 1, n_feedback=1)
    for name, val in (("W_ih", 0.5), ("W_fh", -1.0), ("b_h", 0.1), ("W_io", 0.2), ("W_fo", 0.3),
                      ("W_ro", 2.0), ("b_o", -0.1)):
        net.view(net.params, name)[...] = val
    X = np.array([[[1.0]], [[-1.0]]])  # (L=2, S=1, 1)
    Y, cache = net.forward(X)
    f = lambda z: np.tanh(1.5 * z)  # noqa: E731
    h0 = f(0.5 + 0.1)
    y0 = f(0.2 * 1 + 2.0 * h0 - 0.1)
    h1 = f(-0.5 - h0 + 0.1)
    y1 = f(-0.2 + 0.3 * h0 + 2.0 * h1 - 0.1)
    np.testing.assert_allclose(Y[:, 0, 0], [y0, y1], rtol=1e-15)
    np.testing.assert_allclose(cache.C[:, 0, 0], [0.0, h0], rtol=1e-15)


def test_kalman_kwasny_error_and_eq1():
    lf = get_loss("kalman_kwasny")
    a = np.array([[0.3, -0.5, 0.9]])
    t = np.array([[1.0, -1.0, -0.2]])
    assert lf.value(a, t)[0] == pytest.approx(np.sum((t - a) ** 2 / (1 - a ** 2)), rel=1e-15)
    # eq. 1 factor against a central difference
    h = 1e-7
    num = np.array([(lf.value(a + h * e, t) - lf.value(a - h * e, t))[0] / (2 * h)
                    for e in np.eye(3)[:, None, :]])
    np.testing.assert_allclose(lf.grad(a, t)[0], num, rtol=1e-6)
    # §1: δ_po = 3[(t − a) − (t − a)² a / (1 − a²)] = −∂Φ/∂X_o for a = tanh(1.5 X)
    d = t - a
    delta = 3 * (d - d * d * a / (1 - a * a))
    np.testing.assert_allclose(delta, -lf.grad(a, t) * 1.5 * (1 - a * a), rtol=1e-13)
    # negative control: plain squared error does not satisfy it
    assert not np.allclose(delta, 2 * d * 1.5 * (1 - a * a), rtol=1e-3)


def test_bad_sizes_and_method():
    with pytest.raises(ValueError, match="n_feedback"):
        Elman(3, 4, 2, n_feedback=5)
    net, data = make()
    with pytest.raises(ValueError, match="method"):
        phi_grad(net, data.batches(), method="rtrl")
    with pytest.raises(ValueError, match="starts"):
        Sequences(np.zeros((3, 1)), np.zeros((3, 1)), np.array([0, 2, 2, 3]))


def test_loss_only_is_the_loss_of_loss_and_grad():
    # a forward (line-search) epoch's batch Φ, without the gradient: the same number as with it
    net, data = make()
    g = np.zeros(net.n_params)
    for b in data.batches(chunk=2):
        assert net.loss_only(b) == net.loss_and_grad(b, g)
    # control: another net's weights give another Φ
    other, _ = make(seed=1)
    b = data.batches(chunk=2)[0]
    assert other.loss_only(b) != net.loss_only(b)
