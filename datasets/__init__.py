"""Workload generators. Not the PyPI ``datasets`` package: install into a venv."""
