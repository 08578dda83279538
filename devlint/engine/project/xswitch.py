"""Options that only tell the CPU from an accelerator (`devlint.evidence.cpu_switch`): the
findings on a "cuda" default or constant of a field, attribute or parameter N, where every
read of N in the package is a comparison with "cpu" or None, a hand-on under the same name,
or a comparison of two reads.

Per file with such a finding: the option's name at the finding (`_option_names`), then, once
per package and name, the package's files whose text names it (`Project.files`, a text
search first, a parse only there), each read classified (`_reads_only_cpu`). The answer per
package is stored like `xgates`' (`per_package`: the package key covers every file)."""
from __future__ import annotations

import ast
import os
import re

from devlint.analysis.flow import _own_nodes
from devlint.analysis.walk import parents as parents_of
from devlint.analysis.walk import statements
from devlint.engine.project.package import package_of
from devlint.engine.project.xgates import per_package
from devlint.evidence.cpu_switch import switch_reason
from devlint.evidence.vocabulary import is_test_path

_CODES = frozenset({"DL103", "DL104"})
_NEVER = frozenset({"DL900", "DL902", "DL999", "DL000"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_WRAPPERS = frozenset({"Form", "Field", "Query", "Body", "field"})  # default holders


def switch_findings(project, results, key_of) -> dict:
    """{absolute path: {(start, code): Reason}}."""
    return per_package(project, results, key_of, _NEVER, "xswitch", "switch", _file_switch)


def _file_switch(project, path: str, res, deps: dict) -> dict:
    wanted = [d for d in res.diagnostics if d.code in _CODES and not d.cell]
    text = project.text(path)
    if not wanted or not text or "cuda" not in text:
        return {}
    tree = project.tree(path)
    pkg = package_of(path)
    if tree is None or pkg is None:
        return {}
    root, top = pkg[0], pkg[1].split(".")[0]
    names = _option_names(tree, {d.location[0] for d in wanted})
    memo = project.__dict__.setdefault("_xswitch", {})
    out = {}
    for d in wanted:
        name = names.get((d.location[0], d.location[1] - 1))
        if name is None:
            continue
        key = (root, top, name)
        if key not in memo:
            memo[key] = _reads_only_cpu(project, root, top, name)
        found = memo[key]
        if found is not None:
            out[(d.start, d.code)] = switch_reason(name, *found)
    return out


def _option_names(tree, rows) -> dict:
    """{(row, col): N} of the "cuda" constants on `rows` that are the default or constant
    value of a field, attribute or parameter N (`N: str = "cuda"`, `self.N = "cuda"`, `def
    f(N="cuda")`, `N: str = Form("cuda")`)."""
    out = {}

    def holds(value):
        if isinstance(value, ast.Call) and _func_name(value.func) in _WRAPPERS:
            args = list(value.args[:1]) + [k.value for k in value.keywords
                                            if k.arg == "default"]
            return next((a for a in args if _is_cuda(a)), None)
        return value if _is_cuda(value) else None

    for n in statements(tree):  # the three kinds are statements: no expression is walked
        if getattr(n, "lineno", None) is None or not (
                n.lineno in rows or getattr(n, "end_lineno", n.lineno) in rows
                or isinstance(n, _FUNCS)):
            continue
        pairs = []
        if isinstance(n, ast.AnnAssign) and n.value is not None:
            pairs.append((n.target, n.value))
        elif isinstance(n, ast.Assign) and len(n.targets) == 1:
            pairs.append((n.targets[0], n.value))
        elif isinstance(n, _FUNCS):
            a = n.args
            positional = [*a.posonlyargs, *a.args]
            pairs += [(ast.Name(id=arg.arg), d) for arg, d in
                      zip(positional[len(positional) - len(a.defaults):], a.defaults)]
            pairs += [(ast.Name(id=arg.arg), d) for arg, d in zip(a.kwonlyargs, a.kw_defaults)
                      if d is not None]
        for target, value in pairs:
            const = holds(value)
            name = target.id if isinstance(target, ast.Name) else \
                target.attr if isinstance(target, ast.Attribute) else None
            if const is not None and name and const.lineno in rows:
                out[(const.lineno, const.col_offset)] = name
    return out


def _getattr_of(node, name: str) -> bool:
    """`getattr(x, "name", ...)`: a read of `name` by its string."""
    return isinstance(node, ast.Call) and _func_name(node.func) == "getattr" \
        and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
        and node.args[1].value == name


def _is_cuda(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == "cuda"


def _func_name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _reads_only_cpu(project, root: str, top: str, name: str):
    """(path, line) of the first comparison of a read of `name` with "cpu" where every read
    of it in the package is allowed (`_allowed`), else None."""
    first = None
    # every read spells the name as a word (`x.dev`, `getattr(x, "dev")`, `dev`): a text
    # without it as a word (`device` for `dev`) holds none, and is not parsed
    word = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])")
    for path, _ in project.files(root, top):
        text = project.text(path)
        if not text or name not in text or is_test_path(
                os.path.abspath(path).replace(os.sep, "/").split("/")) \
                or word.search(text) is None:
            continue  # (a test's own reads are its findings)
        tree = project.tree(path)
        if tree is None:
            return None
        parents = None
        for read in _reads(tree, name):
            if parents is None:
                parents = parents_of(tree)
            verdict = _allowed(read, name, parents)
            if verdict is None:
                return None
            if verdict == "cpu":
                site = (os.path.abspath(path), read.lineno)
                # evidence: a comparison in library code before one in a test helper
                if first is None or "test" in first[0].lower() and "test" not in site[0].lower():
                    first = site
    return first


def _reads(tree, name: str):
    """The reads of option `name`: `x.name` loads, `getattr(x, "name", ...)` calls, and the
    loads of a local `name` in functions that take it as a parameter or bind it from a read
    of it; a module-level `name` load too."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.ctx, ast.Load) \
                or _getattr_of(n, name):
            yield n
    for scope in [tree, *(f for f in ast.walk(tree) if isinstance(f, _FUNCS))]:
        own = list(_own_nodes(scope))
        loads = [n for n in own if isinstance(n, ast.Name) and n.id == name
                 and isinstance(n.ctx, ast.Load)]
        if not loads:
            continue
        if isinstance(scope, _FUNCS):
            a = scope.args
            params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
            binds = [n for n in own if isinstance(n, (ast.Assign, ast.AnnAssign))
                     and any(isinstance(t, ast.Name) and t.id == name
                             for t in (getattr(n, "targets", None) or [n.target]))]
            from_read = any(isinstance(x, ast.Attribute) and x.attr == name
                            or _getattr_of(x, name)
                            for b in binds if b.value is not None for x in ast.walk(b.value))
            if name not in params and not from_read and binds:
                continue  # another variable of the same name
        yield from loads


def _in_raise(node, parents: dict) -> bool:
    """`node` stands in a `raise` statement (an error message)."""
    while node is not None and not isinstance(node, ast.stmt):
        node = parents.get(id(node))
    return isinstance(node, ast.Raise)


def _is_read(node, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name \
        or isinstance(node, ast.Name) and node.id == name or _getattr_of(node, name)


def _allowed(read, name: str, parents: dict):
    """"cpu" for a comparison with "cpu", "ok" for another use that picks no device, None for
    a use that may reach one."""
    parent = parents.get(id(read))
    node = read
    while True:
        # `N = req.N or default`, `N = a if c else req.N`: the value flows into N again
        while isinstance(parent, (ast.BoolOp, ast.IfExp)) and (
                not isinstance(parent, ast.IfExp) or parent.test is not node):
            node, parent = parent, parents.get(id(parent))
        # `form_value("N", N)`: a resolver keyed by the option's own name
        if isinstance(parent, ast.Call) and node in parent.args and any(
                isinstance(a, ast.Constant) and a.value == name for a in parent.args):
            node, parent = parent, parents.get(id(parent))
            continue
        break
    if isinstance(parent, ast.Compare) and len(parent.ops) == 1:
        other = parent.comparators[0] if parent.left is node else parent.left
        if isinstance(other, ast.Constant) and other.value in ("cpu", None):
            return "cpu" if other.value == "cpu" else "ok"
        if _is_read(other, name):
            return "ok"
        if isinstance(parent.ops[0], (ast.In, ast.NotIn)) and other is parent.comparators[0] \
                and isinstance(other, (ast.Tuple, ast.List, ast.Set)) and all(
                    isinstance(e, ast.Constant) and (e.value is None or isinstance(e.value, str))
                    for e in other.elts):
            return "ok"  # validation: `N not in (None, "cuda", "cpu")`
        return None
    if isinstance(parent, ast.FormattedValue) and _in_raise(parent, parents):
        return "ok"  # an error message
    # a truth test (the read itself: inside `or` / a conditional expression only a binding)
    if node is read and (isinstance(parent, (ast.If, ast.IfExp, ast.While))
                         and parent.test is read
                         or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
        return "ok"
    if isinstance(parent, ast.keyword) and parent.arg == name:
        return "ok"
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
        targets = getattr(parent, "targets", None) or [parent.target]
        if len(targets) == 1 and (_is_read(targets[0], name) or isinstance(
                targets[0], ast.Subscript) and isinstance(targets[0].slice, ast.Constant)
                and targets[0].slice.value == name):
            return "ok"  # `state.N = req.N`, `params["N"] = N`
        return None
    if isinstance(parent, ast.Dict):
        i = next((i for i, v in enumerate(parent.values) if v is node), None)
        key = parent.keys[i] if i is not None else None
        if isinstance(key, ast.Constant) and key.value == name:
            return "ok"
    return None
