"""Which files to lint: explicit paths always, directories walked with `.gitignore` and the
configured excludes respected."""
from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from dataclasses import dataclass

from devlint.settings import is_excluded
from devlint.sources import kind_of_name

PY_SUFFIXES = (".py", ".pyi")
SHELL_SUFFIXES = (".sh", ".bash")
OTHER_SHELL_SUFFIXES = (".zsh", ".ksh", ".csh", ".tcsh", ".fish")
# the `#!` interpreters of the scripts devlint parses (devlint.shell.options) and of the others
SHELL_INTERPRETERS = frozenset({"bash", "sh", "dash", "ash"})
OTHER_INTERPRETERS = frozenset({"zsh", "ksh", "mksh", "csh", "tcsh", "fish"})


@dataclass(frozen=True)
class Candidate:
    path: str
    explicit: bool
    kind: str  # "python" | "shell" | "notebook" | "ci-yaml" | "dockerfile"


class PathError(Exception):
    """An explicit path that does not exist or cannot be read (exit 2)."""


_LANGUAGE_KINDS = {"python": "python", "pyi": "python", "ipynb": "notebook", "shell": "shell"}


def kind_of(path: str, explicit: bool = False, extension: tuple = ()) -> str | None:
    """The kind of file a path is; `extension`: the settings' (EXT, LANGUAGE) mapping first."""
    low = path.lower()
    if extension:
        ext = os.path.splitext(low)[1][1:]
        for e, language in extension:
            if e == ext:
                return _LANGUAGE_KINDS[language]
    if low.endswith(PY_SUFFIXES):
        return "python"
    if low.endswith(SHELL_SUFFIXES):
        return "shell"
    embedded = kind_of_name(path)
    if embedded is not None:
        return embedded  # a notebook, a CI workflow, a Dockerfile (devlint.sources)
    if explicit and low.endswith((".yml", ".yaml")):
        return "ci-yaml"  # named on the command line: the CI system is read from its keys
    base = os.path.basename(path)
    if "." not in base or explicit:
        interp = _interpreter(path)
        if interp and "python" in interp:
            return "python"
        if interp in SHELL_INTERPRETERS:
            return "shell"
    return None


def _interpreter(path: str) -> str | None:
    """The interpreter a `#!` first line names (None: none, or unreadable)."""
    from devlint.shell.options import shebang_interpreter

    try:
        with open(path, "rb") as f:
            head = f.readline(128)
    except OSError:
        return None
    return shebang_interpreter(head) if head.startswith(b"#!") else None


def _other_shell(path: str) -> bool:
    """A zsh, ksh, csh or fish script (by its extension or `#!` line): no parser in devlint
    (their quoting and indirection differ from bash's; devlint.shell.options)."""
    return path.lower().endswith(OTHER_SHELL_SUFFIXES) or (
        "." not in os.path.basename(path) and _interpreter(path) in OTHER_INTERPRETERS)


def discover(paths, settings_for, force_exclude: bool = False, warn=None):
    """Yield Candidates, each file once: by its real path, so a symbolic link and the file it
    leads to (or two links to one file) are linted once. In a walk the file itself is kept
    over a link to it; across paths, the first name given. `settings_for(path)` gives the
    settings governing a path. A file named explicitly that devlint has no parser for (a zsh
    script) is not linted, and `warn(message)` says so (default: a warning on stderr):
    nothing named is skipped silently."""
    seen = set()
    for p in paths:
        if not os.path.lexists(p):
            raise PathError(f"{p}: No such file or directory")
        if os.path.isdir(p):
            for real, c in _once(_walk(p, settings_for)):
                if real not in seen:
                    seen.add(real)
                    yield c
        else:
            if force_exclude and is_excluded(settings_for(p), p):
                continue
            _check_readable(p)
            if _other_shell(p):
                # pre-commit's `shell` type passes these too: not an error (exit 2) for the
                # hook, but never silent
                (warn or _warn)(f"{p}: not linted: devlint parses bash and sh scripts; zsh, "
                                "ksh, csh and fish scripts have no parser here")
                continue
            k = kind_of(p, True, getattr(settings_for(p), "extension", ())) or "python"
            real = os.path.realpath(p)
            if real not in seen:
                seen.add(real)
                yield Candidate(p, True, k)


