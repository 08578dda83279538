"""Principle: a parameter default that no call in its package uses never reaches a device.

`def replace_with_sinq_linear(model, ..., device: str = "cuda:0")` whose every call in the
package passes `device=`: the default is dead code, the device comes from the callers (whose
own values are reported where they are hardcoded). The in-file form for test modules is
`dead_default`; this is the package-wide form, applied by the project stage. Evidence: the
`def` line, with the number of calls.
Limits: only module-level functions and classes (a class's `__init__`); methods are called
through objects of any type, so their calls cannot be told apart. Every use of the name in the
package must be a call that passes the parameter (by keyword or by position); a call with
`*args`/`**kwargs`, a use that is not a call (a callback, a registry, a base class, an
`__all__` entry, a re-export), or no use at all keeps the finding: a public function nobody
in the package calls is called by its users.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.dead_default import _passes, _uses


def defaults_at(tree, rows_cols) -> dict:
    """{(row, col): (name, param, index)} for each 1-based (row, col) that stands in the default
    of a parameter of a module-level function, or of a module-level class's `__init__`.
    `name` is what callers call (the class's name for `__init__`), `index` the positional
    index a call passes the parameter at (None: keyword-only)."""
    units = []
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            units.append((st.name, st, 0))
        elif isinstance(st, ast.ClassDef):
            for m in st.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == "__init__":
                    units.append((st.name, m, 1))
    out = {}
    for name, fn, bound in units:
        a = fn.args
        positional = [*a.posonlyargs, *a.args]
        pairs = [(arg, d, positional.index(arg) - bound)
                 for arg, d in zip(positional[len(positional) - len(a.defaults):], a.defaults)]
        pairs += [(arg, d, None) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        for arg, d, index in pairs:
            for row, col in rows_cols:
                if (d.lineno, d.col_offset) <= (row, col - 1) <= (d.end_lineno, d.end_col_offset):
                    out[(row, col)] = (name, arg.arg, index, fn.lineno)
    return out


def package_default_reason(name: str, param: str, index, trees, path: str,
                           line: int) -> Reason | None:
    """The reason when every use of `name` in `trees` (the package's parsed modules that
    mention it) is a call passing `param`, else None."""
    calls = 0
    for tree in trees:
        for use in _uses(tree).get(name, ()):
            if use is None or not _passes(use, param, index):
                return None
            calls += 1
    if not calls:
        return None
    return Reason("package-default", f"every call of `{name}` in its package passes `{param}` "
                  f"({calls} call{'s' if calls > 1 else ''}): the default is dead", path, line)
