"""The result models of every paper (issue 33; reproduce/result_schema.py): a cached result
is checked against its task's pydantic model before use, so the model has to accept what
``run_task`` returns and refuse what it does not.

Per paper, a hand-written result of every task kind, built as its ``run_task`` builds it
(small values, as read back from the JSON cache: lists where the code returns tuples),
passes; the controls fail: ``{}``, the example less any one of its keys, with any one of
its numbers replaced by a string, with an unknown key added, and another task's or another
paper's example. And every task ``make_tasks`` makes (default, --quick, --full) has a model.
No training: only ``make_tasks`` and the models run here."""
from __future__ import annotations

import copy
import json
import math
import types
import typing

import pytest

from pydantic import BaseModel

from engine.perfmodel import MachineProfile
from reproduce.paper0 import PAPER as P0
from reproduce.paper1 import PAPER as P1
from reproduce.paper2 import PAPER as P2
from reproduce.paper3 import PAPER as P3
from reproduce.paper4 import PAPER as P4
from reproduce.result_schema import Seconds, problem
from reproduce.runner import Task

PAPERS = {"paper0": P0, "paper1": P1, "paper2": P2, "paper3": P3, "paper4": P4}
LOAD = [0.5, 0.4, 0.3]  # os.getloadavg() as read back from the cache


# ---- one example per task kind, as run_task returns it ------------------------------------
def _p0():
    acc = {"phoneme": 0.5, "stress": 0.6, "both": 0.4}
    return [
        (Task("netpart", "emulated", 1, {"net": "radio", "run": 0, "seed": 1}),
         {"block_s": {"1": 0.002, "2": 0.003}, "steps": 100, "patterns": 100, "prep_s": 0.01,
          "fwd_s": 0.02, "n_params": 2583, "load": LOAD}),
        (Task("netpart", "measured", 2, {"net": "radio", "workers": 2, "run": 0, "seed": 1}),
         {"serial_s": 0.01, "parallel_s": 0.006, "load": LOAD}),
        (Task("seqpart", "emulated", 1, {"run": 0, "seed": 1}),
         {"deriv": {"1": [0.4], "2": [0.2, 0.21]}, "fwd": {"1": [0.01], "2": [0.005, 0.006]},
          "load": LOAD, "n_params": 3000}),
        (Task("seqpart", "measured", 2, {"workers": 2, "run": 0, "seed": 1}),
         {"1": {"deriv_s": 0.4, "fwd_s": 0.01}, "2": {"deriv_s": 0.22, "fwd_s": 0.006}, "load": LOAD}),
        (Task("vectorise", "measured", 1, {"run": 0, "seed": 1}),
         {"forward_deriv_s": {"1": 0.5, "16": 0.2}, "n_params": 3000, "patterns": 800,
          "bptt_s": 0.1, "fwd_s": 0.01, "loop_s": 0.3, "load": LOAD}),
        (Task("train", "measured", 2, {"run": 0, "seed": 1}),
         {"accuracy": acc, "phi": [2.0, 1.5], "final_phi": 1.4, "evals": [3, 4], "restarts": 1,
          "wall_s": 1.2, "iterations": 2, "workers_deriv": 2, "iterations_run": 2, "useful": 2,
          "stopped": "iterations", "workers_fwd": 1, "deriv_s": 0.3, "fwd_s": 0.02, "load": LOAD}),
    ]


WER = {"penalty": 2.0, "dev_wer": [0.5, 0.4], "penalties": [0.0, 2.0], "test_wer": 0.45,
       "test_wer_flat_prior": 0.5, "n_dev_utts": 3, "n_test_utts": 3, "n_test_words": 12}


