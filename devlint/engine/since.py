"""`--since REV`: only the lines changed since a git revision (the rows of each file, from
`git diff -U0`, and the files git does not track)."""
from __future__ import annotations

import os
import subprocess

from devlint.discovery import PathError


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
