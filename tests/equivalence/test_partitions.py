"""Shared-memory strategies of paper0 against the serial reference: the network
partition (§2.1) and the sequence partition (§2.2), on local processes."""
from __future__ import annotations

import numpy as np
import pytest

from engine.perfmodel import FREE

from engine.nets.elman import Elman, Sequences, phi, phi_grad
from engine.optim import ConjugateGradient
from engine.parallel import driver
from engine.perfmodel import MachineProfile, barrier_time_linear
from engine.schedule import longest_first
from reproduce.paper0 import network_partition as network, sequence

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


LINEAR = MachineProfile("linear", latency_s=2e-4, bandwidth_Bps=1e9, source="test", barrier_model="linear")


@pytest.mark.parametrize("workers", [1, 3])
def test_network_partition_emulated_equals_local_and_charges_each_barrier(workers):
    """The same worker on the emulated backend: the same gradient bits as the local run; every
    pattern step ends in a barrier charged (P − 1)·α (paper0's spin barrier), so a repeat
    lasts at least the busiest worker's compute plus steps·(P − 1)·α, and every worker
    waits at least that long in barriers."""
    d, net = data_and_net()
    preps = network.prepare(net, d)
    loc, _ = network.run_partitioned(net, preps, max(workers, 2), repeats=1)
    blocks = network.split_even(net.n_hidden, workers)
    res = driver.run(network.netpart_worker, workers=workers, backend="emulated", profile=LINEAR,
                     net=net, preps=preps, blocks=blocks, repeats=2)
    grad, secs = network.run_partitioned(net, preps, workers, repeats=2, backend="emulated",
                                         profile=LINEAR)
    np.testing.assert_array_equal(grad, loc)
    np.testing.assert_array_equal(np.concatenate([r["grad"] for r in res], axis=1), loc)
    sync = d.n_patterns * barrier_time_linear(LINEAR, workers)
    comp = np.stack([r["log"][:, 0] for r in res], axis=1)  # (repeats, P)
    comm = np.stack([r["log"][:, 1] for r in res], axis=1)
    assert comp.shape == (2, workers)
    assert np.all(comm >= sync * (1 - 1e-9))
    assert np.all((comp + comm).max(axis=1) >= comp.max(axis=1) + sync * (1 - 1e-9))
    assert secs >= sync * (1 - 1e-9)
    if workers == 1:  # nothing to wait for, nothing charged
        assert comm.max() == 0.0 and secs > 0
    # negative control: with free barriers the workers only wait for each other, far less
    free = driver.run(network.netpart_worker, workers=workers, backend="emulated",
                      profile=FREE, net=net, preps=preps, blocks=blocks, repeats=1)
    if workers > 1:
        assert min(r["log"][0, 1] for r in free) < sync


def test_block_seconds_is_one_workers_compute():
    d, net = data_and_net()
    preps = network.prepare(net, d)
    assert network.block_seconds(net, preps, 0) == 0.0
    t = network.block_seconds(net, preps, net.n_hidden, repeats=2)
    assert 0 < t < 10


def test_cg_emulated_equals_local():
    """The sequence partition's CG worker on the emulated backend: the same trajectory bits
    as on local processes; each epoch's slowest worker ends it, and every worker's time in
    the round's collectives is at least their modelled cost."""
    d, net = data_and_net(n_seq=7)
    x0 = net.params.copy()
    loc = sequence.run_local_cg(d, x0, sizes=SIZES, workers_deriv=3, workers_fwd=2, iterations=4, chunk=3)
    emu = sequence.train_cg(d, x0, sizes=SIZES, workers_deriv=3, workers_fwd=2, iterations=4, chunk=3,
                            backend="emulated", profile=LINEAR)
    np.testing.assert_array_equal(emu["history"]["phi"], loc["history"]["phi"])
    np.testing.assert_array_equal(emu["params"], loc["params"])
    assert emu["history"]["evals"] == loc["history"]["evals"]
    rec = emu["record"]
    assert rec.kind == "emulated" and rec.profile == "linear" and rec.workers == 3
    assert rec.rounds == len(emu["deriv_compute_s"]) + len(emu["fwd_compute_s"]) == 5 + sum(loc["history"]["evals"])
    n1 = (net.n_params + 1) * 8
    kinds = rec.extra["kinds"]
    cost = np.where(kinds == 1.0, LINEAR.collective_time("broadcast", 3, n1) + LINEAR.collective_time("allreduce", 3, n1),
                    LINEAR.collective_time("broadcast", 3, n1) + LINEAR.collective_time("allreduce", 3, 8))
    assert np.all(rec.comm_s >= cost[:, None] * (1 - 1e-9))
    assert np.all((rec.compute_s + rec.comm_s).max(axis=1) >= rec.compute_s.max(axis=1) + cost * (1 - 1e-9))
    assert rec.time_s >= rec.compute_s.sum(axis=0).max() + cost.sum() * (1 - 1e-9)
    np.testing.assert_array_equal(emu["deriv_reduce_s"], rec.comm_s[kinds == 1.0, 0])


