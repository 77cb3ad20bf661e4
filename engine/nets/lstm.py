"""LSTM layer over padded, masked batches plus a linear output layer.

The standard LSTM without peepholes (Hochreiter & Schmidhuber 1997 with the
forget gate of Gers et al. 2000), as Lasagne's ``LSTMLayer`` computes it
without its optional peephole terms:

    z_t = x_t W_x + h_{t−1} W_h + b            z = [i | f | o | g], each (B, H)
    i, f, o = σ(z_i), σ(z_f), σ(z_o);  g = tanh(z_g)
    c_t = f ⊙ c_{t−1} + i ⊙ g;         h_t = o ⊙ tanh(c_t)
    y_t = h_t W_y + b_y                (linear output: CTC applies the softmax)

Batches are time-major and padded: ``x`` is (T, B, n_in) and ``mask`` (T, B)
is 1 where sequence b has a step t. Because the layer runs forward in time,
padded steps after a sequence ends cannot change its earlier outputs; the mask
zeroes the outputs (and so the gradients) at padded steps. Padded steps are
still computed: that is the cost sequence bucketing removes (:mod:`engine.schedule`).

Layout of ``params`` (and of every gradient), one flat float64 vector:
``Wx`` (n_in, 4H), ``Wh`` (H, 4H), ``b`` (4H,), ``Wy`` (H, n_out), ``by`` (n_out,).

:meth:`LSTM.loss_and_grad` (the :class:`engine.nets.base.Net` protocol) takes an
:class:`engine.data.CTCBatch` under the CTC loss, or an
:class:`engine.data.SeqBatch` with a target per step under any per-pattern loss
of the registry. ``pad_batch`` lives in :mod:`engine.data` (re-exported here).
"""
from __future__ import annotations

import numpy as np

from engine.data import CTCBatch, SeqBatch, pad_batch  # noqa: F401  (pad_batch: re-exported)
from engine.losses import ctc_loss_and_grad, get_loss, masked_loss_and_grad
from engine import seqkernels as K
from engine.nets.base import FlatParams


