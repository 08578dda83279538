"""Run the stages over many files: read, prefilter, lint or fix, write; serially or in a pool,
through the result cache.

The main process stats each file and asks the cache; only the files it cannot answer go to
the workers, which read, prefilter and lint them and send back diagnostics (and, with --fix,
the new bytes: only the main process writes files, so an interrupt never leaves a worker
half-way through a write, and each write checks the file did not change since it was read).
"""
from __future__ import annotations

import gc
import os
import signal
import time
from dataclasses import dataclass, field

from devlint.engine.atomic import write_atomic  # noqa: F401 (re-exported)
from devlint.engine.interrupt import Interrupted, interruptible  # noqa: F401 (re-exported)
from devlint.engine.writeback import (  # noqa: F401 (re-exported)
    READ_ONLY, READ_ONLY_NOQA, _write, read_only, take_fixed)
from devlint.analysis.prefilter import may_have_findings
from devlint.source import SourceFile
from devlint.sources import EMBEDDED_KINDS

SERIAL_BELOW = 4  # files to lint; fewer run in this process, without a pool
BYTES_PER_WORKER = 1 << 20  # source bytes to lint per extra worker process (start-up ~0.2 s)


@dataclass
class FileResult:
    path: str
    diagnostics: list = field(default_factory=list)
    applied: int = 0
    changed: bool = False
    diff: str | None = None
    failures: list = field(default_factory=list)  # (code, message) of reverted fixes
    error: str | None = None  # a warning: the file could not be read, decoded or written
    # why the file could not be read or decoded (also a DL902 finding where it is enabled)
    unreadable: str | None = None
    input_error: str | None = None  # set by the command line: `unreadable`, for a named file
    internal_error: str | None = None
    new_bytes: bytes | None = None  # fixed bytes not written yet (stdin mode, or until written)
    cached: bool = False  # the diagnostics came from the cache
    # what the project stage needs of the file (its project imports ...), read from the bytes
    # linted, and (mtime_ns, size, inode, time read) of those bytes
    facts: dict | None = None
    stat: tuple | None = None
    # what devlint chose not to report (devlint.diagnostics.Exempt): the whole file when it is
    # CUDA-only, and with --show-exempt each candidate not reported
    exempt: list = field(default_factory=list)
    # (row, length) of the fixed lines longer than the project's line length, and that length
    # (devlint.line_length: devlint does not reformat, the command line says so)
    long_lines: list = field(default_factory=list)
    line_length: object = None


