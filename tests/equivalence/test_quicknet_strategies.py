"""Network-parallel (pipelined) and pattern-parallel bunch training (Färber 1997, §2.1–2.4)
against an independent serial reference.

:func:`reference` is written from the paper, not from the strategies: one net,
for every bunch the summed gradient of ½Σ(y−t)² by MLP.backward and an SGD
step. With ``delay=1`` it follows the pipelined schedule of §2.3's table: the
gradient of bunch k is computed at the weights its forward pass used, and
applied after the forward pass of bunch k+1 (then the last one at the end).
The order of patterns is data, taken from the library's chunked order.
"""
from __future__ import annotations


import numpy as np
import pytest

from datasets.speech import N_STATIC, SpeechConfig, normalize, synthesize
from engine.nets.mlp import MLP
from engine.perfmodel import MachineProfile
from engine.optim import SGD
from reproduce.paper1.bunch import (BunchConfig, bunches, data_rng, epoch_chunks, init_rng,
                                     train_sequential)
from reproduce.paper1.network_parallel import hidden_blocks, np_emulated, train_network_parallel
from reproduce.paper1.pattern_bunch import pp_emulated, share, train_pattern_bunch

SIZES = (156, 9, 56)
ACT = "logistic"
SEED = 3
TOL = 1e-12


pytestmark = pytest.mark.usefixtures("watchdog")  # tests/conftest.py


@pytest.fixture(scope="module")
def corpus():
    c = synthesize(SpeechConfig(n_speakers=2, utts_per_speaker=2), rng=np.random.default_rng(0))
    normalize(c)
    return c


def cfg_(**kw):
    base = dict(bunch=7, lr=0.05, momentum=0.5, epochs=2, chunk=60)
    return BunchConfig(**{**base, **kw})


def reference(corpus, cfg, *, delay: int):
    net = MLP(SIZES, ACT)
    net.init_uniform(init_rng(SEED), scale=0.1)
    opt = SGD(net.n_params, lr=cfg.lr, momentum=cfg.momentum)
    rng = data_rng(SEED)
    pending = None
    for _ in range(cfg.epochs):
        for _lo, _hi, perm in epoch_chunks(corpus.n_frames, cfg, rng):
            for idx in bunches(perm, cfg.bunch):
                x, t = corpus.windows(idx), corpus.targets(idx)
                y, cache = net.forward(x)
                g = net.backward(y - t, cache)  # (n_params,) summed over the bunch
                count = 1 if cfg.update == "sum" else idx.size
                if delay:
                    if pending is not None:
                        opt.step(net.params, *pending)
                    pending = (g.copy(), count)
                else:
                    opt.step(net.params, g, count)
    if pending is not None:
        opt.step(net.params, *pending)
    return net.params.copy()


def init_params():
    net = MLP(SIZES, ACT)
    net.init_uniform(init_rng(SEED), scale=0.1)
    return net.params.copy()


def np_run(corpus, cfg, how):
    kw = dict(sizes=SIZES, activation=ACT, cfg=cfg, seed=SEED)
    if how == "inprocess":
        return train_network_parallel(corpus, workers=1, backend="inprocess", **kw)["params"]
    if how == "local2":
        return train_network_parallel(corpus, workers=2, backend="local", **kw)["params"]
    if how == "local3_dedicated_master":
        return train_network_parallel(corpus, workers=3, backend="local", dedicated_master=True,
                                      **kw)["params"]
    return np_emulated(corpus, slaves=4, **kw)["params"]


NP_HOW = ["inprocess", "local2", "local3_dedicated_master", "emulated4"]


@pytest.mark.parametrize("how", NP_HOW)
def test_np_equals_serial(corpus, how):
    cfg = cfg_()
    ref = reference(corpus, cfg, delay=0)
    assert np.abs(ref - init_params()).max() > 0.05  # the weights really moved
    np.testing.assert_allclose(np_run(corpus, cfg, how), ref, rtol=0, atol=TOL)


@pytest.mark.parametrize("how", NP_HOW)
def test_pipelined_np_equals_delayed_serial(corpus, how):
    cfg = cfg_(pipelined=True)
    ref = reference(corpus, cfg, delay=1)
    got = np_run(corpus, cfg, how)
    np.testing.assert_allclose(got, ref, rtol=0, atol=TOL)
    # Negative control: the delayed schedule is not the plain one, by far more than TOL.
    assert np.abs(got - reference(corpus, cfg_(), delay=0)).max() > 1e3 * TOL


