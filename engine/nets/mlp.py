"""Multilayer perceptron of any depth over one flat float64 parameter vector.

Layout of ``params`` (and of every gradient): for layer l = 1..L,
``W{l}`` of shape (n_{l-1}, n_l) row-major, then ``b{l}`` of shape (n_l,).
A strategy can therefore sum, send or average parameters and gradients as one
vector without knowing the architecture (docs/engine.md).

The net holds its weights but no training state: ``forward`` returns the
activations it needs for ``backward`` in a cache, and scratch buffers live in a
:class:`Workspace` that the caller allocates once per bunch size and passes in.
:meth:`MLP.loss_and_grad` (the :class:`engine.nets.base.Net` protocol) is
forward, the loss's derivative and backward over a :class:`engine.data.Patterns`
batch, with one workspace kept per batch size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from engine import kernels
from engine.activations import Activation, get_activation
from engine.data import Patterns
from engine.losses import get_loss
from engine.nets.base import FlatParams


@dataclass
class Workspace:
    """Preallocated buffers for one bunch size B."""

    B: int
    a: list  # a[l]: (B, n_l) activations, a[0] is a copy slot for the input
    delta: list  # delta[l]: (B, n_l) back-propagated errors
    tmp: list  # tmp[l]: (B, n_l) scratch for derivatives
    dy: np.ndarray | None = None  # (B, n_L) ∂E/∂y, for loss_and_grad


class MLP(FlatParams):
    """Fully connected feed-forward net ``sizes = (n_0, n_1, ..., n_L)``.

    ``activations`` is one registry name for every layer or one per layer
    (length L); ``loss`` the registry name :meth:`loss_and_grad` uses by default.
    """

    def __init__(self, sizes: Sequence[int], activations="symmetric_sigmoid", *, params=None,
                 loss: str = "mse"):
        sizes = tuple(int(s) for s in sizes)
        if len(sizes) < 2 or min(sizes) < 1:
            raise ValueError(f"an MLP needs at least two layer sizes >= 1, got {sizes}")
        self.sizes = sizes
        self.L = len(sizes) - 1
        if isinstance(activations, str):
            activations = [activations] * self.L
        if len(activations) != self.L:
            raise ValueError(f"need {self.L} activations, got {len(activations)}")
        self.acts: list[Activation] = [get_activation(a) for a in activations]
        self.loss = get_loss(loss).name
        self._layout([blk for l in range(1, self.L + 1)
                      for blk in ((f"W{l}", (sizes[l - 1], sizes[l])), (f"b{l}", (sizes[l],)))],
                     params)
        self._wss: dict[int, Workspace] = {}  # loss_and_grad's workspaces, by batch size
        self.W = [None] + [self.view(self.params, f"W{l}") for l in range(1, self.L + 1)]
        self.b = [None] + [self.view(self.params, f"b{l}") for l in range(1, self.L + 1)]

    # -- parameter vector (views, named, init_uniform: FlatParams) -------------
    def init_nguyen_widrow(self, rng: np.random.Generator) -> None:
        """Nguyen & Widrow (IJCNN 1990) initialisation.

        Hidden layer l: each unit's incoming weight vector is drawn uniform in
        [−0.5, 0.5], then rescaled to length β = 0.7·n_l^(1/n_{l−1}); its bias
        is uniform in [−β, β]. The output layer is uniform in [−0.5, 0.5].
        """
        for l in range(1, self.L + 1):
            W, b = self.W[l], self.b[l]
            if l < self.L:
                beta = 0.7 * self.sizes[l] ** (1.0 / self.sizes[l - 1])
                W[:] = rng.uniform(-0.5, 0.5, size=W.shape)  # (n_{l-1}, n_l)
                W *= beta / np.linalg.norm(W, axis=0, keepdims=True)
                b[:] = rng.uniform(-beta, beta, size=b.shape)
            else:
                W[:] = rng.uniform(-0.5, 0.5, size=W.shape)
                b[:] = rng.uniform(-0.5, 0.5, size=b.shape)

    @property
    def n_connections(self) -> int:
        """Weights plus biases: the connections counted by CUPS figures."""
        return self.n_params

    def workspace(self, B: int) -> Workspace:
        mk = lambda: [np.empty((B, n)) for n in self.sizes]  # noqa: E731  (B, n_l) each
        return Workspace(B, mk(), mk(), mk(), np.empty((B, self.sizes[-1])))  # dy: (B, n_L)

    # -- forward / backward ---------------------------------------------------
    def forward(self, x: np.ndarray, *, ws: Workspace | None = None):
        """Return ``(y, cache)``; y is (B, n_L). The cache holds every layer's output."""
        B = x.shape[0]
        if ws is None or ws.B != B:
            ws = self.workspace(B)
        a = ws.a
        a[0] = x  # the input itself: no copy
        for l in range(1, self.L + 1):
            z = np.matmul(a[l - 1], self.W[l], out=ws.a[l])  # (B, n_l)
            kernels.bias_act(self.acts[l - 1], z, self.b[l])  # z ← f(z + b), one pass
        return a[self.L], (a, ws)

    def backward(self, dy: np.ndarray, cache, *, out: np.ndarray | None = None,
                 need_dx: bool = False):
        """Gradient of Σ_p E_p given dy = ∂E_p/∂y (B, n_L); returns the flat gradient.

        With ``need_dx`` it returns ``(grad, dx)`` where dx = ∂E/∂x (B, n_0).
        The gradient is summed (not averaged) over the bunch; the optimizer
        decides how to scale it.
        """
        a, ws = cache
        g = np.empty(self.n_params) if out is None else out
        L = self.L
        delta = ws.delta[L]
        kernels.df_mul(self.acts[L - 1], a[L], dy, delta, ws.tmp[L], None)  # (B, n_L)
        have_gb = False  # whether the kernel that made delta also summed its columns
        for l in range(L, 0, -1):
            np.matmul(a[l - 1].T, delta, out=self.view(g, f"W{l}"))
            if not have_gb:
                np.add.reduce(delta, axis=0, out=self.view(g, f"b{l}"))
            if l > 1 or need_dx:
                prev, one = ws.delta[l - 1], delta.shape[1] == 1  # (B, n_{l-1})
                gb = self.view(g, f"b{l - 1}") if l > 1 else None
                if l > 1 and one:  # an outer product (BLAS is slow at this shape), times f′
                    have_gb = kernels.outer_df_mul(self.acts[l - 2], a[l - 1], delta[:, 0],
                                                   self.W[l][:, 0], prev, ws.tmp[l - 1], gb)
                elif l > 1:
                    np.matmul(delta, self.W[l].T, out=prev)
                    have_gb = kernels.df_mul(self.acts[l - 2], a[l - 1], prev, prev,
                                             ws.tmp[l - 1], gb)
                elif one:  # ∂E/∂x: no f′ at the input
                    np.einsum("i,j->ij", delta[:, 0], self.W[l][:, 0], out=prev)
                else:
                    np.matmul(delta, self.W[l].T, out=prev)
                delta = prev
        if need_dx:
            return g, ws.delta[0]
        return g

    # -- the Net protocol ------------------------------------------------------
    def loss_and_grad(self, batch: Patterns, grad: np.ndarray, *, loss: str | None = None,
                      ws: Workspace | None = None) -> float:
        """Σ_p E_p over the batch's patterns; Σ_p ∂E_p/∂params into ``grad`` (n_params,).

        Back-propagation (Rumelhart, Hinton & Williams 1986): :meth:`forward`,
        the loss's ∂E_p/∂y, :meth:`backward`, exactly as the serial and
        pattern-parallel strategies compose them. ``ws`` defaults to a workspace
        kept per batch size.
        """
        X, T = batch
        B = X.shape[0]
        if ws is None:
            ws = self._wss.get(B) or self._wss.setdefault(B, self.workspace(B))
        lf = get_loss(self.loss if loss is None else loss)
        y, cache = self.forward(X, ws=ws)
        E = float(np.sum(lf.value(y, T)))
        self.backward(lf.grad(y, T, out=ws.dy), cache, out=self._check_grad(grad))
        return E

    def predict(self, batch) -> np.ndarray:
        """Outputs (B, n_L) of the patterns ``batch`` (:class:`engine.data.Patterns` or
        an input array (B, n_0)), in a fresh array."""
        X = batch.X if isinstance(batch, Patterns) else batch
        return self.forward(X)[0]