def _warn(message: str) -> None:
    import sys

    sys.stderr.write(f"devlint: warning: {message}\n")


def _mapped_kind(path: str, settings_for) -> str | None:
    """The kind the settings' `extension` mapping gives a file no name rule recognises."""
    if "." not in os.path.basename(path):
        return None
    mapping = getattr(settings_for(path), "extension", ())
    return kind_of(path, False, mapping) if mapping else None


def _once(candidates):
    """(real path, candidate) for the walk's candidates, one per real file: the file itself
    rather than a link to it (the first link, in walk order, when the file lies outside the
    walk)."""
    chosen: dict = {}
    order = []
    dirs: dict = {}
    for c in candidates:
        real = _realpath(c.path, dirs)
        held = chosen.get(real)
        if held is None:
            chosen[real] = c
            order.append(real)
        elif os.path.islink(held.path) and not os.path.islink(c.path):
            chosen[real] = c
    return [(r, chosen[r]) for r in order]


def _realpath(path: str, dirs: dict) -> str:
    """`os.path.realpath(path)`, with the real path of its directory memoized in `dirs`: the
    directory's real path joined with the name, unless the name is itself a link (realpath
    resolves the components one by one; resolving a walk's every file from the root costs
    an `lstat` per component)."""
    d, name = os.path.split(path)
    real_dir = dirs.get(d)
    if real_dir is None:
        real_dir = dirs[d] = os.path.realpath(d)
    if not name or name in (os.curdir, os.pardir):
        return os.path.realpath(path)
    full = os.path.join(real_dir, name)
    return os.path.realpath(path) if os.path.islink(full) else full


def named_input_errors(results, candidates) -> None:
    """A file named on the command line that cannot be read or decoded is a usage error
    (FileResult.input_error: exit 2), not a DL902 finding (that is for files found while
    walking a directory)."""
    explicit = {c.path for c in candidates if c.explicit}
    for r in results:
        if r.path not in explicit:
            continue
        found = [d for d in r.diagnostics if d.code == "DL902"]  # (from the cache, too)
        if not (r.unreadable or found):
            continue
        where = f"{r.path}:{found[0].location[0]}:{found[0].location[1]}" if found else r.path
        r.diagnostics = [d for d in r.diagnostics if d.code != "DL902"]
        r.error = None
        r.input_error = f"{where}: {r.unreadable or found[0].message}"


def _check_readable(path: str) -> None:
    """An explicit file that cannot be read is a usage error (exit 2), not a warning: a broken
    symlink, a symlink loop, no permission, or something that is not a regular file."""
    import stat

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise PathError(f"{path}: not a regular file")
        with open(path, "rb"):
            pass
    except OSError as e:
        raise PathError(f"{path}: cannot read: {e.strerror or e}") from None


def _dangling_link(path: str) -> bool:
    """A symbolic link that leads nowhere (or loops): listed, so that it is reported (DL902)."""
    return os.path.islink(path) and not os.path.exists(path)


def _git_files(root: str) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under root, or None outside a git work tree."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
             "--", "."],
            capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    files = [f for f in out.stdout.decode("utf-8", "surrogateescape").split("\0") if f]
    return [os.path.normpath(os.path.join(root, f)) for f in files]


def _walk(root: str, settings_for):
    files = _git_files(root)
    if files == []:
        files = None  # a directory git ignores, named explicitly: lint it anyway, like ruff
    if files is not None:
        for path in sorted(files):
            if not os.path.isfile(path) and not _dangling_link(path):
                continue  # deleted in the work tree, or a submodule
            k = kind_of(path) or _mapped_kind(path, settings_for)
            if k is None:
                continue
            if _excluded_in_tree(root, path, settings_for):
                continue
            yield Candidate(path, False, k)
        return
    yield from _walk_plain(root, settings_for)