@pytest.mark.parametrize("update", ["sum", "mean"])
def test_pp_equals_serial(corpus, update):
    cfg = cfg_(update=update)
    ref = reference(corpus, cfg, delay=0)
    kw = dict(sizes=SIZES, activation=ACT, cfg=cfg, seed=SEED)
    np.testing.assert_allclose(train_pattern_bunch(corpus, workers=2, backend="local", **kw)["params"],
                               ref, rtol=0, atol=TOL)
    # 3 shares of a bunch of 7 (sizes 2, 3, 2) and a last bunch smaller than 3
    np.testing.assert_allclose(pp_emulated(corpus, slaves=3, **kw)["params"], ref, rtol=0, atol=TOL)


def pp_reference(corpus, cfg, P: int, *, share_rule=share) -> tuple[np.ndarray, list]:
    """PP written out for bit-identity (§2.2): per bunch, each rank's share gradient,
    the P sums added in rank order (the allreduce), one SGD step. Returns the weights and
    the bytes per slave of every round (boundaries; per chunk 0; per bunch the share's
    inputs and targets, 2·N_wts)."""
    net = MLP(SIZES, ACT)
    net.init_uniform(init_rng(SEED), scale=0.1)
    opt = SGD(net.n_params, lr=cfg.lr, momentum=cfg.momentum)
    rng = data_rng(SEED)
    vb, N_o = cfg.value_bytes, SIZES[2]
    rounds = [corpus.starts.size * vb]
    for _ in range(cfg.epochs):
        for _lo, _hi, perm in epoch_chunks(corpus.n_frames, cfg, rng):
            rounds.append(0.0)
            for idx in bunches(perm, cfg.bunch):
                parts = []
                for p in range(P):
                    sub = idx[share_rule(idx.size, P, p)]
                    if sub.size == 0:
                        parts.append(np.zeros(net.n_params))
                        continue
                    y, cache = net.forward(corpus.windows(sub))
                    parts.append(net.backward(y - corpus.targets(sub), cache))
                g = parts[0].copy()
                for q in parts[1:]:
                    g += q
                opt.step(net.params, g, cfg.count(idx.size))
                m = idx[share_rule(idx.size, P, P - 1)].size  # the last slave's share
                rounds.append((m * (SIZES[0] + N_o) + 2 * net.n_params) * vb)
    return net.params.copy(), rounds


@pytest.mark.parametrize("backend,workers", [("inprocess", 1), ("local", 2), ("emulated", 3)])
def test_pp_configuration_bitwise_equals_written_out(corpus, backend, workers):
    """PP as a configuration of the data-parallel family (dp_worker + QuicknetFeed) gives
    PP's numbers bit for bit: weights and bytes per round. Negative control: the family's
    own share rule (the first b mod P get one more) gives other bits."""
    from engine.parallel.data_parallel import share as dp_share

    cfg = cfg_()
    ref, rounds = pp_reference(corpus, cfg, workers)
    r = train_pattern_bunch(corpus, sizes=SIZES, activation=ACT, cfg=cfg, seed=SEED,
                            workers=workers, backend=backend, profile=MachineProfile("test", 1e-6,
                                                                                     1e9, "test"))
    assert np.array_equal(r["params"], ref)
    assert np.array_equal(r["log"][:, -1, 2], rounds)
    if workers == 3:
        other, _ = pp_reference(corpus, cfg, workers, share_rule=dp_share)
        assert not np.array_equal(other, ref)


def test_sequential_equals_reference(corpus):
    cfg = cfg_()
    net = MLP(SIZES, ACT)
    net.init_uniform(init_rng(SEED), scale=0.1)
    train_sequential(net, corpus, cfg=cfg, seed=SEED)
    np.testing.assert_allclose(net.params, reference(corpus, cfg, delay=0), rtol=0, atol=TOL)


