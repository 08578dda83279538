"""Which files to lint: explicit paths always, directories walked with `.gitignore` and the
configured excludes respected."""
from __future__ import annotations

import fnmatch
import os
import subprocess
from dataclasses import dataclass

from devlint.settings import is_excluded

PY_SUFFIXES = (".py",)
SHELL_SUFFIXES = (".sh", ".bash")


@dataclass(frozen=True)
class Candidate:
    path: str
    explicit: bool
    kind: str  # "python" | "shell"


class PathError(Exception):
    """An explicit path that does not exist or cannot be read (exit 2)."""


def kind_of(path: str, explicit: bool = False) -> str | None:
    low = path.lower()
    if low.endswith(PY_SUFFIXES):
        return "python"
    if low.endswith(SHELL_SUFFIXES):
        return "shell"
    base = os.path.basename(path)
    if "." not in base or explicit:
        try:
            with open(path, "rb") as f:
                head = f.readline(128)
        except OSError:
            return None
        if head.startswith(b"#!"):
            if b"python" in head:
                return "python"
            if any(sh in head for sh in (b"bash", b"/sh", b" sh", b"zsh", b"dash", b"ksh")):
                return "shell"
    return None


def discover(paths, settings_for, force_exclude: bool = False):
    """Yield Candidates. `settings_for(path)` gives the settings governing a path."""
    seen = set()
    for p in paths:
        if not os.path.lexists(p):
            raise PathError(f"{p}: No such file or directory")
        if os.path.isdir(p):
            for c in _walk(p, settings_for):
                if c.path not in seen:
                    seen.add(c.path)
                    yield c
        else:
            if force_exclude and is_excluded(settings_for(p), p):
                continue
            k = kind_of(p, explicit=True) or "python"
            if p not in seen:
                seen.add(p)
                yield Candidate(p, True, k)


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
    return [os.path.join(root, f) for f in files]


def _walk(root: str, settings_for):
    files = _git_files(root)
    if files is not None:
        for path in sorted(files):
            if not os.path.isfile(path):
                continue  # deleted in the work tree, or a submodule
            k = kind_of(path)
            if k is None:
                continue
            if _excluded_in_tree(root, path, settings_for):
                continue
            yield Candidate(path, False, k)
        return
    yield from _walk_plain(root, settings_for)


def _excluded_in_tree(root: str, path: str, settings_for) -> bool:
    s = settings_for(path)
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    # check the file and each directory between root and it
    for i in range(1, len(parts) + 1):
        sub = os.path.join(root, *parts[:i])
        if is_excluded(s, sub):
            return True
    return False


def _walk_plain(root: str, settings_for):
    ignore_stack: list = []
    for dirpath, dirnames, filenames in os.walk(root):
        rules = _read_gitignore(dirpath)
        ignore_stack = [(d, r) for d, r in ignore_stack if dirpath.startswith(d)]
        if rules:
            ignore_stack.append((dirpath, rules))
        s = settings_for(os.path.join(dirpath, "_"))
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if is_excluded(s, full) or _gitignored(ignore_stack, full, True):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if is_excluded(s, full) or _gitignored(ignore_stack, full, False):
                continue
            k = kind_of(full)
            if k is not None:
                yield Candidate(full, False, k)


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
