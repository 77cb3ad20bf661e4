"""reproduce/progress.py: on a terminal the bar fits its width and names the task running;
in a log, plain lines without carriage returns."""
from __future__ import annotations

import io
import re

from reproduce.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _redraws(text: str) -> list[str]:
    """What a terminal shows at each redraw: the text between carriage returns and newlines,
    ANSI escapes removed."""
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    return [x for x in re.split(r"[\r\n]", plain) if x.strip()]


def test_the_bar_fits_80_columns_and_names_the_running_task():
    out = Terminal()
    p = Progress(3, "paper9", stream=out, ncols=80)
    long = "train measured workers=2 Q=6 seed=5 order=short-first " * 3
    p.start(long)
    p.bar.refresh()
    shown = _redraws(out.getvalue())
    assert shown and all(len(x) <= 80 for x in shown)
    assert "train measured" in shown[-1]  # the task now running, cut to fit
    for _ in range(3):
        p.step("done")
    assert out.getvalue().endswith("\n") and "3/3" in _redraws(out.getvalue())[-1]
    # control: the same bar given 160 columns draws wider than 80, which the check above catches
    wide = Terminal()
    q = Progress(3, "paper9", stream=wide, ncols=160)
    q.start(long)
    q.bar.refresh()
    assert max(len(x) for x in _redraws(wide.getvalue())) > 80


def test_a_log_gets_plain_lines_without_carriage_returns(monkeypatch):
    out = io.StringIO()  # not a terminal
    p = Progress(2, "paper9", stream=out)
    p.start("task a")
    p.step("task a")  # within the first 10 s: no line yet
    p.step("task b")  # the last: always a line
    assert out.getvalue() == "paper9 2/2 tasks, 0s elapsed, ~0s left; last done: task b\n" and p.bar is None
    monkeypatch.setattr("reproduce.progress.PLAIN_EVERY_S", 0.0)  # a line at every step
    out = io.StringIO()
    p = Progress(2, "paper9", stream=out)
    p.step("task a")
    p.step("task b")
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and [x.split(",")[0] for x in lines] == ["paper9 1/2 tasks", "paper9 2/2 tasks"]


def test_disabled_progress_writes_nothing():
    out = Terminal()
    p = Progress(2, "paper9", stream=out, enabled=False)
    p.start("a")
    p.step("a")
    p.step("b")
    assert out.getvalue() == "" and p.done == 2