class LSTM(FlatParams):
    """One LSTM layer of ``n_hidden`` cells and a linear output layer of ``n_out`` units.

    ``loss`` is the registry name :meth:`loss_and_grad` uses by default: "ctc" for
    a :class:`engine.data.CTCBatch`, a per-pattern loss ("mse") for a SeqBatch.
    """

    def __init__(self, n_in: int, n_hidden: int, n_out: int, *, params: np.ndarray | None = None,
                 loss: str = "ctc"):
        if min(n_in, n_hidden, n_out) < 1:
            raise ValueError(f"sizes must be >= 1, got {(n_in, n_hidden, n_out)}")
        self.n_in, self.H, self.n_out = int(n_in), int(n_hidden), int(n_out)
        self.loss = get_loss(loss).name
        H = self.H
        self._layout([("Wx", (n_in, 4 * H)), ("Wh", (H, 4 * H)), ("b", (4 * H,)),
                      ("Wy", (H, n_out)), ("by", (n_out,))], params)

    def init(self, rng: np.random.Generator, *, scale: float = 0.1, forget_bias: float = 1.0) -> None:
        """Weights uniform in [−scale, scale], biases 0 except the forget gate's
        (``forget_bias``, Gers et al. 2000; Jozefowicz et al. 2015)."""
        self.params[:] = rng.uniform(-scale, scale, size=self.n_params)
        self.view(self.params, "b")[:] = 0.0
        self.view(self.params, "b")[self.H:2 * self.H] = forget_bias
        self.view(self.params, "by")[:] = 0.0

    # -- forward / backward ---------------------------------------------------
    def forward(self, x: np.ndarray, mask: np.ndarray | None = None):
        """x (T, B, n_in), mask (T, B) of 0/1 or None → (y (T, B, n_out), cache)."""
        T, B, _ = x.shape
        H = self.H
        p = self.params
        Wh, Wy = self.view(p, "Wh"), self.view(p, "Wy")
        Z = x.reshape(T * B, -1) @ self.view(p, "Wx")  # (T·B, 4H): input part of every step at once
        Z += self.view(p, "b")
        Z = Z.reshape(T, B, 4 * H)  # becomes the gate activations in place
        C = np.empty((T, B, H))  # cell states c_t
        Hs = np.zeros((T + 1, B, H))  # Hs[t+1] = h_t, Hs[0] = h_{−1} = 0
        TC = np.empty((T, B, H))  # tanh(c_t)
        K.lstm_forward(Z, Wh, C, Hs, TC)  # the loop over t (engine.seqkernels)
        y = (Hs[1:].reshape(T * B, H) @ Wy).reshape(T, B, self.n_out)  # (T, B, n_out)
        y += self.view(p, "by")
        if mask is not None:
            y *= mask[:, :, None]
        return y, (x, mask, Z, C, Hs, TC)

    def backward(self, dy: np.ndarray, cache, *, out: np.ndarray | None = None,
                 need_dx: bool = False):
        """Gradient of the summed loss given dy = ∂E/∂y (T, B, n_out); returns the flat
        gradient (and dx (T, B, n_in) with ``need_dx``). Back-propagation through time."""
        x, mask, Z, C, Hs, TC = cache
        T, B, _ = x.shape
        H = self.H
        p = self.params
        g = np.empty(self.n_params) if out is None else out
        if mask is not None:
            dy = dy * mask[:, :, None]
        Wh, Wy = self.view(p, "Wh"), self.view(p, "Wy")
        dy2 = dy.reshape(T * B, self.n_out)
        np.matmul(Hs[1:].reshape(T * B, H).T, dy2, out=self.view(g, "Wy"))
        np.sum(dy2, axis=0, out=self.view(g, "by"))
        dH = (dy2 @ Wy.T).reshape(T, B, H)  # (T, B, H): ∂E/∂h_t from the output layer
        dZ = np.empty((T, B, 4 * H))  # ∂E/∂z_t
        K.lstm_backward(Z, dH, TC, C, Wh, dZ)  # back-propagation through time (engine.seqkernels)
        dZ2 = dZ.reshape(T * B, 4 * H)
        np.matmul(x.reshape(T * B, -1).T, dZ2, out=self.view(g, "Wx"))
        np.matmul(Hs[:-1].reshape(T * B, H).T, dZ2, out=self.view(g, "Wh"))
        np.sum(dZ2, axis=0, out=self.view(g, "b"))
        if need_dx:
            return g, (dZ2 @ self.view(p, "Wx").T).reshape(x.shape)
        return g

    # -- the Net protocol ------------------------------------------------------
    def loss_and_grad(self, batch: CTCBatch | SeqBatch, grad: np.ndarray, *,
                      loss: str | None = None) -> float:
        """Σ of the loss over the batch; Σ of its gradient into ``grad`` (n_params,).

        A :class:`engine.data.CTCBatch`: Σ over sequences of −ln p(z|x) (Graves et
        al. 2006, eqs. 5–16) with its gradient back-propagated through time. A
        :class:`engine.data.SeqBatch`: a per-pattern loss summed over the real steps.
        """
        name = self.loss if loss is None else get_loss(loss).name
        if isinstance(batch, CTCBatch) != (name == "ctc"):
            raise ValueError(f"loss {name!r} does not fit a {type(batch).__name__}: CTC takes a "
                             "CTCBatch, a per-pattern loss a SeqBatch with a target per step")
        g = self._check_grad(grad)
        y, cache = self.forward(batch.X, batch.mask)
        if name == "ctc":
            per_seq, dy = ctc_loss_and_grad(y, batch.target)  # (B,), (T, B, n_out)
            total = float(per_seq.sum())
        else:
            total, dy = masked_loss_and_grad(y, batch.T, batch.mask, loss=name)
        self.backward(dy, cache, out=g)
        return total

    def predict(self, batch: CTCBatch | SeqBatch) -> np.ndarray:
        """Outputs y (T, B, n_out) of the batch, zero at padded steps (linear: CTC's
        softmax is not applied)."""
        return self.forward(batch.X, batch.mask)[0]
