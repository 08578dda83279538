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


def cell_prefix(d) -> str:
    """`cell 3:` before a notebook finding's row (ruff's `nb.ipynb:cell 3:2:5`), else ""."""
    return f"cell {d.cell}:" if getattr(d, "cell", None) else ""


def file_position(d) -> tuple:
    """((row, col), (end row, end col)) in the file itself, for the formats whose viewers open
    the file (GitHub, GitLab, SARIF, JUnit): a notebook's finding has none there (its rows
    count within a cell of the JSON), so it points at the file's start, as ruff does, and the
    message names the cell (`place_note`)."""
    if getattr(d, "cell", None):
        return (1, 1), (1, 1)
    return d.location, d.end_location


def place_note(d) -> str:
    """`cell 3:2:5: ` before the message of a notebook finding in the file-position formats."""
    if getattr(d, "cell", None):
        return f"cell {d.cell}:{d.location[0]}:{d.location[1]}: "
    return ""


def flagged_text(d, ctx) -> str:
    """The source text a diagnostic points at (from its rows and columns)."""
    lines = ctx.source_lines(d.path, getattr(d, "cell", None))
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


def rule_principles(rule) -> list[dict]:
    """[{"principle", "summary"}] of the principles under which `rule` leaves a candidate
    unreported (`Rule.exempt_by`), stated by the evidence layer (`devlint.evidence`)."""
    from devlint.evidence import principle_summary

    return [{"principle": p, "summary": principle_summary(p)}
            for p in getattr(rule, "exempt_by", ())]


def principles_section(rule) -> str:
    """The "Not reported" section `devlint rule` and docs/rules/ print after a rule's own
    documentation."""
    found = rule_principles(rule)
    if not found:
        return ("## Not reported\n\nNo principle exempts this rule's findings: each one is "
                "reported (suppress one with a `noqa` comment).\n")
    lines = ["## Not reported\n\n",
             "A candidate of this rule is not reported where one of these principles holds "
             "(`devlint check --show-exempt` lists each one with the principle and its "
             "evidence):\n\n"]
    lines += [f"- `{p['principle']}`: {p['summary']}\n" for p in found]
    return "".join(lines)


def rule_text(rule) -> str:
    """`devlint rule CODE`: the rule's documentation, then the principles it honours."""
    return (f"# {rule.name} ({rule.code})\n\n{rule.summary}\n\n{rule.doc()}\n\n"
            f"{principles_section(rule).rstrip()}")


def rule_dict(rule) -> dict:
    """`devlint rule CODE --output-format json`."""
    return {"code": rule.code, "name": rule.name, "summary": rule.summary,
            "explanation": rule.doc(), "principles": rule_principles(rule), "url": rule.url()}
