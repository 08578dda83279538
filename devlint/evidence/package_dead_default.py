"""Principle: a parameter default that no call in the package uses never reaches a device.

`def init_worker(..., backend: str = "nccl")` whose every caller in the package passes
`backend=current_platform.dist_backend`, `class Proposer: def __init__(self, cfg,
device="cuda")` whose only construction passes `device=device`: the default is dead code, the
value comes from the callers (whose own literals are reported where they hardcode). The
library twin of `dead_default` (which judges a test module by itself). The same holds for the
default written in the body for a parameter whose default is None (`backend = backend or
"nccl"`, `if device is None: device = "cuda"`, `device = "cuda" if device is None else
device`): where every call passes a value that is not None, the fallback never runs. And a
call that only forwards its own caller's default (`device=device` inside `def
from_checkpoint(device="cuda")`) passes a value of its own where that caller's default is dead
in turn (every call of `from_checkpoint` passes `device`; followed two callers deep).
Evidence: the `def` line, and the number of calls seen in the package (every `.py` file of
the top-level package the module belongs to).
Limits: every use of the name in the package must be a call that passes the parameter (by
keyword, or by position) a value of its own; a call that forwards its caller's parameter with
a default other than None (`device=device` inside `def outer(device="cuda")`: the default
stays live through it, unless it is dead there; forwarding `def outer(device=None)` passes
None, not the default; for a fallback, a None passed, or a caller's None default forwarded
with no rebinding of it in that caller, reaches it and keeps the finding), a
use that is not a call (a callback, a registry, a base class, a re-export), a call with
`*args`/`**kwargs`, or no call at all keeps the finding. Calls are matched by name (a method
by its attribute name, a class by its constructor; dunder methods other than `__init__` are
called by the language and never count), so a name shared with another callable counts
against it. Uses outside the package (its tests in a sibling folder, its users) are not seen:
a default a package never calls itself stays a finding. Applied by the project stage
(`devlint.engine.project`).
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason

PRINCIPLE = "dead-default"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def default_at(tree: ast.Module, offset_row: int, offset_col: int):
    """(called name, parameter, positional index or None, the `def` line) when the finding at
    (row, 0-based col) lies in a parameter default of a function or method of `tree`, else
    None. For `__init__` the called name is the class's; a method's positional index skips
    `self`."""
    for cls, fn in _defs(tree):
        a = fn.args
        positional = [*a.posonlyargs, *a.args]
        pairs = [(arg, d, positional.index(arg))
                 for arg, d in zip(positional[len(positional) - len(a.defaults):], a.defaults)]
        pairs += [(arg, d, None) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        for arg, d, index in pairs:
            if not _inside(d, offset_row, offset_col):
                continue
            name = fn.name
            if cls is not None:
                if name == "__init__":
                    name = cls.name
                elif any(_decorator_name(x) == "staticmethod" for x in fn.decorator_list):
                    return name, arg.arg, index, fn.lineno
                elif name.startswith("__"):
                    return None  # dunders are called by the language, not by name
                if index is not None:
                    index -= 1  # `self`/`cls` is bound
            return name, arg.arg, index, fn.lineno
    return None


def fallback_at(tree: ast.Module, offset_row: int, offset_col: int):
    """(called name, parameter, positional index or None, the `def` line) when the finding at
    (row, 0-based col) lies in the body's fallback for a parameter whose default is None
    (`backend = backend or "nccl"`, `if device is None: device = "cuda"`, `device = "cuda" if
    device is None else device`): the default written in the body, else None."""
    for cls, fn in _defs(tree):
        nones = _none_defaults(fn)
        if not nones:
            continue
        for st in ast.walk(fn):
            param = _fallback_param(st, nones, offset_row, offset_col)
            if param is None:
                continue
            a = fn.args
            positional = [*a.posonlyargs, *a.args]
            arg = next(x for x in [*positional, *a.kwonlyargs] if x.arg == param)
            index = positional.index(arg) if arg in positional else None
            name = fn.name
            if cls is not None:
                if name == "__init__":
                    name = cls.name
                elif any(_decorator_name(x) == "staticmethod" for x in fn.decorator_list):
                    return name, param, index, fn.lineno
                elif name.startswith("__"):
                    return None
                if index is not None:
                    index -= 1
            return name, param, index, fn.lineno
    return None


def _none_defaults(fn) -> set:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
    pairs += [(x, d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    return {x.arg for x, d in pairs if isinstance(d, ast.Constant) and d.value is None}


def _is_name(node, names) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def _none_test(test, names):
    """The parameter `test` asks to be None (`p is None`, `not p`), else None."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and _is_name(test.left, names) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return test.left.id
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
            and _is_name(test.operand, names):
        return test.operand.id
    return None


def _fallback_param(st, names, row, col):
    """The parameter `st` gives a fallback value holding (row, col), else None."""
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and _is_name(st.targets[0], names):
        param, v = st.targets[0].id, st.value
        if isinstance(v, ast.BoolOp) and isinstance(v.op, ast.Or) \
                and _is_name(v.values[0], {param}) \
                and any(_inside(x, row, col) for x in v.values[1:]):
            return param  # p = p or "nccl"
        if isinstance(v, ast.IfExp) and _none_test(v.test, {param}) == param \
                and _inside(v.body, row, col) and _is_name(v.orelse, {param}):
            return param  # p = "cuda" if p is None else p
        return None
    if isinstance(st, ast.If) and not st.orelse and len(st.body) == 1:
        param = _none_test(st.test, names)
        body = st.body[0]
        if param is not None and isinstance(body, ast.Assign) and len(body.targets) == 1 \
                and _is_name(body.targets[0], {param}) and _inside(body.value, row, col):
            return param  # if p is None: p = "cuda"
    return None


