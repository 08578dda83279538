"""`.gitignore` files for the folder walk outside a git work tree (`discovery._walk_plain`):
read, compiled once per file, and asked per path."""
from __future__ import annotations

import fnmatch
import os
import re


def read_gitignore(dirpath: str):
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


class Ignore:
    """One `.gitignore`'s rules, compiled once: for files and for folders (a `dir/` rule only
    matches folders), the rules matching a name and those matching the path relative to the
    file's folder each joined into one regular expression when no rule negates (any match
    ignores), else kept in order (the last matching rule decides)."""

    def __init__(self, base: str, rules):
        self.cut = len(os.path.join(base, ""))
        self.files = self._compile([r for r in rules if not r[2]])
        self.dirs = self._compile(rules)

    @staticmethod
    def _compile(rules):
        def one(pats):
            return re.compile("|".join(pats)).match if pats else None

        if not any(neg for _, neg, _, _ in rules):
            return (one([fnmatch.translate(p) for p, _, _, anchored in rules if not anchored]),
                    one([fnmatch.translate(p) for p, _, _, anchored in rules if anchored]
                        + [fnmatch.translate(p[3:]) for p, _, _, anchored in rules
                           if anchored and p.startswith("**/")]))
        return [(one([fnmatch.translate(p)]), anchored,
                 one([fnmatch.translate(p[3:])]) if p.startswith("**/") else None, neg)
                for p, neg, _, anchored in reversed(rules)]

    def decide(self, path: str, name: str, is_dir: bool):
        """True: ignored, False: re-included (`!`), None: no rule of this file matches."""
        rules = self.dirs if is_dir else self.files
        rel = path[self.cut:].replace(os.sep, "/")
        if isinstance(rules, tuple):
            by_name, by_rel = rules
            return True if (by_name and by_name(name)) or (by_rel and by_rel(rel)) else None
        for match, anchored, extra, neg in rules:
            if match(rel if anchored else name) or (extra and extra(rel)):
                return not neg
        return None


def ignored(ignores, path: str, name: str, is_dir: bool) -> bool:
    """Whether the `.gitignore` files above path ignore it: the last rule that matches, in
    the innermost file with one, decides."""
    for ig in reversed(ignores):
        found = ig.decide(path, name, is_dir)
        if found is not None:
            return found
    return False
