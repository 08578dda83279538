"""A one-line progress display on a terminal, for runs over many files. Off when the output is
not a terminal, in CI, and with -q, so logs and pipes never see it."""
from __future__ import annotations

import os

MIN_FILES = 100  # below this a run is over before a progress line would help


def wanted(total: int, quiet: bool, stream, environ=None) -> bool:
    env = os.environ if environ is None else environ
    if quiet or total < MIN_FILES:
        return False
    if env.get("CI", "").lower() in ("1", "true", "yes") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """`advance(n)` after each finished file; redraws at most ~100 times per run."""

    def __init__(self, total: int, stream, label: str = "Checking"):
        self.total = total
        self.done = 0
        self.stream = stream
        self.label = label
        self._step = max(1, total // 100)
        self._drawn = -1

    def advance(self, n: int = 1) -> None:
        self.done = min(self.total, self.done + n)
        if self.done - self._drawn >= self._step or self.done == self.total:
            self._drawn = self.done
            pct = 100 * self.done // self.total
            self.stream.write(f"\r\x1b[2K{self.label} {self.done}/{self.total} files ({pct}%)")
            self.stream.flush()

    def close(self) -> None:
        if self._drawn >= 0:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
