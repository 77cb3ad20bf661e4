"""paper2's setup and the numbers the paper reports, as data (Khomenko, Shyshkov,
Radyvonenko & Bokhan 2016, *Accelerating Recurrent Neural Network Training using
Sequence Bucketing and Multi-GPU Data Parallelization*).

Everything is scaled down from the paper's (1 GB of pen data, 6 K40 GPUs, hours
per epoch) to minutes on two CPU cores; every such choice is commented where the
setting is defined.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

NAME = "paper2"

# ---- what the paper reports ---------------------------------------------------
SPEEDUP_Q3 = 4.0  # §IV.B / Fig. 4: "For the value of Q = 3, the speed up factor is close to 4"
BASELINE_EPOCH_S = 4 * 3600.0  # §IV.B / Fig. 4: "4 hours per epoch" without bucketing
BEST_Q = 3  # §IV.B / Fig. 3: "the best acceleration with minimum validation loss was achieved for Q = 3"
GPUS = 6  # §IV.A: "a rack of 6 NVidia Tesla K40m GPUs"
LOSS_REDUCTION_6 = 0.23  # §IV.B / Fig. 5a: validation error at 30 h "better by 23% for 6 GPU case"
VAL_FRACTION = 0.05  # §IV.A


@dataclass(frozen=True)
class Setup:
    # Data (§IV.A: 1 GB of real pen input; here Hershey-font trajectories, datasets/handwriting.py)
    n_samples: int = 1200  # scaled down so the default run fits ~30 min on 2 cores
    n_writers: int = 60
    # Model: not stated in the paper beyond "LSTM ... with CTC". One LSTM layer, linear output.
    n_hidden: int = 64
    # k, not stated in the paper. Leaving the CTC blank plateau takes thousands of ADADELTA
    # updates at every k we tried (Q = 6, seed 1, one-off check before this default was set:
    # validation CER first < 0.8 after ~3,700 updates at k = 4, ~4,300 at k = 8, and still
    # 0.89 after 2,880 at k = 16), and k = 4 gives the most updates per second (~21 ms per
    # update vs ~32 at k = 8 and ~55 at k = 16), so only k = 4 gets past the plateau within
    # the default budget. (The previous default, k = 16 and 8 epochs = 570 updates, ended
    # on it for every Q.) k also sets how much random batches pad: see Fig. 4.
    batch_size: int = 4
    beta: float = 1e-6  # eq. (3); the printed exponent is garbled ("1·10^-?")
    # Fig. 3: validation loss vs wall clock / epoch for several Q. Q = 1 is trained as random
    # batches (each padded to its own longest); the paper's Q = 1 (eq. 1: one model, every batch
    # padded to the longest sequence) makes the same updates, only its epochs take longer.
    Qs: tuple = (1, 2, 3, 6)
    epochs: int = 16  # per Fig. 3 run (the paper trains for tens of hours)
    # Seeds (issue 30: every judged claim on >= 5 seeds or repetitions). ``runs`` seeds train
    # what the training claims need, each run serving several claims: the 1-worker runs of
    # every Q (Fig. 3's best Q and "faster convergence at the beginning"; the Q = fig5_Q one
    # is also Fig. 5's 1-worker baseline) and the measured model-averaging runs on
    # fig5_workers <= cores (the conclusion's "reduction of the validation loss ... for the
    # same wall clock time", measured). A 1-worker seed costs ~255 s on 2 cores, a measured
    # 2-worker one ~70 s (the committed default's task times, d29965b).
    runs: int = 5
    # DEVIATION for cost: each measured P's emulated twin (the emulator's validation, no claim)
    # on ``emulated_runs`` seeds only. The emulated runs beyond the workers (the 23 % claim at
    # 6 GPUs) run on every seed (tasks.py): the claim rests on 5 seeds, as every claim does. A
    # 6-worker emulated run computes all 6 workers' shares one after another: 872 s per seed on
    # the 2-core VM of 2026-11-26 (313 s on the faster one of 2026-11-24).
    emulated_runs: int = 1
    # seeds for the ablations that test no claim of the paper: Q = order_Q in random bucket
    # order and the gradient-allreduce runs
    ablation_runs: int = 1
    # §IV.B credits Fig. 5's gain to shortest-bucket-first order: also train Q = order_Q in
    # random bucket order (1 worker)
    order_Q: int = 6
    # Fig. 4: epoch time per bucketing method and Q, interleaved, ``timing_reps`` times;
    # ("optimal", 1) is eq. 1's baseline: one bucket, every batch padded to the longest.
    # 5 interleaved repetitions (was 3): the Fig. 4 claims' intervals rest on them, paired by
    # repetition (~46 s each), instead of training seeds.
    timing: tuple = (("random", 1), ("optimal", 1), ("optimal", 2), ("optimal", 3), ("optimal", 4),
                     ("optimal", 6), ("quantile", 3), ("equal_width", 3), ("megabatch", 1))
    timing_reps: int = 5
    # DEVIATION for cost: Fig. 4 at other k (timing_k.py: forward + backward epochs at k = 4,
    # 16, 64, 256) once (was 3 repetitions, ~176 s each): no claim is judged on them, they
    # stand beside the 4x claim (the paper does not state its k).
    timing_k_reps: int = 1
    # Fig. 4, modeled only: the padded-cell bound at other batch sizes
    bound_batch_sizes: tuple = (1, 4, 16, 64, 256)
    # Fig. 5: 1 vs P workers with Q = 6 (model averaging); P = 2 measured, 6 emulated
    fig5_Q: int = 6
    fig5_workers: tuple = (2, 6)
    # gradient-allreduce comparison (an ablation: the paper has no allreduce); beyond the
    # cores emulated. DEVIATION for cost: none in the default run (2 workers measured and
    # emulated cost ~184 s, the seeds above need the time); --quick and --full run it.
    allreduce_workers: tuple = ()


DEFAULT = Setup()
FULL = replace(DEFAULT, n_samples=2400, epochs=24, runs=5, emulated_runs=5, ablation_runs=3,
               timing_reps=5, timing_k_reps=3, allreduce_workers=(2, 6))
# --quick shrinks everything; the numbers only show that the pipeline runs (2 seeds and 2
# timing repetitions so that the claims' intervals are computed, n < 5: no verdict stands).
QUICK = replace(DEFAULT, n_samples=160, n_hidden=16, epochs=2, Qs=(1, 3), order_Q=3, runs=2,
                timing_reps=2, timing_k_reps=1,
                timing=(("random", 1), ("optimal", 1), ("optimal", 3), ("megabatch", 1)),
                fig5_workers=(2, 3), allreduce_workers=(2, 3))
QUICK_SHRUNK = ["samples 1,200 → 160", "hidden 64 → 16", "epochs 16 → 2", "Q in Fig. 3: 1, 3",
                "seeds 5 → 2", "random bucket order at Q = 3",
                "Fig. 4 configurations: random, optimal Q=1 and 3, megabatch; 2 repetitions",
                "Fig. 5 workers: 2 measured, 3 emulated (both schemes)"]

DATA_SEED = 2016  # one data set for every run; the run seed varies the model and the order
