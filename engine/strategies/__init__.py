"""How the work is split: the serial reference and the node-parallel family (model
parallelism). The data-parallel family is :mod:`engine.parallel`; each paper's
configurations of it (and of this package's strategies) live in its own package under
``reproduce/``. Every strategy returns a :class:`engine.timing.RunRecord`."""
from engine.strategies.serial import train_serial

__all__ = ["train_serial"]
