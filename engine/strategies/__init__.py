"""How the work is split. Every strategy returns a :class:`engine.timing.RunRecord`."""
from engine.strategies.pattern import PPTConfig, PPTWorker, train_pattern_parallel
from engine.strategies.serial import train_serial

__all__ = ["PPTConfig", "PPTWorker", "train_pattern_parallel", "train_serial"]
