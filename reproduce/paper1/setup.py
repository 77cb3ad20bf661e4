"""paper1's setup and the numbers the paper reports, as data (Färber 1997, *Quicknet
on MultiSpert: Fast Parallel Neural Network Training*), and the MultiSpert machine
as constants of the §2.5 model (reproduce/paper1/spert.py SpertModel).

Deviations from the paper are commented where the setting is defined.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from datasets.speech import SpeechConfig
from reproduce.paper1.spert import SpertModel

NAME = "paper1"

# ---- what the paper reports -------------------------------------------------------------
# Table 1 (§3.2): inner loop of NP training, 156:1000:56, Sparc-2 host, compressed input.
TABLE1_BLOCKS = [  # (slaves, program block, ms, comment)
    (1, "slave.call(train,error0,input2)", 2.7, "write data at 4.0 MB/s"),
    (1, "local.comp_err(output1)", 22.0, ""),
    (1, "slave.synch", 64.0, "wait for slave (raw: 116 MCUPS)"),
    (1, "slave.read(output2)", 2.0, "read data at 2.7 MB/s"),
    (2, "slave0.synch", 17.0, "wait for slave0 (raw: 115 MCUPS)"),
    (2, "slave0.read(output2)", 2.0, "read data @ 2.7 MB/s"),
    (2, "slave0.call(train,error0,input2)", 2.7, "write data @ 4.0 MB/s"),
    (2, "slave1.synch", 0.0, "slave1 already finished"),
    (2, "slave1.read(output2)", 2.0, "read data @ 2.7 MB/s"),
    (2, "slave1.call(train,error0,input2)", 2.7, "write data @ 4.0 MB/s"),
    (2, "local.comp_err(output1)", 22.0, ""),
]
TABLE1_MCUPS = {1: 111.0, 2: 205.0}  # Table 1: overall MCUPS, one slave and two pipelined
TABLE1_RELATIVE = {1: 0.97, 2: 1.78, 3: 2.35, 4: 2.05}  # §3.2: of single-board raw performance
RAW_MCUPS = 115.0  # §3.2: "raw slave performance remains constant at about 115 MCUPS"
TABLE1_HIDDEN = 1000  # 64 ms + 22 ms of slave work at 116 MCUPS and B = 48 ⇒ N_wts ≈ 212,000
# Table 2: word error rates on numbers95 (%), None where the paper leaves the cell empty.
TABLE2_WER = {(400, "sequential"): 7.6, (1000, "sequential"): 6.7,
              (400, "NP"): 7.8, (1000, "NP"): 6.8, (400, "PP"): None, (1000, "PP"): 8.4}
HEADLINE_MCUPS = 500.0  # §4: five boards, "over 500 MCUPS"
HEADLINE_CPS = 1e9  # §3.4/§4: "about 1 GCPS" forward with five nodes
HEADLINE_BOARDS = 5
COMPRESSION_PAPER = 9.0  # §2.4: "nine-fold reduction in communication"


@dataclass(frozen=True)
class Setup:
    # Data: numbers95 had thousands of utterances; ours is scaled down to 400
    # utterances (40 speakers × 10, ≈ 58,000 frames) so the default run fits in
    # ~30 min on 2 cores. 20 % of the speakers form the CV set.
    corpus: SpeechConfig = SpeechConfig()
    cv_fraction: float = 0.2
    nets: tuple = (400, 1000)  # Table 2: 156:400:56 and 156:1000:56
    activation: str = "logistic"  # §2: "usually the sigmoid function"; hidden and output
    # Not given by the paper. η per pattern, the bunch's updates summed (Quicknet);
    # 0.003 keeps online training (B = 1) stable; a 3-epoch check found B = 96 at
    # η = 0.01 stuck near 28 % training accuracy (the summed step grows with B).
    lr: float = 0.003
    # §3.5 reduces the learning rate for bunches of 1000 and more, by an amount not
    # given; ours keeps the summed step η·B at its B = 200 value: η' = η·200/B.
    lr_ref_bunch: int = 200
    init_scale: float = 0.1  # uniform ±0.1 (not given)
    epochs: int = 8  # epochs of every training run (Fig. 6, Table 2)
    fig6_hidden: int = 400  # the net of Fig. 6 is not named; ours: the smaller one
    fig6_bunches: tuple = (1, 12, 96, 200)  # Fig. 6 left
    fig6_big: tuple = (1000, 5000, 10000)  # Fig. 6 right, reduced learning rate
    np_slaves: int = 4  # Table 2
    np_bunch: int = 12
    pp_slaves: int = 4
    pp_bunch: int = 5000
    chunk: int = 10_000  # §3.2: 10,000 patterns per node
    # Performance (Figs. 3–5, Table 1)
    perf_hidden: tuple = (400, 1000, 2000)
    np_bunch_perf: int = 48  # the bunch implied by Table 1's transfers
    pp_bunches: tuple = (1000, 5000)
    slaves: tuple = (1, 2, 3, 4, 5, 6, 8)
    measured_patterns: int = 4800  # patterns per measured timing run (NP); PP: 3 bunches
    reps: int = 7  # repetitions of each step timing (median)
    # The emul tasks whose configurations the speed claims compare (the training pass on the
    # Table 2 nets, `nets`) run in emul_runs separate tasks spread over the timed part of the
    # run; a claim's interval is over those runs, each run's median step timings one record
    # (reproduce/paper1/claims.py). One task's `reps` vary less than one task to the next: a
    # T_c(4)/T_c(3) of 0.61 in one run and 1.17 in the next flipped a verdict
    # (results/machines/dev2/claims30/four_below_three.md). The other emul tasks (2000 hidden,
    # the forward pass) draw curves only and run once. 7, not the minimum 5: the interval of a
    # median over 5 runs reaches one outlying run (≥ 3 of 5 draws are it in 6 % of resamples),
    # over 7 it does not (≥ 4 of 7: 1 %, below the 2.5 % tail).
    emul_runs: int = 7
    perf_repeats: int = 3  # repetitions of each measured run (median, spread reported)
    # Ablation (issue 34): the measured PP bunch's warm-up. A measured PP run times 3 bunches;
    # these runs time warmup_bunches at B = pp_bunches[0] and every perf width and P, each bunch
    # on its own (rank 0's log), warmup_runs seeds: how much of "measured = emulated + the
    # rest" is the first bunches of a fresh run (reproduce/paper1/why.py warmup_split).
    warmup_bunches: int = 8
    warmup_runs: int = 5
    # Ablation (issue 34): where PP's error at B = pp_bunch comes from. PP takes the bunch's
    # sequential step (§2.2), so sequential training at pp_bunch stands for it: run on every
    # Table 2 net (the fig6_hidden one is Fig. 6's run), and on fig6_hidden with η × lr_sweep,
    # runs seeds each (reproduce/paper1/why.py lr_split). × 4, and × 25: η = lr_for(pp_bunch)
    # × 25 = 0.003, the rate before §3.5's reduction, which gives pp_bunch the summed step per
    # epoch (η × frames) of np_bunch; derived, not tuned.
    same_bunch_nets: bool = True
    lr_sweep: tuple = (4.0, 25.0)
    # Training runs (seeds) per configuration: 5 (was 1), so every training claim's interval
    # (reproduce/paper1/claims.py: Fig. 6, §2.3/§3.5 and Table 2) rests on n = 5 seeds, the
    # issue's minimum; a seed's sequential and parallel runs pair (same corpus, same init seed).
    runs: int = 5
    # Fig. 6 bunches run for the first seed only, to keep the default run near its time
    # budget (~12 min on 2 cores): 1000 and 10,000 only draw the right panel's curves; online
    # B = 1 (the slowest run) is left out of the "up to 200" claim, which compares 12, 96, 200.
    one_seed_bunches: tuple = (1, 1000, 10000)

    def lr_for(self, B: int) -> float:
        return self.lr if B <= self.lr_ref_bunch else self.lr * self.lr_ref_bunch / B


DEFAULT = Setup()
FULL = replace(DEFAULT, runs=5, epochs=12, one_seed_bunches=())
QUICK = replace(DEFAULT, corpus=SpeechConfig(n_speakers=8, utts_per_speaker=4), epochs=2,
                nets=(400,), fig6_bunches=(12, 96), fig6_big=(1000,), pp_bunch=1000,
                perf_hidden=(400,), pp_bunches=(1000,), slaves=(1, 2, 4), measured_patterns=960,
                reps=3, perf_repeats=1, chunk=2000, runs=2, emul_runs=2, one_seed_bunches=(), warmup_runs=0,
                same_bunch_nets=False, lr_sweep=())
QUICK_SHRUNK = ["corpus 400 → 32 utterances", "epochs 8 → 2", "nets: 156:400:56 only",
                "Fig. 6 bunches 1, 12, 96, 200, 1000, 5000, 10000 → 12, 96, 1000",
                "Table 2 PP bunch 5000 → 1000", "performance: N_h 400 only, PP B = 1000, P ≤ 4",
                "chunk 10,000 → 2,000", "3 timing repetitions, 1 measured run each",
                "emulated runs of the claims' configurations 7 → 2",
                "training seeds 5 → 2 (the claims' intervals rest on n = 2)",
                "the warm-up ablation (8 timed PP bunches, 5 seeds) left out",
                "the PP-bunch ablation (sequential at PP's bunch, η × 4 and × 25) left out"]


# ---- the paper's machine: MultiSpert in the §2.5 model ------------------------------------
# The paper's own constants. Table 1 and §3.2: writes at 4.0 MB/s, reads at 2.7 MB/s,
# 4-byte errors and 2-byte partial outputs; raw slave speed about 115 MCUPS; host error
# computation 22 ms per bunch. The bunch of Table 1 is not printed: both its transfers
# give B = 48 (2.7 ms × 4.0 MB/s / (56 × 4 B) = 48.2 and 2.0 ms × 2.7 MB/s / (56 × 2 B)
# = 48.2), so c_h = 22 ms / 48. c1 = (N_i + N_o)/115e6 s per hidden unit per pattern,
# c2 = 0 (not given). The forward constants are not given either: c1_fwd = c1/3
# assumes a forward pass is one of the three matrix products of a training pass (§2), and
# c_h_fwd = 0 that the host computes no error in a forward pass.
TABLE1_BUNCH = 48
MULTISPERT_RAW_CUPS = RAW_MCUPS * 1e6  # connection updates per second
MULTISPERT_1997 = SpertModel(
    "multispert1997", bw_write_Bps=4.0e6, bw_read_Bps=2.7e6,
    c1_s=(156 + 56) / MULTISPERT_RAW_CUPS, c2_s=0.0, c_h_s=22e-3 / TABLE1_BUNCH,
    c1_fwd_s=(156 + 56) / MULTISPERT_RAW_CUPS / 3, c2_fwd_s=0.0,
    source=("Färber 1997 Table 1 and §3.2: 4.0 MB/s write, 2.7 MB/s read, 4-byte errors, "
            "2-byte outputs, ~115 MCUPS raw per board, 22 ms host error computation at the "
            "B = 48 implied by Table 1's transfer times; c2 = 0, c1_fwd = c1/3, c_h_fwd = 0 assumed; "
            "2-byte inputs and 4-byte weights assumed"))


def multispert1997_profile():
    """MultiSpert as an α/β MachineProfile for ``--profile multispert1997``: α = the §2.5
    model's latency (0: it has none), β = the slower bus direction (reads, 2.7 MB/s). The tree
    and recursive-doubling formulas are not §2.5's shared-bus model: this paper prices its
    own figures with that model."""
    from engine.perfmodel import MachineProfile

    m = MULTISPERT_1997
    return MachineProfile(
        m.name, m.latency_s, min(m.bw_write_Bps, m.bw_read_Bps), fitted=m.fitted,
        source=(f"reproduce.paper1.setup.MULTISPERT_1997 ({m.source}); as α/β: α = its latency "
                f"{m.latency_s} s (the §2.5 model has none), β = the slower bus direction "
                f"(read, {min(m.bw_write_Bps, m.bw_read_Bps) / 1e6} MB/s); collectives priced "
                "by the α/β tree formulas, not by §2.5's shared-bus model"))
