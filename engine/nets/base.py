"""The network protocol: what every network of the engine offers a strategy.

docs/engine.md: a network owns no training logic. Its parameters are one
flat float64 vector with named views, so a strategy can sum, send or average
them without knowing the architecture; it offers a loss-and-gradient call over
a batch, with the gradient buffer passed in, and a forward pass for evaluation.
:class:`engine.nets.MLP`, :class:`engine.nets.Elman` and :class:`engine.nets.LSTM`
implement :class:`Net`; each takes its batch type from :mod:`engine.data`.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Net(Protocol):
    """A network behind one protocol.

    ``params``
        (n_params,) float64, the only copy of the weights; ``view(flat, name)``
        reshapes any vector of this layout (parameters or gradients) into the
        named block, ``named(flat)`` gives every block.
    ``loss_and_grad(batch, grad, *, loss=None) -> float``
        The SUM of the loss over the batch's patterns (or sequences, for CTC),
        and the SUM of its gradient with respect to ``params`` written into the
        caller's buffer ``grad`` (n_params,), every entry overwritten. Nothing is
        averaged: the optimizer divides by the count it chooses. ``loss`` names a
        loss of :mod:`engine.losses` (default: the net's ``loss``).
    ``predict(batch) -> outputs``
        The forward pass for evaluation, into a fresh array.
    ``loss_only(batch) -> float`` (optional)
        The summed loss without the gradient, where a net has a cheaper forward-only
        pass (the Elman net's line-search epochs); callers fall back to
        ``loss_and_grad`` into a scratch buffer.

    Batches (:mod:`engine.data`): :class:`~engine.data.Patterns` for the MLP,
    :class:`~engine.data.SeqBatch` for the Elman net, :class:`~engine.data.CTCBatch`
    (or a SeqBatch under a per-step loss) for the LSTM.
    """

    params: np.ndarray
    n_params: int
    loss: str

    def view(self, flat: np.ndarray, name: str) -> np.ndarray: ...

    def named(self, flat: np.ndarray | None = None) -> dict[str, np.ndarray]: ...

    def loss_and_grad(self, batch, grad: np.ndarray, *, loss: str | None = None) -> float: ...

    def predict(self, batch) -> np.ndarray: ...


class FlatParams:
    """One flat float64 parameter vector with named views: the layout every net shares."""

    def _layout(self, shapes, params: np.ndarray | None) -> None:
        """Lay out the named blocks ``shapes`` [(name, shape)] back to back, row-major."""
        self.slices: dict[str, slice] = {}
        self.shapes: dict[str, tuple] = {}
        off = 0
        for name, shape in shapes:
            n = int(np.prod(shape))
            self.slices[name], self.shapes[name] = slice(off, off + n), tuple(shape)
            off += n
        self.n_params = off
        self.params = np.zeros(off) if params is None else params  # (n_params,)
        if self.params.shape != (off,) or self.params.dtype != np.float64:
            raise ValueError(f"params must be float64 of shape ({off},)")

    def view(self, flat: np.ndarray, name: str) -> np.ndarray:
        """Named view into any vector with this net's layout (params or grads)."""
        return flat[self.slices[name]].reshape(self.shapes[name])

    def named(self, flat: np.ndarray | None = None) -> dict[str, np.ndarray]:
        flat = self.params if flat is None else flat
        return {k: self.view(flat, k) for k in self.slices}

    def init_uniform(self, rng: np.random.Generator, *, scale: float = 0.1) -> None:
        """Every weight and bias uniform in [−scale, scale] (the MLP: FANN 2's default)."""
        self.params[:] = rng.uniform(-scale, scale, size=self.n_params)

    def _check_grad(self, grad: np.ndarray) -> np.ndarray:
        """``grad`` must be a contiguous (n_params,) float64 buffer: a strided one would
        make the named views copies, and the gradient would not land in it."""
        if (not isinstance(grad, np.ndarray) or grad.shape != (self.n_params,)
                or grad.dtype != np.float64 or not grad.flags.c_contiguous):
            raise ValueError(f"grad must be a contiguous float64 buffer of shape "
                             f"({self.n_params},)")
        return grad
