"""paper1's two strategies on small instances: for ``python -m reproduce validate``
(reproduce/validate.py holds them against the emulator; ``Paper.strategies`` registers them)
and, NP, for the equivalence matrix (reproduce/matrix.py; ``Paper.matrix_cells``)."""
from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from datasets.speech import SpeechConfig, normalize, synthesize
from engine.nets.mlp import MLP
from reproduce.matrix import PROFILE, TOL, Workload
from reproduce.paper1.bunch import BunchConfig, init_rng, train_sequential
from reproduce.paper1.network_parallel import train_network_parallel
from reproduce.paper1.pattern_bunch import train_pattern_bunch
from reproduce.validate import Case, count, from_log


@lru_cache(maxsize=2)
def _speech(quick: bool):
    corpus = synthesize(SpeechConfig(n_speakers=2, utts_per_speaker=2 if quick else 6),
                        rng=np.random.default_rng(1))
    normalize(corpus)
    return corpus


def quicknet_case(kind: str, quick: bool) -> Case:
    """Quicknet bunch training of a 156-400-56 MLP on synthetic speech frames (Färber 1997):
    pattern-parallel (``PP``, §2.2: the bunch split over workers, one allreduce per bunch)
    or network-parallel (``NP``, §2.1: the hidden units split, an allgather and a broadcast
    per bunch), each with the bunch size the paper times it with."""
    train, B = {"PP": (train_pattern_bunch, 500), "NP": (train_network_parallel, 48)}[kind]
    corpus, sizes, epochs = _speech(quick), (156, 400, 56), 1 if quick else 8
    cfg = BunchConfig(bunch=B, lr=0.003 * min(1.0, 200 / B), epochs=epochs, chunk=2000)

    def run(backend, P, profile):
        r = train(corpus, sizes=sizes, activation="logistic", cfg=cfg, seed=1, workers=P,
                  backend=backend, profile=profile)
        return from_log(r["log"], r["wall"])

    return Case("paper1", f"speech {corpus.n_frames} frames, 156-400-56, bunch {B}, "
                f"{count(epochs, 'epoch')}", run)


STRATEGIES = {"pattern-parallel bunch (PP)": partial(quicknet_case, "PP"),
              "network-parallel (NP)": partial(quicknet_case, "NP")}


def np_cell(w: Workload, *, backend: str, workers: int, comm=None, seed: int = 1,
            pipelined: bool = False):
    """§2.1 (and §2.3 with ``pipelined``): the hidden layer of a 156:9:56 MLP over slaves,
    the master summing their output sums, on a small speech-frame corpus; the trained
    weights against sequential Quicknet bunch training (not pipelined: a pipelined run
    must differ, the negative control). ``w`` only names the net: the corpus is its own."""
    corpus = synthesize(SpeechConfig(n_speakers=2, utts_per_speaker=1),
                        rng=np.random.default_rng(seed))
    normalize(corpus)
    sizes, act = (156, 9, 56), "logistic"
    cfg = BunchConfig(bunch=7, lr=0.05, momentum=0.5, epochs=1, chunk=60, pipelined=pipelined)
    res = train_network_parallel(corpus, sizes=sizes, activation=act, cfg=cfg, seed=seed,
                                 workers=workers, backend=backend, comm=comm, profile=PROFILE)
    if res is None:
        return None, ""
    net = MLP(sizes, act)
    net.init_uniform(init_rng(seed), scale=0.1)
    train_sequential(net, corpus, cfg=BunchConfig(bunch=7, lr=0.05, momentum=0.5, epochs=1,
                                                  chunk=60), seed=seed)
    dev = float(np.max(np.abs(res["params"] - net.params)))
    return dev, "pass" if dev <= TOL else "FAIL"


MATRIX_CELLS = {"model-parallel/np": (np_cell, {
    "elman": "the master/slave split of §2.1 is of a one-hidden-layer feed-forward net",
    "lstm": "the master/slave split of §2.1 is of a one-hidden-layer feed-forward net"})}
