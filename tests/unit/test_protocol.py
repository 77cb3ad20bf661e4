"""The network protocol (engine/nets/base.py) and the data containers (engine/data.py).

For the MLP (two losses), the Elman net (forward-propagated derivatives, eqs. 1–4 of
McCann & Kalman 1994, and BPTT) and the LSTM (CTC, and a per-step loss):

- ``loss_and_grad`` against central differences of its own loss, in float64;
- a negative control: the same check rejects a perturbed gradient and one with a
  block zeroed;
- bitwise equality with the code path the strategies use today (forward, the
  loss's derivative, backward);
- the gradient is written into the caller's buffer, every entry of it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from engine.data import CTCBatch, Patterns, SeqBatch, SeqData, Sequences
from engine.losses import ctc_loss_and_grad, get_loss, masked_loss_and_grad
from engine.nets import LSTM, MLP, Elman, Net
from engine.nets.elman import phi_grad

H_FD = 1e-6


# ---- the cases: (net, batch, the existing code path) ----------------------------------------
def _mlp(loss):
    rng = np.random.default_rng(1)
    net = MLP((3, 4, 2), "tanh", loss=loss)
    net.init_uniform(rng, scale=0.5)
    batch = Patterns(rng.uniform(-1, 1, (5, 3)), rng.choice([-0.8, 0.8], (5, 2)))  # (5, 3), (5, 2)

    def old(net, batch):  # engine/strategies/serial.py, pattern.py
        lf = get_loss(loss)
        y, cache = net.forward(batch.X, ws=net.workspace(5))
        E = float(np.sum(lf.value(y, batch.T)))
        return E, net.backward(lf.grad(y, batch.T), cache, out=np.empty(net.n_params))

    return net, batch, old


def _sequences(rng, lengths, n_in, n_out):
    N = sum(lengths)
    return Sequences(rng.uniform(-1, 1, (N, n_in)), rng.choice([-0.8, 0.8], (N, n_out)),
                     np.concatenate([[0], np.cumsum(lengths)]))


def _elman(method):
    rng = np.random.default_rng(2)
    net = Elman(3, 4, 2, n_feedback=2, n_hidden2=2, method=method)
    net.init_uniform(rng, scale=0.6)
    batch = _sequences(rng, (3, 1, 4), 3, 2).batch([0, 1, 2])  # L = 4, S = 3

    def old(net, batch):  # engine/nets/elman.py phi_grad over one batch
        return phi_grad(net, [batch], method=method)

    return net, batch, old


def _seq_data(rng, n_in=3):
    lens = [5, 3, 6, 4]
    labels = [np.array([1, 2, 2]), np.array([3]), np.array([1, 3]), np.array([], dtype=np.int64)]
    return SeqData([rng.normal(size=(l, n_in)) for l in lens], labels)


def _lstm_ctc():
    rng = np.random.default_rng(3)
    net = LSTM(3, 3, 4)
    net.init(rng, scale=0.6)
    net.params += rng.uniform(-0.3, 0.3, net.n_params)  # non-zero biases too
    batch = _seq_data(rng).batch(np.array([0, 1, 2, 3]), 7)  # padded one step past the longest

    def old(net, batch):  # reproduce/paper2/bucketed.py SeqWorker.grad
        x, mask, tgt = batch
        y, cache = net.forward(x, mask)
        loss, dy = ctc_loss_and_grad(y, tgt)
        return float(loss.sum()), net.backward(dy, cache, out=np.empty(net.n_params))

    return net, batch, old


def _lstm_mse():
    rng = np.random.default_rng(4)
    net = LSTM(3, 3, 2, loss="mse")
    net.init(rng, scale=0.6)
    batch = _sequences(rng, (3, 1, 4), 3, 2).batch([0, 1, 2], length=5)

    def old(net, batch):
        y, cache = net.forward(batch.X, batch.mask)
        E, dy = masked_loss_and_grad(y, batch.T, batch.mask, loss="mse")
        return E, net.backward(dy, cache, out=np.empty(net.n_params))

    return net, batch, old


CASES = {"mlp-mse": lambda: _mlp("mse"), "mlp-kalman_kwasny": lambda: _mlp("kalman_kwasny"),
         "elman-forward": lambda: _elman("forward"), "elman-bptt": lambda: _elman("bptt"),
         "lstm-ctc": _lstm_ctc, "lstm-mse": _lstm_mse}
BLOCK = {"mlp-mse": "W1", "mlp-kalman_kwasny": "W1", "elman-forward": "W_fh",
         "elman-bptt": "W_fh", "lstm-ctc": "Wh", "lstm-mse": "Wh"}  # a block the control zeroes


# ---- the checker --------------------------------------------------------------------------
def central(net, batch) -> np.ndarray:
    """∂(Σ loss)/∂params by central differences of loss_and_grad's own loss."""
    scratch = np.empty(net.n_params)
    g = np.empty(net.n_params)
    p = net.params
    for i in range(net.n_params):
        old = p[i]
        p[i] = old + H_FD
        fp = net.loss_and_grad(batch, scratch)
        p[i] = old - H_FD
        fm = net.loss_and_grad(batch, scratch)
        p[i] = old
        g[i] = (fp - fm) / (2 * H_FD)
    return g


