"""Principle: a value assigned to a name that is never read never reaches a device.

`device = "cuda" if torch.cuda.is_available() else "cpu"` at the top of a conversion script
that never reads `device` again: the assignment is dead code. Evidence: the assignment
(file:line).
Limits: only a value that does nothing but name a device (strings, f-strings, `torch.device(...)`,
conditionals on `torch.cuda.is_available()` / `device_count()`): `x = torch.zeros(2,
device="cuda")` allocates on the device whether or not `x` is read. Only a plain
`name = value` whose name is never read anywhere in the file (no load of
it, not in `__all__`, no `global`/`nonlocal` of it, no `locals()`/`vars()`/`globals()` in the
file); at module level only in a script (a file with an `if __name__ == "__main__":` block),
whose names no other module imports; in a function, a local no code of the function reads.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

_DYNAMIC = ("locals(", "vars(", "globals(", "__all__")


def _is_script(tree) -> bool:
    for st in tree.body:
        if isinstance(st, ast.If) and isinstance(st.test, ast.Compare) \
                and isinstance(st.test.left, ast.Name) and st.test.left.id == "__name__" \
                and any(isinstance(c, ast.Constant) and c.value == "__main__"
                        for c in st.test.comparators):
            return True
    return False


def _reads(tree) -> frozenset:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
    return frozenset(out)


_HARMLESS_CALLS = {"torch.device", "torch.cuda.is_available", "torch.cuda.device_count", "str"}


def _names_a_device(value, qualname) -> bool:
    """The value only names a device: its calls are `torch.device`, `str` and harmless
    queries."""
    return all((qualname(n.func) or getattr(n.func, "id", None)) in _HARMLESS_CALLS
               for n in ast.walk(value) if isinstance(n, ast.Call))


def dead_value_reason(facts, node) -> Reason | None:
    w = facts.where_of(node)
    stmt = w.statement if w is not None else None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)) or facts.tree is None:
        return None
    if facts.memo("dead-value-dynamic", lambda: any(d in facts.text for d in _DYNAMIC)) \
            or not _names_a_device(stmt.value, facts.qualname):
        return None
    name = stmt.targets[0].id
    if w.function is None:
        if w.klass is not None or not facts.memo("dead-value-script",
                                                 lambda: _is_script(facts.tree)):
            return None
    if name in facts.memo("dead-value-reads", lambda: _reads(facts.tree)):
        return None
    return Reason("dead-value", f"`{name}` is assigned here and never read", facts.path,
                  stmt.lineno)
