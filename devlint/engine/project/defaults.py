"""The package-level dead default (`devlint.evidence.package_dead_default`): a finding in a
parameter default whose every use in the package passes that parameter. The files that
mention the name are parsed, only those (a regex over the texts the stage already reads)."""
from __future__ import annotations

import os

from devlint.engine.project.package import package_of
from devlint.evidence.package_dead_default import (
    dead_default_reason, default_at, forwarded_defaults, mentions, passes, uses_in,
)

# the rules whose findings can stand in a parameter default (a device, a backend)
_CODES = frozenset({"DL101", "DL103", "DL104", "DL105", "DL501"})


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
        found = default_at(tree, d.location[0], d.location[1] - 1)
        if found is None:
            continue
        name, param, index, line = found
        calls = _calls_if_all_pass(project, root, modname.split(".")[0], name, param, index)
        if calls:
            out[d.start] = dead_default_reason(name, param, calls, res.path, line)
    return out


def _calls_if_all_pass(project, root, top, name, param, index) -> int:
    """How many calls of `name` the package makes, when every use is a call passing
    `param`; 0 otherwise (or when there is none)."""
    calls = 0
    for path, _st in project.files(root, top):
        text = project.text(path)
        # the substring test first: the word-bounded regex scans every position of a
        # text that does not hold the name at all (most of the package)
        if text is None or name not in text or not mentions(text, name):
            continue
        tree = project.tree(path)
        if tree is None:
            return 0
        forwarded = forwarded_defaults(tree)
        for use in uses_in(tree, name):
            if use is None or not passes(use, param, index, forwarded.get(id(use), ())):
                return 0
            calls += 1
    return calls
