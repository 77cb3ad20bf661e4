"""Node-parallel MLP passes (Hlynsson & Schmitz 2016, §3–4), per number of workers P.

Net: the paper's depth and input (7 layers, 132 inputs) at width 1024, one pattern.

- ``time_forward_worker`` / ``time_backward_worker``: one worker's compute for
  one pass (its blocks of every layer, no exchange), timed by asv in this
  process with one BLAS thread: what each of P nodes computes.
- ``track_forward_speedup_measured``: serial MLP time / node-parallel time per
  pass on P local processes (median of the passes; the serial timed just before,
  in the same run, so both see the same machine load).
- ``track_ratio_measured_to_modeled``: that measured speedup divided by the
  speedup the calibrated models predict (our blocked-exchange model, and §6's
  formula as printed), t_a, t_startup and t_data calibrated in the same call.
"""
from __future__ import annotations

import numpy as np

WIDTH = 1024
PASSES = 20


def _setup():
    from dataclasses import replace

    from reproduce.paper4.setup import DEFAULT

    return replace(DEFAULT, passes_timed=PASSES, calib_reps=200)


class NodeWorkerCompute:
    params = [1, 2, 4, 16]
    param_names = ["P"]

    def setup(self, P):
        from threadpoolctl import threadpool_limits

        from engine.nets.mlp import MLP
        from engine.strategies.node import NodeWorker, _Buffers

        self._limit = threadpool_limits(1)
        sizes = _setup().sizes(WIDTH)
        rng = np.random.default_rng(0)
        net = MLP(sizes, "symmetric_sigmoid")
        net.init_uniform(rng, scale=0.1)
        self.w = NodeWorker(sizes, "symmetric_sigmoid", net.params, rank=0, size=P)
        self.b = _Buffers(self.w.sizes, self.w.dist, 0, 1)
        self.b.a[0][:] = rng.uniform(-1, 1, (1, sizes[0]))
        for l in range(1, len(sizes)):  # whole layers as the exchanges would leave them
            self.b.a[l][:] = rng.uniform(-1, 1, (1, sizes[l]))
            self.b.delta[l][:] = rng.uniform(-0.1, 0.1, (1, sizes[l]))

    def teardown(self, P):
        self._limit.restore_original_limits()

    def time_forward_worker(self, P):
        w, b = self.w, self.b
        for l in range(1, w.L + 1):
            w.forward_layer(l, b.a[l - 1], b.own[l])

    def time_backward_worker(self, P):
        w, b = self.w, self.b
        for l in range(w.L - 1, 0, -1):
            w.backward_layer(l, b.delta[l + 1], b.a[l], b.own[l], b.tmp[l])


def measured_speedup(P: int, passes: str = "forward") -> dict:
    """Measured speedup at P local workers, and the calibrated models' predictions."""
    from engine.comm.local import run_local
    from reproduce.paper4.blocked import calibrate_exchange
    from reproduce.paper4.model import calibrate_t_a
    from reproduce.paper4.model import NodeModel
    from reproduce.paper4.report import blocked_time
    from reproduce.paper4.tasks import node_measured

    s = _setup()
    sizes = s.sizes(WIDTH)
    r = node_measured(s, width=WIDTH, passes=passes, seed=0, P=P, backend="local")
    measured = r["serial_s"] / r["time_per_pass_s"]
    ta = calibrate_t_a(sizes, reps=10)["t_a"]
    ex = run_local(calibrate_exchange, 2, reps=200, max_elems=32768)[0]
    kw = dict(t_a=ta, t_startup=ex["t_startup"], t_data=ex["t_data"])
    blocked = blocked_time(sizes, 1, passes, t_a=ta, t_startup=0, t_data=0) / blocked_time(sizes, P, passes, **kw)
    s6 = NodeModel(ta, ex["t_startup"], ex["t_data"], "2").forward_speedup(WIDTH, P, s.layers)
    return {"measured": measured, "blocked": blocked, "s6": s6}


class NodeSpeedup:
    params = [1, 2]
    param_names = ["P"]
    timeout = 300
    number = 1
    repeat = 1

    def track_forward_speedup_measured(self, P):
        return measured_speedup(P)["measured"]

    track_forward_speedup_measured.unit = "x"

    def track_ratio_measured_to_modeled(self, P):
        r = measured_speedup(P)
        return r["measured"] / r["blocked"]

    track_ratio_measured_to_modeled.unit = "ratio"

    def track_ratio_measured_to_s6_model(self, P):
        r = measured_speedup(P)
        return r["measured"] / r["s6"]

    track_ratio_measured_to_s6_model.unit = "ratio"