def _excluded_in_tree(root: str, path: str, settings_for) -> bool:
    s = settings_for(path)
    fast = _Excluder.of(s)
    if fast.plain_hit(path, root):
        return True
    if not fast.other:
        return False
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    # check the file and each directory between root and it
    for i in range(1, len(parts) + 1):
        sub = os.path.join(root, *parts[:i])
        if fast.other_hit(sub):
            return True
    return False


_PLAIN_NAME = re.compile(r"[\w.-]*\w[\w.-]*")


class _Excluder:
    """is_excluded(settings, path) for a whole walk, fast. A plain-name pattern (`build`,
    `.venv`: every default) matches a file's name or a directory on its way from the walk
    root, so the root is matched by glob once and everything below it by name; other patterns
    go to the glob matcher path by path. (A vLLM walk spent ~3 s matching every default
    pattern against every component of every path.)"""

    _by_settings: dict = {}

    def __init__(self, settings):
        from devlint.settings import matches_glob

        pats = tuple(settings.exclude) + tuple(settings.extend_exclude)
        self.settings = settings
        self.plain = frozenset(p for p in pats if _PLAIN_NAME.fullmatch(p))
        self.other = tuple(p for p in pats if p not in self.plain)
        self._glob = matches_glob
        self._dirs: dict = {}

    @classmethod
    def of(cls, settings) -> "_Excluder":
        ex = cls._by_settings.get(id(settings))
        if ex is None or ex.settings is not settings:
            ex = cls._by_settings[id(settings)] = cls(settings)
        return ex

    def dir_hit(self, d: str, top: str) -> bool:
        """A plain pattern names d or a directory above it (top: the walk's root)."""
        hit = self._dirs.get(d)
        if hit is None:
            parent = os.path.dirname(d)
            if d == top or not d or parent == d or len(d) <= len(top):
                hit = any(self._glob(self.settings, d, p) for p in self.plain)
            else:
                hit = os.path.basename(d) in self.plain or self.dir_hit(parent, top)
            self._dirs[d] = hit
        return hit

    def plain_hit(self, path: str, top: str) -> bool:
        if not self.plain:
            return False
        return os.path.basename(path) in self.plain or self.dir_hit(os.path.dirname(path), top)

    def other_hit(self, path: str) -> bool:
        return any(self._glob(self.settings, path, p) for p in self.other)


def _walk_plain(root: str, settings_for):
    ignore_stack: list = []
    top = os.path.normpath(root)
    for dirpath, dirnames, filenames in os.walk(top):
        # (a directory without one is not asked to open it: one failed open per directory)
        rules = _read_gitignore(dirpath) if ".gitignore" in filenames else []
        ignore_stack = [(d, r) for d, r in ignore_stack if dirpath.startswith(d)]
        if rules:
            ignore_stack.append((dirpath, rules))
        s = settings_for(os.path.join(dirpath, "_"))
        fast = _Excluder.of(s)
        if fast.plain and fast.dir_hit(dirpath, top):
            dirnames[:] = []
            continue  # the walk's root itself sits in an excluded folder
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in fast.plain or (fast.other and fast.other_hit(full)) \
                    or _gitignored(ignore_stack, full, True):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if name in fast.plain or (fast.other and fast.other_hit(full)) \
                    or _gitignored(ignore_stack, full, False):
                continue
            k = kind_of(full) or _mapped_kind(full, settings_for)
            if k is not None:
                yield Candidate(os.path.normpath(full), False, k)


