"""paper2's emulated runs under --profile: the cache key follows the profile (never a
result emulated under one profile for another), the measured runs get emulated twins,
and the pairs and labels of the validation (issue 12)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from engine.perfmodel import MachineProfile
from reproduce.harness import Run
from reproduce.paper2 import PAPER
from reproduce.paper2.report import label_rows, validation_pairs
from reproduce.paper2.setup import DEFAULT
from reproduce.paper2.tasks import make_tasks, profile_key
from reproduce.runner import Task

A = MachineProfile("a", 1e-6, 1e9, source="test")

def _tasks(workers, profile=None):
    return make_tasks(Run(PAPER, DEFAULT, "default", workers, "local", 1, "/nonexistent", profile=profile))

def test_without_a_profile_the_task_keys_are_as_before():
    assert profile_key(None) == {}
    em = [t for t in _tasks(2) if t.kind == "emulated"]
    # the default's emulated runs: 6 workers on every seed (the 23 % claim rests on them), the
    # twin of the measured 2 on the first seed only (setup.emulated_runs); no allreduce in the
    # default (setup.allreduce_workers)
    assert [(t.name, t.params) for t in em] == [
        ("train", {"Q": 6, "workers": 2, "run": 0, "seed": 1}),
        *[("train", {"Q": 6, "workers": 6, "run": i, "seed": 1 + i}) for i in range(5)]]
    assert {t.params["workers"] for t in _tasks(1) if t.kind == "emulated"} == {2, 6}  # nothing measured


def test_the_default_trains_five_seeds_where_the_claims_need_them():
    """Issue 30: the training claims rest on 5 seeds: every Q's 1-worker run and the measured
    model-averaging run; the ablations stay on the first seed."""
    me = [t for t in _tasks(2) if t.kind == "measured" and t.name == "train"]
    seeds = lambda f: sorted(t.params["seed"] for t in me if f(t.params))
    for q in DEFAULT.Qs:
        assert seeds(lambda p: p["workers"] == 1 and p["Q"] == q and "order" not in p) == [1, 2, 3, 4, 5]
    assert seeds(lambda p: p["workers"] == 2) == [1, 2, 3, 4, 5]
    assert seeds(lambda p: p.get("order") == "random") == [1]
    em = [t for t in _tasks(2) if t.kind == "emulated"]
    assert sorted(t.params["seed"] for t in em if t.params["workers"] == 6) == [1, 2, 3, 4, 5]
    # control: on 6 cores the 6 workers are measured on every seed and nothing is emulated
    # beyond them; only the first seed's twins remain
    assert {(t.params["workers"], t.params["seed"]) for t in _tasks(6) if t.kind == "emulated"} == {(2, 1), (6, 1)}
    # control: the --full setup runs the ablations and the emulated runs on more seeds
    full = make_tasks(Run(PAPER, replace(DEFAULT, emulated_runs=5, ablation_runs=3, allreduce_workers=(2,)),
                          "full", 2, "local", 1, "/nonexistent"))
    assert sorted(t.params["seed"] for t in full if t.kind == "emulated" and t.params["workers"] == 6) == [1, 2, 3, 4, 5]
    assert sorted(t.params["seed"] for t in full if t.name == "allreduce" and t.kind == "measured") == [1, 2, 3]

def test_the_cache_key_of_an_emulated_task_follows_the_profile():
    ka, kb = profile_key(A), profile_key(replace(A, latency_s=2e-6))
    assert ka["profile"] == kb["profile"] == "a" and ka != kb and ka == profile_key(replace(A))
    extra = {"paper": "paper2", "code": "x"}
    plain = {t.config(extra)["name"] + str(t.params["workers"]): t.config(extra) for t in _tasks(2)
             if t.kind == "emulated"}
    with_a = [t for t in _tasks(2, A) if t.kind == "emulated"]
    assert all(t.params["profile_sha1"] == ka["profile_sha1"] for t in with_a)
    assert all(t.config(extra) != plain[t.name + str(t.params["workers"])] for t in with_a)
    measured = [t.params for t in _tasks(2, A) if t.kind == "measured"]
    assert measured == [t.params for t in _tasks(2) if t.kind == "measured"]  # measured: no profile

def _run(P, seconds, epochs=4):
    return {"time_s": [seconds * (i + 1) / epochs for i in range(epochs)], "epochs": epochs, "profile": "here"}

def test_pairs_and_labels():
    p = {"Q": 6, "run": 0, "seed": 1}
    results = [(Task("train", "measured", 2, {**p, "workers": 2}), _run(2, 8.0)),
               (Task("train", "emulated", 1, {**p, "workers": 2}), _run(2, 6.0)),
               (Task("allreduce", "measured", 4, {**p, "workers": 4}), _run(4, 4.0)),  # > cores
               (Task("allreduce", "emulated", 1, {**p, "workers": 4}), _run(4, 2.0)),
               (Task("train", "measured", 1, {**p, "workers": 1}), _run(1, 10.0))]
    pairs = validation_pairs(results, cores=2)
    assert [(x["P"], x["config"]) for x in pairs] == [(2, "model averaging, Q = 6, seed 1")]
    assert pairs[0]["emulated_s"] / pairs[0]["measured_s"] == pytest.approx(0.75)
    rows = [{"kind": "emulated", "condition": "workers=6;Q=6;profile=here", "note": "n"},
            {"kind": "emulated", "condition": "workers=2;Q=6;profile=here", "note": "n"},
            {"kind": "measured", "condition": "workers=4;Q=6;scheme=allreduce", "note": ""},
            {"kind": "measured", "condition": "workers=2;Q=6;scheme=average", "note": ""}]
    label_rows(rows, pairs, cores=2)
    assert rows[0]["note"].startswith("n; emulated (here) beyond the measured P ≤ 2") and "0.75×" in rows[0]["note"]
    assert rows[1]["note"] == "n"
    assert rows[2]["condition"].endswith(";oversubscribed=yes") and "oversub" not in rows[3]["condition"]
