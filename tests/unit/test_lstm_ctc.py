"""paper2 core: LSTM (masked, padded) and CTC gradients by central differences in
float64, with negative controls that must fail; a tiny CTC case worked by hand;
best-path decoding, CER and ADADELTA worked examples."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.decoding import best_path, character_error_rate, edit_distance
from engine.losses import CTCTarget, ctc_loss_and_grad, get_loss, log_softmax
from engine.nets.lstm import LSTM, pad_batch

H = 1e-6
TOL = 1e-7


def rel_error(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), np.linalg.norm(b), 1e-300))


def central(f, v: np.ndarray, *, h: float = H) -> np.ndarray:
    g = np.empty_like(v)
    for i in np.ndindex(*v.shape):
        old = v[i]
        v[i] = old + h
        fp = f()
        v[i] = old - h
        fm = f()
        v[i] = old
        g[i] = (fp - fm) / (2 * h)
    return g


def problem(seed=0):
    rng = np.random.default_rng(seed)
    net = LSTM(3, 4, 5)
    net.init(rng, scale=0.6)
    net.params += rng.uniform(-0.3, 0.3, net.n_params)  # non-zero biases too
    lens = np.array([7, 4, 6])
    seqs = [rng.normal(size=(l, 3)) for l in lens]
    x, mask = pad_batch(seqs, length=8)  # (8, 3, 3), one step of padding beyond the longest
    # labels with a repeat (needs a blank between) and an empty label sequence
    tgt = CTCTarget(np.array([[1, 2, 2], [3, 0, 0], [0, 0, 0]]), np.array([3, 1, 0]), lens)
    return net, x, mask, tgt


def total(net, x, mask, tgt) -> float:
    y, _ = net.forward(x, mask)
    return float(ctc_loss_and_grad(y, tgt, need_grad=False)[0].sum())


def analytic(net, x, mask, tgt):
    y, cache = net.forward(x, mask)
    _, dy = ctc_loss_and_grad(y, tgt)
    return net.backward(dy, cache, need_dx=True)


def test_lstm_ctc_param_and_input_gradients_match_central_differences():
    net, x, mask, tgt = problem()
    g, dx = analytic(net, x, mask, tgt)
    num = central(lambda: total(net, x, mask, tgt), net.params)
    assert rel_error(g, num) < TOL
    numx = central(lambda: total(net, x, mask, tgt), x)
    assert rel_error(dx * mask[:, :, None], numx) < TOL
    assert np.all(numx[~mask.astype(bool)] == 0)  # padded inputs cannot matter


def test_negative_control_dropped_forget_gate_term_fails():
    """The same checker on a gradient that misses the forget-gate path must fail."""
    net, x, mask, tgt = problem()
    g, _ = analytic(net, x, mask, tgt)
    Hn = net.H
    for name in ("Wx", "Wh", "b"):
        net.view(g, name)[..., Hn:2 * Hn] = 0.0
    num = central(lambda: total(net, x, mask, tgt), net.params)
    assert rel_error(g, num) > 1e-3


def test_ctc_gradient_wrt_logits_central_differences():
    rng = np.random.default_rng(3)
    T, B, K = 6, 4, 4
    u = rng.normal(size=(T, B, K)) * 2
    tgt = CTCTarget(np.array([[1, 1, 2], [2, 3, 0], [3, 0, 0], [0, 0, 0]]),
                    np.array([3, 2, 1, 0]), np.array([6, 5, 2, 3]))
    loss, g = ctc_loss_and_grad(u, tgt)
    assert np.all(np.isfinite(loss))
    num = central(lambda: float(ctc_loss_and_grad(u, tgt, need_grad=False)[0].sum()), u)
    assert rel_error(g, num) < TOL
    # negative control: occupation counted on the reversed label sequence
    bad = CTCTarget(np.array([[2, 1, 1], [3, 2, 0], [3, 0, 0], [0, 0, 0]]), tgt.label_lengths,
                    tgt.input_lengths)
    assert rel_error(ctc_loss_and_grad(u, bad)[1], num) > 1e-3


def test_ctc_worked_by_hand():
    """K = 2 (blank, a), label "a", T = 2. y_1 = (0.4, 0.6), y_2 = (0.7, 0.3).
    Paths onto "a": aa, a_, _a → p = .6·.3 + .6·.7 + .4·.3 = 0.72.
    ∂(−ln p)/∂u_{t,k} = y_{t,k} − (paths with k at t)/p:
    t=1: blank .4 − .12/.72 = 0.2333…, a .6 − .60/.72 = −0.2333…
    t=2: blank .7 − .42/.72 = 0.1166…, a .3 − .30/.72 = −0.1166…"""
    y = np.array([[0.4, 0.6], [0.7, 0.3]])
    u = np.log(y)[:, None, :]  # (T=2, B=1, K=2): softmax(log y) = y
    loss, g = ctc_loss_and_grad(u, CTCTarget(np.array([[1]]), np.array([1]), np.array([2])))
    assert loss[0] == pytest.approx(-math.log(0.72), rel=1e-12)
    want = np.array([[0.4 - 0.12 / 0.72, 0.6 - 0.60 / 0.72], [0.7 - 0.42 / 0.72, 0.3 - 0.30 / 0.72]])
    np.testing.assert_allclose(g[:, 0, :], want, atol=1e-12)
    # "aa" in T = 3 has exactly one path, a _ a
    y3 = np.array([[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]])
    l3, _ = ctc_loss_and_grad(np.log(y3)[:, None, :], CTCTarget(np.array([[1, 1]]), np.array([2]),
                                                               np.array([3])))
    assert l3[0] == pytest.approx(-math.log(0.8 * 0.5 * 0.9), rel=1e-12)
    # ... and none in T = 2: infinite loss, zero gradient
    l2, g2 = ctc_loss_and_grad(np.log(y3[:2])[:, None, :], CTCTarget(np.array([[1, 1]]),
                                                                    np.array([2]), np.array([2])))
    assert l2[0] == math.inf and np.all(g2 == 0)


def test_ctc_matches_brute_force_path_sum():
    """p(z|x) = Σ over all K^T paths that collapse to z (Graves et al. 2006, eq. 3)."""
    import itertools

    rng = np.random.default_rng(5)
    T, K = 5, 3
    u = rng.normal(size=(T, 1, K))
    y = np.exp(log_softmax(u))[:, 0]
    for z in ([1], [1, 1], [1, 2], [2, 1, 2], []):
        p = 0.0
        for path in itertools.product(range(K), repeat=T):
            col = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
            if [c for c in col if c != 0] == z:
                p += np.prod(y[np.arange(T), path])
        lab = np.array([z + [0] * (3 - len(z))])
        loss, _ = ctc_loss_and_grad(u, CTCTarget(lab, np.array([len(z)]), np.array([T])))
        assert loss[0] == pytest.approx(-math.log(p), rel=1e-10)


def test_ctc_in_registry_and_padding_invariance():
    rng = np.random.default_rng(1)
    u = rng.normal(size=(5, 2, 4))
    tgt = CTCTarget(np.array([[1, 2], [3, 0]]), np.array([2, 1]), np.array([5, 3]))
    ctc = get_loss("ctc")
    np.testing.assert_allclose(ctc.value(u, tgt), ctc_loss_and_grad(u, tgt)[0])
    # extra padded steps change nothing
    up = np.concatenate([u, rng.normal(size=(3, 2, 4))])
    np.testing.assert_allclose(ctc.value(up, tgt), ctc.value(u, tgt), rtol=1e-13)
    gp = ctc.grad(up, tgt)
    np.testing.assert_allclose(gp[:5], ctc.grad(u, tgt), atol=1e-13)
    assert np.all(gp[5:] == 0) and np.all(gp[3:, 1] == 0)
    with pytest.raises(ValueError, match="input lengths"):
        ctc_loss_and_grad(u, CTCTarget(tgt.labels, tgt.label_lengths, np.array([6, 1])))


def test_lstm_padding_does_not_change_a_sequence():
    rng = np.random.default_rng(2)
    net = LSTM(3, 4, 5)
    net.init(rng)
    s = rng.normal(size=(4, 3))
    y1, _ = net.forward(*pad_batch([s]))
    y2, _ = net.forward(*pad_batch([s, rng.normal(size=(9, 3))]))
    np.testing.assert_allclose(y2[:4, 0], y1[:, 0], rtol=1e-14)
    assert np.all(y2[4:, 0] == 0)
    with pytest.raises(ValueError, match="more than the padded length"):
        pad_batch([s], length=3)


def test_best_path_and_cer():
    K = 4
    path = [0, 1, 1, 0, 1, 2, 2, 3, 0]  # → 1 1 2 3
    u = np.full((len(path) + 2, 1, K), -5.0)
    u[np.arange(len(path)), 0, path] = 5.0
    assert best_path(u, [len(path)]) == [[1, 1, 2, 3]]
    assert best_path(u, [3]) == [[1]]
    assert edit_distance("kitten", "sitting") == 3
    assert character_error_rate(["kitten", "ab"], ["sitting", "ab"]) == pytest.approx(3 / 9)


def _levenshtein(a, b):
    """The textbook dynamic programme, one cell at a time (Wagner & Fischer 1974)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _rows_without_running_minimum(a, b):
    """The vectorised rows with t taken as the row (cur[j] = t[j]): insertions never chain
    within a row. The control: the random cases below must tell it from the real thing."""
    prev = np.arange(len(b) + 1)
    for i, ca in enumerate(a, 1):
        t = np.empty_like(prev)
        t[0] = i
        t[1:] = np.minimum(prev[:-1] + (np.asarray(b) != ca), prev[1:] + 1)
        prev = t
    return int(prev[-1])


