"""benchmarks/targets.py target 2 splits torch's step into GEMMs and the rest: its
``TorchStep.gemm_calls`` must be the five products that ``bench_bunch`` times for ours
(the same sizes, hence the same flops), and each must compute the product it names.
Checked against numpy on the step's own tensors, within the rounding two BLAS libraries may
differ by; negative control: the same check rejects a product taken with a wrong operand."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_bunch import SIZES, BunchStep  # noqa: E402

from benchmarks.targets import TorchStep  # noqa: E402


def _is_product(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """p = a @ b up to summation order: |p − a@b| ≤ k·eps·(|a| @ |b|) elementwise."""
    if p.shape != (a.shape[0], b.shape[1]):
        return False
    bound = a.shape[1] * np.finfo(float).eps * (np.abs(a) @ np.abs(b))
    return bool(np.all(np.abs(p - a @ b) <= bound))


def test_torch_gemms_are_the_five_products_ours_are_timed_on():
    B = 64
    t = TorchStep(B, SIZES, mode="manual")
    t.step()  # realistic d1, d2 in its buffers
    products = [call().numpy().copy() for call in t.gemm_calls()]
    # the operands as they stand after the calls (h and d1 are written by calls 1 and 4
    # before calls 2 and 5 read them)
    W1, _, W2, _ = (p.numpy() for p in t.P)
    X, h, d1, d2 = t.X.numpy(), t.h.numpy(), t.d1.numpy(), t.d2.numpy()
    operands = [(X, W1), (h, W2), (h.T, d2), (d2, W2.T), (X.T, d1)]
    for (a, b), p in zip(operands, products):
        assert _is_product(p, a, b)
    theirs = sorted(2 * a.shape[0] * a.shape[1] * b.shape[1] for a, b in operands)
    assert theirs == sorted(f for f, _ in BunchStep(B).gemm_calls())
    # negative control: a wrong operand (W1's rows reversed) is caught
    assert not _is_product(products[0], X, W1[::-1])
