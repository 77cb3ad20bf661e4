"""paper4's setup and the numbers the paper reports, as data (Hlynsson & Schmitz 2016,
*A Parallel Implementation of the Training of a Backpropagation Multilayer Perceptron*).

Every deviation from the paper is commented where it is defined.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

NAME = "paper4"

# ---- what the paper reports ----------------------------------------------------
TABLE1 = [  # (P, speedup n = 132, speedup n = 32k); §6.2, L = 7, t_startup = t_data = t_a = 1
    (1, 1.02, 1.00), (2, 2.01, 2.00), (4, 3.79, 4.00), (8, 6.58, 7.99), (16, 9.88, 15.95)]
# Table 2 (§7): forward pass speedup at the PDC centre; 7 layers, input 132, width 64,000.
# Its column header says "PDC time in seconds", but the values (1.00 at P = 1) are speedups.
TABLE2 = [(1, 1.00), (2, 2.78), (4, 5.49), (8, 10.40), (16, 15.72)]
# Table 3 (§7): "Then we did the same with the backward pass as well" (forward + backward).
# Its caption repeats "Forward pass speedup"; the text says it is forward plus backward.
TABLE3 = [(1, 1.00), (2, 1.98), (4, 3.92), (8, 7.07), (16, 9.95)]
TYPICAL_TARGETS = (1.0, -1.0)  # §5
TYPICAL_OUTPUTS = {1: (0.494420, -0.322816), 10_000: (0.953876, -0.953714)}  # §5
PAPER_LAYERS = 7  # §7: "a network with the depth of 7 layers"; Table 1: L = 7
PAPER_INPUT = 132  # §7: "input with dimension 132"
PAPER_WIDTH = 64_000  # §7: "a width of 64,000 nodes in every subsequent layer"
TABLE1_N = (132, 32_000)  # §6.2: "first for n = 132 then n = 32000"


@dataclass(frozen=True)
class Setup:
    # Our net for Tables 2–3: the paper's depth and input, widths this machine holds.
    # 7 layers read as the input layer plus 6 computed layers (the Σ_{l=1}^{L−1} of §6.1.1).
    # 2048 is the widest tried here: its weights take 0.16 GiB, an emulated run holds them
    # three times (the initial vector, then incoming and outgoing blocks), and one forward
    # pass takes ~7 ms, so 16 emulated workers × 3 runs stay within minutes on a machine
    # shared by five people. The paper's 64,000 needs 153 GiB of float64 weights: modeled.
    widths: tuple = (132, 512, 2048)
    paper_width: int = PAPER_WIDTH
    layers: int = PAPER_LAYERS
    n_input: int = PAPER_INPUT
    activation: str = "symmetric_sigmoid"  # §2: φ(x) = 2/(1+e^(−x)) − 1
    procs: tuple = (1, 2, 4, 8, 16)  # Tables 1–3
    passes_timed: int = 40  # passes per timed run (one pattern each: the paper trains online)
    # timed runs per configuration, one seed each (seed + run): 5 so that the claims judged on
    # runs here (§3 width, reproduce/paper4/claims.py) rest on n >= 5 seeds paired by seed
    # (issue 30; it was 3, whose 95 % bootstrap interval is just min–max). ~+60 s default.
    runs: int = 5
    log_base: str = "2"  # base of log(P) in our model predictions (model.py)
    # §5 typical run. Not stated: the net, η, the initial weights, the input pattern.
    # We use the paper's depth and input size with a narrow width, η = 0.1 (online,
    # one pattern), uniform ±0.5 initial weights, an input drawn uniform in [−1, 1].
    typical_sizes: tuple = (132, 32, 32, 32, 32, 32, 2)
    typical_lr: float = 0.1
    typical_init: float = 0.5
    typical_epochs: int = 10_000
    # §5 runs, seeds seed .. seed + typical_runs − 1 (weights and pattern drawn per seed): the
    # sec5-targets claim needs n >= 5 (issue 30); one took 2.6 s at default settings.
    typical_runs: int = 5
    calib_reps: int = 400
    # Ablation (issue 34): the widest net this machine holds, timed as the sweep's emulated runs
    # are (each worker's compute alone, composed on the profiles), at P = 16 only, on the same
    # runs' seeds: does compute alone scale further at a width nearer the paper's 64,000? 8,192
    # is the widest power of two whose emulated 16-worker run fits here (7.5 GiB by
    # engine/strategies/node.py required_bytes, of 0.8 × 22.7 GiB available; 16,384 needs 30
    # GiB). check_fits is asked before a task is made: where it does not fit, the ablation is
    # left out and the report says so. One pass reads its 2.5 GiB of weights (0.2–0.6 s), so
    # wide_passes_timed passes, not passes_timed, keep its 10 tasks within a few minutes.
    wide_width: int = 8192
    wide_passes_timed: int = 10

    def sizes(self, width: int) -> tuple:
        return (self.n_input,) + (int(width),) * (self.layers - 1)


DEFAULT = Setup()
FULL = replace(DEFAULT, runs=10, passes_timed=100)
# --quick shrinks: widths 132 and 512, 1 run of 10 passes, P up to 8, §5 run of 1,000 epochs.
QUICK = replace(DEFAULT, widths=(132, 512), runs=1, passes_timed=10, procs=(1, 2, 4, 8),
                typical_epochs=1_000, typical_runs=1, calib_reps=100, wide_width=0)
QUICK_SHRUNK = ["widths 132, 512, 2048 → 132, 512", "runs 5 → 1", "timed passes 40 → 10",
                "processors up to 16 → up to 8", "§5 typical run 10,000 → 1,000 epochs "
                "(the 10,000-epoch row is missing), 5 seeds → 1", "calibration repetitions 400 → 100",
                "the widest-net ablation (width 8,192 at P = 16) left out"]

PASSES = ("forward", "forward_backward")  # Table 2, Table 3
