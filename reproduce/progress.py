"""Task progress on stderr: a tqdm bar on a terminal, plain lines in a log.

On a terminal the bar is tqdm's (it fits the terminal's width, redrawn on one line) and
its postfix names the task now running (:meth:`Progress.start`), not the one that just
finished. Elsewhere (a pipe, a file, CI) one plain line every 10 s and one at the end:
a log keeps no carriage returns.
"""
from __future__ import annotations

import sys
import time

from tqdm import tqdm

PLAIN_EVERY_S = 10.0


class Progress:
    def __init__(self, total: int, label: str = "", *, stream=None, enabled: bool = True,
                 ncols: int | None = None):
        self.total, self.label, self.done = max(total, 1), label, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self._last_line = -1.0
        self.running = ""
        # ncols None: the terminal's width, read at every redraw (dynamic_ncols)
        self.bar = (tqdm(total=self.total, desc=label, file=self.stream, unit="task", leave=True,
                         dynamic_ncols=ncols is None, ncols=ncols, mininterval=0.5)
                    if enabled and self.tty else None)

    def start(self, what: str) -> None:
        """``what`` is running now (a task's label): the bar names it until the next step."""
        self.running = what
        if self.bar is not None:
            self.bar.set_postfix_str(what)

    def step(self, what: str = "", n: int = 1) -> None:
        """``n`` more tasks done (``what``: the last of them, named in a log line)."""
        self.done += n
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str("", refresh=False)
            self.bar.update(n)
            if self.done >= self.total:
                self.bar.close()
            return
        el = time.perf_counter() - self.t0
        if el - self._last_line >= PLAIN_EVERY_S or self.done >= self.total:
            eta = el / self.done * (self.total - self.done)
            self.stream.write(f"{self.label} {self.done}/{self.total} tasks, {el:.0f}s elapsed, "
                              f"~{eta:.0f}s left; last done: {what}\n")
            self._last_line = el
            self.stream.flush()
