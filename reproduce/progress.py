"""A small progress bar on stderr (one line, redrawn; plain lines when not a TTY)."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str = "", *, stream=None, enabled: bool = True):
        self.total, self.label, self.done = max(total, 1), label, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self._last_line = -1.0

    def step(self, what: str = "", n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        el = time.perf_counter() - self.t0
        eta = el / self.done * (self.total - self.done) if self.done else 0.0
        width = 28
        fill = int(width * self.done / self.total)
        line = (f"{self.label} [{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} "
                f"{el:5.0f}s elapsed, ~{eta:4.0f}s left  {what}")
        if self.tty:
            self.stream.write("\r" + line[:150].ljust(150))
            if self.done >= self.total:
                self.stream.write("\n")
        elif el - self._last_line >= 10 or self.done >= self.total:
            self.stream.write(line + "\n")
            self._last_line = el
        self.stream.flush()
