"""paper2 §III.B: the data-parallel schemes against the serial reference and each other,
on local processes, MPI and emulation; eq. (3) on a worked case."""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from datasets.handwriting import N_CLASSES, handwriting
from engine.perfmodel import MachineProfile, allreduce_time
from engine.schedule import optimal_buckets
from engine.parallel.reference import serial_reference
from reproduce.paper2.bucketed import (SeqConfig, SeqData, SeqWorker, dp_config, net_maker, subset,
                                        train_bucketed)


@lru_cache(maxsize=1)
def _data():
    d = handwriting(48, seed=11, n_writers=6, mean_extra_words=0.3, max_words=2,
                    val_fraction=0.1)
    return SeqData(d.seqs, d.labels), d.train, d.val


def small_problem(scheme: str):
    data, tr, va = _data()
    cfg = SeqConfig(n_hidden=6, batch_size=4, n_buckets=3, epochs=2, scheme=scheme, beta=1e-3)
    return data, N_CLASSES, tr, va, cfg


def test_gradient_allreduce_on_2_processes_equals_serial_with_double_batches():
    data, K, tr, va, cfg = small_problem("allreduce")
    par = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=5, workers=2,
                         backend="local")
    ser = train_bucketed(data, K, train_idx=tr, val_idx=va, seed=5,
                         cfg=replace(cfg, batch_size=2 * cfg.batch_size))
    np.testing.assert_allclose(par.params, ser.params, rtol=0, atol=1e-10)
    np.testing.assert_allclose(par.extra["val_loss"], ser.extra["val_loss"], rtol=1e-9)
    assert par.extra["cells"].sum() == ser.extra["cells"].sum()


def test_model_averaging_local_equals_emulated():
    data, K, tr, va, cfg = small_problem("average")
    loc = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=5, workers=2,
                         backend="local")
    prof = MachineProfile("test", 1e-5, 1e9, "test")
    emu = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=5, workers=2,
                         backend="emulated", profile=prof)
    np.testing.assert_array_equal(loc.params, emu.params)
    np.testing.assert_allclose(loc.extra["val_loss"], emu.extra["val_loss"], rtol=1e-12)
    cost = allreduce_time(prof, 2, (loc.params.size + 2) * 8)
    # one allreduce per epoch: the last worker to arrive waits only for its cost, the
    # others also for the slowest one's training; the epoch lasts at least the slowest
    # worker's compute plus the cost
    np.testing.assert_allclose(emu.comm_s.min(axis=1), cost, rtol=1e-9, atol=0)
    assert np.all(emu.comm_s >= cost * (1 - 1e-9))
    assert np.all((emu.compute_s + emu.comm_s).max(axis=1) >= emu.compute_s.max(axis=1) + cost * (1 - 1e-9))
    np.testing.assert_array_equal(emu.bytes_sent, loc.bytes_sent)
    assert emu.kind == "emulated" and loc.kind == "measured"


def test_gradient_allreduce_local_equals_emulated():
    data, K, tr, va, cfg = small_problem("allreduce")
    loc = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=5, workers=2,
                         backend="local")
    prof = MachineProfile("test", 1e-5, 1e9, "test")
    emu = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=5, workers=2,
                         backend="emulated", profile=prof)
    np.testing.assert_allclose(emu.params, loc.params, rtol=0, atol=1e-12)
    np.testing.assert_allclose(emu.extra["val_loss"], loc.extra["val_loss"], rtol=1e-10)
    assert emu.extra["cells"].sum() == loc.extra["cells"].sum()
    # one allreduce per global batch of P·k sequences, bytes counted as the measured run does
    np.testing.assert_array_equal(emu.bytes_sent, loc.bytes_sent)
    n_batches = emu.bytes_sent[:, 0] / ((loc.params.size + 2) * 8)
    t_comm = allreduce_time(prof, 2, (loc.params.size + 2) * 8)
    assert np.all(emu.comm_s.min(axis=1) >= n_batches * t_comm * (1 - 1e-12))
    # negative control: a different batch size is a different run
    other = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=replace(cfg, batch_size=2),
                           seed=5, workers=2, backend="emulated", profile=prof)
    assert not np.allclose(other.params, loc.params, atol=1e-6)


def test_eq3_model_average_with_weight_decay_worked():
    """One epoch on 2 workers, by hand: each worker trains its half (every 2nd sequence
    of the shared permutation); V(1) = mean(v_0, v_1) − β·V(0)."""
    data, K, tr, va, cfg = small_problem("average")
    cfg = replace(cfg, epochs=1)
    ws = [SeqWorker(data, K, cfg=cfg, seed=7, rank=p, size=2) for p in range(2)]
    V0 = ws[0].net.params.copy()
    assert np.array_equal(V0, ws[1].net.params)  # identical initial models
    bounds = optimal_buckets(data.lengths[tr], cfg.n_buckets)
    for p, w in enumerate(ws):
        perm = w.order_rng.permutation(tr)
        w.train_portion(w.schedule(perm[p::2], bounds, batch_size=cfg.batch_size, rng=w.rng))
    want = (ws[0].net.params + ws[1].net.params) / 2 - cfg.beta * V0
    emu = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=7, workers=2,
                         backend="emulated", profile=MachineProfile("t", 0, 1e9, "t"))
    np.testing.assert_allclose(emu.params, want, rtol=0, atol=1e-14)