def rel_err(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-12))


TOL = 1e-7


@pytest.mark.parametrize("case", CASES)
def test_loss_and_grad_matches_central_differences(case):
    net, batch, _ = CASES[case]()
    assert isinstance(net, Net)
    g = np.empty(net.n_params)
    net.loss_and_grad(batch, g)
    assert rel_err(g, central(net, batch)) < TOL


@pytest.mark.parametrize("case", CASES)
def test_negative_controls_fail_the_same_check(case):
    net, batch, _ = CASES[case]()
    g = np.empty(net.n_params)
    net.loss_and_grad(batch, g)
    num = central(net, batch)
    bad = g.copy()
    bad[net.n_params // 2] += 1e-4 * np.max(np.abs(g))  # one entry off by 1e-4 of the scale
    assert rel_err(bad, num) > TOL
    bad = g.copy()
    net.view(bad, BLOCK[case])[...] = 0.0  # the recurrent (or first-layer) block dropped
    assert rel_err(bad, num) > TOL


@pytest.mark.parametrize("case", CASES)
def test_loss_and_grad_equals_the_existing_code_path_bitwise(case):
    net, batch, old = CASES[case]()
    g = np.empty(net.n_params)
    E = net.loss_and_grad(batch, g)
    E_old, g_old = old(net, batch)
    assert E == E_old
    np.testing.assert_array_equal(g, g_old)


@pytest.mark.parametrize("case", CASES)
def test_gradient_is_written_into_the_callers_buffer(case):
    net, batch, _ = CASES[case]()
    want = np.empty(net.n_params)
    E = net.loss_and_grad(batch, want)
    msg = np.full(net.n_params + 2, np.nan)  # a message buffer: gradient, then two extras
    g = msg[:-2]
    assert net.loss_and_grad(batch, g) == E
    np.testing.assert_array_equal(msg[:-2], want)  # every entry overwritten, in place
    assert np.isnan(msg[-2:]).all()
    assert net.loss_and_grad(batch, g) == E  # again: reused scratch leaks nothing
    np.testing.assert_array_equal(g, want)
    with pytest.raises(ValueError, match="contiguous float64"):
        net.loss_and_grad(batch, np.empty(2 * net.n_params)[::2])  # views would be copies
    with pytest.raises(ValueError, match="contiguous float64"):
        net.loss_and_grad(batch, np.empty(net.n_params + 1))


def test_mlp_keeps_one_workspace_per_batch_size():
    net, batch, _ = _mlp("mse")
    g1, g2 = np.empty(net.n_params), np.empty(net.n_params)
    E = net.loss_and_grad(batch, g1)
    net.loss_and_grad(batch.take([0, 2]), g2)  # another size in between
    assert net.loss_and_grad(batch, g2) == E
    np.testing.assert_array_equal(g1, g2)
    assert sorted(net._wss) == [2, 5]


def test_elman_method_by_constructor_or_argument():
    net, batch, _ = _elman("forward")
    gf, gb, gc = (np.empty(net.n_params) for _ in range(3))
    Ef = net.loss_and_grad(batch, gf)
    Eb = net.loss_and_grad(batch, gb, method="bptt")
    assert Ef == Eb
    assert rel_err(gf, gb) < 1e-12 and not np.array_equal(gf, gb)  # two computations, one value
    bptt = net.copy()
    assert bptt.method == "forward"
    bptt.method = "bptt"
    bptt.loss_and_grad(batch, gc)
    np.testing.assert_array_equal(gc, gb)
    with pytest.raises(ValueError, match="method"):
        net.loss_and_grad(batch, gf, method="rtrl")
    with pytest.raises(ValueError, match="method"):
        Elman(2, 2, 1, method="rtrl")


def test_lstm_loss_must_fit_the_batch():
    net, batch, _ = _lstm_ctc()
    g = np.empty(net.n_params)
    with pytest.raises(ValueError, match="does not fit"):
        net.loss_and_grad(batch, g, loss="mse")
    _, seq_batch, _ = _lstm_mse()
    with pytest.raises(ValueError, match="does not fit"):
        LSTM(3, 3, 2).loss_and_grad(seq_batch, np.empty(LSTM(3, 3, 2).n_params))


def test_predict_is_the_forward_pass():
    net, batch, _ = _mlp("mse")
    np.testing.assert_array_equal(net.predict(batch), net.forward(batch.X)[0])
    np.testing.assert_array_equal(net.predict(batch.X), net.predict(batch))
    for make in (lambda: _elman("forward"), _lstm_ctc, _lstm_mse):
        net, batch, _ = make()
        y = net.predict(batch)  # (L, S, n_out)
        assert y.shape[:2] == batch.mask.shape
        assert np.all(y[batch.mask == 0] == 0.0) and np.all(y[batch.mask == 1] != 0.0)
        y0 = net.forward(batch.X, batch.mask)[0] if isinstance(net, LSTM) \
            else net.forward(batch.X)[0]
        np.testing.assert_array_equal(y[batch.mask == 1], y0[batch.mask == 1])


# ---- the containers -----------------------------------------------------------------------
def test_patterns_unpack_and_take():
    X, T = np.arange(6.0).reshape(3, 2), np.arange(3.0)[:, None]
    p = Patterns(X, T)
    x, t = p
    assert x is X and t is T and p.n_patterns == 3
    q = p.take([2, 0])
    np.testing.assert_array_equal(q.X, X[[2, 0]])
    np.testing.assert_array_equal(q.T, T[[2, 0]])


def test_sequence_batches_pad_time_major():
    rng = np.random.default_rng(0)
    d = _sequences(rng, (2, 3), 2, 1)
    b = d.batch([1, 0], length=4)
    assert isinstance(b, SeqBatch) and b.X.shape == (4, 2, 2) and b.n_patterns == 5
    np.testing.assert_array_equal(b.mask[:, 0], [1, 1, 1, 0])
    np.testing.assert_array_equal(b.X[:3, 0], d.X[2:5])
    np.testing.assert_array_equal(b.X[3], 0.0)
    with pytest.raises(ValueError, match="padded length"):
        d.batch([1], length=2)


def test_seq_data_batch_is_a_ctc_batch():
    rng = np.random.default_rng(0)
    d = _seq_data(rng)
    b = d.batch(np.array([1, 2]), 8)
    assert isinstance(b, CTCBatch)
    x, mask, tgt = b
    assert x.shape == (8, 2, 3) and mask.sum() == 3 + 6
    np.testing.assert_array_equal(x[:3, 0], d.seqs[1])
    np.testing.assert_array_equal(tgt.labels, [[3, 0], [1, 3]])
    np.testing.assert_array_equal(tgt.input_lengths, [3, 6])
    np.testing.assert_array_equal(tgt.label_lengths, [1, 2])


def test_speech_corpus_is_a_frame_corpus_of_56_classes():
    from datasets import speech as S
    from datasets.speech import FrameCorpus

    c = S.SpeechCorpus(np.zeros((5, S.N_STATIC)), np.zeros(5, np.int64), np.array([0, 2, 5]),
                       np.array([0, 1]))
    assert isinstance(c, FrameCorpus) and c.n_classes == 56
    sub = c.subset(np.array([1]))
    assert type(sub) is S.SpeechCorpus and sub.n_frames == 3 and sub.targets([0]).shape == (1, 56)


def test_engine_imports_neither_datasets_nor_reproduce():
    """docs/engine.md: layers reproduce → datasets → engine; nothing imports upward."""
    engine = Path(__file__).resolve().parents[2] / "engine"
    bad = []
    for f in engine.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            bad += [f"{f.name}: {n}" for n in names if n.split(".")[0] in ("datasets", "reproduce")]
    assert bad == []
