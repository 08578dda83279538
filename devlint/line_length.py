"""The line length a project keeps, and the fixed lines that run past it.

devlint does not reformat (a fix changes the hardcoding, nothing around it): where a fix makes
a line longer than the project's line length, the run says so, naming the file and lines, so
that the user runs their formatter (`ruff format`, `black`). The length: `line-length` in
[tool.devlint] where configured; else the nearest formatter configuration from the file's
directory up to a repository root: `ruff.toml` / `.ruff.toml` `line-length`, then
`pyproject.toml` [tool.ruff] and [tool.black] `line-length` (each formatter's own precedence);
else 88, ruff's and black's default. Configuration layer: reads files, imports nothing of the
engine.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

DEFAULT = 88


@dataclass(frozen=True)
class LineLength:
    limit: int
    source: str  # where it was read: "pyproject.toml [tool.ruff] line-length", "default"


def line_length_for(settings, path: str) -> LineLength:
    """The line length governing `path`: configured, else the project's formatter's."""
    if settings.line_length is not None:
        return LineLength(settings.line_length, f"{settings.config_path} [tool.devlint] "
                                                "line-length")
    return project_line_length(os.path.dirname(os.path.abspath(path)) or ".")


@lru_cache(maxsize=None)
def project_line_length(directory: str) -> LineLength:
    d = os.path.abspath(directory)
    for name in ("ruff.toml", ".ruff.toml", "pyproject.toml"):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            found = _configured(p, name)
            if found is not None:
                return found
    parent = os.path.dirname(d)
    if os.path.exists(os.path.join(d, ".git")) or parent == d:
        return LineLength(DEFAULT, "the default of ruff and black")
    return project_line_length(parent)


def _configured(path: str, name: str) -> LineLength | None:
    from devlint.profiles import _load_toml_bytes

    try:
        with open(path, "rb") as f:
            data = _load_toml_bytes(f.read())
    except (OSError, ValueError):
        return None  # another tool's file: its own errors are its tool's to report
    if name != "pyproject.toml":
        tables = (("", data),)
    else:
        tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
        tables = (("[tool.ruff] ", tool.get("ruff")), ("[tool.black] ", tool.get("black")))
    for where, table in tables:
        if not isinstance(table, dict):
            continue
        for key in ("line-length", "line_length"):
            value = table.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return LineLength(value, f"{path} {where}{key}")
    return None


def long_fixed_lines(old: str, new: str, limit: int) -> list[tuple[int, int]]:
    """(row, length) of each line of `new` that the fix wrote and that is longer than `limit`
    characters. A line the fix did not touch is the project's own: the lines both texts share
    at their start and end, and a line of the changed middle that the old middle holds too,
    are not counted. Linear in the file's size (a 10 MB file is fixed too: no diff here)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    lo = 0
    while lo < min(len(old_lines), len(new_lines)) and old_lines[lo] == new_lines[lo]:
        lo += 1
    hi_old, hi_new = len(old_lines), len(new_lines)
    while hi_old > lo and hi_new > lo and old_lines[hi_old - 1] == new_lines[hi_new - 1]:
        hi_old, hi_new = hi_old - 1, hi_new - 1
    before = set(old_lines[lo:hi_old])
    return [(j + 1, len(new_lines[j])) for j in range(lo, hi_new)
            if len(new_lines[j]) > limit and new_lines[j] not in before]