def _read_gitignore(dirpath: str):
    path = os.path.join(dirpath, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    rules = []
    for line in lines:
        line = line.rstrip()
        if not line or line.startswith("#"):
            continue
        neg = line.startswith("!")
        if neg:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        rules.append((line.lstrip("/"), neg, dir_only, anchored))
    return rules


def _gitignored(stack, path: str, is_dir: bool) -> bool:
    ignored = False
    for base, rules in stack:
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        name = rel.rsplit("/", 1)[-1]
        for pat, neg, dir_only, anchored in rules:
            if dir_only and not is_dir:
                continue
            target = rel if anchored else name
            if fnmatch.fnmatchcase(target, pat) or (pat.startswith("**/") and
                                                     fnmatch.fnmatchcase(rel, pat[3:])):
                ignored = not neg
    return ignored


# --- `--since REV`: only the lines changed since a revision --------------------------------

class ChangedLines:
    """Rows changed since a git revision, per file (by real path). A file git does not track
    counts as changed everywhere; a tracked file absent from the diff has no changed row."""

    def __init__(self):
        self.rows: dict = {}  # realpath -> set of 1-based rows
        self.whole: set = set()  # realpaths of untracked files

    def touches(self, path: str) -> bool:
        rp = os.path.realpath(path)
        return rp in self.whole or bool(self.rows.get(rp))

    def covers(self, path: str, first_row: int, last_row: int) -> bool:
        rp = os.path.realpath(path)
        if rp in self.whole:
            return True
        rows = self.rows.get(rp, ())
        return any(r in rows for r in range(first_row, max(first_row, last_row) + 1))

    def narrow(self, results) -> None:
        """Keep, of each result, the findings on changed lines (DL902, about the whole file,
        always) and the exempt candidates there (`--show-exempt`; whole-file entries stay)."""
        for r in results:
            # a notebook's rows count within its cells, not in the JSON git diffs: its
            # findings stay when the notebook changed at all
            r.diagnostics = [d for d in r.diagnostics if d.code == "DL902"
                             or (self.touches(d.path) if d.cell else
                                 self.covers(d.path, d.location[0], d.end_location[0]))]
            r.exempt = [e for e in r.exempt if e.whole_file
                        or self.covers(e.path, e.location[0], e.end_location[0])]


def _git(top: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", top, "-c", "core.quotepath=off", *args],
                          capture_output=True)


def _unquote(name: str) -> str:
    """A path as git prints it in diff headers (C-quoted when it has odd characters)."""
    if len(name) >= 2 and name[0] == name[-1] == '"':
        import codecs

        raw = codecs.escape_decode(name[1:-1].encode("utf-8", "surrogateescape"))[0]
        return raw.decode("utf-8", "surrogateescape")
    return name


def parse_unified_zero(diff: str) -> dict:
    """`git diff -U0` output -> {path after the change: set of added/changed rows}."""
    import re

    out: dict = {}
    current = None
    hunk = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = _unquote(line[4:].rstrip("\t"))
            current = None if name == "/dev/null" else name[2:] if name.startswith("b/") else name
            if current is not None:
                out.setdefault(current, set())
        elif current is not None and line.startswith("@@"):
            m = hunk.match(line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) or 1)
                out[current].update(range(start, start + count))
    return out


def changed_lines(rev: str, paths) -> ChangedLines:
    """Rows changed in the work tree since `rev`, in the git repositories holding `paths`."""
    tops: set = set()
    for p in paths:
        d = p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) or "."
        out = _git(d, "rev-parse", "--show-toplevel")
        if out.returncode != 0:
            raise PathError(f"--since needs a git repository: {p} is not in one")
        tops.add(out.stdout.decode("utf-8", "surrogateescape").strip())
    changed = ChangedLines()
    for top in sorted(tops):
        ok = _git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        if ok.returncode != 0:
            raise PathError(f"--since: unknown revision {rev!r} in {top}")
        diff = _git(top, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", rev, "--")
        if diff.returncode != 0:
            raise PathError(f"--since: git diff {rev} failed: "
                            f"{diff.stderr.decode('utf-8', 'replace').strip()}")
        for name, rows in parse_unified_zero(diff.stdout.decode("utf-8", "surrogateescape")).items():
            changed.rows[os.path.realpath(os.path.join(top, name))] = rows
        untracked = _git(top, "ls-files", "-z", "--others", "--exclude-standard")
        for name in untracked.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if name:
                changed.whole.add(os.path.realpath(os.path.join(top, name)))
    return changed
