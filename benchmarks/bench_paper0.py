"""paper0 (McCann & Kalman 1994): Elman-net derivative and forward epochs, and the two
shared-memory strategies per worker count.

* Epochs on recurrent NETtalk (104-20(10)-2-27, 821 words; needs the NETtalk data, see
  datasets/nettalk.py: skipped without it): a derivative epoch by forward-propagated
  derivatives (eqs. 1–4, vectorised over 16 sequences) and by BPTT, and a forward
  (line-search) epoch, one thread. ``track_us_per_pattern_weight_*`` is the epoch
  time / (patterns × weights).
* Network partition (§2.1, loop only) on the synthetic (34+24)-24-39 parsing net:
  ``time_block`` is the loop (sequences one after another) for the block of the
  busiest of P workers (⌈24/P⌉ hidden units); ``track_emulated_speedup`` composes
  t(24) / (t(⌈24/P⌉) + patterns·(P−1)·α) with α = 0.4 µs fixed here (a spin barrier between two idle cores
  of the development machine) so the track follows compute, not machine load.
* Sequence partition (§2.2) on NETtalk: ``time_worker_epoch`` is the busiest of P
  workers' derivative epoch over its longest-first share; ``track_emulated_speedup``
  is t(1) / max_w t_w (synchronisation left out), and ``track_measured_speedup_2``
  the measured 1- vs 2-process derivative epoch (local backend).
"""
from __future__ import annotations

from time import perf_counter

import numpy as np
from threadpoolctl import threadpool_limits

NETTALK = dict(n_in=104, n_hidden=20, n_feedback=10, n_hidden2=2, n_out=27)
CHUNK = 16
ALPHA = 0.4e-6  # s per barrier and peer, fixed (see the module docstring)


def _nettalk():
    from datasets import nettalk
    from engine.nets.elman import Elman

    if nettalk.data_dir() is None:
        raise NotImplementedError("NETtalk data absent (set NETTALK_DATA)")  # asv: skip
    corpus = nettalk.load()
    net = Elman(**NETTALK)
    net.init_uniform(np.random.default_rng(0), scale=0.1)
    return net, corpus.data


def _best(fn, repeats=3):
    best = np.inf
    for _ in range(repeats):
        t = perf_counter()
        fn()
        best = min(best, perf_counter() - t)
    return best


class NettalkEpochs:
    timeout = 300

    def setup(self):
        from engine.nets import elman as E

        self._limits = threadpool_limits(1)
        self.net, self.data = _nettalk()
        self.b = self.data.batches(chunk=CHUNK)
        self.E = E

    def teardown(self):
        self._limits.restore_original_limits()

    def time_derivative_epoch_forward(self):
        self.E.phi_grad(self.net, self.b, method="forward")

    def time_derivative_epoch_bptt(self):
        self.E.phi_grad(self.net, self.b, method="bptt")

    def time_forward_epoch(self):
        self.E.phi(self.net, self.b)

    def peakmem_derivative_epoch_forward(self):
        self.E.phi_grad(self.net, self.b, method="forward")

    def _us(self, method):
        t = _best(lambda: self.E.phi_grad(self.net, self.b, method=method))
        return t / (self.data.n_patterns * self.net.n_params) * 1e6

    def track_us_per_pattern_weight_forward(self):
        return self._us("forward")

    track_us_per_pattern_weight_forward.unit = "µs"

    def track_us_per_pattern_weight_bptt(self):
        return self._us("bptt")

    track_us_per_pattern_weight_bptt.unit = "µs"


class NetworkPartition:
    params = [1, 2, 4, 6, 7, 8, 12, 18]
    param_names = ["workers"]
    timeout = 300

    def setup(self, P):
        from datasets.synthetic_seq import sequences
        from engine.nets.elman import Elman
        import reproduce.paper0.network_partition as network

        self._limits = threadpool_limits(1)
        rng = np.random.default_rng(0)
        data = sequences("parsing", rng, n_seq=16)
        self.net = Elman(n_in=34, n_hidden=24, n_out=39, n_feedback=24)
        self.net.init_uniform(rng, scale=0.1)
        self.n_patterns = data.n_patterns
        self.prep = network.prepare(self.net, data)
        self.k = max(b - a for a, b in network.split_even(24, P))
        self.network = network

    def teardown(self, P):
        self._limits.restore_original_limits()

    def time_block(self, P):
        self.network.loop(self.net, self.prep, 0, self.k)

    def track_emulated_speedup(self, P):
        t1 = self.network.block_seconds(self.net, self.prep, 24)
        tk = t1 if self.k == 24 else self.network.block_seconds(self.net, self.prep, self.k)
        return t1 / (tk + self.n_patterns * (P - 1) * ALPHA)

    track_emulated_speedup.unit = "x"


class SequencePartition:
    params = [1, 2, 4, 6, 12, 17]
    param_names = ["workers"]
    timeout = 600

    def setup(self, P):
        import reproduce.paper0.sequence as sequence

        self._limits = threadpool_limits(1)
        self.net, self.data = _nettalk()
        parts = sequence.partition(self.data, P)
        busiest = max(parts, key=lambda ids: self.data.lengths[ids].sum())
        self.b = self.data.batches(busiest, chunk=CHUNK)
        self.sequence = sequence

    def teardown(self, P):
        self._limits.restore_original_limits()

    def time_worker_epoch(self, P):
        from engine.nets import elman as E

        E.phi_grad(self.net, self.b, method="forward")

    def track_emulated_speedup(self, P):
        t1 = self.sequence.worker_seconds(self.net, self.data, 1, deriv=True, chunk=CHUNK)
        tp = t1 if P == 1 else self.sequence.worker_seconds(self.net, self.data, P, deriv=True, chunk=CHUNK)
        return float(t1.max() / tp.max())

    track_emulated_speedup.unit = "x"


class SequencePartitionMeasured:
    timeout = 600

    def setup(self):
        self._limits = threadpool_limits(1)  # the 1-process run in this process: one BLAS thread too
        self.net, self.data = _nettalk()

    def teardown(self):
        self._limits.restore_original_limits()

    def track_measured_speedup_2(self):
        import reproduce.paper0.sequence as sequence

        t = {}
        for P in (1, 2):
            r = sequence.run_local_cg(self.data, self.net.params.copy(), sizes=NETTALK, workers_deriv=P,
                                      workers_fwd=P, iterations=2, chunk=CHUNK)
            t[P] = float(np.min(r["deriv_compute_s"] + r["deriv_reduce_s"]))
        return t[1] / t[2]

    track_measured_speedup_2.unit = "x"
