"""The package-level dead default (`devlint.evidence.package_dead_default`): a finding in a
parameter default (or in the body's fallback for a None default) whose every use in the
package passes that parameter. The files that mention the name are parsed, only those (a
regex over the texts the stage already reads); a call that forwards its own caller's default
is followed to that caller's calls (at most `_MAX_DEPTH` deep)."""
from __future__ import annotations

import ast
import os

from devlint.engine.project.package import package_of
from devlint.evidence.package_dead_default import (
    called_as, dead_default_reason, default_at, enclosing_defaults, fallback_at, mentions,
    passed_value, unbound_none_parameters, uses_in,
)

# the rules whose findings can stand in a parameter default (a device, a backend)
_CODES = frozenset({"DL101", "DL103", "DL104", "DL105", "DL501"})
_MAX_DEPTH = 2  # callers' defaults forwarded, followed at most this deep


def has_candidates(res) -> bool:
    """Whether `res` (a FileResult) has a finding that can stand in a parameter default."""
    return any(d.code in _CODES for d in res.diagnostics)


def candidates(res) -> list:
    """What the answer of `dead_defaults` depends on in `res` besides the package's files:
    [code, start, row, column] of each candidate finding."""
    return [[d.code, d.start, *d.location] for d in res.diagnostics if d.code in _CODES]


def dead_defaults(project, res) -> dict:
    """{finding start offset: Reason} for the findings of `res` (a FileResult) that stand in
    a dead parameter default."""
    cands = [d for d in res.diagnostics if d.code in _CODES]
    if not cands or not res.path.endswith(".py"):
        return {}
    path = os.path.abspath(res.path)
    tree = project.tree(path)
    pkg = package_of(path)
    if tree is None or pkg is None:
        return {}
    root, modname = pkg
    out = {}
    for d in cands:
        row, col = d.location[0], d.location[1] - 1
        found, fallback = default_at(tree, row, col), False
        if found is None:
            found, fallback = fallback_at(tree, row, col), True
        if found is None:
            continue
        name, param, index, line = found
        calls = _calls_if_all_pass(project, root, modname.split(".")[0], name, param, index,
                                   fallback)
        if calls:
            out[d.start] = dead_default_reason(name, param, calls, res.path, line, fallback)
    return out


def _calls_if_all_pass(project, root, top, name, param, index, fallback=False,
                       depth=0, seen=frozenset()) -> int:
    """How many calls of `name` the package makes, when every use is a call passing
    `param`; 0 otherwise (or when there is none). A call forwarding its caller's own default
    passes it when that default is dead in turn. For a `fallback` (the body's value for a
    None default) a None passed, or a caller's None default forwarded unchanged, reaches
    it."""
    calls = 0
    seen = seen | {(name, param)}
    for path, _st in project.files(root, top):
        text = project.text(path)
        # the substring test first: the word-bounded regex scans every position of a
        # text that does not hold the name at all (most of the package)
        if text is None or name not in text or not mentions(text, name):
            continue
        tree = project.tree(path)
        if tree is None:
            return 0
        uses = uses_in(tree, name)
        if not uses:
            continue
        enclosing = None  # computed when a use passes a name (a walk of the whole file)
        nones = unbound_none_parameters(tree) if fallback else {}
        for use in uses:
            value = None if use is None else passed_value(use, param, index)
            if value is None or (fallback and isinstance(value, ast.Constant)
                                 and value.value is None):
                return 0
            if fallback and isinstance(value, ast.Name) and value.id in nones.get(id(use), ()):
                return 0
            if isinstance(value, ast.Name) and enclosing is None:
                enclosing = enclosing_defaults(tree)
            outer = enclosing.get(id(use), {}).get(value.id) \
                if isinstance(value, ast.Name) else None
            if outer is not None:  # forwards its caller's default: live unless dead there
                via = called_as(*outer, value.id)
                if via is None or depth >= _MAX_DEPTH or (via[0], value.id) in seen \
                        or not _calls_if_all_pass(project, root, top, via[0], value.id,
                                                  via[1], False, depth + 1, seen):
                    return 0
            calls += 1
    return calls
