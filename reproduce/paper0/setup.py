"""paper0's setup and the numbers the paper reports, as data (McCann & Kalman 1994,
*Strategies for the Parallel Training of Simple Recurrent Neural Networks*)."""
from __future__ import annotations

from dataclasses import dataclass, replace

NAME = "paper0"

# ---- what the paper reports -------------------------------------------------------------
REPORTED = {
    "deriv_epoch_s": 417.0,  # §3.2: "A derivative calculation takes about 417 seconds" (1 proc.)
    "fwd_epoch_s": 11.0,  # §3.2: "A forward propagation epoch takes about 11 seconds"
    "evals_per_iter": 10.0,  # §3.2: "Typically, about ten forward propagation epochs"
    "overall_speedup_17_6": 8.96,  # §3.2: 17 procs for derivative, 6 for line-search epochs
    "best_deriv_workers": 17,  # §3.2: "the best point on each of these curves"
    "best_fwd_workers": 6,
    "radio_hours_1": 22.0,  # §3.1: "The sequential version ... took 22 hours"
    "radio_hours_5": 8.0,  # "The five processor version took eight" (network partition)
    "loop_share": 0.80,  # §2.1: "over eighty percent of the total computation time"
}
MACHINE = "Sun SPARCcenter 2000, eighteen 40 MHz SPARC processors, shared memory (§3)"
NETS = {  # §3: (n_in, n_feedback, n_hidden, n_hidden2, n_out)
    "radio": dict(n_in=240, n_feedback=10, n_hidden=10, n_out=3),  # Fig. 2: (240+10)-10-3
    "parsing": dict(n_in=34, n_feedback=24, n_hidden=24, n_out=39),  # Fig. 3: (34+24)-24-39
}
# §3.2: 103 inputs, 20 hidden, 10 feedback, 2 second-hidden, 27 outputs. Our encoding
# has 104 inputs (datasets/nettalk.py says why); the rest is the paper's.
NETTALK = dict(n_in=104, n_hidden=20, n_feedback=10, n_hidden2=2, n_out=27)


@dataclass(frozen=True)
class Setup:
    # repeats of every timing task (seeds seed..seed+runs−1). 5, not 3 (issue 30): the claims
    # judged on our own runs (best-deriv-17's choice over the emulated curve, loop-share,
    # radio-5's loop share) need an interval over at least 5 seeds; about +70 s on 2 cores.
    runs: int = 5
    max_workers: int = 18  # §3: the machine had 18 processors; emulated up to here
    repeats: int = 5  # best-of inside one timing (the machine is shared: min is the robust statistic)
    block_repeats: int = 7  # best-of for the (short) network-partition loop timings
    profile_reps: int = 500  # barriers per burst when measuring the machine profile
    chunk: int = 16  # sequences per vectorised batch (see the vectorisation table)
    # Not stated: our synthetic sets for the loop-only timings of Figs 2–3.
    synth_seqs: int = 16
    synth_len: tuple = (8, 24)
    # Not stated: CG training length and init. "hundreds of epochs" (§3.2).
    iterations: int = 300
    train_runs: int = 2
    init_scale: float = 0.1
    cg_max_evals: int = 20
    cg_tol: float = 1e-2
    vec_chunks: tuple = (1, 4, 16, 64)
    measure_cg_iters: int = 3  # CG iterations in the measured 1- vs 2-process epoch timing


DEFAULT = Setup()
FULL = replace(DEFAULT, runs=5, train_runs=3, iterations=500)
QUICK = replace(DEFAULT, runs=1, max_workers=4, repeats=1, block_repeats=2, profile_reps=100, synth_seqs=6,
                iterations=5, train_runs=1, vec_chunks=(1, 16), measure_cg_iters=1)
QUICK_SHRUNK = ["runs 5 → 1", "emulated workers 1..18 → 1..4", "best of 5 (7 for loop timings) → 1 (2)",
                "machine-profile barriers 10×500 → 10×100, allgathers 2000 → 200",
                "synthetic sequences 16 → 6", "CG iterations 300 → 5, 1 training run",
                "vectorisation chunks 1, 4, 16, 64 → 1, 16"]
