"""engine.kernels: every fused kernel gives the numpy reference's bits (numpy's own tanh
included, :func:`numpys_tanh`), on every activation form, on shapes with one column and many, and on values where a different
rounding would show (wide exponents, ±0, ±inf, NaN). Then whole MLP training runs, fused
and reference, to the same bits. Negative controls: a kernel that computes f′ another
way, and a sequential sum of one column (numpy sums that pairwise), are caught."""
from __future__ import annotations

import numpy as np
import pytest

from engine import kernels
from engine.activations import ACTIVATIONS
from engine.losses import get_loss
from engine.nets.mlp import MLP
from engine.optim import SGD

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:overflow:RuntimeWarning")
needs_numba = pytest.mark.skipif(kernels.IMPLEMENTATION != "numba", reason="numba absent")
ACTS = [a for a in ACTIVATIONS.values() if a.form is not None]


def numpys_tanh(monkeypatch) -> None:
    """numpy's tanh everywhere: the activations' f and every kernel call np.tanh instead of
    engine.tanhkernel's compiled one, and the LSTM's loops take it between kernels. Both sides
    of a bit-for-bit comparison run this way; the compiled tanh has its own guards
    (tests/unit/test_tanhkernel.py)."""
    from engine import activations, seqkernels, tanhkernel

    monkeypatch.setattr(activations, "tanh", tanhkernel._np_tanh)
    monkeypatch.setattr(kernels, "tanh", tanhkernel._np_tanh)
    monkeypatch.setattr(seqkernels, "tanh", tanhkernel._np_tanh)
    monkeypatch.setattr(seqkernels, "COMPILED", False)


def same_bits(a, b) -> bool:
    """Every bit the same, signed zeros included, except a NaN's sign and payload: which
    NaN an add of two returns is the operand order's, and LLVM may commute an add."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    keep = ~np.isnan(a)
    return np.array_equal(a[keep].view(np.uint64), b[keep].view(np.uint64))


def values(rng, shape, *, special: bool = False):
    """Wide exponents; with ``special`` also ±0, ±inf and NaN in a few places."""
    x = rng.standard_normal(shape) * np.exp(rng.uniform(-30, 30, shape))
    if special:
        flat = x.reshape(-1)
        k = rng.choice(flat.size, size=min(flat.size, 5), replace=False)
        flat[k] = [0.0, -0.0, np.inf, -np.inf, np.nan][: k.size]
    return x


def outputs(act, rng, shape):
    """Values f could output (and a few outside, which f′ must treat the same)."""
    y = np.tanh(rng.standard_normal(shape) * 3)
    if act.form == "logistic":
        y = 0.5 * y + 0.5
    elif act.form == "identity":
        y = values(rng, shape)
    y.reshape(-1)[:1] = 1.5
    return y


SHAPES = [(1, 1), (9, 1), (256, 1), (2, 2), (33, 7), (256, 100), (3, 257)]


@needs_numba
@pytest.mark.parametrize("act", ACTS, ids=lambda a: a.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_bias_act_matches_the_reference(act, shape, monkeypatch):
    rng = np.random.default_rng(0)
    z, b = values(rng, shape, special=True) * 1e-3, values(rng, shape[1:]) * 1e-3
    ref, fused = z.copy(), z.copy()
    numpys_tanh(monkeypatch)
    kernels._nb_bias_act(act, fused, b)
    kernels._np_bias_act(act, ref, b)
    assert same_bits(ref, fused)


@needs_numba
@pytest.mark.parametrize("act", ACTS, ids=lambda a: a.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("outer", [False, True], ids=["matrix", "outer"])
def test_df_mul_and_its_column_sums_match_the_reference(act, shape, outer):
    rng = np.random.default_rng(1)
    y = outputs(act, rng, shape)
    dcol, wcol = values(rng, shape[:1], special=True), values(rng, shape[1:])
    d = np.einsum("i,j->ij", dcol, wcol) if outer else values(rng, shape, special=True)
    ref, fused, tmp = np.empty(shape), np.empty(shape), np.empty(shape)
    gb_ref, gb = np.full(shape[1], 7.0), np.full(shape[1], 7.0)
    if outer:
        kernels._np_outer_df_mul(act, y, dcol, wcol, ref, tmp, None)
        summed = kernels._nb_outer_df_mul(act, y, dcol, wcol, fused, tmp, gb)
    else:
        kernels._np_df_mul(act, y, d, ref, tmp, None)
        summed = kernels._nb_df_mul(act, y, d, fused, tmp, gb)
    assert same_bits(ref, fused)
    assert summed == (shape[1] > 1)  # one column: numpy's pairwise sum, not ours
    if summed:
        np.add.reduce(ref, axis=0, out=gb_ref)
        assert same_bits(gb_ref, gb)
    else:
        assert same_bits(gb, np.full(shape[1], 7.0))  # untouched


@needs_numba
def test_df_mul_in_place_matches():  # the MLP passes d as out
    act, rng = ACTIVATIONS["symmetric_sigmoid"], np.random.default_rng(2)
    y, d = outputs(act, rng, (40, 30)), values(rng, (40, 30))
    ref = np.empty_like(d)
    kernels._np_df_mul(act, y, d, ref, np.empty_like(d), None)
    kernels._nb_df_mul(act, y, d, d, np.empty_like(d), None)
    assert same_bits(ref, d)


@needs_numba
def test_sgd_matches_direction_then_apply():
    rng = np.random.default_rng(3)
    p, g, v = (values(rng, 1001, special=True) for _ in range(3))
    ref_p, ref_v, p2, v2 = p.copy(), v.copy(), p.copy(), v.copy()
    kernels._np_sgd(ref_p, g, ref_v, -0.1 / 7, 0.3)
    kernels._sgd(p2, g, v2, -0.1 / 7, 0.3)
    assert same_bits(ref_p, p2) and same_bits(ref_v, v2)


def test_a_kernel_computing_f_prime_another_way_is_caught():
    """The control: (1 − y)(1 + y) equals 1 − y² in exact arithmetic, not in floats;
    and same_bits tells +0 from −0, NaN's sign aside."""
    assert not same_bits([0.0], [-0.0]) and not same_bits([1.0], [np.nan])
    assert same_bits([np.nan], [-np.nan])
    rng = np.random.default_rng(4)
    y = np.tanh(rng.standard_normal((256, 100)))
    d = values(rng, (256, 100))
    ref = np.empty_like(d)
    kernels._np_df_mul(ACTIVATIONS["tanh"], y, d, ref, np.empty_like(d), None)
    assert not same_bits(ref, d * ((1.0 - y) * (1.0 + y)))


