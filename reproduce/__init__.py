"""Per-paper reproductions driving the engine. ``python -m reproduce --help``."""