def _p1():
    perf = {"strategy": "NP", "hidden": 400, "P": 2, "bunch": 48, "pipelined": True,
            "compressed": True, "seed": 1}
    train = {"cv_acc": [0.3, 0.4], "train_acc": [0.35, 0.45], "bunches": 100, "n_train": 1200,
             "n_cv": 300}
    return [
        (Task("calibrate", "measured", 1, {"seed": 1}),
         {"fits": {"48": {"c1": 1e-9, "c2": -1e-8, "c1_fwd": 3e-10, "c2_fwd": 0.0, "hidden": [100, 250],
                          "train_s_per_pattern": [1e-6, 2e-6], "fwd_s_per_pattern": [3e-7, 6e-7]}},
          "c_h": 1e-6, "c_h_fwd": 2e-7, "latency_s": 5e-6, "bandwidth_Bps": 3e8,
          "profile_source": "measured at start-up"}),
        (Task("emul", "emulated", 1, {"strategy": "NP", "hidden": 400, "bunch": 48, "forward": False}),
         {"rows": [{"P": 1, "T_c": 0.01, "T_h": 0.001, "T_c_reps": [0.01, 0.011],
                    "T_h_reps": [0.001, 0.001]}]}),
        (Task("perf", "measured", 2, perf),
         {"wall": 0.5, "bunches": 20, "patterns": 960, "mcups": 30.0, "mcups_low": 28.0,
          "mcups_high": 31.0, "repeats": 1, "compute_s": 0.4, "comm_s": 0.05,
          "bytes_per_pattern_per_slave": 624.0, "loadavg": LOAD}),
        (Task("fwd", "measured", 2, {"strategy": "PP", "hidden": 400, "P": 2, "bunch": 1000, "seed": 1}),
         {"patterns": 960, "repeats": 1, "wall": 0.05, "mcps": 100.0, "mcps_low": 90.0,
          "mcps_high": 110.0, "serial_wall": 0.08, "serial_mcps": 60.0, "over_serial": 1.6,
          "loadavg": LOAD}),
        (Task("train", "measured", 1, {"mode": "sequential", "hidden": 400, "bunch": 96, "lr": 0.003,
                                       "seed": 1}), train),
        (Task("train", "emulated", 1, {"mode": "PP", "hidden": 400, "slaves": 4, "bunch": 1000,
                                       "lr": 0.0006, "seed": 1}), {**train, "wer": WER}),
        (Task("warmup", "measured", 2, {"strategy": "PP", "hidden": 400, "P": 2, "bunch": 1000, "bunches": 8,
                                        "run": 0, "seed": 1}),
         {"compute_s": [0.07, 0.03] + [0.027] * 6, "comm_s": [0.001] * 8, "wall": 0.4, "loadavg": LOAD}),
        (Task("lr_sweep", "measured", 1, {"mode": "sequential", "hidden": 400, "bunch": 5000, "lr": 0.00048,
                                          "lr_times": 4.0, "seed": 1}), train),
    ]


def _profile() -> dict:
    here = MachineProfile("here", 7e-6, 3.7e8, source="measured at start-up")
    return json.loads(json.dumps(here.as_dict()))


def _p2():
    epoch = {"epochs": 2, "compute_s": [1.0, 1.0], "comm_s": [0.0, 0.0], "time_s": [1.0, 2.0],
             "val_loss": [60.0, 55.0], "val_loss0": 500.0, "val_cer": [1.0, 0.9],
             "train_loss": [90.0, 50.0], "cells": [37594.0, 37594.0], "load": [0.5, 0.6]}
    measured = {**epoch, "profile": "", "kind": "measured", "profile_params": None}
    emulated = {**epoch, "comm_s": [0.01, 0.01], "profile": "here", "kind": "emulated",
                "profile_params": _profile()}
    p = {"Q": 6, "workers": 2, "run": 0, "seed": 1}
    one = {"method": "random", "Q": 1, "time_s": [1.0, 1.1], "cells": [500, 500], "waste": [0.3, 0.3]}
    three = {"method": "optimal", "Q": 3, "time_s": [0.5, 0.6], "cells": [380, 380],
             "waste": [0.08, 0.08]}
    k = {"k": 4, "batches": 10}
    return [
        (Task("epoch_times", "measured", 1, {"seed": 1}),
         {"random:1": one, "optimal:3": three, "_load": LOAD}),
        (Task("epoch_times_k", "measured", 1, {"seed": 1, "k": 4, "reps": 1, "timing_code": "0" * 16}),
         {"random:1": {**one, **k}, "optimal:3": {**three, **k}, "_load": LOAD}),
        (Task("train", "measured", 1, {**p, "workers": 1}), measured),
        (Task("train", "measured", 2, p), measured),
        (Task("train", "emulated", 1, p), emulated),
        (Task("allreduce", "measured", 2, p), measured),
        (Task("allreduce", "emulated", 1, p), emulated),
    ]