def test_worker_seconds_from_the_emulated_workers():
    """Per-worker epoch compute from the emulated workers: one positive value per worker."""
    d, net = data_and_net(n_seq=9)
    one = sequence.worker_seconds(net, d, 1, deriv=True, chunk=3, repeats=2)
    two = sequence.worker_seconds(net, d, 2, deriv=True, chunk=3, repeats=2)
    fwd = sequence.worker_seconds(net, d, 3, deriv=False, chunk=3, repeats=2)
    assert one.shape == (1,) and two.shape == (2,) and fwd.shape == (3,)
    assert np.all(one > 0) and np.all(two > 0) and np.all(fwd > 0)


def _master_cg_reference(d, x0, *, workers_deriv, workers_fwd, iterations, chunk):
    """§2.2 written out serially: CG on Φ and ∂Φ/∂Y summed over the workers' longest-first
    shares in rank order (as the local allreduce sums), each share in chunks."""
    net = Elman(**SIZES, params=x0.copy())
    grad_parts = [d.batches(ids, chunk=chunk) for ids in sequence.partition(d, workers_deriv)]
    fwd_parts = [d.batches(ids, chunk=chunk) for ids in sequence.partition(d, workers_fwd)]

    def fg(w):
        net.params[:] = w
        vals = [phi_grad(net, b) for b in grad_parts]
        p, g = vals[0][0], vals[0][1].copy()
        for v, h in vals[1:]:
            p, g = p + v, g + h
        return p, g

    def f(w):
        net.params[:] = w
        total = phi(net, fwd_parts[0])
        for b in fwd_parts[1:]:  # a plain running sum (Python 3.12's sum() compensates)
            total += phi(net, b)
        return total

    x = x0.copy()
    return ConjugateGradient(net.n_params).minimize(x, f, fg, iterations=iterations), x


def test_sequence_partition_is_master_cg_of_the_data_parallel_family():
    """train_cg runs dp_worker with rank 0 as CG master (§2.2): the same bits as the serial
    write-out above, on 3 local workers with 3 derivative and 2 forward workers; rounds are
    evaluations. Negative control: the write-out with other chunks differs in the bits."""
    from dataclasses import replace

    d, net = data_and_net(n_seq=8)
    x0 = net.params.copy()
    r = sequence.run_local_cg(d, x0, sizes=SIZES, workers_deriv=3, workers_fwd=2, iterations=4, chunk=2)
    h, x = _master_cg_reference(d, x0, workers_deriv=3, workers_fwd=2, iterations=4, chunk=2)
    assert r["history"]["phi"] == h["phi"] and r["history"]["evals"] == h["evals"]
    assert r["history"]["final_phi"] == h["final_phi"]
    np.testing.assert_array_equal(r["params"], x)
    kinds = r["record"].extra["kinds"]
    assert (kinds == 1.0).sum() == 5 and (kinds == 2.0).sum() == sum(h["evals"]) == r["record"].rounds - 5
    h2, x2 = _master_cg_reference(d, x0, workers_deriv=3, workers_fwd=2, iterations=4, chunk=3)
    assert not np.array_equal(r["params"], x2)
    # the configuration is checked once: an optimizer that is no rule, and separate worker
    # counts on a split that does not deal longest-first, are refused
    cfg = sequence.configuration(workers_deriv=3, workers_fwd=2)
    assert cfg.problem(d) is None
    assert "optimizer must be" in replace(cfg, optimizer="cg").problem(d)
    assert "longest-first" in replace(cfg, split="shares", batch=10**6).problem(d)
