"""Shared-memory strategies of paper0 against the serial reference: the network
partition (§2.1) and the sequence partition (§2.2), on local processes."""
from __future__ import annotations

import numpy as np
import pytest

from engine.nets.elman import Elman, Sequences, phi, phi_grad
from engine.optim import ConjugateGradient
from engine.schedule import longest_first
from engine.strategies import network_partition as network, sequence

SIZES = dict(n_in=3, n_hidden=5, n_out=2, n_feedback=3, n_hidden2=2)


def data_and_net(seed=0, n_seq=9):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, 7, size=n_seq)
    N = int(lens.sum())
    d = Sequences(rng.uniform(-1, 1, (N, 3)), rng.choice([-0.8, 0.8], (N, 2)),
                  np.concatenate([[0], np.cumsum(lens)]))
    net = Elman(**SIZES)
    net.init_uniform(rng, scale=0.5)
    return d, net


def test_split_even_follows_section_3_1():
    assert network.split_even(24, 7) == [(0, 4), (4, 8), (8, 12), (12, 15), (15, 18), (18, 21), (21, 24)]
    assert max(b - a for a, b in network.split_even(24, 7)) == max(b - a for a, b in network.split_even(24, 6)) == 4
    assert network.split_even(3, 5)[3:] == [(3, 3), (3, 3)]


@pytest.mark.parametrize("workers", [2, 3])
def test_network_partition_equals_serial(workers):
    d, net = data_and_net()
    preps = network.prepare(net, d)
    _, ref = phi_grad(net, d.batches(chunk=4))  # the serial reference, vectorised
    full = network.loop(net, preps, 0, net.n_hidden)
    np.testing.assert_allclose(full, net.view(ref, "Wz"), rtol=1e-12, atol=1e-14)
    grad, secs = network.run_partitioned(net, preps, workers, repeats=1)
    np.testing.assert_allclose(grad, full, rtol=1e-13, atol=1e-15)
    assert secs > 0


def test_sequence_partition_gradient_equals_serial():
    d, net = data_and_net()
    ref_phi, ref_g = phi_grad(net, d.batches(chunk=4))
    tot_phi, tot_g = 0.0, np.zeros(net.n_params)
    for ids in sequence.partition(d, 4):
        p, g = phi_grad(net, d.batches(ids, chunk=2))
        tot_phi += p
        tot_g += g
    assert tot_phi == pytest.approx(ref_phi, rel=1e-13)
    np.testing.assert_allclose(tot_g, ref_g, rtol=1e-12, atol=1e-14)
    # every sequence in exactly one worker, and the assignment is longest_first's
    parts = sequence.partition(d, 4)
    assert sorted(np.concatenate(parts).tolist()) == list(range(d.n_seq))
    a = longest_first(d.lengths, 4)
    assert all((a[p] == r).all() for r, p in enumerate(parts))


def test_cg_on_two_local_workers_matches_serial_cg():
    """Derivative epochs on 2 workers, forward epochs on 1 (separate counts, §3.2):
    the same CG trajectory as serial up to summation-order rounding."""
    d, net = data_and_net(n_seq=7)
    x0 = net.params.copy()
    serial = sequence.run_local_cg(d, x0, sizes=SIZES, workers_deriv=1, workers_fwd=1, iterations=5,
                                   chunk=3)
    par = sequence.run_local_cg(d, x0, sizes=SIZES, workers_deriv=2, workers_fwd=1, iterations=5,
                                chunk=3)
    assert len(par["deriv_compute_s"]) == 6 and len(par["fwd_compute_s"]) == sum(par["history"]["evals"])
    np.testing.assert_allclose(par["history"]["phi"], serial["history"]["phi"], rtol=1e-9)
    np.testing.assert_allclose(par["params"], serial["params"], rtol=1e-7, atol=1e-10)
    assert par["history"]["final_phi"] < 0.5 * par["history"]["phi"][0]  # it trains
    # the serial path is plain CG on Φ
    x = x0.copy()
    net2 = Elman(**SIZES, params=x0.copy())

    def fg(w):
        net2.params[:] = w
        return phi_grad(net2, d.batches(chunk=3))

    def f(w):
        net2.params[:] = w
        return phi(net2, d.batches(chunk=3))

    h = ConjugateGradient(net2.n_params).minimize(x, f, fg, iterations=5)
    np.testing.assert_allclose(h["phi"], serial["history"]["phi"], rtol=1e-12)
