"""Run the stages over many files: read, prefilter, lint or fix, write; serially or in a pool."""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from devlint.engine.prefilter import may_have_findings
from devlint.source import SourceFile

SERIAL_BELOW = 48  # files; a pool's start-up costs more than it saves below this


@dataclass
class FileResult:
    path: str
    diagnostics: list = field(default_factory=list)
    applied: int = 0
    changed: bool = False
    diff: str | None = None
    failures: list = field(default_factory=list)  # (code, message) of reverted fixes
    error: str | None = None  # the file could not be read or decoded
    internal_error: str | None = None
    new_bytes: bytes | None = None  # set in stdin mode


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


def _validator(kind: str, path: str):
    if kind == "shell":
        from devlint.shell import validate_shell

        return lambda text: validate_shell(text, path)
    from devlint.engine.concrete import python_parses

    return lambda text: python_parses(text, path)


def _linter(kind: str, path: str, settings):
    if kind == "shell":
        from devlint.shell import lint_shell_file

        return lambda text: lint_shell_file(text, path, settings)
    from devlint.engine.linter import enabled_codes, lint_text

    codes = enabled_codes(settings, path)
    return lambda text: lint_text(path, text, settings, codes)


def process_source(path: str, kind: str, data: bytes, settings, mode: str,
                   unsafe: bool) -> FileResult:
    """Lint (mode "check") or fix ("fix", "diff") one file's bytes. Never raises for bad input."""
    res = FileResult(path)
    if kind == "python" and not may_have_findings(data):
        return res
    try:
        src = SourceFile.from_bytes(data)
    except (UnicodeDecodeError, LookupError) as e:
        res.error = f"cannot decode: {e}"
        return res
    lint = _linter(kind, path, settings)
    if mode == "check":
        res.diagnostics = lint(src.text)
        return res
    from devlint.engine.fixer import fix_text

    validate = _validator(kind, path)
    outcome = fix_text(src.text, lint, validate, unsafe)
    new_text = outcome.text
    res.failures = [(d.code, f"{d.message}: fix reverted ({err})") for d, err in outcome.failures]
    if new_text != src.text and kind == "python":
        from devlint.engine.concrete import libcst_parses

        err = libcst_parses(new_text)
        if err is not None and libcst_parses(src.text) is None:
            res.failures.append(("DL000", f"fixed file does not re-parse, all fixes reverted ({err})"))
            new_text = src.text
    res.changed = new_text != src.text
    res.applied = outcome.applied if res.changed else 0
    res.diagnostics = lint(new_text) if res.changed else lint(src.text)
    if res.changed:
        res.new_bytes = src.to_bytes(new_text)
        if mode == "diff":
            res.diff = unified_diff(path, src.text, new_text)
    return res


def write_atomic(path: str, data: bytes) -> None:
    """Temp file in the same directory, then rename: readers see the old or the new file."""
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    st = os.stat(path)
    fd, tmp = tempfile.mkstemp(prefix=".devlint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, st.st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def process_path(path: str, kind: str, settings, mode: str, unsafe: bool) -> FileResult:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return FileResult(path, error=e.strerror or str(e))
    try:
        res = process_source(path, kind, data, settings, mode, unsafe)
    except Exception as e:  # a bug in a rule must not stop the run
        import traceback

        return FileResult(path, internal_error="".join(
            traceback.format_exception_only(type(e), e)).strip() + "\n" + traceback.format_exc())
    if mode == "fix" and res.changed and res.new_bytes is not None:
        try:
            write_atomic(path, res.new_bytes)
        except OSError as e:
            res.error = f"cannot write: {e.strerror or e}"
        res.new_bytes = None
    return res


def _work(args):
    return process_path(*args)


def run(tasks, mode: str, unsafe: bool, jobs: int | None = None):
    """tasks: [(path, kind, settings)] -> [FileResult] in task order."""
    jobs = jobs or os.cpu_count() or 1
    work = [(p, k, s, mode, unsafe) for p, k, s in tasks]
    if jobs <= 1 or len(work) < SERIAL_BELOW:
        return [_work(w) for w in work]
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing as mp

    ctx = mp.get_context("fork") if hasattr(os, "fork") else None
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        return list(pool.map(_work, work, chunksize=max(1, len(work) // (jobs * 8))))