def test_serial_training_lowers_validation_loss():
    data, K, tr, va, cfg = small_problem("average")
    rec = train_bucketed(data, K, train_idx=tr, val_idx=va, seed=1,
                         cfg=replace(cfg, epochs=4, n_hidden=12))
    v = rec.extra["val_loss"]
    assert v[-1] < v[0] and np.all(np.isfinite(v))


def test_bad_backend_and_scheme():
    data, K, tr, va, cfg = small_problem("average")
    with pytest.raises(ValueError, match="scheme"):
        SeqConfig(scheme="ring")
    with pytest.raises(ValueError, match="exactly 1 worker"):
        train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=1, workers=2)
    with pytest.raises(ValueError, match="profile"):
        train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=1, workers=2,
                       backend="emulated")


@pytest.mark.parametrize("scheme", ["average", "allreduce"])
def test_mpi_equals_local(tmp_path, scheme):
    from mpi_ppt_main import HERE, launch_or_skip  # the test folders are on sys.path (tests/conftest.py)

    out = tmp_path / "seq.npz"
    launch_or_skip(2, ["--scheme", scheme, "--seed", "3", "--out", str(out)], timeout=90,
                   script=HERE / "mpi_seq_main.py")
    data, K, tr, va, cfg = small_problem(scheme)
    loc = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=3, workers=2,
                         backend="local")
    z = np.load(out)
    np.testing.assert_allclose(z["params"], loc.params, rtol=0, atol=1e-12)


def test_padding_past_the_end_changes_no_update():
    """Why Fig. 3's eq. 1 curve (every batch padded to the longest sequence) may reuse the
    random-batch run: the LSTM runs forward in time and CTC reads each sequence's own length,
    so extra padded steps change neither the loss nor the gradient, only the time."""
    data, K, tr, va, cfg = small_problem("average")
    w = SeqWorker(data, K, cfg=cfg, seed=2)
    idx = np.asarray(tr)[:3]
    loss_own, g_own = w.grad(idx)  # padded to the batch's longest
    g_own = g_own.copy()
    longest = int(data.lengths.max())
    assert longest > data.lengths[idx].max()
    loss_max, g_max = w.grad(idx, longest)
    assert loss_max == pytest.approx(loss_own, rel=1e-13)
    np.testing.assert_allclose(g_max, g_own, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("scheme", ["average", "allreduce"])
def test_both_schemes_are_data_parallel_configurations(scheme):
    """train_bucketed is dp_worker with dp_config: its parameters equal the family's serial
    reference of that configuration on the training sequences (bounds from the whole
    training set, eq. (3) decay each epoch); the reference with the bounds taken from each
    portion / without the decay is a different run."""
    data, K, tr, va, cfg = small_problem(scheme)
    cfg = replace(cfg, beta=0.05, epochs=3)
    emu = train_bucketed(data, K, train_idx=tr, val_idx=va, cfg=cfg, seed=4, workers=3,
                         backend="emulated", profile=MachineProfile("t", 0, 1e9, "t"))
    dp, train = dp_config(cfg, 3), subset(data, tr)
    ref = serial_reference(net_maker(data, K, cfg), train, dp, workers=3, seed=4)
    np.testing.assert_allclose(emu.params, ref, rtol=0, atol=1e-10)
    assert emu.rounds == cfg.epochs  # one round per epoch in both schemes
    wrong = replace(dp, beta=0.0) if scheme == "allreduce" else replace(dp, buckets=replace(dp.buckets, bounds_from="items"))
    bad = serial_reference(net_maker(data, K, cfg), train, wrong, workers=3, seed=4)
    assert np.max(np.abs(emu.params - bad)) > 1e-6


def test_model_averaging_refuses_a_worker_without_sequences():
    """Eq. (3) over P workers needs a sequence for each; one short of that is refused
    up front with the counts (it crashed inside the batching), P = len works."""
    data, K, tr, va, cfg = small_problem("average")
    prof = MachineProfile("test", 0.0, float("inf"), "test")
    with pytest.raises(ValueError, match=f"needs at least 4 training sequences .* got 3"):
        train_bucketed(data, K, train_idx=tr[:3], val_idx=va, cfg=replace(cfg, epochs=1), seed=5,
                       workers=4, backend="emulated", profile=prof)
    rec = train_bucketed(data, K, train_idx=tr[:4], val_idx=va, cfg=replace(cfg, epochs=1), seed=5,
                         workers=4, backend="emulated", profile=prof)
    assert rec.workers == 4