def unified_diff(path: str, old: str, new: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


_codes_memo: dict = {}


def _enabled_codes(settings, path: str):
    from devlint.rules.registry import enabled_codes

    if getattr(settings, "per_file_ignores", None) or getattr(settings, "extend_per_file_ignores",
                                                              None):
        return enabled_codes(settings, path)
    hit = _codes_memo.get(id(settings))
    if hit is None or hit[0] is not settings:
        hit = _codes_memo[id(settings)] = (settings, enabled_codes(settings, path))
    return hit[1]


def _linter(kind: str, path: str, settings):
    from devlint.rules.registry import drop_unfixable

    if kind == "shell":
        from devlint.shell import lint_shell_file

        return lambda text: drop_unfixable(lint_shell_file(text, path, settings), settings)
    from devlint.engine.linter import lint_text
    codes = _enabled_codes(settings, path)
    return lambda text, out=None, tree=None: drop_unfixable(
        lint_text(path, text, settings, codes, out, tree), settings)


def process_source(path: str, kind: str, data: bytes, settings, mode: str,
                   unsafe: bool, exempt=None, index: bool = False, prior=None) -> FileResult:
    """Lint (mode "check") or fix ("fix", "diff") one file's bytes. Never raises for bad input.

    exempt: the project stage's Exemption for this file; its findings are not fixed (the
    diagnostics returned are still all of them: the project stage drops them after the run,
    and the cache keeps what the file alone says). index: record what the project stage
    needs of the file (FileResult.facts) while its bytes are at hand. prior: (diagnostics,
    exempt entries) that linting these very bytes with these settings gave (the check pass
    before a fix pass): the fix loop's first round takes them instead of linting again."""
    res = FileResult(path)
    if kind in EMBEDDED_KINDS:
        return _process_embedded(res, kind, data, settings, mode, unsafe)
    if index and kind == "python" and mode == "check":
        from devlint.engine.project import worker_facts

        res.facts = worker_facts(path, data)
    if kind == "python" and not may_have_findings(data):
        # nothing to lint, but a file that does not decode is reported all the same (DL902):
        # ASCII without a coding cookie always decodes
        if data.isascii() and b"coding" not in data[:1024]:
            return res
        try:
            SourceFile.from_bytes(data)
        except (UnicodeDecodeError, LookupError) as e:
            _unreadable(res, kind, settings, f"cannot decode: {e}", data, e)
        return res
    try:
        # a shell script need not be UTF-8 (the shell runs any bytes): it is linted whatever
        # its bytes, and written back with them
        src = SourceFile.from_bytes(data, lenient=kind == "shell")
    except (UnicodeDecodeError, LookupError) as e:
        _unreadable(res, kind, settings, f"cannot decode: {e}", data, e)
        return res
    lint = _linter(kind, path, settings)
    if mode == "check":
        out: dict = {}
        res.diagnostics = lint(src.text, out) if kind == "python" else lint(src.text)
        res.exempt = out.get("exempt", [])
        if res.facts is None:
            return res
        if out.get("tree") is not None:
            from devlint.engine.project import linted_facts, parsed_facts

            res.facts.update(parsed_facts(path, src.text, out["tree"]))
            if res.diagnostics:
                res.facts.update(linted_facts(path, src.text, out["tree"], res.diagnostics))
        return res
    from devlint.engine.fixpass import fix_one

    new_text = fix_one(res, src, kind, path, settings, unsafe, lint, exempt, prior)
    if res.changed and mode == "diff":
        res.diff = unified_diff(path, src.text, new_text)
    return res


def _process_embedded(res: FileResult, kind: str, data: bytes, settings, mode: str,
                      unsafe: bool) -> FileResult:
    """A notebook, CI workflow or Dockerfile: linted or fixed by devlint.sources."""
    from devlint.sources import lint_or_fix

    try:
        src = SourceFile.from_bytes(data, lenient=kind == "dockerfile")
    except (UnicodeDecodeError, LookupError) as e:
        _unreadable(res, kind, settings, f"cannot decode: {e}", data, e)
        return res
    out = lint_or_fix(kind, res.path, src.text, settings, mode, unsafe)
    res.diagnostics, res.failures = out.diagnostics, out.failures
    if out.new_text is not None and out.new_text != src.text:
        res.changed = True
        res.applied = out.applied
        res.new_bytes = src.to_bytes(out.new_text)
        if mode == "diff":
            res.diff = out.diff or unified_diff(res.path, src.text, out.new_text)
    return res


def _unreadable(res: FileResult, kind: str, settings, reason: str, data: bytes | None = None,
                err: Exception | None = None) -> None:
    """A file that cannot be read or decoded: a DL902 finding where DL902 is enabled for it,
    else `res.error` (a warning). `res.unreadable` keeps the reason either way (the command
    line makes it a usage error for a file named explicitly)."""
    from devlint.diagnostics import Diagnostic
    from devlint.source import Locator

    if data is not None and err is not None:
        from devlint.rules.dl902_io_error import decode_error_span

        text, start, end, message = decode_error_span(data, err)
    else:
        text, start, end, message = "", 0, 0, f"Cannot read the file: {reason}"
    res.unreadable = message
    if "DL902" not in _enabled_codes(settings, res.path):
        res.error = reason
        return
    loc = Locator(text)
    d = Diagnostic("DL902", "io-error", message, res.path, start, end)
    d.location, d.end_location = loc.rowcol(start), loc.rowcol(end)
    d.noqa_row = d.location[0]
    res.diagnostics = [d]


def _internal_error(e: BaseException) -> str:
    import traceback

    what = "".join(traceback.format_exception_only(type(e), e)).strip()
    rule = getattr(e, "devlint_rule", None)
    if rule:
        what = f"rule {rule} raised {what}"
    return what + "\n" + traceback.format_exc()


def _read(path: str):
    """(bytes, stamp) with stamp = (stat key, digest, time read), or an OSError."""
    from devlint.engine.cache import digest, stat_key

    read_at = time.time()
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        data = f.read()
    return data, (stat_key(st), digest(data), read_at)


def lint_file(path: str, kind: str, settings, mode: str, unsafe: bool,
              expect: str | None = None, exempt=None, index: bool = False):
    """Read and process one file, writing nothing: (FileResult, stamp). With `expect` (a cached
    digest) and the same bytes on disk, the result is an empty FileResult marked cached: the
    caller takes the diagnostics from the cache."""
    try:
        data, stamp = _read(path)
    except OSError as e:
        res = FileResult(path)
        reason = e.strerror or str(e)
        if isinstance(e, FileNotFoundError) and not os.path.islink(path):
            res.error = reason  # vanished since it was found: a warning, not a finding
        else:
            if isinstance(e, FileNotFoundError):
                reason = "a symbolic link to nothing"
            _unreadable(res, kind, settings, reason)
        return res, None
    if expect is not None and stamp[1] == expect:
        return FileResult(path, cached=True), stamp
    prior = _CHECKED.pop(path, None) if mode != "check" else None
    if prior is not None:  # the check pass's answer, if it was about these bytes
        prior = prior[2:] if prior[0] == stamp[1] and prior[1] == settings else None
    try:
        return process_source(path, kind, data, settings, mode, unsafe, exempt, index,
                              prior), stamp
    except Exception as e:  # a bug in a rule must not stop the run
        return FileResult(path, internal_error=_internal_error(e)), None


# {path: (digest, settings, diagnostics, exempt entries)} of the last check run's files with
# a fix, for the fix pass right after it (`cli`: check, project stage, fix), whose first round
# would lint the same bytes again. Filled in the main process; forked workers inherit it.
_CHECKED: dict = {}


# --- the pool --------------------------------------------------------------------------------

_WORKER_SETTINGS: list = []


def _init_worker(settings_table) -> None:
    global _WORKER_SETTINGS
    _WORKER_SETTINGS = settings_table
    # Ctrl-C reaches the whole process group: the main process alone handles it, and ends
    # the workers with SIGTERM, which must kill them at once (the handler forked from the
    # main process would wait for the parse in progress to return, seconds on a large file)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _work(item):
    i, path, kind, s, mode, unsafe, expect, exempt, index = item
    res, stamp = lint_file(path, kind, _WORKER_SETTINGS[s], mode, unsafe, expect, exempt, index)
    _collect_file()
    return i, res, stamp


def default_jobs() -> int:
    """One worker per CPU. Under pre-commit too: the hook is `require_serial`, so pre-commit
    hands devlint every staged file in one process and devlint spreads them itself (the pool
    still stays off for a handful of files)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_size(n_files: int, n_bytes: int, jobs: int | None) -> int:
    """Workers for n_files to lint: none below SERIAL_BELOW; with jobs unset, one per
    BYTES_PER_WORKER of source, at most one per CPU; an explicit jobs is a maximum."""
    if n_files < SERIAL_BELOW or (jobs is not None and jobs <= 1):
        return 0
    if jobs is None:
        jobs = min(default_jobs(), max(1, n_bytes // BYTES_PER_WORKER))
    workers = min(jobs, n_files)
    return workers if workers > 1 else 0


def run(tasks, mode: str, unsafe: bool, jobs: int | None = None, cache=None, progress=None,
        exempt=None, write_read_only: bool = False):
    """tasks: [(path, kind, settings)] -> [FileResult] in task order.

    cache: a devlint.engine.cache.Cache or None. progress: called with a count of files done.
    exempt: {absolute path: Exemption} from the project stage (fix modes: not fixed).
    write_read_only: fix read-only files too (else they are reported, FileResult.error,
    and left unwritten).
    SIGINT/SIGTERM raise Interrupted (from the main thread); files are then either untouched
    or completely written."""
    with interruptible():
        frozen = mode != "check" and _collect_and_freeze()
        try:
            return _run(tasks, mode, unsafe, jobs, cache, progress, exempt or {},
                        write_read_only)
        finally:
            if mode != "check":
                _CHECKED.clear()
            if frozen:
                gc.unfreeze()


def _collect_and_freeze() -> bool:
    """Before a fix pass: collect the cyclic garbage the check pass and the project stage left
    (the CLI runs with the collector off: on torch's sources, 2.4 M objects, the main process
    from 571 MB to 274 MB), and freeze what is left, so that each fix worker forked from this
    process starts from the smaller heap and can collect its own garbage after each file
    (`_collect_file`) without walking the inherited objects. False (nothing frozen) where the
    collector runs anyway (an API caller's process)."""
    if gc.isenabled():
        return False
    gc.collect()
    gc.freeze()
    return True


# young objects (tracked allocations less deallocations since the last collection) above
# which `_collect_file` collects: ~50-100 MB of trees and facts
YOUNG_OBJECTS = 500_000


def _collect_file() -> None:
    """After a file, in a run with the collector off: trees and facts hold cycles; collecting
    them keeps a process's memory near that of one file, not of every file it linted or
    fixed (a check worker of torch's sources grew to 451 MB). Only once enough young objects
    have piled up (most files make few: the vLLM check does not pay a collection per file),
    and the two young generations only: not what was frozen or survived an earlier
    collection."""
    if not gc.isenabled() and gc.get_count()[0] > YOUNG_OBJECTS:
        gc.collect(1)


def _run(tasks, mode, unsafe, jobs, cache, progress, exempt, write_read_only=False):
    applicable = None  # check mode takes every cache hit, whatever it could fix
    if mode != "check":
        from devlint.engine.fixer import applicable

    def exemption(path):
        return exempt.get(os.path.abspath(path)) if exempt else None

    # on runs big enough for a pool, the workers index each file they read for the project
    # stage (a handful of files leaves it to the project stage, and its store)
    index = len(tasks) >= SERIAL_BELOW

    if mode == "check":
        _CHECKED.clear()  # a check run's findings serve the fix run right after it, no other
    results: list = [None] * len(tasks)
    todo = []  # (size, index, expected digest)
    for i, (path, kind, settings) in enumerate(tasks):
        try:
            st = os.stat(path)
        except OSError:
            st = None
        expect = None
        if cache is not None:
            diags, expect = cache.lookup(path, kind, settings, st)
            if diags is not None and (mode == "check"
                                      or not any(applicable(d, unsafe) for d in diags)):
                results[i] = FileResult(path, diagnostics=diags, cached=True,
                                        exempt=cache.exempt_of(path, kind, settings))
                continue
        # a cached digest to confirm by content (check mode: in fix mode a confirmed entry with
        # fixes to apply would need a second pass)
        todo.append((st.st_size if st else 0, i, expect if mode == "check" else None))
    if progress and len(todo) < len(tasks):
        progress(len(tasks) - len(todo))

    def finish(i, res, stamp):
        path, kind, settings = tasks[i]
        if res.cached:
            diags = cache.confirmed(path, kind, settings, stamp) if cache else None
            if diags is None:  # the entry vanished or does not decode: lint after all
                res, stamp = lint_file(path, kind, settings, mode, unsafe,
                                       exempt=exemption(path))
            else:
                res.diagnostics = diags
                res.exempt = cache.exempt_of(path, kind, settings)
                if mode != "check" and any(applicable(d, unsafe) for d in diags):
                    res, stamp = lint_file(path, kind, settings, mode, unsafe,
                                           exempt=exemption(path))
        if stamp is not None:
            res.stat = (*stamp[0], stamp[2])  # (mtime_ns, size, inode, time read)
        _write(res, mode, stamp, write_read_only)
        if cache is not None and stamp is not None and not res.error \
                and not res.internal_error and not res.cached:
            _remember(cache, res, stamp, mode, path, kind, settings)
        if mode == "check" and stamp is not None and not res.cached \
                and any(d.fix is not None for d in res.diagnostics):
            _CHECKED[path] = (stamp[1], settings, res.diagnostics, res.exempt)
        results[i] = res
        if progress:
            progress(1)

    todo.sort(key=lambda t: -t[0])  # the largest first: no straggler at the end of a pool run
    workers = pool_size(len(todo), sum(t[0] for t in todo), jobs)
    try:
        if workers:
            _run_pool(tasks, todo, mode, unsafe, workers, finish, results, exemption, index)
        for _, i, expect in todo:  # serial, or what a broken pool left
            if results[i] is None:
                path, kind, settings = tasks[i]
                finish(i, *lint_file(path, kind, settings, mode, unsafe, expect,
                                     exemption(path), index))
                _collect_file()
    finally:
        if cache is not None:
            cache.save()
    return results


def _remember(cache, res, stamp, mode, path, kind, settings):
    """Cache what is known to be the check-mode result of some content now on disk."""
    from devlint.engine.cache import stat_key

    if mode == "diff" and res.changed:
        return  # the diagnostics are those of the fixed text, which is not on disk
    if mode == "fix" and res.changed:
        from devlint.engine.cache import digest

        try:
            st = os.stat(path)
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return
        stamp = (stat_key(st), digest(data), time.time())
    cache.store(path, kind, settings, stamp, res.diagnostics, res.exempt)


def _quiet_broken_pool_thread() -> None:
    """The pool's manager thread, seeing its workers terminated, fails futures that shutdown
    has just cancelled and prints InvalidStateError's traceback (CPython 3.11): the run is
    ending on an interrupt, so that one error is dropped."""
    import threading
    from concurrent.futures import InvalidStateError

    previous = threading.excepthook

    def hook(args):
        if not isinstance(args.exc_value, InvalidStateError):
            previous(args)

    threading.excepthook = hook


def _run_pool(tasks, todo, mode, unsafe, workers, finish, results, exemption, index):
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    import multiprocessing as mp

    table: list = []
    table_index: dict = {}
    for _, _, s in tasks:
        if id(s) not in table_index:
            table_index[id(s)] = len(table)
            table.append(s)
    items = [(i, tasks[i][0], tasks[i][1], table_index[id(tasks[i][2])], mode, unsafe, expect,
              exemption(tasks[i][0]), index) for _, i, expect in todo]
    # fork shares the imported engine with the workers; elsewhere, spawn re-imports it
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    chunk = max(1, min(16, len(items) // (workers * 16)))
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                               initargs=(table,))
    try:
        for i, res, stamp in pool.map(_work, items, chunksize=chunk):
            finish(i, res, stamp)
    except BrokenProcessPool:
        pass  # a worker died (killed, out of memory): the caller lints what is left here
    except BaseException:
        _quiet_broken_pool_thread()
        for p in list(getattr(pool, "_processes", {}).values()):
            p.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