def test_edit_distance_is_the_cell_by_cell_programme():
    # the vectorised rows (a running minimum) against the textbook recurrence, on random
    # label sequences of every length from empty, either one the longer, few symbols (many
    # matches) and many; the decoder's types: lists of ints and integer arrays
    rng = np.random.default_rng(5)
    told_apart = 0
    for _ in range(2000):
        a = rng.integers(0, rng.integers(1, 30), rng.integers(0, 25))
        b = rng.integers(0, rng.integers(1, 30), rng.integers(0, 25))
        want = _levenshtein(list(a), list(b))
        assert edit_distance(a, b) == edit_distance(list(b), a) == want
        told_apart += _rows_without_running_minimum(list(a), list(b)) != want
    assert edit_distance([], []) == 0 and edit_distance("abc", "") == edit_distance("", "abc") == 3
    assert told_apart > 100  # control: the cases exercise the within-row chain


def test_loss_and_grad_is_the_forward_and_backward_pass():
    # the Net protocol's loss_and_grad: the summed CTC loss and the gradient of analytic(),
    # bit for bit (the central differences above check analytic itself)
    from engine.data import CTCBatch

    net, x, mask, tgt = problem()
    g = np.full(net.n_params, np.nan)  # whatever the buffer held is overwritten
    loss = net.loss_and_grad(CTCBatch(x, mask, tgt), g)
    want, _ = analytic(net, x, mask, tgt)
    assert loss == total(net, x, mask, tgt) and np.array_equal(g, want)
    assert np.abs(g).max() > 0  # control: a real gradient, not the zeros of a skipped pass


def test_lstm_refuses_bad_sizes_and_a_batch_that_does_not_fit_its_loss():
    with pytest.raises(ValueError, match="sizes must be >= 1"):
        LSTM(3, 0, 5)
    from engine.data import CTCBatch

    net, x, mask, tgt = problem()
    with pytest.raises(ValueError, match="does not fit a CTCBatch"):
        net.loss_and_grad(CTCBatch(x, mask, tgt), np.zeros(net.n_params), loss="mse")
    assert LSTM(1, 1, 1).n_params > 0  # control: the smallest sizes are valid
