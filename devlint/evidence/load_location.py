"""Principle: a CPU fallback that only says where a checkpoint is deserialized misbehaves nowhere.

`device = "cuda" if torch.cuda.is_available() else "cpu"` whose every read is the
`map_location=` of `torch.load`: on a machine without CUDA the checkpoint is loaded to the CPU,
which every platform has and where a state dict is converted, saved or copied into a model's
own parameters (`load_state_dict` copies into the parameters' device, not the checkpoint's).
Nothing runs on the wrong device, so DL106 and its neighbours do not report the value.
Evidence: the assignment (file:line).
Limits: only a value that does nothing but name a device, assigned to a plain name, in a
function (or a script's module level), where every read of that name is a `map_location=`
of `torch.load` (or an `is None` test of
a parameter the fallback replaces). The loaded object must be used as a checkpoint mapping: assigned to a name
(directly or through a subscript, `torch.load(p, map_location=d)["model"]`) whose every use
is a subscript, an `in` test, a mapping method (`keys`, `items`, `get`, `pop`, ...), a
re-assignment, or an argument of a call (a converter, `load_state_dict`). A loaded object
that is called, moved (`.to`, `.cuda`), put in eval mode or otherwise used as a module or
tensor is a model that would then run on the CPU: that stays reported. A tensor taken out of
the mapping and computed with inside a callee is not followed (the callee is not read).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.dead_value import _is_script, _names_a_device

_P = "load-location"
_MAPPING_METHODS = {"keys", "items", "values", "get", "pop", "copy", "update", "setdefault",
                    "__contains__", "__getitem__"}


def _is_torch_load(facts, call) -> bool:
    return isinstance(call, ast.Call) and (facts.qualname(call.func) or "") == "torch.load"


def _scope_nodes(scope):
    """The nodes of `scope` without those of nested functions and classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


def _parents(scope) -> dict:
    out = {}
    for n in ast.walk(scope):
        for c in ast.iter_child_nodes(n):
            out[id(c)] = n
    return out


def _mapping_use(name_node, parents) -> bool:
    """This read of a loaded checkpoint uses it as a mapping (or hands it on)."""
    par = parents.get(id(name_node))
    if isinstance(par, ast.Subscript) and par.value is name_node:
        return True
    if isinstance(par, ast.Compare) and name_node in par.comparators \
            and all(isinstance(o, (ast.In, ast.NotIn)) for o in par.ops):
        return True
    if isinstance(par, ast.Attribute):
        return par.attr in _MAPPING_METHODS and isinstance(parents.get(id(par)), ast.Call)
    if isinstance(par, ast.Call) and par.func is not name_node:
        return True
    if isinstance(par, ast.keyword):
        return True
    if isinstance(par, ast.Assign) and par.value is name_node:
        return True  # an alias: not followed further, as a call argument is not
    return False


def _loaded_as_mapping(facts, call, scope, parents) -> bool:
    cur = call
    par = parents.get(id(cur))
    while isinstance(par, ast.Subscript) and par.value is cur:
        cur, par = par, parents.get(id(par))
    if isinstance(par, ast.Call) and cur in par.args:
        return True  # handed straight to a converter / load_state_dict
    if not (isinstance(par, ast.Assign) and len(par.targets) == 1
            and isinstance(par.targets[0], ast.Name)):
        return False
    name = par.targets[0].id
    reads = [n for n in _scope_nodes(scope)
             if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return all(_mapping_use(n, parents) for n in reads)


def _none_test(name_node, par) -> bool:
    """`device is None` (a parameter's default tested before the fallback is assigned)."""
    return isinstance(par, ast.Compare) and par.left is name_node and len(par.ops) == 1 \
        and isinstance(par.ops[0], (ast.Is, ast.IsNot)) \
        and isinstance(par.comparators[0], ast.Constant) and par.comparators[0].value is None


def load_location_reason(facts, node) -> Reason | None:
    w = facts.where_of(node)
    stmt = w.statement if w is not None else None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)) or facts.tree is None \
            or not _names_a_device(stmt.value, facts.qualname):
        return None
    if w.function is not None:
        scope = w.function
    elif w.klass is None and facts.memo("dead-value-script", lambda: _is_script(facts.tree)):
        scope = facts.tree
    else:
        return None
    name = stmt.targets[0].id

    def compute():
        parents = _parents(scope)
        reads = [n for n in _scope_nodes(scope)
                 if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Store)]
        if not reads or any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in _scope_nodes(scope)):
            return False
        for r in reads:
            if _none_test(r, parents.get(id(r))):
                continue
            kw = parents.get(id(r))
            call = parents.get(id(kw))
            if not (isinstance(kw, ast.keyword) and kw.arg == "map_location"
                    and _is_torch_load(facts, call)
                    and _loaded_as_mapping(facts, call, scope, parents)):
                return False
        return True

    if not facts.memo((_P, id(scope), name), compute):
        return None
    return Reason(_P, f"`{name}` only says where `torch.load` puts a checkpoint used as a "
                  "mapping; the CPU is right on every platform", facts.path, stmt.lineno)
