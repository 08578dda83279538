"""Reporters format diagnostics; they know nothing of parsing or rules' internals.

Each format lives in its own module, imported only when it is used (`devlint check` on a
clean file imports none but the one it prints with)."""
from __future__ import annotations

import os

FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif", "gitlab", "junit")
_MODULES = {"json-lines": "json_lines"}


def get_reporter(name: str):
    """`report(diagnostics, out, ctx)` of a format."""
    import importlib

    if name not in FORMATS:
        raise ValueError(f"unknown output format {name!r}")
    module = importlib.import_module(f"devlint.reporters.{_MODULES.get(name, name)}")
    return module.report


def relative_path(path: str) -> str:
    """The path relative to the current directory with `/` separators (what CI services want),
    or absolute when it lies outside it."""
    ap = os.path.abspath(path)
    rel = os.path.relpath(ap)
    if rel == ".." or rel.startswith(".." + os.sep):
        rel = ap
    return rel.replace(os.sep, "/")


def flagged_text(d, ctx) -> str:
    """The source text a diagnostic points at (from its rows and columns)."""
    lines = ctx.source_lines(d.path)
    (r1, c1), (r2, c2) = d.location, d.end_location
    if not lines or r1 < 1 or r1 > len(lines):
        return ""
    if r1 == r2:
        return lines[r1 - 1][c1 - 1:c2 - 1]
    parts = [lines[r1 - 1][c1 - 1:]]
    parts += lines[r1:min(r2 - 1, len(lines))]
    if r2 <= len(lines):
        parts.append(lines[r2 - 1][:c2 - 1])
    return "\n".join(parts)


def documented_rules() -> tuple:
    """Every rule class, in code order: the registry's, and any rule module it does not list
    yet (DL302 lives outside the Python rule table)."""
    import importlib
    import pkgutil

    from devlint.rules import registry

    rules = {r.code: r for r in registry.all_rules()}
    import devlint.rules as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name[:2] == "dl" and info.name[2:5].isdigit() and info.name[2:5] not in {
                c[2:] for c in rules}:
            rule = getattr(importlib.import_module(f"devlint.rules.{info.name}"), "RULE", None)
            if rule is not None and getattr(rule, "code", None) not in rules:
                rules[rule.code] = rule
    return tuple(rules[c] for c in sorted(rules))
