"""Atomic file replacement: a temp file in the same directory, then a rename, so readers (and
an interrupted run) only ever see the old or the new content."""
from __future__ import annotations

import contextlib
import os
import signal
import tempfile

_HELD = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def _signals_held():
    """SIGINT and SIGTERM wait until the block is done (then their handlers run as usual):
    an interrupt between creating the temp file and renaming it would leave the temp file
    behind, since the handler's exception can land before the cleanup is set up."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def write_atomic(path: str, data: bytes, keep_mode: bool = True, fsync: bool = True,
                 prefix: str = ".devlint-") -> None:
    """Replace the file at `path` by `data`. A symbolic link is written through: the file it
    leads to is replaced, the link stays a link."""
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    mode = os.stat(path).st_mode & 0o7777 if keep_mode else None
    with _signals_held():
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if fsync:
                    f.flush()
                    os.fsync(f.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
