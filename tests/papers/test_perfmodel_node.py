"""paper4 §6 speedup model (reproduce/paper4/model.py) and our exchange model
(reproduce/paper4/blocked.py): the closed forms against the printed
time expressions they were derived from, Table 1, and the calibration fits."""
from __future__ import annotations

import math

import numpy as np
import pytest

import reproduce.paper4.blocked as pm
from engine.comm.base import InProcessComm
from reproduce.paper4.blocked import blocked_exchange_time, calibrate_exchange, node_profile
from reproduce.paper4.model import NodeModel, calibrate_t_a

L = 7
TABLE1 = [(1, 1.02, 1.00), (2, 2.01, 2.00), (4, 3.79, 4.00), (8, 6.58, 7.99), (16, 9.88, 15.95)]


@pytest.mark.parametrize("base", ["2", "e", "10"])
@pytest.mark.parametrize("n,P", [(132, 2), (128, 4), (64, 16), (1024, 8)])
def test_forward_closed_form_equals_printed_times(base, n, P):
    """§6.1.1: S_P = T_1 / T_P with T_1 = t_a·Σ N(l)N(l−1) + t_a·Σ N(l) and
    T_P = t_a·Σ N(l−1)·I + t_a·Σ I + (t_s+t_d)·log P·Σ N(l), uniform width, P | n."""
    m = NodeModel(2e-9, 3e-6, 5e-9, base)
    sizes = (n,) * L
    log = math.log(P) / math.log({"2": 2, "e": math.e, "10": 10}[base])
    t1 = m.t_a * (L - 1) * (n * n + n)
    tp = m.t_a * (L - 1) * (n * (n / P) + n / P) + (m.t_startup + m.t_data) * log * (L - 1) * n
    assert m.forward_time(sizes, 1) == pytest.approx(t1, rel=1e-12)
    assert m.forward_time(sizes, P) == pytest.approx(tp, rel=1e-12)
    assert m.forward_speedup(n, P, L) == pytest.approx(t1 / tp, rel=1e-12)


@pytest.mark.parametrize("n,P", [(132, 2), (64, 16), (32000, 8)])
def test_backward_closed_form_equals_printed_times(n, P):
    """§6.1.2: T_S = t_a·9L + t_a·(L−1)n², T_P = t_a·9·n/P + t_a·(L−1)·n/P·n + c·(L−1)·n."""
    m = NodeModel(1e-9, 2e-6, 1e-8, "2")
    c = (m.t_startup + m.t_data) * math.log2(P)
    ts = m.t_a * 9 * L + m.t_a * (L - 1) * n * n
    tp = m.t_a * 9 * n / P + m.t_a * (L - 1) * n / P * n + c * (L - 1) * n
    assert m.backward_speedup(n, P, L) == pytest.approx(ts / tp, rel=1e-12)


def test_no_communication_gives_linear_forward_and_update():
    m = NodeModel(1.0, 0.0, 0.0, "2")
    for P in (1, 2, 8, 16):
        assert m.forward_speedup(132, P, L) == pytest.approx(P)
        assert m.update_speedup(132, P, L) == P


@pytest.mark.parametrize("base", ["2", "e", "10"])
def test_table1_n32k_any_base(base):
    """Table 1's n = 32k column is the printed aggregate formula to 1 % in every base."""
    m = NodeModel(1.0, 1.0, 1.0, base)
    for P, _, rep in TABLE1:
        assert m.aggregate_speedup(32_000, P, L) == pytest.approx(rep, rel=0.01)


def test_table1_p1_cannot_exceed_one():
    """At P = 1, log P = 0: the formula gives (2n+2+9L/(n(L−1)))/(2n+2+9/(L−1)) < 1 for n > L,
    so the paper's 1.02 is not the printed formula's, in any base."""
    n = 132
    want = (2 * n + 2 + 9 * L / (n * (L - 1))) / (2 * n + 2 + 9 / (L - 1))
    for base in ("2", "e", "10"):
        s = NodeModel(1.0, 1.0, 1.0, base).aggregate_speedup(n, 1, L)
        assert s == pytest.approx(want, rel=1e-12)
        assert s < 1.0 and abs(s / 1.02 - 1) > 0.01


def test_table1_n132_matches_no_base():
    """No base reproduces the n = 132 column: some cell is more than 1 % off in each."""
    for base in ("2", "e", "10"):
        m = NodeModel(1.0, 1.0, 1.0, base)
        assert max(abs(m.aggregate_speedup(132, P, L) / rep - 1) for P, rep, _ in TABLE1) > 0.01


def test_log_base_matters():
    a = [NodeModel(1, 1, 1, b).aggregate_speedup(132, 16, L) for b in ("2", "e", "10")]
    assert a[0] < a[1] < a[2]


def test_forward_time_uses_largest_block():
    m = NodeModel(1.0, 0.0, 0.0, "2")
    # sizes (5, 7): 7 nodes over 3 workers → largest block 3: 5·3 + 3 operations
    assert m.forward_time((5, 7), 3) == 18


def test_blocked_exchange_and_profile():
    assert blocked_exchange_time(1, 100, t_startup=1.0, t_data=1.0) == 0.0
    assert blocked_exchange_time(4, 10, t_startup=2e-6, t_data=1e-9) == pytest.approx(2 * 2e-6 + 3 * 10 * 1e-9)
    prof = node_profile(2e-6, 1e-9, name="x", source="test")
    for P, v in ((2, 1), (5, 64), (16, 4000)):
        assert prof.allgather_time(P, 8 * v) == pytest.approx(
            blocked_exchange_time(P, v, t_startup=2e-6, t_data=1e-9), rel=1e-12)


class _FakeClockComm(InProcessComm):
    """A size-P communicator whose allgather advances a fake clock by
    ⌈log2 P⌉·ts + (P−1)·m·td: the fit must recover ts and td."""

    def __init__(self, P, ts, td, clock):
        super().__init__()
        self.size, self.ts, self.td, self.fake = P, ts, td, clock

    def _allgather(self, sendbuf, recvbuf):
        self.fake[0] += math.ceil(math.log2(self.size)) * self.ts + (self.size - 1) * sendbuf.size * self.td
        return recvbuf


@pytest.mark.parametrize("P", [2, 4])
def test_calibrate_exchange_recovers_parameters(monkeypatch, P):
    clock = [0.0]
    monkeypatch.setattr(pm, "perf_counter", lambda: clock[0])
    res = calibrate_exchange(_FakeClockComm(P, 3e-6, 2e-9, clock), reps=20)
    assert res["t_startup"] == pytest.approx(3e-6, rel=1e-9)
    assert res["t_data"] == pytest.approx(2e-9, rel=1e-9)
    assert res["P"] == P


def test_calibrate_exchange_negative_control(monkeypatch):
    """A clock that charges 10× the per-value time must not fit the true t_data."""
    clock = [0.0]
    monkeypatch.setattr(pm, "perf_counter", lambda: clock[0])
    res = calibrate_exchange(_FakeClockComm(2, 3e-6, 2e-8, clock), reps=20)
    assert res["t_data"] != pytest.approx(2e-9, rel=0.5)


def test_calibrate_t_a_counts_operations():
    res = calibrate_t_a((4, 8, 8), reps=3, rng=np.random.default_rng(0))
    assert res["ops"] == 4 * 8 + 8 + 8 * 8 + 8
    assert res["t_a"] == pytest.approx(res["forward_s"] / res["ops"])
