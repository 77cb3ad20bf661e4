"""SIGTERM's steps observed one by one in a child Python (issue 35: the communicators'
mutation survivors; the fault tests check how a whole run ends): the first SIGTERM unwinds
through ``finally`` and then skips the rest of the interpreter's shutdown, a second one ends
the process at once."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from engine.comm.base import TERMINATED_EXIT

ROOT = Path(__file__).resolve().parents[2]
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
        print("finally ran")  # not flushed: the exit at shutdown must flush it
        if sys.argv[1] == "twice":
            sys.stdout.flush()  # the second SIGTERM ends at once: nothing would flush it
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            print("after the second", flush=True)
""")


def _run(mode: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout to a pipe: block-buffered
    return subprocess.run([sys.executable, "-c", SCRIPT, mode], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env=env)


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


STUCK = textwrap.dedent("""
    import os, signal, sys, threading, time
    import numpy as np
    from engine.comm import base
    base.install_termination_handler("bye", grace=0.3)
    a = np.random.default_rng(0).random((4000, 4000))  # one product: seconds of C, on any core
    threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
    t0 = time.perf_counter()
    try:
        for _ in range(int(sys.argv[1])):  # the main thread inside one C call after another
            a = a @ a
            a /= np.abs(a).max()
    finally:
        print(f"finally ran after {time.perf_counter() - t0:.1f} s", flush=True)
""")


def test_a_main_thread_stuck_in_c_is_ended_by_the_watcher_after_the_grace():
    # the main thread is inside matrix products (no Python bytecode runs, so the Python-level
    # handler waits): the watcher thread ends the process after the grace, without unwinding
    p = subprocess.run([sys.executable, "-c", STUCK, "1"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == TERMINATED_EXIT and p.stderr.strip() == "bye"
    assert "finally ran" not in p.stdout  # it did not wait for the products to end


def test_a_second_install_keeps_one_handler_and_one_watcher():
    code = textwrap.dedent("""
        import threading
        from engine.comm import base
        assert base.install_termination_handler("one")
        first = base._term.get("wakeup")
        assert base.install_termination_handler("two")
        print(sum(t.name == "sigterm-watch" for t in threading.enumerate()), base._term["message"],
              base._term.get("wakeup") is first)
    """)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["1", "two", "True"]  # the message updated; the wake-up socket and watcher kept


HELD = textwrap.dedent("""
    import os, signal, sys, time
    from engine.comm import base
    base.install_termination_handler("bye", grace=30)
    try:
        with base.last_line():
            os.kill(os.getpid(), signal.SIGTERM)  # arrives while the last line is printed
            time.sleep(0.2)
            print("the last line", flush=True)
        print("after the block", flush=True)
    finally:
        print("finally ran", flush=True)
""")


# kills: last_line not holding a SIGTERM back (the line would be cut off by the exit), or not
# delivering it after the block (the process would go on), or saying "bye" after the line
def test_a_sigterm_during_the_last_line_waits_for_it_then_ends_silently():
    p = subprocess.run([sys.executable, "-c", HELD], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == TERMINATED_EXIT
    assert p.stdout.splitlines() == ["the last line", "finally ran"]
    assert "bye" not in p.stderr
    # control: the same SIGTERM outside last_line ends the process before its line, with "bye"
    q = subprocess.run([sys.executable, "-c", HELD.replace("with base.last_line():", "if True:")],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert q.returncode == TERMINATED_EXIT and q.stdout.splitlines() == ["finally ran"]
    assert q.stderr.strip() == "bye"
