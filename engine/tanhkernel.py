"""tanh in compiled code with numpy's float64 bits (issue 32): numpy's own algorithm, ported.

numpy (2.x, ``_core/src/umath/loops_hyperbolic.dispatch.cpp.src``) computes float64 tanh
on every CPU with FMA (its X86_V3 and X86_V4 builds) by an algorithm converted from Intel
SVML (``svml_z0_tanh_d_la.s``): |x| is split into 16 intervals by its exponent and top
mantissa bit; on interval i, tanh(|x|) = P_i(|x| − b_i), P_i a degree-16 polynomial
evaluated by Horner's rule with a fused multiply-add at each step; the sign is OR-ed back
in; |x| ≥ 2^1023 and ±inf give ±1, NaN gives NaN. :func:`tanh` does the same operations on
each element, with LLVM's exactly-rounded ``llvm.fma`` for each MulAdd, so every finite
result is numpy's to the bit. On the 2-core VM of 2026-11-27 (AVX2, no AVX-512) numpy ran it
at 20–29 ns an element and the port at 9–14 (docs/benchmarks.md): each element is a chain of
16 dependent FMAs on a table row picked per element (why numpy's 4-lane loop is the slower
one here was not profiled).

Where numpy computes tanh otherwise (a CPU without FMA, where it calls the C library's
tanh; or a numpy whose algorithm changed), the port would give other last bits. So
:data:`PORTED` is set at import by checking the port against ``np.tanh`` over arguments
that visit every interval and the special values; the engine's :func:`tanh` is the port
only where that holds and numpy's ufunc otherwise, so no result depends on which one ran.

This module also holds the engine's switch to compiled code: ``njit`` is numba's where
numba imports, else None; ``ENGINE_KERNELS=numpy`` forces None, the numpy reference (the
benchmarks' before and after). :mod:`engine.kernels` and :mod:`engine.seqkernels` use it.
"""
from __future__ import annotations

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

