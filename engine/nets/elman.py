"""Elman simple recurrent network (Elman 1990), with optional skip connections and second
hidden layer.

Units: inputs I, context (feedback) units F, hidden H,
an optional second hidden layer H2, outputs O. Each pattern:

    c_p  = a_(p−1),h[:F]   (hid(f) = f: the first |F| hidden units are copied back;
                            zero at the start of every sequence)
    h_p  = f(x_p W_ih + c_p W_fh + b_h)
    h2_p = f(h_p W_h2 + b_2)                      (only with n_hidden2 > 0)
    y_p  = f(x_p W_io + c_p W_fo + r_p W_ro + b_o) (r = h2 if present, else h;
                                                    W_io, W_fo: the skip connections)

with f(x) = tanh(1.5·x) by default (registry name "tanh1.5"). The second
hidden layer is fed by the first hidden layer only and is not fed back (a
choice of this implementation).

Parameters live in one flat float64 vector with named views (docs/engine.md). The
block W_ih, W_fh, b_h is contiguous and is also viewed as ``Wz`` of shape
(|I|+|F|+1, |H|): row i < |I|+|F| holds w_ih, the last row holds b_h (the
last weight into each hidden unit is its bias).

Sequences are processed time-major and in lockstep: arrays (L, S, n) hold
step t of S sequences; ``mask`` (L, S) marks real patterns (sequences shorter
than L are padded, and padded patterns carry no error).

Two gradients of Φ:

* :meth:`Elman.grad_forward`: forward-propagated derivatives (real-time
  recurrent learning, Williams & Zipser 1989):
  ∂a/∂Y for every hidden-layer parameter Y carried from pattern to pattern,
  zeroed at each sequence start; output-side parameters by their
  instantaneous derivative.
* :meth:`Elman.grad_bptt`: back-propagation through time.

:meth:`Elman.loss_and_grad` (the :class:`engine.nets.base.Net` protocol) takes
one :class:`engine.data.SeqBatch` and uses either, by the net's ``method`` or
its own ``method`` argument; :func:`phi_grad` sums it over batches. The data
containers (``Sequences``, ``Batch`` = :class:`engine.data.SeqBatch`) live in
:mod:`engine.data` and are re-exported here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.activations import get_activation
from engine.data import SeqBatch, Sequences  # noqa: F401  (Sequences: re-exported)
from engine.losses import get_loss, masked_loss_and_grad
from engine.nets.base import FlatParams

Batch = SeqBatch  # the old name of the Elman net's batch
METHODS = ("forward", "bptt")


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be 'forward' or 'bptt', got {method!r}")
    return method


@dataclass
class Cache:
    X: np.ndarray  # (L, S, n_in)
    C: np.ndarray  # (L, S, F) context
    H: np.ndarray  # (L, S, n_hidden)
    H2: np.ndarray | None  # (L, S, n_hidden2)
    Y: np.ndarray  # (L, S, n_out)


# ---- the network ----------------------------------------------------------------------------
class Elman(FlatParams):
    """(n_in + n_feedback)-n_hidden[-n_hidden2]-n_out simple recurrent network.

    ``method`` ("forward": forward-propagated derivatives, or "bptt") and ``loss`` (a registry name) are
    what :meth:`loss_and_grad` uses unless told otherwise.
    """

    def __init__(self, n_in: int, n_hidden: int, n_out: int, *, n_feedback: int | None = None,
                 n_hidden2: int = 0, skip: bool = True, activation: str = "tanh1.5",
                 params: np.ndarray | None = None, method: str = "forward",
                 loss: str = "kalman_kwasny"):
        F = n_hidden if n_feedback is None else int(n_feedback)
        if min(n_in, n_hidden, n_out) < 1 or not 0 <= F <= n_hidden or n_hidden2 < 0:
            raise ValueError(f"bad Elman sizes: n_in={n_in}, n_hidden={n_hidden}, n_out={n_out}, "
                             f"n_feedback={F}, n_hidden2={n_hidden2} (need 0 <= n_feedback <= n_hidden)")
        self.n_in, self.n_hidden, self.n_out, self.F = int(n_in), int(n_hidden), int(n_out), F
        self.n_hidden2, self.skip = int(n_hidden2), bool(skip)
        self.act = get_activation(activation)
        self.method, self.loss = _check_method(method), get_loss(loss).name
        self.nz = self.n_in + F + 1  # rows of Wz: inputs, context, bias
        R = self.n_hidden2 or self.n_hidden  # units that feed the output layer
        shapes = [("W_ih", (n_in, n_hidden)), ("W_fh", (F, n_hidden)), ("b_h", (n_hidden,))]
        if self.n_hidden2:
            shapes += [("W_h2", (n_hidden, n_hidden2)), ("b_2", (n_hidden2,))]
        if self.skip:
            shapes += [("W_io", (n_in, n_out)), ("W_fo", (F, n_out))]
        shapes += [("W_ro", (R, n_out)), ("b_o", (n_out,))]
        self._layout(shapes, params)
        self.hidden_slice = slice(0, self.nz * self.n_hidden)  # W_ih, W_fh, b_h

    def __repr__(self):
        h2 = f"-{self.n_hidden2}" if self.n_hidden2 else ""
        return f"Elman(({self.n_in}+{self.F})-{self.n_hidden}{h2}-{self.n_out}, skip={self.skip})"

    # -- parameter vector ---------------------------------------------------------------
    def view(self, flat: np.ndarray, name: str) -> np.ndarray:
        """Named view (FlatParams), plus ``Wz``: W_ih, W_fh, b_h as one (nz, n_hidden) block."""
        if name == "Wz":
            return flat[self.hidden_slice].reshape(self.nz, self.n_hidden)
        return super().view(flat, name)

    def __getattr__(self, name):  # net.W_ih etc.: views into params
        if name.startswith(("W_", "b_")) and name in self.__dict__.get("slices", {}):
            return self.view(self.params, name)
        raise AttributeError(name)

    def copy(self) -> "Elman":
        return Elman(self.n_in, self.n_hidden, self.n_out, n_feedback=self.F,
                     n_hidden2=self.n_hidden2, skip=self.skip, activation=self.act.name,
                     params=self.params.copy(), method=self.method, loss=self.loss)

    # -- forward ------------------------------------------------------------------------
    def forward(self, X: np.ndarray) -> tuple[np.ndarray, Cache]:
        """Run S sequences in lockstep; X is (L, S, n_in). Context starts at zero."""
        L, S, _ = X.shape
        F, f = self.F, self.act.f
        W_fh, b_h = self.W_fh, self.b_h
        XW = (X.reshape(L * S, -1) @ self.W_ih).reshape(L, S, -1)  # (L, S, n_hidden)
        Hh = np.empty((L, S, self.n_hidden))  # (L, S, n_hidden)
        C = np.zeros((L, S, F))  # (L, S, F)
        for t in range(L):
            z = Hh[t]
            np.add(XW[t], b_h, out=z)
            if t > 0 and F:
                C[t] = Hh[t - 1][:, :F]
                z += C[t] @ W_fh
            f(z, z)
        R = Hh.reshape(L * S, -1)
        H2 = None
        if self.n_hidden2:
            z2 = R @ self.W_h2 + self.b_2  # (L·S, n_hidden2)
            H2 = f(z2, z2).reshape(L, S, -1)
            R = z2
        zo = R @ self.W_ro + self.b_o  # (L·S, n_out)
        if self.skip:
            zo += X.reshape(L * S, -1) @ self.W_io
            if F:
                zo += C.reshape(L * S, F) @ self.W_fo
        Y = f(zo, zo).reshape(L, S, -1)
        return Y, Cache(X, C, Hh, H2, Y)

    def _d(self, a: np.ndarray) -> np.ndarray:
        """f'(net input) from the activation: 1.5 (1 − a²) for tanh(1.5·x) (the δ_pr below)."""
        return self.act.df(a, np.empty_like(a))

    # -- output side: instantaneous derivatives --------------------------------------------
    def output_grads(self, cache: Cache, dY: np.ndarray, g: np.ndarray):
        """Gradient of the output-side parameters (W_ro, b_o, skips, second hidden layer)
        into ``g``, which the hidden-layer parameters cannot reach.

        dY = ∂Φ/∂y (L, S, n_out), zero on padded patterns. Returns
        ``(v, u)``: v = ∂Φ/∂h (L, S, n_hidden) and u = ∂Φ/∂c (L, S, F) through
        this pattern's output only (Σ_o δ_po w_ro and Σ_o δ_po w_fo).
        """
        L, S, O = dY.shape
        dXo = (dY * self._d(cache.Y)).reshape(L * S, O)  # ∂Φ/∂(net input of o)
        R = (cache.H2 if self.n_hidden2 else cache.H).reshape(L * S, -1)
        np.matmul(R.T, dXo, out=self.view(g, "W_ro"))
        np.sum(dXo, axis=0, out=self.view(g, "b_o"))
        dR = dXo @ self.W_ro.T  # (L·S, |R|)
        u = np.zeros((L, S, self.F))
        if self.skip:
            np.matmul(cache.X.reshape(L * S, -1).T, dXo, out=self.view(g, "W_io"))
            if self.F:
                np.matmul(cache.C.reshape(L * S, -1).T, dXo, out=self.view(g, "W_fo"))
                u = (dXo @ self.W_fo.T).reshape(L, S, self.F)
        if self.n_hidden2:
            dX2 = dR * self._d(cache.H2.reshape(L * S, -1))
            np.matmul(cache.H.reshape(L * S, -1).T, dX2, out=self.view(g, "W_h2"))
            np.sum(dX2, axis=0, out=self.view(g, "b_2"))
            dR = dX2 @ self.W_h2.T
        return dR.reshape(L, S, self.n_hidden), u

    # -- gradient 1: forward-propagated derivatives -----------------------------------------
    def hidden_block_grad(self, cache: Cache, v: np.ndarray, u: np.ndarray, h0: int, h1: int,
                          *, out: np.ndarray, sync=None) -> np.ndarray:
        """∂Φ/∂w_ih for the hidden units h0 ≤ h < h1 and every i ∈ I ∪ F ∪ {bias}: the forward
        recursion, vectorised over the S sequences of the batch.

        Carried state: P[f, s, i, j] = ∂a_pf/∂w_i,(h0+j) for the context units f
        (= ∂a_(p−1),hid(f)/∂w), zero at each sequence start. Each pattern p:
            dbuf[r, s, i, j] = δ_pr (Σ_f w_fr P[f, s, i, j] + γ_pihr)
            ∂Φ/∂w_ih += Σ_r v_pr dbuf[r, s] + Σ_f u_pf P[f, s]
        with γ_pihr = z̃_pi if r = h (z̃ = [x, c, 1]) else 0, v_pr = Σ_o ∂Φ/∂X_o w_ro and
        u_pf = Σ_o ∂Φ/∂X_o w_fo. The sum over r is contracted before it meets P:
            Σ_r v_pr dbuf[r] = Σ_f (Σ_r v_pr δ_pr w_fr) P[f] + z̃_pi · v_ph δ_ph,
        so dbuf is only built for the fed-back units r < |F|, the only ones copied
        back. ``out`` (|I|+|F|+1, h1−h0) receives the sum; ``sync`` is called after
        every pattern step (one synchronisation per pattern).
        """
        L, S, _ = cache.X.shape
        F, nz, k = self.F, self.nz, h1 - h0
        D = self._d(cache.H)  # (L, S, H) δ_pr
        W_fh = self.W_fh  # (F, H)
        W_ffT = np.ascontiguousarray(W_fh[:, :F].T)  # (F, F): w_f'r for r < |F|
        cols = np.arange(k)
        sel = cols[(h0 + cols) < F]  # γ reaches dbuf[r] only for r = h < |F|
        out[...] = 0.0
        acc = out.reshape(-1)  # (nz·k,)
        zt = np.ones((S, nz))  # z̃ = [x, c, 1]
        P = np.empty((F, S, nz, k))  # (F, S, nz, k): fed-back unit first, so one GEMM
        Q = np.empty((F, S, nz, k))  # carries every sequence; two buffers, swapped each pattern
        Dt = np.empty((F, S, 1, 1))
        for t in range(L):
            zt[:, : self.n_in] = cache.X[t]
            zt[:, self.n_in: nz - 1] = cache.C[t]
            w = v[t] * D[t]  # (S, H): Σ_o ∂Φ/∂X_o w_ro δ_pr
            out += zt.T @ w[:, h0:h1]  # the γ term
            if t > 0:
                y = w @ W_fh.T + u[t] if self.skip else w @ W_fh.T  # (S, F)
                acc += y.reshape(-1, order="F") @ P.reshape(F * S, nz * k)
            if F:
                if t == 0:
                    Q.fill(0.0)
                else:
                    np.matmul(W_ffT, P.reshape(F, S * nz * k), out=Q.reshape(F, S * nz * k))
                if len(sel):
                    Q[h0 + sel, :, :, sel] += zt
                Dt[:, :, 0, 0] = D[t][:, :F].T
                Q *= Dt
                P, Q = Q, P  # the copy-back loop
            if sync is not None:
                sync()
        return out

    def grad_forward(self, cache: Cache, dY: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        """∂Φ/∂params by forward-propagated derivatives, summed over the batch."""
        g = np.zeros(self.n_params) if out is None else out
        v, u = self.output_grads(cache, dY, g)
        self.hidden_block_grad(cache, v, u, 0, self.n_hidden, out=self.view(g, "Wz"))
        return g

    # -- gradient 2: back-propagation through time -----------------------------------------
    def grad_bptt(self, cache: Cache, dY: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        """∂Φ/∂params by back-propagation through time, summed over the batch."""
        g = np.zeros(self.n_params) if out is None else out
        v, u = self.output_grads(cache, dY, g)
        L, S, H = v.shape
        F = self.F
        D = self._d(cache.H)
        dXh = np.empty((L, S, H))  # ∂Φ/∂(net input of h)
        carry = np.zeros((S, H))  # ∂Φ/∂h_t from the future, through c_(t+1)
        for t in range(L - 1, -1, -1):
            np.multiply(v[t] + carry, D[t], out=dXh[t])
            carry[:] = 0.0
            if F:
                carry[:, :F] = dXh[t] @ self.W_fh.T + u[t]
        d = dXh.reshape(L * S, H)
        np.matmul(cache.X.reshape(L * S, -1).T, d, out=self.view(g, "W_ih"))
        np.matmul(cache.C.reshape(L * S, F).T, d, out=self.view(g, "W_fh"))
        np.sum(d, axis=0, out=self.view(g, "b_h"))
        return g


    # -- the Net protocol -------------------------------------------------------------------
    def loss_and_grad(self, batch: SeqBatch, grad: np.ndarray, *, loss: str | None = None,
                      method: str | None = None) -> float:
        """Φ = Σ_p Φ_p over the batch's real patterns; ∂Φ/∂params into ``grad``
        (n_params,), by forward-propagated derivatives (``method="forward"``)
        or back-propagation through time (``"bptt"``); default: the net's own."""
        grad_fn = self.grad_forward if _check_method(method or self.method) == "forward" \
            else self.grad_bptt
        Y, cache = self.forward(batch.X)
        phi, dY = loss_and_dy(self, Y, batch, self.loss if loss is None else loss)
        grad_fn(cache, dY, out=self._check_grad(grad))
        return phi

    def loss_only(self, batch: SeqBatch) -> float:
        """Φ over the batch without its gradient: one batch of a forward (line-search)
        epoch; :func:`phi` is the sum of these."""
        Y, _ = self.forward(batch.X)
        return loss_and_dy(self, Y, batch, self.loss)[0]

    def predict(self, batch: SeqBatch) -> np.ndarray:
        """Outputs (L, S, n_out) of the batch's sequences, zero at padded steps."""
        Y, _ = self.forward(batch.X)
        Y *= batch.mask[:, :, None]
        return Y


# ---- Φ and its gradient over sequence batches -----------------------------------------------
def loss_and_dy(net: Elman, Y: np.ndarray, batch: SeqBatch, loss: str = "kalman_kwasny"):
    """(Φ summed over the real patterns, ∂Φ/∂y (L, S, n_out) with padded patterns zeroed)."""
    return masked_loss_and_grad(Y, batch.T, batch.mask, loss=loss)


def phi(net: Elman, batches: list[SeqBatch], *, loss: str = "kalman_kwasny") -> float:
    """Φ over the given batches: a forward (line-search) epoch."""
    total = 0.0
    for b in batches:
        Y, _ = net.forward(b.X)
        total += loss_and_dy(net, Y, b, loss)[0]
    return total


def phi_grad(net: Elman, batches: list[SeqBatch], *, method: str = "forward",
             loss: str = "kalman_kwasny", out: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """(Φ, ∂Φ/∂params) over the given batches: a derivative epoch, the sum of
    :meth:`Elman.loss_and_grad` over them.

    ``method`` "forward" uses forward-propagated derivatives, "bptt"
    back-propagation through time.
    """
    _check_method(method)
    g = np.zeros(net.n_params) if out is None else out
    g[:] = 0.0
    tmp = np.empty(net.n_params)  # (n_params,) one batch's gradient
    total = 0.0
    for b in batches:
        total += net.loss_and_grad(b, tmp, loss=loss, method=method)
        g += tmp
    return total, g
