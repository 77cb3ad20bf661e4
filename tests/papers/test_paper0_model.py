"""The emulation formulas of paper0's report and the shared-memory synchronisation model."""
from __future__ import annotations

import math

import pytest

from engine.perfmodel import MachineProfile, barrier_time_linear
from reproduce.paper0.barrier import shared_sum_time
from reproduce.paper0.report import netpart_emulated, seqpart_emulated

PROF = MachineProfile("test", latency_s=1e-6, bandwidth_Bps=1e9, source="test")
FREE = MachineProfile("free", 0.0, math.inf, source="test")


def test_barrier_and_shared_sum_formulas():
    assert barrier_time_linear(PROF, 1) == 0.0 and shared_sum_time(PROF, 1, 10**6) == 0.0
    assert barrier_time_linear(PROF, 7) == pytest.approx(6e-6)
    assert shared_sum_time(PROF, 4, 8000) == pytest.approx(3e-6 + 3 * 8000 / 1e9)


def _loop_times(H, per_unit=1e-3, fixed=0.0):
    return {"block_s": {str(k): fixed + k * per_unit for k in range(1, H + 1)}, "steps": 200}


def test_the_seven_processor_dip_of_section_3_1():
    """24 hidden units: 7 workers carry at most 4 units like 6 workers, plus one more
    worker to synchronise: slower. 21 units (7 × 3) is the control: no dip."""
    r = _loop_times(24)
    assert netpart_emulated(r, 7, 24, PROF) > netpart_emulated(r, 6, 24, PROF)
    assert netpart_emulated(r, 7, 24, FREE) == netpart_emulated(r, 6, 24, FREE)
    r21 = _loop_times(21)
    assert netpart_emulated(r21, 7, 21, PROF) < netpart_emulated(r21, 6, 21, PROF)
    # T(P) = t(⌈H/P⌉) + steps·(P−1)·α
    assert netpart_emulated(r, 5, 24, PROF) == pytest.approx(5e-3 + 200 * 4 * 1e-6)


def test_sequence_partition_time_is_the_slowest_worker_plus_sync():
    t = seqpart_emulated([0.3, 0.5, 0.4], 3, 8000, PROF)
    assert t == pytest.approx(0.5 + 2 * 2e-6 + 2 * 8000 / 1e9)
    assert seqpart_emulated([0.7], 1, 8000, PROF) == 0.7
