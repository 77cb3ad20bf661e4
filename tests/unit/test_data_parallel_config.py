"""The data-parallel configuration (engine.parallel.data_parallel.DataParallel): its variants
are presets and optimizer rules, and :meth:`DataParallel.problem` refuses, each with its own
reason, what the loop cannot run; every refusal has a valid neighbour as its control."""
from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest

from engine.data import Patterns, Sequences
from engine.optim import SGD, Adadelta
from engine.parallel.data_parallel import (AVERAGING, BUCKETED, BUNCHES, CG_LONGEST_FIRST,
                                           LOCAL_EPOCHS, AdadeltaRule, Buckets, CGRule,
                                           DataParallel, SGDRule)

PATTERNS = Patterns(np.zeros((12, 2)), np.zeros((12, 1)))
SEQUENCES = Sequences(np.zeros((10, 2)), np.zeros((10, 1)), np.array([0, 2, 5, 6, 10]))


def test_presets_apply_where_their_split_does():
    for preset in (BUNCHES, LOCAL_EPOCHS, AVERAGING):
        assert preset.problem(PATTERNS) is None and preset.problem(SEQUENCES) is None
    assert BUCKETED.problem(SEQUENCES) is None
    assert "buckets" in BUCKETED.problem(PATTERNS)  # independent patterns have no lengths
    assert CG_LONGEST_FIRST.problem(SEQUENCES) is None
    assert (LOCAL_EPOCHS.split, LOCAL_EPOCHS.combine, LOCAL_EPOCHS.reduce) == ("random", "updates", "sum")
    assert CG_LONGEST_FIRST.cg == CGRule() and BUNCHES.cg is None


def test_rules_build_their_optimizers():
    sgd = SGDRule(lr=0.3, momentum=0.5).make(4)
    assert isinstance(sgd, SGD) and (sgd.lr, sgd.momentum) == (0.3, 0.5)
    ada = AdadeltaRule(lr=0.7, rho=0.9, eps=1e-4).make(4)
    assert isinstance(ada, Adadelta) and (ada.lr, ada.rho, ada.eps) == (0.7, 0.9, 1e-4)


REFUSED = [  # (configuration, data, words of the reason)
    (replace(BUNCHES, split="diagonal"), PATTERNS, "unknown split"),
    (replace(BUNCHES, combine="votes"), PATTERNS, "unknown split/combine"),
    (replace(BUNCHES, optimizer="sgd"), PATTERNS, "optimizer must be"),
    (replace(BUNCHES, reduce="max"), PATTERNS, "reduce must be"),
    (replace(BUNCHES, round_every="bunch"), PATTERNS, "round_every"),
    (replace(BUCKETED, buckets=Buckets(bounds_from="some")), SEQUENCES, "bounds_from"),
    (replace(BUCKETED, buckets=Buckets(method="alphabetical")), SEQUENCES, "unknown bucketing"),
    (replace(CG_LONGEST_FIRST, combine="updates"), SEQUENCES, "full-batch gradient"),
    (replace(CG_LONGEST_FIRST, split="shares", batch=3), SEQUENCES, "a bunch must hold"),
    (replace(CG_LONGEST_FIRST, split="shares", batch=99, optimizer=CGRule(grad_workers=2)),
     SEQUENCES, "longest-first"),
    (replace(CG_LONGEST_FIRST, optimizer=CGRule(probe=("hessian",))), SEQUENCES, "probe"),
    (replace(LOCAL_EPOCHS, optimizer=AdadeltaRule()), PATTERNS, "SGD updates"),
]


@pytest.mark.parametrize("cfg,data,words", REFUSED, ids=[w for _, _, w in REFUSED])
def test_problem_names_what_cannot_run(cfg, data, words):
    assert words in cfg.problem(data)


CONTROLS = [  # each refusal's neighbour that runs
    (replace(BUNCHES, split="random"), PATTERNS),
    (replace(BUNCHES, reduce="sum", round_every="epoch"), PATTERNS),
    (replace(BUCKETED, buckets=Buckets(bounds_from="all", method="quantile")), SEQUENCES),
    (replace(CG_LONGEST_FIRST, split="shares", batch=99), SEQUENCES),
    (replace(CG_LONGEST_FIRST, optimizer=CGRule(grad_workers=2, probe=("grad", "loss"))), SEQUENCES),
    (replace(LOCAL_EPOCHS, optimizer=SGDRule(0.5)), PATTERNS),
    (replace(AVERAGING, optimizer=AdadeltaRule()), PATTERNS),
]


@pytest.mark.parametrize("cfg,data", CONTROLS)
def test_control_neighbours_run(cfg, data):
    assert cfg.problem(data) is None


def test_the_configuration_stays_small():
    """At most ten fields: an option of one variant lives in its rule (SGDRule,
    AdadeltaRule, CGRule, Buckets), not beside the others'."""
    assert len(fields(DataParallel)) <= 10
    assert {f.name for f in fields(DataParallel)} >= {"split", "combine", "optimizer", "buckets"}
