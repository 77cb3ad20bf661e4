"""The components a configuration adds to dp_worker (engine.parallel.data_parallel.Hooks)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.parallel.data_parallel import DataParallel, Hooks, SGDRule, train_data_parallel
from reproduce import matrix as M

W = M.workloads()["mlp"]
GRAD = DataParallel(split="shares", combine="gradients", batch=6, epochs=3,
                    optimizer=SGDRule(lr=0.02, momentum=0.5))
UPD = DataParallel(split="random", combine="updates", reduce="sum", batch=3, epochs=2,
                   optimizer=SGDRule(lr=0.02))


def run(cfg, hooks=None, P=2):
    return train_data_parallel(W.make_net, W.data, cfg=cfg, seed=1, workers=P, backend="emulated",
                               profile=M.PROFILE, hooks=hooks)


@pytest.mark.parametrize("cfg", [GRAD, UPD], ids=["gradients", "updates"])
def test_hooks_that_add_nothing_change_nothing(cfg):
    a, b = run(cfg), run(cfg, Hooks())
    np.testing.assert_array_equal(a.params, b.params)
    np.testing.assert_array_equal(a.loss_curve, b.loss_curve)
    np.testing.assert_array_equal(a.bytes_sent, b.bytes_sent)


class CountSteps(Hooks):
    """One extra value per step (the rank + 1); stops after ``after`` steps or epochs."""

    extra = 1

    def __init__(self, *, steps=None, epochs=None, loss_count=True):
        self.steps, self.epochs, self.loss_count = steps, epochs, loss_count

    def start(self, comm, rep):
        self.seen, self.n_steps = [], 0

    def grad(self, comm, rep, idx, pad_len, out):
        out[0] = comm.rank + 1
        return rep.grad(idx, pad_len)

    def after_step(self, comm, rep, extras):
        self.seen.append(np.array(extras))
        self.n_steps += 1
        return self.steps is not None and self.n_steps >= self.steps

    def end_epoch(self, comm, rep, epoch):
        return self.epochs is not None and epoch + 1 >= self.epochs

    def result(self, comm, rep):
        return {"seen": self.seen}


def test_extras_travel_with_the_step_and_hooks_stop_training():
    P, per_epoch = 2, -(-W.data.n_patterns // GRAD.batch)
    plain = run(GRAD)
    rec = run(GRAD, CountSteps(steps=2), P)  # gradients: the extras are summed
    assert rec.rounds == 2 and np.all(rec.bytes_sent == plain.bytes_sent[0, 0] + 8)
    rec = run(GRAD, CountSteps(epochs=1), P)
    assert rec.rounds == per_epoch < plain.rounds
    np.testing.assert_array_equal(rec.params, run(replace(GRAD, epochs=1)).params)
    rec = run(UPD, CountSteps(steps=3, loss_count=False), P)  # updates: gathered, no loss/count
    n_params = W.make_net(np.random.default_rng(0)).n_params
    assert rec.rounds == 3 and np.all(rec.bytes_sent == (n_params + 1) * 8)


def test_combined_extras_reach_every_worker():
    from engine.parallel import driver
    from engine.parallel.data_parallel import dp_worker

    for cfg, want in ((GRAD, np.array([3.0])), (UPD, np.array([[1.0], [2.0]]))):
        res = driver.run(dp_worker, workers=2, backend="emulated", profile=M.PROFILE,
                         make_net=W.make_net, data=W.data, cfg=cfg, seed=1,
                         hooks=CountSteps(steps=1))
        for r in res:
            np.testing.assert_array_equal(r["seen"][0], want)


def test_only_updates_can_leave_loss_and_count_out():
    with pytest.raises(Exception, match="only combined updates"):
        run(GRAD, CountSteps(loss_count=False))


class SeeExtras(Hooks):
    """No extra values; records the shape of what after_step is handed."""

    def start(self, comm, rep):
        self.shapes = []

    def after_step(self, comm, rep, extras):
        self.shapes.append(extras.shape)
        return False

    def result(self, comm, rep):
        return {"shapes": self.shapes}


@pytest.mark.parametrize("cfg", [GRAD, UPD], ids=["gradients", "updates"])
def test_no_extras_means_an_empty_block(cfg):
    from engine.parallel import driver
    from engine.parallel.data_parallel import dp_worker

    res = driver.run(dp_worker, workers=2, backend="emulated", profile=M.PROFILE,
                     make_net=W.make_net, data=W.data, cfg=cfg, seed=1, hooks=SeeExtras())
    shapes = set(res[0]["shapes"])
    assert shapes == ({(2, 0)} if cfg is UPD else {(0,)})  # never the whole message
