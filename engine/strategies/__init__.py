"""How the work is split. Every strategy returns a :class:`engine.timing.RunRecord`."""
from engine.strategies.pattern import ErrorEstimateStop, PPTConfig, train_pattern_parallel
from engine.strategies.serial import train_serial

__all__ = ["ErrorEstimateStop", "PPTConfig", "train_pattern_parallel", "train_serial"]
