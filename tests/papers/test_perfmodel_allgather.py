"""The recursive-doubling allgather model and the α fit, against hand-worked numbers."""
import math

import pytest

from engine.perfmodel import MachineProfile
from reproduce.paper3.setup import fit_latency

PROF = MachineProfile("t", latency_s=1e-4, bandwidth_Bps=1e8, source="test")


def test_allgather_time_worked_example():
    # P = 8: ⌈log2 8⌉ = 3 steps of α, and 7 foreign blocks of 1000 B at 1e8 B/s.
    assert PROF.allgather_time(8, 1000) == pytest.approx(3 * 1e-4 + 7 * 1000 / 1e8, rel=1e-15)
    # P = 5 is not a power of two: ⌈log2 5⌉ = 3 steps, 4 foreign blocks.
    assert PROF.allgather_time(5, 1000) == pytest.approx(3 * 1e-4 + 4 * 1e-5, rel=1e-15)
    assert PROF.allgather_time(1, 10**9) == 0.0


def test_fit_latency_recovers_alpha():
    obs = [PROF.allgather_time(8, 2000)] * 4
    assert fit_latency(obs, P=8, nbytes=2000, bandwidth_Bps=1e8) == pytest.approx(1e-4, rel=1e-12)
    # negative control: a wrong β gives a different α
    assert not math.isclose(fit_latency(obs, P=8, nbytes=2000, bandwidth_Bps=1e7), 1e-4, rel_tol=1e-3)


def test_fit_latency_refuses_one_node():
    with pytest.raises(ValueError, match="fit_latency needs P >= 2"):
        fit_latency([1e-3], P=1, nbytes=8, bandwidth_Bps=1e8)