def _p3():
    common = {"converged": True, "rounds": 3, "epochs": 300.0, "final_mse": 0.01, "max_epochs": 1000.0}
    p = {"nodes": 2, "local_epoch": 8, "run": 0, "seed": 1}
    return [
        (Task("serial", "measured", 1, {"nodes": 1, "run": 0, "seed": 1}), {**common, "time_s": 0.5}),
        (Task("pattern", "emulated", 1, p), {**common, "sum_max_compute_s": 0.2, "msg_bytes": 800.0}),
        (Task("pattern", "measured", 2, p),
         {**common, "time_s": 0.3, "comm_share": 0.1, "msg_bytes": 800.0}),
    ]


EXCHANGE = {"t_startup": 5e-6, "t_data": 1e-9, "P": 2, "sizes": [1, 16], "seconds": [5e-6, 6e-6],
            "reps": 100}
NODE_MEASURED = {"serial_s": 0.002, "time_per_pass_s": 0.0015, "fastest_pass_s": 0.0014,
                 "mean_s": 0.0016, "comm_share": 0.2, "loadavg": LOAD}


def _p4():
    emulated = {"serial_s": 0.002, "compute_per_pass_s": 0.001, "compute_fastest_pass_s": 0.0009,
                "compute_per_pass_mean_s": 0.0011, "reps": 10, "exchanges": {"4096": 6},
                "loadavg": LOAD}
    base = {"width": 132, "passes": "forward", "run": 0, "seed": 1}
    return [
        (Task("calibrate_exchange", "measured", 2, {"backend": "local", "seed": 1}), EXCHANGE),
        (Task("calibrate_exchange_mpi", "measured", 1, {"backend": "mpi", "seed": 1}),
         {"available": True, **EXCHANGE}),
        (Task("calibrate_exchange_mpi", "measured", 1, {"backend": "mpi", "seed": 1}),
         {"available": False, "why": "no .venv/bin/mpiexec"}),
        (Task("calibrate_t_a", "measured", 1, {"width": 132, "seed": 1}),
         {"t_a": 1e-9, "forward_s": 1e-4, "forward_s_min": 9e-5, "forward_s_max": 2e-4, "ops": 100000,
          "reps": 10, "sizes": [132, 132, 132], "B": 1}),
        (Task("sweep", "measured", 1, base),
         {"emulated": {"1": emulated, "2": emulated}, "measured": {"1": NODE_MEASURED}}),
        (Task("wide", "emulated", 1, {**base, "width": 8192, "timed": 10}),
         {"emulated": {"16": emulated}, "measured": {}}),
        (Task("node_mpi", "measured", 2, {**base, "nodes": 2}), NODE_MEASURED),
        (Task("typical", "measured", 2, {"seed": 1, "nodes": 2}),
         {"epoch1_output": [0.49, -0.32], "after_1_update": [0.5, -0.33],
          "epoch_outputs": {"1": [0.49, -0.32], "10": [0.6, -0.5]}, "after_all_updates": [0.9, -0.9],
          "epochs": 10, "workers": 2, "max_abs_diff_vs_serial_outputs": 0.0,
          "max_abs_diff_vs_serial_params": 1e-17, "wall_s": 0.1, "backend": "local"}),
    ]


EXAMPLES = {"paper0": _p0(), "paper1": _p1(), "paper2": _p2(), "paper3": _p3(), "paper4": _p4()}
# keys a result may lack: paper1's Table 2 word error (only Table 2's configurations), a
# paper2 timing's configurations (any of setup.timing's, at least one)
OPTIONAL = {("paper1", "train", "measured"): {"wer"},
            ("paper2", "epoch_times", "measured"): {"random:1", "optimal:3"},
            ("paper2", "epoch_times_k", "measured"): {"random:1", "optimal:3"}}
# nested maps whose keys are values (workers, block sizes, chunks, bunches, bytes, epochs)
FREE_KEYS = {"block_s", "deriv", "fwd", "forward_deriv_s", "fits", "exchanges", "epoch_outputs",
             "emulated", "measured"}
