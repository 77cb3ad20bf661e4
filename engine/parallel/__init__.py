"""The driver (the only backend dispatch) and the strategies it runs."""
from engine.parallel.driver import BACKENDS, record, run, stream

__all__ = ["BACKENDS", "record", "run", "stream"]
