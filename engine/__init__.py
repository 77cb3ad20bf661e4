"""Compact training engine: networks, optimizers, communicators, strategies, timing.

The library knows nothing about papers; ``reproduce/`` drives it.
"""
