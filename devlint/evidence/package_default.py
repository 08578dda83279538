"""Principle: a parameter default that no call in its package uses never reaches a device.

`def replace_with_sinq_linear(model, ..., device: str = "cuda:0")` whose every call in the
package passes `device=`: the default is dead code, the device comes from the callers (whose
own values are reported where they are hardcoded). The in-file form for test modules is
`dead_default`; this is the package-wide form, applied by the project stage. Evidence: the
`def` line, with the number of calls.
Limits: module-level functions, classes (their `__init__`) and the methods of module-level
classes (called through objects of any type, a method's calls are all the package's calls of
that name, whatever the object: each must pass the parameter; dunder methods other than
`__init__` are called by the language and never count). Every use of the name in the
package must be a call that passes the parameter (by keyword or by position); a call with
`*args`/`**kwargs`, a use that is not a call (a callback, a registry, a base class, an
`__all__` entry, a re-export), a call that forwards a parameter of its own function with a
default of its own (`def outer(device="cuda"): inner(device)`: the default lives on in the
caller), or no use at all keeps the finding: a public function nobody in the package calls
is called by its users.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.dead_default import _passes, _uses


def defaults_at(tree, rows_cols) -> dict:
    """{(row, col): (name, param, index, line)} for each 1-based (row, col) that stands in the
    default of a parameter of a module-level function, or of a module-level class's method.
    `name` is what callers call (the class's name for `__init__`), `index` the positional
    index a call passes the parameter at (None: keyword-only)."""
    units = []
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            units.append((st.name, st, 0))
        elif isinstance(st, ast.ClassDef):
            for m in st.body:
                if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        or (m.name.startswith("__") and m.name != "__init__"):
                    continue
                static = any(getattr(d, "id", None) == "staticmethod" for d in m.decorator_list)
                units.append((st.name if m.name == "__init__" else m.name, m,
                              0 if static else 1))
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
        uses = _uses(tree).get(name, ())
        if not uses:
            continue
        owners = _enclosing_functions(tree)
        for use in uses:
            if use is None or not _passes(use, param, index) \
                    or _forwards_a_default(use, param, index, owners.get(id(use))):
                return None
            calls += 1
    if not calls:
        return None
    return Reason("package-default", f"every call of `{name}` in its package passes `{param}` "
                  f"({calls} call{'s' if calls > 1 else ''}): the default is dead", path, line)


def _enclosing_functions(tree) -> dict:
    """{id(call): the innermost function around it}."""
    out = {}
    stack = [(tree, None)]
    while stack:
        node, fn = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = node
        elif isinstance(node, ast.Call):
            out[id(node)] = fn
        stack.extend((c, fn) for c in ast.iter_child_nodes(node))
    return out


def _forwards_a_default(call, param: str, index, fn) -> bool:
    """The call passes a parameter of its own function that has a default of its own
    (`def outer(device="cuda"): inner(device)`): the callee's default moves into the caller's
    signature, it is not overridden."""
    if fn is None:
        return False
    passed = next((k.value for k in call.keywords if k.arg == param), None)
    if passed is None and index is not None and index < len(call.args):
        passed = call.args[index]
    if not isinstance(passed, ast.Name):
        return False
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
    pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    return any(arg.arg == passed.id and not (isinstance(d, ast.Constant) and d.value is None)
               for arg, d in pairs)