# Coefficient table, one row per interval: b, then c0 .. c16 (P = c0 + c1·y + … + c16·y^16).
# numpy's lut16x18 (column j of it is coefficient j), as IEEE-754 bit patterns.
_LUT16X18 = np.array([
    # b
    0x0000000000000000, 0x3fcc000000000000, 0x3fd4000000000000, 0x3fdc000000000000,
    0x3fe4000000000000, 0x3fec000000000000, 0x3ff4000000000000, 0x3ffc000000000000,
    0x4004000000000000, 0x400c000000000000, 0x4014000000000000, 0x401c000000000000,
    0x4024000000000000, 0x402c000000000000, 0x4034000000000000, 0x0000000000000000,
    # c0
    0x0000000000000000, 0x3fcb8fd0416a7c92, 0x3fd35f98a0ea650e, 0x3fda5729ee488037,
    0x3fe1bf47eabb8f95, 0x3fe686650b8c2015, 0x3feb2523bb6b2dee, 0x3fee1fbf97e33527,
    0x3fef9258260a71c2, 0x3feff112c63a9077, 0x3fefff419668df11, 0x3feffffc832750f2,
    0x3feffffffdc96f35, 0x3fefffffffffcf58, 0x3ff0000000000000, 0x3ff0000000000000,
    # c1
    0x3ff0000000000000, 0x3fee842ca3f08532, 0x3fed11574af58f1b, 0x3fea945b9c24e4f9,
    0x3fe6284c3374f815, 0x3fe02500a09f8d6e, 0x3fd1f25131e3a8c0, 0x3fbd22ca1c24a139,
    0x3f9b3afe1fba5c76, 0x3f6dd37d19b22b21, 0x3f27ccec13a9ef96, 0x3ecbe6c3f33250ae,
    0x3e41b4865394f75f, 0x3d8853f01bda5f28, 0x3c73953c0197ef58, 0x0000000000000000,
    # c2
    0xbbf0b3ea3fdfaa19, 0xbfca48aaeb53bc21, 0xbfd19921f4329916, 0xbfd5e0f09bef8011,
    0xbfd893b59c35c882, 0xbfd6ba7cb7576538, 0xbfce7291743d7555, 0xbfbb6d85a01efb80,
    0xbf9addae58c7141a, 0xbf6dc59376c7aa19, 0xbf27cc5e74677410, 0xbecbe6c0e8b4cc87,
    0xbe41b486526b0565, 0xbd8853f01bef63a4, 0xbc73955be519be31, 0x0000000000000000,
    # c3
    0xbfd5555555555555, 0xbfd183afc292ba11, 0xbfcc1a4b039c9bfa, 0xbfc16e1e6d8d0be6,
    0xbf92426c751e48a2, 0x3fb4f152b2bad124, 0x3fbbba40cbef72be, 0x3fb01ba038be6a3d,
    0x3f916df44871efc8, 0x3f63c6869dfc8870, 0x3f1fb9aef915d828, 0x3ec299d1e27c6e11,
    0x3e379b5ddcca334c, 0x3d8037f57bc62c9a, 0x3c6a2d4b50a2cff7, 0x0000000000000000,
    # c4
    0xbce6863ee44ed636, 0x3fc04dcd0476c75e, 0x3fc43d3449a80f08, 0x3fc5c26f3699b7e7,
    0x3fc1a686f6ab2533, 0x3faf203c316ce730, 0xbf89c7a02788557c, 0xbf98157e26e0d541,
    0xbf807b55c1c7d278, 0xbf53a18d5843190f, 0xbf0fb6bbc89b1a5b, 0xbeb299c9c684a963,
    0xbe279b5dd4fb3d01, 0xbd7037f57ae72aa6, 0xbc5a2ca2bba78e86, 0x0000000000000000,
    # c5
    0x3fc1111111112ab5, 0x3fb5c19efdfc08ad, 0x3fa74c98dc34fbac, 0xbf790d6a8eff0a77,
    0xbfac3c021789a786, 0xbfae2196b7326859, 0xbf93a7a011ff8c2a, 0x3f6e4709c7e8430e,
    0x3f67682afa611151, 0x3f3ef2ee77717cbf, 0x3ef95a4482f180b7, 0x3e9dc2c27da3b603,
    0x3e12e2afd9f7433e, 0x3d59f320348679ba, 0x3c44b61d9bbcc940, 0x0000000000000000,
    # c6
    0xbda1ea19ddddb3b4, 0xbfb0b8df995ce4df, 0xbfb2955cf41e8164, 0xbfaf9d05c309f7c6,
    0xbf987d27ccff4291, 0x3f8b2ca62572b098, 0x3f8f1cf6c7f5b00a, 0x3f60379811e43dd5,
    0xbf4793826f78537e, 0xbf2405695e36240f, 0xbee0e08de39ce756, 0xbe83d709ba5f714e,
    0xbdf92e3fc5ee63e0, 0xbd414cc030f2110e, 0xbc2ba022e8d82a87, 0x0000000000000000,
    # c7
    0xbfaba1ba1990520b, 0xbf96e37bba52f6fc, 0x3ecff7df18455399, 0x3f97362834d33a4e,
    0x3f9e7f8380184b45, 0x3f869543e7c420d4, 0xbf7326bd4914222a, 0xbf5fc15b0a9d98fa,
    0x3f14cffcfa69fbb6, 0x3f057e48e5b79d10, 0x3ec33b66d7d77264, 0x3e66ac4e578b9b10,
    0x3ddcc74b8d3d5c42, 0x3d23c589137f92b4, 0x3c107f8e2c8707a1, 0x0000000000000000,
    # c8
    0xbe351ca7f096011f, 0x3f9eaaf3320c3851, 0x3f9cf823fe761fc1, 0x3f9022271754ff1f,
    0xbf731fe77c9c60af, 0xbf84a6046865ec7d, 0xbf4ca3f1f2b9192b, 0x3f4c77dee0afd227,
    0x3f04055bce68597a, 0xbee2bf0cb4a71647, 0xbea31eaafe73efd5, 0xbe46abb02c4368ed,
    0xbdbcc749ca8079dd, 0xbd03c5883836b9d2, 0xbbf07a5416264aec, 0x0000000000000000,
    # c9
    0x3f9664f94e6ac14e, 0xbf94d3343bae39dd, 0xbf7bc748e60df843, 0xbf8c89372b43ba85,
    0xbf8129a092de747a, 0x3f60c85b4d538746, 0x3f5be9392199ec18, 0xbf2a0c68a4489f10,
    0xbf00462601dc2faa, 0x3eb7b6a219dea9f4, 0x3e80cbcc8d4c5c8a, 0x3e2425bb231a5e29,
    0x3d9992a4beac8662, 0x3ce191ba5ed3fb67, 0x3bc892450bad44c4, 0x0000000000000000,
    # c10
    0xbea8c4c1fd7852fe, 0xbfccce16b1046f13, 0xbf81a16f224bb7b6, 0xbf62cbf00406bc09,
    0x3f75b29bb02cf69b, 0x3f607df0f9f90c17, 0xbf4b852a6e0758d5, 0xbf0078c63d1b8445,
    0x3eec12eadd55be7a, 0xbe6fa600f593181b, 0xbe5a3c935dce3f7d, 0xbe001c6d95e3ae96,
    0xbd74755a00ea1fd3, 0xbcbc1c6c063bb7ac, 0xbba3be9a4460fe00, 0x0000000000000000,
    # c11
    0xbf822404577aa9dd, 0x403d8b07f7a82aa3, 0xbf9f44ab92fbab0a, 0x3fb2eac604473d6a,
    0x3f45f87d903aaac8, 0xbf5e104671036300, 0x3f19bc98ddf0f340, 0x3f0d4304bc9246e8,
    0xbed13c415f7b9d41, 0xbe722b8d9720cdb0, 0x3e322666d739bec0, 0x3dd76a553d7e7918,
    0x3d4de0fa59416a39, 0x3c948716cf3681b4, 0x3b873f9f2d2fda99, 0x0000000000000000,
    # c12
    0xbefdd99a221ed573, 0x4070593a3735bab4, 0xbfccab654e44835e, 0x3fd13ed80037dbac,
    0xbf6045b9076cc487, 0x3f2085ee7e8ac170, 0x3f23524622610430, 0xbeff12a6626911b4,
    0x3eab9008bca408af, 0x3e634df71865f620, 0xbe05bb1bcf83ca73, 0xbdaf2ac143fb6762,
    0xbd23eae52a3dbf57, 0xbc6b5e3e9ca0955e, 0xbb5eca68e2c1ba2e, 0x0000000000000000,
    # c13
    0x3f6e3be689423841, 0xc0d263511f5baac1, 0x40169f73b15ebe5c, 0xc025c1dd41cd6cb5,
    0xbf58fd89fe05e0d1, 0x3f73f7af01d5af7a, 0xbf1e40bdead17e6b, 0x3ee224cd6c4513e5,
    0xbe24b645e68eeaa3, 0xbe4abfebfb72bc83, 0x3dd51c38f8695ed3, 0x3d8313ac38c6832b,
    0x3cf7787935626685, 0x3c401ffc49c6bc29, 0xbabf0b21acfa52ab, 0x0000000000000000,
    # c14
    0xbf2a1306713a4f3a, 0xc1045e509116b066, 0x4041fab9250984ce, 0xc0458d090ec3de95,
    0xbf74949d60113d63, 0x3f7c9fd6200d0ade, 0x3f02cd40e0ad0a9f, 0xbe858ab8e019f311,
    0xbe792fa6323b7cf8, 0x3e2df04d67876402, 0xbd95c72be95e4d2c, 0xbd55a89c30203106,
    0xbccad6b3bb9eff65, 0xbc12705ccd3dd884, 0xba8e0a4c47ae75f5, 0x0000000000000000,
    # c15
    0xbf55d7e76dc56871, 0x41528c38809c90c7, 0xc076d57fb5190b02, 0x4085f09f888f8ada,
    0x3fa246332a2fcba5, 0xbfb29d851a896fcd, 0x3ed9065ae369b212, 0xbeb8e1ba4c98a030,
    0x3e6ffd0766ad4016, 0xbe0c63c29f505f5b, 0xbd7fab216b9e0e49, 0x3d2826b62056aa27,
    0x3ca313e31762f523, 0x3bea37aa21895319, 0x3ae5c7f1fd871496, 0x0000000000000000,
    # c16
    0x3f35e67ab76a26e7, 0x41848ee0627d8206, 0xc0a216d618b489ec, 0x40a5b89107c8af4f,
    0x3fb69d8374520eda, 0xbfbded519f981716, 0xbef02d288b5b3371, 0x3eb290981209c1a6,
    0xbe567e924bf5ff6e, 0x3de3f7f7de6b0eb6, 0x3d69ed18bae3ebbc, 0xbcf7534c4f3dfa71,
    0xbc730b73f1eaff20, 0xbbba2cff8135d462, 0xbab5a71b5f7d9035, 0x0000000000000000,
], dtype=np.uint64)
TABLE = np.ascontiguousarray(_LUT16X18.view(np.float64).reshape(18, 16).T)  # (interval, coef)
_SIGN = np.int64(-0x8000000000000000)  # the sign bit, as an int64


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

    @njit(cache=True, inline="always")
    def tanh1(x, T):
        """tanh of one float64 as numpy's simd_tanh_f64 computes each lane; T is TABLE."""
        bits = np.float64(x).view(np.int64)
        nd = bits & 0x7FF8000000000000  # |x|'s exponent and first mantissa bit
        i = min(max((nd >> 32) - 0x3FC00000, 0), 0x780000) >> 19  # half-exponent steps from 0.125
        y = abs(x) - T[i, 0]
        r = _fma(T[i, 17], y, T[i, 16])
        for j in range(15, 0, -1):
            r = _fma(r, y, T[i, j])
        r = r if nd <= 0x7FE0000000000000 else 1.0  # |x| ≥ 2^1023 or inf: ±1
        # numpy ORs x's sign bit into r ≥ 0 (±0 included); a branch on the sign would be
        # mispredicted on half of a random layer's values
        r = np.int64(np.float64(r).view(np.int64) | (bits & _SIGN)).view(np.float64)
        return r if x == x else np.nan  # numpy returns its quiet NaN

    @njit(cache=True)
    def _tanh_1d(z, out, T):
        for k in range(z.shape[0]):
            out[k] = tanh1(z[k], T)

    @njit(cache=True)
    def _tanh_2d(z, out, T):
        for i in range(z.shape[0]):
            for j in range(z.shape[1]):
                out[i, j] = tanh1(z[i, j], T)

    def _nb_tanh(z, out):
        """out = tanh(z) for float64 arrays of 1 or 2 dimensions (any strides; out may be z),
        numpy's ufunc otherwise."""
        if z.dtype != np.float64 or out.dtype != np.float64 or z.shape != out.shape:
            return np.tanh(z, out=out)
        if z.ndim == 2:
            _tanh_2d(z, out, TABLE)
        elif z.ndim == 1:
            _tanh_1d(z, out, TABLE)
        else:
            return np.tanh(z, out=out)
        return out


def _probe_arguments() -> np.ndarray:
    rng = np.random.default_rng(0)
    edges = np.concatenate([[0.0], 0.125 * 2.0 ** (np.arange(16) / 2.0)])
    x = [rng.uniform(lo, hi, 64) for lo, hi in zip(edges[:-1], edges[1:])]  # every interval
    x += [rng.standard_normal(1024) * s for s in (0.01, 1.0, 4.0, 30.0)]
    x.append(np.array([0.0, 5e-324, 1e-300, 0.125, 19.0625, 20.0, 22.0, 1e300, 2.0 ** 1023,
                       1.7976931348623157e308, np.inf]))
    x = np.concatenate(x)
    return np.concatenate([x, -x])


def same_as_numpy(f) -> bool:
    """Whether ``f(z, out)`` gives ``np.tanh``'s bits on the probe's arguments."""
    x = _probe_arguments()
    ours = np.empty_like(x)
    f(x, ours)
    return bool(np.array_equal(ours.view(np.int64), np.tanh(x).view(np.int64)))


# tanh(z, out) -> out, the engine's tanh; PORTED says whether it is the compiled port.
PORTED = njit is not None and same_as_numpy(_nb_tanh)
tanh = _nb_tanh if PORTED else _np_tanh
