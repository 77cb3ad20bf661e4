"""paper2's Fig. 4 timings at other k (reproduce/paper2/timing_k.py): padded cells against the
cost model of eq. 1–2, no update, and cache keys that leave every existing task's alone."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from engine.schedule import optimal_buckets
from reproduce.harness import Paper
from reproduce.paper2 import PAPER, setup, tasks, timing_k
from reproduce.paper2.tasks import dataset_of
from reproduce.runner import code_hash

TINY = replace(setup.QUICK, n_samples=60)


def test_cells_follow_eq1_and_eq2():
    d = dataset_of(TINY)
    l = d.lengths[np.asarray(d.train)]  # (n_train,)
    out = timing_k.epoch_times_k(TINY, seed=1, k=4, configs=timing_k.CONFIGS, reps=2)
    # eq. 1: every batch padded to the longest sequence: n × max length, every repetition
    assert out["optimal:1"]["cells"] == [l.size * int(l.max())] * 2
    # eq. 2: each sequence padded to its bucket's bound (the paper's Q models)
    for q in (2, 3):
        b = np.asarray(optimal_buckets(l, q))
        want = int(b[np.searchsorted(b, l)].sum())
        assert out[f"optimal:{q}"]["cells"] == [want] * 2
    # random batches: between the real cells and eq. 1's (negative control: not eq. 1's)
    for c in out["random:1"]["cells"]:
        assert int(l.sum()) <= c < l.size * int(l.max())
    assert all(t > 0 for r in out.values() if isinstance(r, dict) for t in r["time_s"])


def test_no_update_is_made():
    """Timing only: the model the passes run on is the initial one throughout."""
    from reproduce.paper2 import bucketed

    seen = []

    class Spy(bucketed.SeqWorker):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.p0 = self.net.params.copy()
            seen.append(self)

    timing_k.SeqWorker, keep = Spy, timing_k.SeqWorker
    try:
        timing_k.epoch_times_k(TINY, seed=1, k=16, configs=(("optimal", 3),), reps=1)
    finally:
        timing_k.SeqWorker = keep
    assert seen and all(np.array_equal(w.net.params, w.p0) for w in seen)
    # negative control: an epoch of train_portion (what Fig. 4's training epochs time) does move them
    w = seen[0]
    w.train_portion(w.schedule(np.asarray(dataset_of(TINY).train), None, batch_size=16,
                               rng=np.random.default_rng(0))[:1])
    assert not np.array_equal(w.net.params, w.p0)


def test_existing_task_keys_are_left_alone():
    """A rebuild from cache computes only the new tasks: the paper's code hash covers
    setup.py, tasks.py and the training they run (bucketed.py), not this module; its old
    tasks come first and unchanged, and the new ones carry this module's hash in their
    parameters."""
    assert Paper.of(setup, tasks).code == ("reproduce/paper2/setup", "reproduce/paper2/tasks")
    assert PAPER.code == Paper.of(setup, tasks).code + ("reproduce/paper2/bucketed",)
    run = SimpleNamespace(setup=setup.DEFAULT, workers=2, seed=1, profile=None)
    old, new = tasks.make_tasks(run), PAPER.make_tasks(run)
    assert new[:len(old)] == old
    extra = new[len(old):]
    assert [t.params["k"] for t in extra] == list(timing_k.BATCH_SIZES) == [4, 16, 64, 256]
    assert {t.params["timing_code"] for t in extra} == {code_hash("reproduce/paper2/timing_k")}
    assert all(t.name == timing_k.NAME and t.kind == "measured" and t.workers == 1 for t in extra)
