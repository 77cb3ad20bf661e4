"""tanh for compiled code (issue 32): one formula that LLVM vectorizes, within a few ulp of numpy's.

For x ≥ 0, tanh x = −e/(e + 2) with e = expm1(−2x); the sign is copied from x. ``tanh1``
computes e without a table, so that a loop of it compiles to vector code (4 lanes on AVX2):
- |x| is clamped to 20 (tanh 20 rounds to 1; ±inf gives ±1; NaN passes through);
- y = −2|x| = k·ln 2 + r with k = round(y / ln 2) and |r| ≤ ln 2 / 2, by Cody and Waite's
  two-part ln 2 (fdlibm's ``ln2HI``/``ln2LO``; k·ln2HI is exact), each step one FMA;
- expm1 r by its Taylor series to r^13 (Horner's rule; the first omitted term is below
  2^−56 of r on |r| ≤ ln 2 / 2), as r + r²·q(r) so that the leading term is exact;
- expm1 y = 2^k·expm1 r + (2^k − 1), k ∈ [−58, 0], 2^k made from k's bits.
Against numpy's float64 tanh, in a one-off check over 700,000 normal arguments scaled 1e-8 to
30, it differed on 41 % of them, by at most 3 ulp (4.7e-16 relative):
tests/unit/test_tanhkernel.py bounds it at 1e-15 and tests the special values. numpy's own
(Intel SVML's algorithm: a degree-16 polynomial on each of 16 intervals) picks a table row per
element: compiled, it stayed scalar (the engine's earlier port, 7.5–9.5 ns an element here),
and numpy's own 4-lane loop is slower still here (why was not profiled); this one has no table.

This module also holds the engine's switch to compiled code: ``njit`` is numba's where
numba imports, else None; ``ENGINE_KERNELS=numpy`` forces None, the numpy reference (the
benchmarks' before and after, with numpy's tanh throughout). :mod:`engine.kernels` and
:mod:`engine.seqkernels` use it. ``error_model="numpy"`` lets a division by zero give inf
instead of raising, which is what lets a loop with a division vectorize.
"""
from __future__ import annotations

import math
import os

import numpy as np

try:
    if os.environ.get("ENGINE_KERNELS", "numba") == "numpy":
        raise ImportError("ENGINE_KERNELS=numpy")
    from numba import njit, types
    from numba.extending import intrinsic
    from llvmlite import ir
except ImportError:
    njit = None

INV_LN2 = 1.4426950408889634  # 1 / ln 2
LN2_HI = 6.93147180369123816490e-01  # ln 2's top 32 bits: k·LN2_HI is exact for |k| < 2^20
LN2_LO = 1.90821492927058770002e-10  # ln 2 − LN2_HI
CLAMP = 20.0  # tanh(20) = 1 − 8.5e-18 rounds to 1
# 1.5·2^52: y/ln 2 + SHIFTER rounds y/ln 2 to an integer k held in the low bits, so that k and
# 2^k come from bit operations, with no float-to-int conversion (AVX2 has no packed one)
SHIFTER = 6755399441055744.0
SHIFTER_BITS = np.int64(0x4338000000000000)


def _np_tanh(z, out):
    return np.tanh(z, out=out)


if njit is not None:
    @intrinsic
    def _fma(typingctx, a, b, c):
        """a·b + c rounded once (LLVM's llvm.fma.f64: the hardware FMA, or exact in software)."""
        sig = types.float64(types.float64, types.float64, types.float64)

        def codegen(context, builder, signature, args):
            d = ir.DoubleType()
            fn = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
            return builder.call(fn, args)

        return sig, codegen

    @njit(cache=True, inline="always", error_model="numpy")
    def tanh1(x):
        """tanh of one float64 (module docstring): −expm1(−2|x|) / (expm1(−2|x|) + 2), signed."""
        a = abs(x)
        a = CLAMP if a > CLAMP else a  # NaN fails the test and passes through
        y = -2.0 * a
        t = y * INV_LN2 + SHIFTER  # round(y / ln 2) in t's low mantissa bits
        k = t - SHIFTER
        r = _fma(-k, LN2_HI, y)
        r = _fma(-k, LN2_LO, r)
        q = _fma(1.6059043836821613e-10, r, 2.08767569878681e-09)  # 1/13!, 1/12!
        q = _fma(q, r, 2.505210838544172e-08)  # 1/11!
        q = _fma(q, r, 2.755731922398589e-07)  # 1/10!
        q = _fma(q, r, 2.7557319223985893e-06)  # 1/9!
        q = _fma(q, r, 2.48015873015873e-05)  # 1/8!
        q = _fma(q, r, 0.0001984126984126984)  # 1/7!
        q = _fma(q, r, 0.001388888888888889)  # 1/6!
        q = _fma(q, r, 0.008333333333333333)  # 1/5!
        q = _fma(q, r, 0.041666666666666664)  # 1/4!
        q = _fma(q, r, 0.16666666666666666)  # 1/3!
        q = _fma(q, r, 0.5)  # 1/2!
        e = _fma(r * q, r, r)  # expm1 r
        kb = np.float64(t).view(np.int64) - SHIFTER_BITS  # k
        s = np.int64((kb + 1023) << 52).view(np.float64)  # 2^k
        e = _fma(s, e, s - 1.0)  # expm1 y
        return math.copysign(-e / (e + 2.0), x)

    @njit(cache=True, error_model="numpy")
    def _tanh_1d(z, out):
        for k in range(z.shape[0]):
            out[k] = tanh1(z[k])

    @njit(cache=True, error_model="numpy")
    def _tanh_2d(z, out):
        for i in range(z.shape[0]):
            for j in range(z.shape[1]):
                out[i, j] = tanh1(z[i, j])

    @njit(cache=True, error_model="numpy")
    def _tanh_in_place(z):
        for k in range(z.shape[0]):
            z[k] = tanh1(z[k])

    def _nb_tanh(z, out):
        """out = tanh(z) for float64 arrays of 1 or 2 dimensions (any strides; out may be z),
        numpy's ufunc otherwise. In place (``out is z``, as the layers call it) one array is
        passed: with two, LLVM guards its vector loop by a check that they do not overlap,
        and runs the scalar loop, 3× slower here, when they coincide."""
        if z.dtype != np.float64 or out.dtype != np.float64 or z.shape != out.shape:
            return np.tanh(z, out=out)
        if out is z and z.flags.c_contiguous:
            _tanh_in_place(z.reshape(-1))
        elif z.ndim == 2:
            _tanh_2d(z, out)
        elif z.ndim == 1:
            _tanh_1d(z, out)
        else:
            return np.tanh(z, out=out)
        return out


# tanh(z, out) -> out, the engine's tanh; COMPILED says whether it is tanh1's loop.
COMPILED = njit is not None
tanh = _nb_tanh if COMPILED else _np_tanh
