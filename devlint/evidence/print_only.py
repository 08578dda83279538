"""Principle: a CUDA test that only gates a message is not a finding (pattern E).

`if t.is_cuda: logger.warning_once("moving the image to the CPU")`,
`if torch.cuda.device_count() > 1 and ...: logger.warning(...)`: the test changes what is
printed, not where anything runs, so no device value is pinned. Evidence: the `if` whose body
holds only messages (`print`, `warnings.warn`, `logger.<level>` / `logging.<level>`, also the
`*_once` forms) and `pass` (file:line of the `if`).
Limits: only the test of such an `if`: an `else`/`elif` that does something else makes the test
choose behaviour; a message argument that itself calls the CUDA API
(`logger.info(torch.cuda.memory_allocated())`) is still a call; a body that raises is a guard,
not a message.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

_LEVELS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log"}
_LOGGERS = {"logger", "log", "logging", "_logger", "LOGGER", "_LOGGER", "warnings"}


def is_message(stmt) -> bool:
    """`print(...)`, `warnings.warn(...)`, `logger.warning(...)`, `self.logger.info_once(...)`."""
    if isinstance(stmt, ast.Pass):
        return True
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    if isinstance(func, ast.Name):
        return func.id in ("print", "warn")
    if not isinstance(func, ast.Attribute):
        return False
    level = func.attr[:-5] if func.attr.endswith("_once") else func.attr
    if level not in _LEVELS:
        return False
    owner = func.value
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return name in _LOGGERS or name.lower().endswith("logger")


def print_only_reason(stmt, path: str | None) -> Reason | None:
    """The reason for a candidate in the test of `stmt`, an `if` that only prints, else None."""
    if not isinstance(stmt, ast.If) or not stmt.body:
        return None
    if not all(is_message(s) for s in stmt.body):
        return None
    if stmt.orelse and not all(is_message(s) for s in stmt.orelse):
        return None
    return Reason("print-only", "the test only chooses a message (its branch only logs or "
                  "prints)", path, stmt.lineno)