CASES = [(paper, task, res) for paper, ex in EXAMPLES.items() for task, res in ex]
IDS = [f"{paper}-{task.name}-{task.kind}-{i}" for i, (paper, task, _) in enumerate(CASES)]


def _model(paper, task):
    return PAPERS[paper].result_model(task)


def _leaves(obj, types, path=()):
    """The path of every value of ``types`` (never a bool) in ``obj``."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, types, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, types, path + (i,))
    elif isinstance(obj, types) and not isinstance(obj, bool):
        yield path


def _set(obj, path, value):
    obj = copy.deepcopy(obj)
    at = obj
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = value
    return obj


@pytest.mark.parametrize("paper", list(PAPERS))
def test_the_harness_reads_each_papers_result_model(paper):
    assert PAPERS[paper].result_model is not None
    assert PAPERS[paper].result_model.__module__ == f"reproduce.{paper}.tasks"


@pytest.mark.parametrize("paper,task,res", CASES, ids=IDS)
def test_what_run_task_returns_passes(paper, task, res):
    model = _model(paper, task)
    assert model is not None
    assert problem(model, res) is None
    # as the cache holds it: JSON, NaN and ±inf kept (reproduce/store.py dumps, strict=False)
    assert problem(model, json.loads(json.dumps(res, allow_nan=True))) is None


@pytest.mark.parametrize("paper,task,res", CASES, ids=IDS)
def test_a_result_of_the_wrong_shape_fails(paper, task, res):
    model = _model(paper, task)
    assert problem(model, {}) is not None
    assert problem(model, []) is not None
    optional = OPTIONAL.get((paper, task.name, task.kind), set())
    for key in res:
        less = {k: v for k, v in res.items() if k != key}
        assert (problem(model, less) is None) == (key in optional), f"without {key!r}"
    for path in _leaves(res, (int, float)):
        assert problem(model, _set(res, path, "fast")) is not None, f"{path} = 'fast' passed"
    for path in _leaves(res, str):  # and a string is not a number either
        assert problem(model, _set(res, path, 1.0)) is not None, f"{path} = 1.0 passed"
    assert problem(model, {**res, "surprise": 1.0}) is not None
    # a nested object of fixed keys forbids unknown keys too (not the {"P": ...}-like maps)
    for k, v in res.items():
        if isinstance(v, dict) and k not in FREE_KEYS:
            assert problem(model, {**res, k: {**v, "surprise": 1.0}}) is not None, k


@pytest.mark.parametrize("paper,task,res", CASES, ids=IDS)
def test_another_papers_or_another_tasks_result_fails(paper, task, res):
    model = _model(paper, task)
    for other, otask, ores in CASES:
        omodel = _model(other, otask)
        if omodel is model:
            continue
        if (paper, other, otask.name, task.kind, otask.kind) == ("paper1", "paper1", "train", "measured", "emulated") \
                and task.name in ("train", "lr_sweep"):
            continue  # an emulated run's result is a measured one's with Table 2's "wer" (the η sweep's runs too)
        assert problem(model, ores) is not None, f"{other} {otask.name}/{otask.kind}"


# ---- the shapes that need more than a type -------------------------------------------------
def test_paper0_seqpart_measured_holds_one_and_P_processes():
    task, res = _p0()[3]
    model3 = P0.result_model(Task("seqpart", "measured", 3, {"workers": 3, "run": 0, "seed": 1}))
    assert problem(P0.result_model(task), res) is None
    assert problem(model3, res) is not None  # "2" where "3" belongs
    assert problem(model3, {**{k: v for k, v in res.items() if k != "2"}, "3": res["2"]}) is None


def test_paper1_word_error_may_be_left_out_but_is_never_null():
    (task, res), (etask, eres) = _p1()[4], _p1()[5]
    assert problem(P1.result_model(task), {**res, "wer": WER}) is None
    assert problem(P1.result_model(task), {**res, "wer": None}) is not None
    assert problem(P1.result_model(etask), res) is not None  # an emulated run is one of Table 2's


def test_paper2_timing_configurations_are_named_by_method_and_Q():
    task, res = _p2()[0]
    model = P2.result_model(task)
    assert problem(model, {"optimal:3": res["optimal:3"], "_load": LOAD}) is None
    assert problem(model, {"optimal:4": res["optimal:3"], "_load": LOAD}) is not None
    assert problem(model, {"_load": LOAD}) is not None  # no configuration
    assert problem(model, {**res, "load": LOAD}) is not None


def test_paper2_a_measured_run_has_no_profile_an_emulated_one_a_valid_one():
    measured, emulated = _p2()[3], _p2()[4]
    m, e = P2.result_model(measured[0]), P2.result_model(emulated[0])
    assert problem(m, emulated[1]) is not None and problem(e, measured[1]) is not None
    bad = {**emulated[1], "profile_params": {**_profile(), "bandwidth_Bps": -1.0}}
    assert problem(e, bad) is not None


def test_paper4_mpi_calibration_is_a_fit_or_why_not():
    task = _p4()[1][0]
    model = P4.result_model(task)
    assert problem(model, {"available": True, "why": "x"}) is not None
    assert problem(model, {"available": False, **EXCHANGE}) is not None
    assert problem(model, {"available": "yes", "why": "x"}) is not None
    assert problem(model, {"available": 1, "why": "x"}) is not None


def test_not_finite_where_the_code_can_give_it_and_only_there():
    nan, inf = math.nan, math.inf
    task, res = _p2()[2]
    m = P2.result_model(task)
    assert problem(m, {**res, "val_loss": [nan, inf], "val_loss0": inf}) is None  # a diverged run
    for key in ("compute_s", "time_s"):
        assert problem(m, {**res, key: [1.0, nan]}) is not None
        assert problem(m, {**res, key: [1.0, -1.0]}) is not None
    task, res = _p4()[-1]
    m = P4.result_model(task)
    assert problem(m, {**res, "max_abs_diff_vs_serial_outputs": nan,
                       "epoch1_output": [nan, inf]}) is None
    assert problem(m, {**res, "wall_s": inf}) is not None
    assert problem(m, {**res, "epochs": 10.0}) is not None  # an int stays an int
    assert problem(m, {**res, "epochs": -1}) is not None
    task, res = _p0()[5]
    m = P0.result_model(task)
    assert problem(m, {**res, "phi": [nan], "final_phi": nan}) is None
    assert problem(m, {**res, "load": [0.5, 0.4]}) is not None
    assert problem(m, {**res, "stopped": "bored"}) is not None


# ---- every task make_tasks makes has a model and an example here ---------------------------
def _runs(paper):
    for mode in ("default", "quick", "full"):
        for workers in (1, 2, 16):
            for backend in (("local", "mpi") if paper == "paper4" else ("local",)):
                yield types.SimpleNamespace(setup=PAPERS[paper].setups[mode], mode=mode, workers=workers,
                                            seed=1, backend=backend, profile=None, rank=0, comm=None,
                                            context={}, meta={})


@pytest.mark.parametrize("paper", list(PAPERS))
def test_every_task_make_tasks_makes_has_a_model(paper):
    kinds = set()
    for run in _runs(paper):
        for task in PAPERS[paper].make_tasks(run):
            assert PAPERS[paper].result_model(task) is not None, task.label()
            kinds.add((task.name, task.kind))
    assert kinds == {(t.name, t.kind) for t, _ in EXAMPLES[paper]}


def _holds_time(model) -> bool:
    """Whether a result model has a field of a duration (Seconds), at any depth."""
    def times(ann) -> bool:
        if ann == Seconds:
            return True
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return _holds_time(ann)
        return any(times(a) for a in typing.get_args(ann))
    return any(times(a) for a in typing.get_type_hints(model, include_extras=True).values())


@pytest.mark.parametrize("paper", list(PAPERS))
def test_a_task_that_shares_the_cores_records_no_time(paper):
    # reproduce/runner.py runs tasks with timed=False several at a time: their results must hold
    # no duration, which their model's fields say
    timed, untimed = set(), set()
    for run in _runs(paper):
        for task in PAPERS[paper].make_tasks(run):
            (timed if task.timed else untimed).add(PAPERS[paper].result_model(task))
    assert not any(_holds_time(m) for m in untimed if m is not None)
    assert all(_holds_time(m) for m in timed if m is not None)  # control: every timed one does
