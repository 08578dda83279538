"""Which files to lint: explicit paths always, directories walked with `.gitignore` and the
configured excludes respected."""
from __future__ import annotations

import os
import re
import stat
import subprocess
from dataclasses import dataclass

from devlint.engine.gitignore import Ignore, ignored, read_gitignore
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


def _once(candidates):
    """(real path, candidate) for the walk's (candidate, real path, is a link), one per real
    file: the file itself rather than a link to it (the first link, in walk order, when the
    file lies outside the walk)."""
    chosen: dict = {}
    order = []
    for c, real, link in candidates:
        held = chosen.get(real)
        if held is None:
            chosen[real] = (c, link)
            order.append(real)
        elif held[1] and not link:
            chosen[real] = (c, link)
    return [(r, chosen[r][0]) for r in order]


def _realpath(path: str, dirs: dict, link: bool | None = None) -> str:
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
    if link is None:
        link = os.path.islink(full)
    return os.path.realpath(path) if link else full


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
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise PathError(f"{path}: not a regular file")
        with open(path, "rb"):
            pass
    except OSError as e:
        raise PathError(f"{path}: cannot read: {e.strerror or e}") from None


def _git_files(root: str) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under root, or None outside a git work tree."""
    if not _may_be_in_git(root):
        return None  # (no git process: a few stats instead of a fork and exec)
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
    # git lists clean relative paths: joined to the normalized root, they are normalized
    # (os.path.normpath for any that is not: a "." or ".." part, a doubled separator)
    top = os.path.normpath(root)
    head = "" if top == os.curdir else top if top.endswith(os.sep) else top + os.sep
    return [os.path.normpath(os.path.join(root, f))
            if f.startswith((".", os.sep)) or f"{os.sep}." in f or os.sep * 2 in f
            or f.endswith(os.sep) else head + f for f in files]


def _may_be_in_git(root: str) -> bool:
    """Whether git could find a work tree at root: a `.git` (folder, or file of a worktree or
    submodule) in root or a folder above it, as given or resolved, or git told where by the
    environment."""
    if any(k in os.environ for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")):
        return True
    for start in {os.path.abspath(root), os.path.realpath(root)}:
        d = start
        while True:
            if os.path.lexists(os.path.join(d, ".git")):
                return True
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return False


def _walk(root: str, settings_for):
    """(Candidate, real path, is a link) for the files under root: git's list in a work
    tree, else the folders walked (`_walk_plain`)."""
    files = _git_files(root)
    if files == []:
        files = None  # a directory git ignores, named explicitly: lint it anyway, like ruff
    if files is not None:
        dirs: dict = {}
        hint = _folder_hints(root, settings_for)
        for path in sorted(files):
            if hint is not None:
                hint(os.path.dirname(path))
            k = _walked_kind(path, os.path.basename(path), settings_for(path))
            if k is None:
                continue
            try:  # one lstat: a regular file, or a link (to a file, or dangling)
                mode = os.lstat(path).st_mode
            except OSError:
                continue  # deleted in the work tree
            link = stat.S_ISLNK(mode)
            if not (stat.S_ISREG(mode) or link and (os.path.isfile(path)
                                                    or not os.path.exists(path))):
                continue  # a submodule, a link to a folder
            if _excluded_in_tree(root, path, settings_for):
                continue
            yield Candidate(path, False, k), _realpath(path, dirs, link), link
        return
    yield from _walk_plain(root, settings_for)


def _folder_hints(root: str, settings_for):
    """For git's list: `hint(folder)` gives the resolver (`SettingsResolver.inherit`) each
    folder's listing below root, parents first, as the folder walk does; None when the
    resolver takes no hints."""
    inherit = getattr(settings_for, "inherit", None)
    if inherit is None:
        return None
    top = os.path.normpath(root)
    top = "" if top == os.curdir else top  # (the folder of a path git lists relative to ".")
    done: set = {top}

    def hint(folder: str) -> None:
        if folder in done or len(folder) <= len(top):
            return
        done.add(folder)
        parent = os.path.dirname(folder)
        hint(parent)
        try:
            names = os.listdir(folder)
        except OSError:
            return
        inherit(folder, parent, names)

    return hint


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
    """The files under root, as `os.walk` (top-down, names sorted, links to folders not
    followed) lists them, minus the excluded and the git-ignored. One `scandir` per folder
    tells the links apart (no `lstat` per file), so each candidate comes with its real path:
    its folder's (resolved once, at the root) joined with its name, unless it is a link."""
    top = os.path.normpath(root)
    inherit = getattr(settings_for, "inherit", None)
    strip = len(os.curdir) + 1 if top == os.curdir else 0  # "./a.py" -> "a.py" (normpath)
    # (folder, its real path, the .gitignore rules over it, its parent folder), depth first
    stack = [(top, os.path.realpath(top), (), None)]
    while stack:
        dirpath, real_dir, ignores, parent = stack.pop()
        try:
            with os.scandir(dirpath) as it:
                entries = list(it)
        except OSError:
            continue  # as os.walk: a folder that cannot be listed is skipped
        dirnames, files = [], []
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else files).append(e)
        if any(e.name == ".gitignore" for e in files):
            rules = read_gitignore(dirpath)
            if rules:
                ignores = ignores + (Ignore(dirpath, rules),)
        # the settings are asked with the folder spelled as its candidates are ("a/b", not
        # "./a/b"): the resolver memoizes by that spelling, so each folder is resolved once
        if parent is not None and inherit is not None:
            inherit(dirpath[strip:], parent[strip:], [e.name for e in entries])
        # (names from a listing are never absolute: os.path.join is a concatenation here)
        sep = "" if dirpath.endswith(os.sep) else os.sep
        head, real_head = dirpath + sep, real_dir + ("" if real_dir.endswith(os.sep) else os.sep)
        s = settings_for(head[strip:] + "_")
        fast = _Excluder.of(s)
        if fast.plain and fast.dir_hit(dirpath, top):
            continue  # the walk's root itself sits in an excluded folder
        below = []
        for e in sorted(dirnames, key=_name):
            d = e.name
            full = head + d
            if d in fast.plain or (fast.other and fast.other_hit(full)) \
                    or (ignores and ignored(ignores, full, d, True)):
                continue
            try:
                link = e.is_symlink()
            except OSError:
                link = True
            if not link:  # (os.walk lists a link to a folder, and does not enter it)
                below.append((full, real_head + d, ignores, dirpath))
        stack.extend(reversed(below))
        for e in sorted(files, key=_name):
            name = e.name
            full = head + name
            if name in fast.plain or (fast.other and fast.other_hit(full)) \
                    or (ignores and ignored(ignores, full, name, False)):
                continue
            k = _walked_kind(full, name, s)
            if k is None:
                continue
            try:
                link = e.is_symlink()
            except OSError:
                link = True
            real = os.path.realpath(full) if link else real_head + name
            yield Candidate(full[strip:], False, k), real, link


# the suffixes of the other kinds kind_of knows by name (a walked file with a dot in its name
# and none of these, nor a Dockerfile's name, is none of them: no `#!` line is read)
_OTHER_KINDS = SHELL_SUFFIXES + (".ipynb", ".yml", ".yaml")


def _walked_kind(path: str, name: str, settings) -> str | None:
    """The kind of a file found in a walk (`name`: its base name; `settings`: its folder's):
    by its name, else by the settings' `extension` mapping (a name with a dot); kind_of's
    calls are skipped for the names it would find nothing in."""
    low = name.lower()
    if low.endswith(PY_SUFFIXES):
        return "python"
    mapping = getattr(settings, "extension", ())
    if "." in name and not low.endswith(_OTHER_KINDS) and "dockerfile" not in low \
            and "containerfile" not in low:
        return kind_of(path, False, mapping) if mapping else None  # no kind by its name
    return kind_of(path) or (kind_of(path, False, mapping) if mapping and "." in name
                             else None)


def _name(entry) -> str:
    return entry.name
