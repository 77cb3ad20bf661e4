"""Shared fixtures. ``watchdog``: fail a test that hangs (a worker waiting forever on a peer)
after 60 s instead of blocking the suite; modules opt in with ``usefixtures``."""
from __future__ import annotations

import signal

import pytest


@pytest.fixture
def watchdog():
    def on_alarm(signum, frame):
        raise TimeoutError("test hung: watchdog fired after 60 s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
