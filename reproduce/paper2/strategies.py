"""paper2's two schemes on a small instance, for ``python -m reproduce validate``
(reproduce/validate.py holds them against the emulator; ``Paper.strategies`` registers them)."""
from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from datasets.handwriting import ALPHABET, handwriting
from engine.data import SeqData
from reproduce.paper2.bucketed import SeqConfig, train_bucketed
from reproduce.validate import Case, count, from_record


@lru_cache(maxsize=1)
def _handwriting():
    """40 one-word handwriting sequences (the matrix's 10 cannot give every worker of a
    many-core host a sequence): (data, training ids, validation ids)."""
    d = handwriting(40, seed=11, n_writers=6, mean_extra_words=0.0, max_words=1,
                    val_fraction=0.1)
    return SeqData(d.seqs, d.labels), np.asarray(d.train), np.asarray(d.val)


def bucketed_case(scheme: str, quick: bool) -> Case:
    """Bucketed LSTM+CTC training (Khomenko et al. 2016): gradient allreduce per batch, or
    model averaging per epoch (eq. 3)."""
    data, tr, va = _handwriting()
    epochs = 1 if quick else 3
    cfg = SeqConfig(n_hidden=16, batch_size=2, n_buckets=2, epochs=epochs, scheme=scheme,
                    beta=1e-3)

    def run(backend, P, profile):
        return from_record(train_bucketed(data, len(ALPHABET) + 1, train_idx=tr, val_idx=va,
                                          cfg=cfg, seed=1, workers=P, backend=backend,
                                          profile=profile))

    # a worker needs a sequence of its own (model averaging fails on an empty portion)
    return Case("paper2", f"LSTM 3-16-{len(ALPHABET) + 1}, {len(tr)} handwriting sequences, "
                f"batch 2, {count(epochs, 'epoch')}", run, max_P=len(tr))


STRATEGIES = {"bucketed (gradient allreduce)": partial(bucketed_case, "allreduce"),
              "bucketed (model averaging)": partial(bucketed_case, "average")}
