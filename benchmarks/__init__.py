"""asv benchmark suite (see benchmarks/README.md).

Every ``bench_*.py`` module is self-contained (absolute imports of the project
only), so ``benchmarks/targets.py`` can import their measuring helpers when it
runs as a plain script. On a noisy machine compare figures as ratios taken
within one run: the ``track_*`` ratios do that.
"""
