"""Networks behind one protocol (:class:`engine.nets.base.Net`): MLP, Elman, LSTM."""
from engine.nets.base import FlatParams, Net
from engine.nets.elman import Elman
from engine.nets.lstm import LSTM
from engine.nets.mlp import MLP, Workspace

__all__ = ["Elman", "FlatParams", "LSTM", "MLP", "Net", "Workspace"]
