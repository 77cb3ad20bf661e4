"""SIGTERM's steps observed one by one in a child Python (issue 35: the communicators'
mutation survivors; the fault tests check how a whole run ends): the first SIGTERM unwinds
through ``finally`` and then skips the rest of the interpreter's shutdown, a second one ends
the process at once."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from engine.comm.base import TERMINATED_EXIT

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = textwrap.dedent("""
    import atexit, os, signal, sys, time
    from engine.comm import base
    atexit.register(lambda: print("shutdown ran", flush=True))  # registered first: runs last
    base.install_termination_handler("bye", grace=30)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        print("not interrupted", flush=True)
    finally:
        print("finally ran", flush=True)
        if sys.argv[1] == "twice":
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            print("after the second", flush=True)
""")


def _run(mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, mode], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_first_sigterm_unwinds_then_skips_the_shutdown():
    p = _run("once")
    assert p.returncode == TERMINATED_EXIT and p.stderr.strip() == "bye"
    assert p.stdout.split() == ["finally", "ran"]  # unwound; no "not interrupted", no "shutdown ran"


def test_second_sigterm_ends_at_once():
    p = _run("twice")
    assert p.returncode == TERMINATED_EXIT
    assert "finally ran" in p.stdout and "after the second" not in p.stdout and "shutdown ran" not in p.stdout


def test_control_without_the_handler_sigterm_kills_before_any_finally():
    script = SCRIPT.replace('base.install_termination_handler("bye", grace=30)', "pass")
    p = subprocess.run([sys.executable, "-c", script, "once"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == -15 and p.stdout == ""