def _decorator_name(d) -> str:
    d = d.func if isinstance(d, ast.Call) else d
    return d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")


def _defs(tree):
    for st in tree.body:
        if isinstance(st, _FUNCS):
            yield None, st
        elif isinstance(st, ast.ClassDef):
            for m in st.body:
                if isinstance(m, _FUNCS):
                    yield st, m


def _inside(node, row: int, col: int) -> bool:
    start = (node.lineno, node.col_offset)
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
    return start <= (row, col) < end


def uses_in(tree: ast.Module, name: str) -> list:
    """Every load of `name` (as a name or an attribute) in `tree`: the call when it is called,
    None for any other use."""
    out = []
    called = set()
    every = list(ast.walk(tree))  # walked once for both passes
    for n in every:
        if isinstance(n, ast.Call):
            f = n.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)) == name:
                out.append(n)
                called.add(id(f))
    for n in every:
        if id(n) in called:
            continue
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
            out.append(None)
        elif isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.ctx, ast.Load):
            out.append(None)
        elif isinstance(n, ast.alias) and (n.asname or n.name.rsplit(".", 1)[-1]) != name \
                and n.name.rsplit(".", 1)[-1] == name:
            out.append(None)  # imported under another name: its calls are not seen
    return out


def forwarded_defaults(tree: ast.Module) -> dict:
    """id(call) -> the names of its enclosing functions' parameters that have a default other
    than None: a call passing one of them only forwards that default (`device=device` inside
    `def outer(device="cuda")`), it overrides nothing."""
    return _calls_within(tree, _forwarding_names)


def _forwarding_names(fn) -> set:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
    pairs += [(x, d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    # a `None` default forwards no value of the callee's: the callee gets None
    return {x.arg for x, d in pairs if not (isinstance(d, ast.Constant) and d.value is None)}


def _calls_within(tree: ast.Module, names_of) -> dict:
    """id(call) -> the union of `names_of(fn)` over the functions `fn` around the call."""
    out: dict = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, _FUNCS):
            continue
        names = names_of(fn)
        if not names:
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Call):
                out.setdefault(id(n), set()).update(names)
    return out


def unbound_none_parameters(tree: ast.Module) -> dict:
    """id(call) -> the names of its enclosing functions' parameters whose default is None and
    that the function never rebinds: a call passing one may pass None, and so reach a
    fallback written in the callee's body (`p = p or "nccl"`)."""
    return _calls_within(tree, lambda fn: _none_defaults(fn) - {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})


def enclosing_defaults(tree: ast.Module) -> dict:
    """id(call) -> {parameter: (class or None, function)} for the parameters with a default
    other than None of the functions around the call (the innermost wins): where a call
    forwards one, the default it carries is that function's."""
    out: dict = {}

    def visit(node, cls, scope):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child if node is tree else None, scope)
            elif isinstance(child, _FUNCS):
                a = child.args
                positional = [*a.posonlyargs, *a.args]
                pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
                pairs += [(x, d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
                inner = dict(scope)
                inner.update({x.arg: (cls, child) for x, d in pairs
                              if not (isinstance(d, ast.Constant) and d.value is None)})
                visit(child, None, inner)
            else:
                if isinstance(child, ast.Call) and scope:
                    out[id(child)] = scope
                visit(child, cls, scope)
    visit(tree, None, {})
    return out


def called_as(cls, fn, param: str):
    """(called name, positional index or None) of `param` of `fn` (a method of `cls`), or
    None for a dunder other than `__init__`."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    arg = next((x for x in positional if x.arg == param), None)
    index = positional.index(arg) if arg is not None else None
    name = fn.name
    if cls is None:
        return name, index
    if name == "__init__":
        name = cls.name
    elif any(_decorator_name(x) == "staticmethod" for x in fn.decorator_list):
        return name, index
    elif name.startswith("__"):
        return None
    return name, (index - 1 if index is not None else None)


def passed_value(call: ast.Call, param: str, index):
    """The value the call passes `param`, or None (also where `*args`/`**kwargs` hide it)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None
                                                                 for k in call.keywords):
        return None
    value = next((k.value for k in call.keywords if k.arg == param), None)
    if value is None and index is not None and index < len(call.args):
        value = call.args[index]
    return value


def passes(call: ast.Call, param: str, index, forwarded=frozenset()) -> bool:
    """The call passes `param` a value of its own (not a default of its caller's that it
    forwards)."""
    value = passed_value(call, param, index)
    if value is None:
        return False
    return not (isinstance(value, ast.Name) and value.id in forwarded)


def mentions(text: str, name: str) -> bool:
    return re.search(r"\b" + re.escape(name) + r"\b", text) is not None


def dead_default_reason(name: str, param: str, calls: int, path: str, line: int,
                        fallback: bool = False) -> Reason:
    what = "its fallback for None" if fallback else "the default"
    return Reason(PRINCIPLE, f"every call of `{name}` in the package passes `{param}` "
                  f"({calls} call{'s' if calls != 1 else ''}): {what} is dead", path, line)