def test_compressed_input_same_numbers_fewer_bytes(corpus):
    """§2.4: the slaves build the windows from a chunk of frames. Same weights; the input
    bytes per slave are 13 values per frame of each chunk (plus its margins) instead of
    156 per pattern."""
    kw = dict(sizes=SIZES, activation=ACT, seed=SEED, workers=2, backend="local")
    plain = train_network_parallel(corpus, cfg=cfg_(epochs=1), **kw)
    comp = train_network_parallel(corpus, cfg=cfg_(epochs=1, compressed=True), **kw)
    np.testing.assert_allclose(comp["params"], plain["params"], rtol=0, atol=0)
    n, vb, No = corpus.n_frames, 8, SIZES[2]
    boundaries = corpus.starts.size * vb
    per_bunch = 2 * No * vb * n  # errors written and partial outputs read, every pattern
    assert plain["log"][:, 1, 2].sum() == boundaries + per_bunch + 156 * vb * n
    c = cfg_(epochs=1).chunk_frames
    rows = sum(min(n, hi + 4) - max(0, lo - 4) for lo, hi in
               ((lo, min(lo + c, n)) for lo in range(0, n, c)))
    assert comp["log"][:, 1, 2].sum() == boundaries + per_bunch + N_STATIC * vb * rows


def test_blocks_and_shares():
    assert hidden_blocks(10, 3) == [(0, 3), (3, 7), (7, 10)]
    assert hidden_blocks(10, 3, dedicated_master=True) == [(0, 0), (0, 5), (5, 10)]
    with pytest.raises(ValueError, match="at least one slave"):
        hidden_blocks(10, 1, dedicated_master=True)
    assert [share(7, 3, p) for p in range(3)] == [slice(0, 2), slice(2, 5), slice(5, 7)]
    with pytest.raises(ValueError, match="bunch must be"):
        BunchConfig(bunch=0, lr=0.1)
    with pytest.raises(ValueError, match="update must be"):
        BunchConfig(bunch=2, lr=0.1, update="avg")


def test_schedule_events_and_early_stop():
    from reproduce.paper1.bunch import schedule

    cfg = BunchConfig(bunch=4, lr=0.1, epochs=2, chunk=10)  # chunks of 12 frames
    ev = list(schedule(30, cfg, data_rng(0)))
    kinds = [k for k, _ in ev]
    assert kinds.count("end") == 2 and kinds[-1] == "end"
    seen = np.concatenate([v for k, v in ev[:kinds.index("end")] if k == "bunch"])
    assert sorted(seen.tolist()) == list(range(30))  # one epoch presents every frame once
    assert kinds.count("chunk") == 2 * 3 and kinds.count("bunch") == 2 * (3 + 3 + 2)
    short = list(schedule(30, BunchConfig(bunch=4, lr=0.1, epochs=2, chunk=10, max_bunches=5),
                          data_rng(0)))
    assert [k for k, _ in short].count("bunch") == 5 and short[-1] == ("end", 1)


@pytest.mark.parametrize("strategy,backend,workers,pipelined", [
    ("NP", "local", 2, False), ("NP", "emulated", 3, False), ("NP", "local", 2, True),
    ("NP", "emulated", 3, True), ("PP", "local", 2, False), ("PP", "emulated", 3, False)])
def test_epoch_accuracies_equal_sequential(corpus, strategy, backend, workers, pipelined):
    """The per-epoch training and CV frame accuracies (evaluated untimed in the one worker)
    equal sequential training's; pipelined NP evaluates the weights as they stand after the
    epoch, one update still pending, so it must differ from the sequential run there."""
    cfg = cfg_(epochs=3, pipelined=pipelined)
    net = MLP(SIZES, ACT)
    net.init_uniform(init_rng(SEED), scale=0.1)
    seq = train_sequential(net, corpus, cfg=cfg_(epochs=3), seed=SEED, cv=corpus)
    fn = train_network_parallel if strategy == "NP" else train_pattern_bunch
    seen = []
    r = fn(corpus, sizes=SIZES, activation=ACT, cfg=cfg, seed=SEED, workers=workers,
           backend=backend, cv=corpus, on_epoch=seen.append,
           profile=MachineProfile("test", 1e-6, 1e9, "test"))
    assert len(r["cv_acc"]) == len(r["train_acc_epochs"]) == 3
    if backend == "emulated":
        assert seen == [1, 2, 3]  # the callback runs on rank 0, here in this process
    if pipelined:
        assert r["cv_acc"] != seq["cv_acc"]
    else:
        assert r["cv_acc"] == seq["cv_acc"] and r["train_acc_epochs"] == seq["train_acc"]
    assert r["steps"].shape == (r["bunches"], 4) and (r["steps"][:, 2] > 0).all()
