"""Atomic file replacement: a temp file in the same directory, then a rename, so readers (and
an interrupted run) only ever see the old or the new content."""
from __future__ import annotations

import contextlib
import errno
import os
import signal

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


def _keep_owner_and_mode(fd: int, path_of_fd: str, st: os.stat_result) -> None:
    """Give the new file the old one's owner, group and mode (the owner first: chown clears
    set-id bits). A new file belongs to whoever writes it, so root fixing a user's file would
    otherwise hand it to root; a group or owner that cannot be kept is an error, and the old
    file stays."""
    now = os.fstat(fd)
    if (now.st_uid, now.st_gid) != (st.st_uid, st.st_gid) and hasattr(os, "fchown"):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            raise PermissionError(
                errno.EPERM, f"cannot keep its owner and group ({st.st_uid}:{st.st_gid})"
            ) from None
    if hasattr(os, "fchmod"):
        os.fchmod(fd, st.st_mode & 0o7777)
    else:  # Windows
        os.chmod(path_of_fd, st.st_mode & 0o7777)


def write_atomic(path: str, data: bytes, keep_mode: bool = True, fsync: bool = True,
                 prefix: str = ".devlint-") -> None:
    """Replace the file at `path` by `data`. A symbolic link is written through: the file it
    leads to is replaced, the link stays a link."""
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    st = os.stat(path) if keep_mode else None
    import tempfile

    with _signals_held():
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if st is not None:
                    _keep_owner_and_mode(f.fileno(), tmp, st)
                if fsync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
