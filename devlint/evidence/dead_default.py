"""Principle: a parameter default that no call uses never reaches a device (pattern F).

`class ToyModel: def __init__(self, dim, device="cuda")` in a test module whose every
`ToyModel(...)` passes `device=`: the default is dead code, the device comes from the callers
(whose own literals are reported). Evidence: the `def` line, and the calls (all in the file).
The same holds in any module for a private name (`def _normalize(device="cuda")`,
`self._buffers(device=...)`, `class _Cache`): a leading underscore says the function, method
or class is the module's own (or its class's), so the calls in the file are all its calls
(a private helper in a namespace package, which the project stage cannot index, included).
Limits: only in test modules (`test_*.py`), whose functions and classes no other module
calls, and for private names; a library's public default is reachable by its users and stays
a finding (the package-wide twin is `package_dead_default`). Every use of the name must be a
call that passes the parameter (by keyword, or by position); a call with `*args` /
`**kwargs`, a use that is not a call or a type test (a callback, a registry), or no call at
all keeps the finding. For a private name, a call that only forwards its caller's own
non-None default (`device=device` inside `def f(device="cuda")`) passes nothing of its own;
a subclass in another module calling a private method is not seen; a dunder name is called
by the language and is not private.
"""
from __future__ import annotations

import ast
import os

from devlint.evidence import Reason
from devlint.evidence.package_dead_default import forwarded_defaults

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def default_of(facts, node):
    """(function, parameter name, positional index or None) when `node` is (in) the default
    value of a parameter, else None."""
    cur, par = node, facts.get_parent(node)
    while par is not None and not isinstance(par, (ast.stmt, ast.arguments)):
        cur, par = par, facts.get_parent(par)
    if not isinstance(par, _FUNCS):
        return None
    a = par.args
    positional = [*a.posonlyargs, *a.args]
    for arg, d in zip(positional[len(positional) - len(a.defaults):], a.defaults):
        if d is cur:
            return par, arg.arg, positional.index(arg)
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        if d is cur:
            return par, arg.arg, None
    return None


def _uses(tree) -> dict:
    """{name: [call or None]} of every load of a name or attribute: the call when it is
    called, None for any other use."""
    out: dict = {}
    called = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name:
                out.setdefault(name, []).append(n)
                called.add(id(f))
            if name in ("isinstance", "issubclass"):  # a type test makes no call
                called.update(id(a) for a in ast.walk(n) if a is not f)
    for n in ast.walk(tree):
        if id(n) in called:
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.setdefault(n.id, []).append(None)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            out.setdefault(n.attr, []).append(None)
    return out


def _private(name: str) -> bool:
    """`_helper`, `_Cache`: the module's (or its class's) own name; a dunder is not."""
    return name.startswith("_") and not name.endswith("__") and name.strip("_") != ""


def _decorator(d) -> str:
    d = d.func if isinstance(d, ast.Call) else d
    return d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")


def _forwards(call, param: str, index, forwarded) -> bool:
    """The call passes `param` only its caller's own default (`device=device` inside
    `def f(device="cuda")`)."""
    value = next((k.value for k in call.keywords if k.arg == param), None)
    if value is None and index is not None and index < len(call.args):
        value = call.args[index]
    return isinstance(value, ast.Name) and value.id in forwarded


def _passes(call, name: str, index) -> bool:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None
                                                                 for k in call.keywords):
        return False
    if any(k.arg == name for k in call.keywords):
        return True
    return index is not None and index < len(call.args)


def dead_default_reason(facts, node) -> Reason | None:
    stem = os.path.basename(facts.path).rsplit(".", 1)[0]
    if facts.tree is None:
        return None
    test = stem.startswith("test_")
    found = default_of(facts, node)
    if found is None:
        return None
    fn, param, index = found
    name = fn.name
    klass = facts.tree_parent(fn)
    if name == "__init__":
        if not isinstance(klass, ast.ClassDef):
            return None
        name = klass.name
    if not test and not _private(name):
        return None
    static = any(_decorator(d) == "staticmethod" for d in fn.decorator_list)
    if index is not None and (name != fn.name or isinstance(klass, ast.ClassDef)) \
            and not static:
        index -= 1  # `self` is bound: the call's arguments start after it
    uses = facts.memo("dead-default-uses", lambda: _uses(facts.tree)).get(name, [])
    if not uses or any(c is None or not _passes(c, param, index) for c in uses):
        return None
    if not test:
        forwarded = facts.memo("dead-default-forwarded", lambda: forwarded_defaults(facts.tree))
        if any(_forwards(c, param, index, forwarded.get(id(c), ())) for c in uses):
            return None
    return Reason("not-a-device", f"every call of `{name}` in the file passes `{param}` "
                  f"({len(uses)} call{'s' if len(uses) > 1 else ''}): the default is dead",
                  facts.path, fn.lineno)