def test_numpy_sums_one_column_pairwise_so_it_is_not_fused():
    """The control for the column-sum rule: a sequential sum of a (B, 1) column differs
    from numpy's; of (B, n ≥ 2) it does not."""
    rng = np.random.default_rng(5)
    one, two = values(rng, (256, 1)), values(rng, (256, 2))
    seq = lambda a: [sum(a[i, j] for i in range(a.shape[0])) for j in range(a.shape[1])]  # noqa: E731
    assert not same_bits(np.add.reduce(one, axis=0), seq(one))
    assert same_bits(np.add.reduce(two, axis=0), seq(two))


def train(sizes, acts, *, need_dx: bool, steps: int = 30):
    rng = np.random.default_rng(6)
    net = MLP(sizes, acts)
    net.init_uniform(np.random.default_rng(7), scale=1.0)
    opt = SGD(net.n_params, lr=0.05, momentum=0.4)
    X, T = rng.standard_normal((33, sizes[0])), rng.uniform(-1, 1, (33, sizes[-1]))
    ws, g = net.workspace(33), np.empty(net.n_params)
    for _ in range(steps):
        y, cache = net.forward(X, ws=ws)
        res = net.backward(get_loss("mse").grad(y, T), cache, out=g, need_dx=need_dx)
        opt.step(net.params, g, 33)
    dx = res[1].ravel() if need_dx else np.empty(0)
    return np.concatenate([net.params, g, dx])


CASES = [((5, 7, 3), ["logistic", "tanh"]), ((5, 7, 1), ["tanh1.5", "identity"]),
         ((4, 1, 2), ["symmetric_sigmoid", "logistic"]),
         ((6, 9, 1, 1), ["tanh", "symmetric_sigmoid", "logistic"]),
         ((6, 2, 9, 3), ["identity", "tanh1.5", "identity"]), ((8, 100, 1), "symmetric_sigmoid")]


@needs_numba
@pytest.mark.parametrize("sizes,acts", CASES, ids=[str(c[0]) for c in CASES])
@pytest.mark.parametrize("need_dx", [False, True])
def test_mlp_training_is_bit_identical_fused_and_reference(monkeypatch, sizes, acts, need_dx):
    numpys_tanh(monkeypatch)
    fused = train(sizes, acts, need_dx=need_dx)
    for name in ("bias_act", "df_mul", "outer_df_mul", "sgd"):
        monkeypatch.setattr(kernels, name, getattr(kernels, f"_np_{name}"))
    ref = train(sizes, acts, need_dx=need_dx)
    assert np.isfinite(ref).all() and same_bits(ref, fused)
    monkeypatch.setattr(kernels, "sgd", lambda p, g, v, c, m: kernels._np_sgd(p, g, v, c * 1.0000001, m))
    assert not same_bits(train(sizes, acts, need_dx=need_dx), fused)  # the control


@needs_numba
def test_a_copy_of_an_activation_with_another_df_is_not_fused():
    """dataclasses.replace keeps ``form``; the kernels must then use the copy's own df."""
    import dataclasses

    act = dataclasses.replace(ACTIVATIONS["logistic"], name="logistic-wrong-df",
                              df=ACTIVATIONS["tanh"].df)
    rng = np.random.default_rng(8)
    y, d = outputs(act, rng, (20, 5)), values(rng, (20, 5))
    out, want = np.empty_like(d), np.empty_like(d)
    kernels.df_mul(act, y, d, out, np.empty_like(d), None)
    np.multiply(d, ACTIVATIONS["tanh"].df(y, np.empty_like(d)), out=want)
    assert same_bits(out, want)
    kernels.df_mul(ACTIVATIONS["logistic"], y, d, out, np.empty_like(d), None)
    assert not same_bits(out, want)  # the control: the registry's logistic is fused, own df


def test_the_kernels_label_names_the_kernels_that_run():
    # IMPLEMENTATION (recorded in results) says which passes run: numba's where numba is
    # importable and ENGINE_KERNELS is not "numpy", else the numpy reference
    fused = kernels.njit is not None
    assert kernels.IMPLEMENTATION == ("numba" if fused else "numpy")
    for name in ("bias_act", "df_mul", "outer_df_mul"):
        assert getattr(kernels, name) is getattr(kernels, ("_nb_" if fused else "_np_") + name), name
    assert kernels.sgd is (kernels._sgd if fused else kernels._np_sgd)


def test_engine_kernels_numpy_selects_the_reference(tmp_path):
    import os
    import subprocess
    import sys

    code = ("from engine import kernels as K; "
            "print(K.IMPLEMENTATION, K.bias_act is K._np_bias_act, K.sgd is K._np_sgd)")
    env = {**os.environ, "ENGINE_KERNELS": "numpy"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["numpy", "True", "True"]
