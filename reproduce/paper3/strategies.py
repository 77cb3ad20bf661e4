"""paper3's strategy on a small instance, for ``python -m reproduce validate``
(reproduce/validate.py holds it against the emulator; ``Paper.strategies`` registers it)."""
from __future__ import annotations

from datasets.parity import parity
from reproduce.paper3.ppt import PPTConfig, train_pattern_parallel
from reproduce.paper3.setup import DEFAULT as S
from reproduce.validate import Case, from_record


def ppt_case(quick: bool) -> Case:
    """Pattern-parallel training (Dahl et al. 2008): the paper's net and data, a fixed
    number of rounds (threshold 0: the stopping rule never fires)."""
    X, T = parity(S.bits, activation=S.activation)
    m, epochs = 32, (20 if quick else 500)
    cfg = PPTConfig(local_epoch=m, lr=S.lr, momentum=S.momentum, k=S.k, threshold=0.0,
                    max_epochs=epochs, combine=S.combine)

    def run(backend, P, profile):
        return from_record(train_pattern_parallel(
            X, T, sizes=S.sizes, activation=S.activation, cfg=cfg, seed=1, workers=P,
            backend=backend, profile=profile, init_scale=S.init_scale))

    sizes = "-".join(map(str, S.sizes))
    return Case("paper3", f"parity {S.bits}, {sizes}, local epoch {m}, {epochs} epochs", run)


STRATEGIES = {"pattern-parallel (PPT)": ppt_case}
