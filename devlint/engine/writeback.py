"""Writing fixed files back: the read-only rule, the on-disk change check, and taking the fix
pass's results in place of the check pass's (used by devlint.engine.runner)."""
from __future__ import annotations

import os

from devlint.engine.atomic import write_atomic

READ_ONLY = "read-only; not fixed (--fix-read-only fixes it and keeps its mode)"
READ_ONLY_NOQA = "read-only; no noqa added (--fix-read-only writes it and keeps its mode)"


def take_fixed(results: list, todo: list, fixed: list) -> None:
    """The fix pass's results (of the files `todo` indexes) in place of the check pass's; a
    file not written (read-only, changed meanwhile, cannot write) keeps the check pass's
    findings, with the reason."""
    for i, res in zip(todo, fixed):
        if res.error and not res.changed and not res.unreadable:
            results[i].error = res.error
        else:
            results[i] = res


def read_only(path: str) -> bool:
    """A file its owner marked read-only (no write bit: root may write it all the same), or
    one this user may not write: devlint does not replace it unless told to."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return not st.st_mode & 0o222 or not os.access(path, os.W_OK)


def _write(res, mode: str, stamp, write_read_only: bool = False) -> None:
    if mode != "fix" or not res.changed or res.new_bytes is None:
        return
    from devlint.engine.cache import stat_key

    try:
        if stamp is not None and stat_key(os.stat(res.path)) != stamp[0]:
            res.error = "changed on disk while devlint was fixing it; not written"
        elif not write_read_only and read_only(res.path):
            res.error = READ_ONLY
        else:
            write_atomic(res.path, res.new_bytes)
    except OSError as e:
        res.error = f"cannot write: {e.strerror or e}"
    if res.error:
        res.changed, res.applied = False, 0
    else:
        res.new_bytes = None
