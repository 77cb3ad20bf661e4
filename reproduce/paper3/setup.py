"""paper3's setup and the numbers the paper reports, as data (Dahl, McAvinney &
Newhall 2008, *Parallelizing Neural Network Training for Cluster Systems*), and
the paper's 2008 cluster as a machine profile fitted to its Table 2.

Every deviation from the paper is commented where the setting is defined.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from engine.nets.mlp import MLP
import math

import numpy as np

from engine.perfmodel import MachineProfile

NAME = "paper3"

# ---- what the paper reports -------------------------------------------------
# Table 1 (§5): total time to train (s, mean of 10 successful runs) and the best
# local epoch size per node count. 1 node is sequential batch training.
TABLE1 = [  # (nodes, total time s, best local epoch)
    (1, 689.0, None),
    (2, 190.0, 128),
    (4, 177.0, 64),
    (8, 65.0, 32),
]
# Table 2 (§5), 8 nodes, mean of 10 runs.
TABLE2 = [  # (local epoch, "Num Epochs to Train", total time s, share of time communicating)
    (32, 19891.2, 64.7, 0.806),
    (64, 44441.6, 86.0, 0.717),
    (128, 104448.0, 133.1, 0.575),
    (256, 109568.0, 91.9, 0.426),
]
SPEEDUP_8 = 10.6  # §5 text: "best speed-up of 10.6 ... (65 seconds vs. 689)"
N_PATTERNS = 256  # all 2^8 patterns
FANN_VALUE_BYTES = 4  # FANN's fann_type is a C float unless built as doublefann
GIGE_BANDWIDTH = 125e6  # §5: "1 Gigabit Ethernet switch": 1 Gbit/s line rate in bytes/s


@dataclass(frozen=True)
class Setup:
    bits: int = 8  # §5: eight bit parity
    hidden: int = 100  # §5: "one hundred nodes in the hidden layer"
    # Not stated in the paper. FANN's SIGMOID_SYMMETRIC at its default
    # steepness 0.5 is exactly 2/(1+e^-x) − 1, with ±1 inputs and targets.
    activation: str = "symmetric_sigmoid"
    lr: float = 0.1  # §5
    momentum: float = 0.3  # §5
    # Not stated. FANN 2's default is uniform ±0.1, from which batch training
    # never left the parity plateau within our cap (see the init check in the
    # report); we use uniform ±1, the smallest of ±0.1/±0.5/±1 we tried from
    # which every serial run converged. Chosen for convergence, not for time.
    init_scale: float = 1.0
    # Not stated: stop when the full-set MSE (mean of (t − y)²) is below 0.01,
    # i.e. outputs within about 0.1 of their ±1 targets.
    threshold: float = 0.01
    k: float = 2.0  # §4.1: error history of k·n/p patterns, "k between 1 and 10"
    # Not stated (§3: an unsuccessful attempt "is stopped after some maximum number of
    # epochs"). Epochs = presentations / 256. Our rule, set from the data (issue 32): a run
    # fails when it has not converged by cap_factor × the median epochs of its configuration
    # over seeds (a failed run counting as never), within [first_cap, max_epochs]. Every run
    # first goes to first_cap; the ones that have not converged there go on to their
    # configuration's cap (reproduce/paper3/tasks.py ``extend``; training is deterministic,
    # so a longer run retraces the shorter one). Set before the run from the default of
    # 2026-11-24 (10 seeds, 9 converged in each configuration under a plain 200,000 cap),
    # whose rows show the slowest converged run at 6.1× its configuration's median (serial)
    # and 8.2×, 1.9×, 3.3×, 3.8× at 8 nodes, local epochs 32–256; those rows do not give the
    # 2- and 4-node runs, and there the rule did stop runs that had converged before: seed 10
    # at local epoch 128 (docs/findings.md). The report lists every run the cap stopped.
    # max_epochs: twice the paper's largest mean (109,568, Table 2), so that the cap never
    # censors runs as slow as the paper's.
    max_epochs: float = 200_000
    first_cap: float = 20_000
    cap_factor: float = 10.0
    combine: str = "sum"  # §4.1: the nodes' weight updates are summed
    nodes: tuple = (1, 2, 4, 8)  # Table 1
    local_epochs: tuple = (32, 64, 128, 256)  # Table 2
    runs: int = 10  # Tables 1–2: averages of 10 (successful) runs
    # Our extra checks (ablations, issue 34), each on the first ablation_runs seeds: serial
    # from FANN's init; PPT at 8 nodes, local epoch 32 with combine="mean"; and serial batch
    # training at η·P for each P in lr_scales, which tells the summed update's P-times step
    # (§4.1) apart from parallel hardware.
    ablation_runs: int = 5
    lr_scales: tuple = (2, 4, 8)

    @property
    def sizes(self):
        return (self.bits, self.hidden, 1)


DEFAULT = Setup()
FULL = replace(DEFAULT, ablation_runs=10)
# --quick shrinks: 1 run per configuration, local epochs 32 and 256 only,
# cap 20,000 epochs, no ablations. Everything else is the paper's setup.
QUICK = replace(DEFAULT, runs=1, local_epochs=(32, 256), max_epochs=20_000, ablation_runs=0)  # one pass
QUICK_SHRUNK = ["runs 10 → 1", "local epochs 32, 64, 128, 256 → 32, 256",
                "epoch cap 200,000 → 20,000", "ablations (FANN init, combine=mean, serial at η·P) skipped"]


# ---- the 2008 cluster, fitted to Table 2 -----------------------------------------
def table2_implied(interpretation: str) -> list[dict]:
    """Per-round communication and per-pattern compute implied by Table 2.

    ``"rounds"``: the "Num Epochs" column counts PPT rounds (the paper's own
    §4 definition of an epoch). ``"presentations"``: it counts pattern
    presentations summed over the 8 nodes divided by the 256 patterns.
    """
    P, out = 8, []
    for m, epochs, t, share in TABLE2:
        rounds = epochs if interpretation == "rounds" else epochs * N_PATTERNS / (P * m)
        out.append({"local_epoch": m, "rounds": rounds, "comm_s_per_round": t * share / rounds,
                    "compute_s_per_pattern": t * (1 - share) / (rounds * m)})
    return out


def paper_message_bytes(setup: Setup) -> int:
    return (MLP(setup.sizes).n_params + 1) * FANN_VALUE_BYTES  # weights + piggybacked error


def fit_latency(comm_s_per_round, *, P: int, nbytes: int, bandwidth_Bps: float) -> float:
    """Least-squares α for allgather times observed at one P and message size,
    with β fixed: α = mean(T_obs − (P−1)·s/β) / ⌈log2 P⌉.
    """
    if P < 2:
        raise ValueError(f"fit_latency needs P >= 2 (one node does not communicate), got P={P}")
    obs = np.asarray(comm_s_per_round, dtype=float)
    return float(np.mean(obs - (P - 1) * nbytes / bandwidth_Bps) / math.ceil(math.log2(P)))


def gige2008(setup: Setup = DEFAULT) -> MachineProfile:
    """The paper's cluster: β = 1 Gbit/s line rate (§5); α fitted (labelled) to Table 2."""
    obs = [r["comm_s_per_round"] for r in table2_implied("presentations")]
    alpha = fit_latency(obs, P=8, nbytes=paper_message_bytes(setup), bandwidth_Bps=GIGE_BANDWIDTH)
    return MachineProfile(
        "gige2008", alpha, GIGE_BANDWIDTH, fitted=True,
        source=("bandwidth: 1 Gbit/s line rate of the paper's Gigabit Ethernet switch (§5); "
                "latency: FITTED by least squares to the communication time per round implied by "
                "the paper's Table 2 (time × share / rounds, rounds = epochs·256/(8·local epoch)), "
                "with the recursive-doubling allgather model and FANN's 4-byte floats"))
