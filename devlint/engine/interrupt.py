"""SIGINT and SIGTERM end a run with an exception the command line turns into exit 130 / 143:
files are then either untouched or completely written (each write is atomic)."""
from __future__ import annotations

import contextlib
import signal
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM during a run; `signum` says which."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


@contextlib.contextmanager
def interruptible():
    """While the block runs, SIGINT and SIGTERM raise Interrupted (in the main thread; other
    threads cannot install handlers and keep what they have). The old handlers come back
    after, except one installed from C (None), which is left in place."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, _raise_interrupted) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in old.items():
            if handler is not None:
                signal.signal(sig, handler)
