"""Inferred device: which device a hardcoded CUDA value should become, from the code around it.

In order (SPEC section 3):
1. the destination tensor the moved value meets (`dst.copy_(x)`, `dst[i] = x`, `f(dst, x)`);
2. a `device` parameter or local in scope;
3. `self.device` where the class sets it;
4. a tensor whose `.device` the function already reads;
5. the profile's platform device.
Steps 1-4 need a human look (unsafe fixes); step 5 is what the profile says.
"""
from __future__ import annotations

import ast
import re

from devlint.analysis.model import simple_name
from devlint.analysis.fixkit import Expr, role_expr

_TENSORISH = re.compile(r"(?i)(cache|tensor|buf|dst|dest|out|state|kv|weight|param|mask|logits"
                        r"|hidden|input|output)")
_TENSOR_ATTRS = {"device", "shape", "dtype", "copy_", "ndim", "numel", "size", "stride", "view",
                 "reshape", "data_ptr"}
_MOVE_METHODS = {"to", "cuda"}


def infer_device(facts, node, role: str = "device", allow_context: bool = True) -> Expr | None:
    """The device expression for `node` (the hardcoded value, or the `.cuda()` call)."""
    where = facts.where_of(node)
    if allow_context and where is not None:
        found = _from_context(facts, node, where, role)
        if found is not None:
            return found
    return role_expr(facts, role)


def _guard_rebinds(facts, tensor) -> bool:
    """The `if` that tests `tensor` (`if t.is_cuda:`) rebinds it in its body."""
    stmt = facts.get_parent(tensor)
    while stmt is not None and not isinstance(stmt, (ast.If, ast.IfExp)):
        stmt = facts.get_parent(stmt)
    return stmt is None or (isinstance(stmt, ast.If) and rebinds(facts, tensor, stmt.body))


def rebinds(facts, tensor, body) -> bool:
    """`body` stores the tensor expression `tensor` or one of its bases (`t = t.cpu()`,
    `self.x = self.x.cpu()`, `d["x"] = ...`, `self = ...`), so `tensor.device` changes under
    it; moving it to its own device (`t = t.cuda()`) does not count. Bases that are not names,
    attributes or items (`f().x`) count as rebound: nothing says what they hold."""
    chain, root = set(), tensor
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        chain.add(facts.source(root))
        root = root.value
    if not isinstance(root, ast.Name):
        return True
    chain.add(root.id)
    src = facts.source(tensor)
    for st in body:
        for n in ast.walk(st):
            if not isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) \
                    or isinstance(n.ctx, ast.Load) or facts.source(n) not in chain:
                continue
            par = facts.get_parent(n)
            v = getattr(par, "value", None)
            if not (isinstance(par, ast.Assign) and facts.source(n) == src
                    and isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute)
                    and v.func.attr == "cuda" and facts.source(v.func.value) == src):
                return True
    return False


def _as_role(base: str, role: str) -> str:
    if role == "device-type":
        return f"{base}.type"
    return base


def _from_context(facts, node, where, role) -> Expr | None:
    func = where.function
    # a tensor guard: `if t.is_cuda: x = x.cuda()` -> the tensor's own device
    if where.tensor_guard is not None and not _guard_rebinds(facts, where.tensor_guard):
        t = facts.source(where.tensor_guard)
        return Expr(_as_role(f"{t}.device", role), (), f"the device of `{t}`, which the enclosing "
                    f"`if {t}.is_cuda` tests", False)
    if func is None:
        return None
    ok = _Usable(facts, func, node)
    dst = _destination(facts, node, func)
    if dst is not None and ok(dst):
        return Expr(_as_role(f"{dst}.device", role), (),
                    f"the device of `{dst}`, the destination tensor the value is written into", False)
    if _has_device_name(facts, func, node):
        if role == "device-type":
            return None
        return Expr("device", (), "the `device` in scope", False)
    klass = where.klass or _enclosing_class(facts, func)
    if klass is not None and _self_param(func) and "device" in facts.memo(
            ("class-sets", id(klass)), lambda: _class_sets(klass)) \
            and not _assigns_self_device(where.statement):
        # (never from the attribute being assigned: `self.device = torch.device("cuda")`
        # would become `self.device = self.device`)
        return Expr(_as_role("self.device", role), (),
                    "`self.device`, which the class sets", False)
    read = _device_read(facts, func, node, ok)
    if read is not None:
        return Expr(_as_role(f"{read}.device", role), (),
                    f"the device of `{read}`, which the function already reads", False)
    return None


def _assigns_self_device(stmt) -> bool:
    """The statement stores `self.device` (the value being fixed is what sets it)."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    else:
        return False
    return any(isinstance(n, ast.Attribute) and n.attr == "device" and isinstance(n.ctx, ast.Store)
               and isinstance(n.value, ast.Name) and n.value.id == "self"
               for t in targets for n in ast.walk(t))


def _enclosing_class(facts, func):
    par = facts.get_parent(func)
    return par if isinstance(par, ast.ClassDef) else None


def _self_param(func) -> bool:
    args = func.args.posonlyargs + func.args.args
    return bool(args) and args[0].arg == "self"


def _class_sets(klass: ast.ClassDef) -> set:
    """The names a class gives its instances: `self.X = ...` stores and its (nested) defs.
    One walk per class (asked per candidate: torch's largest classes walked hundreds of
    times)."""
    out = set()
    for n in ast.walk(klass):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) \
                and isinstance(n.value, ast.Name) and n.value.id == "self":
            out.add(n.attr)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(n.name)
    return out


def _params(func) -> list[str]:
    a = func.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return names


def _has_device_name(facts, func, node) -> bool:
    if "device" in _params(func):
        return True
    # a local assigned before the value (its own hardcoded value is flagged separately)
    return any(at < node.lineno for at in _walked(facts, func).device_stores)


class _Walked:
    """What one walk of a function finds for the inference (the same for every value it
    holds: walked once per function, not once per value): the callee nodes, the stores
    (row, name as `simple_name` writes it), the rows of stores to a local `device`, and the
    `.device` reads, in `ast.walk` order."""

    __slots__ = ("calls", "stores", "device_stores", "reads")

    def __init__(self, func):
        self.calls, self.stores, self.device_stores, self.reads = set(), [], [], []
        for n in ast.walk(func):
            if isinstance(n, ast.Call):
                self.calls.add(id(n.func))
            elif isinstance(n, (ast.Name, ast.Attribute)):
                if isinstance(n.ctx, ast.Store):
                    self.stores.append((n.lineno, simple_name(n)))
                    if isinstance(n, ast.Name) and n.id == "device":
                        self.device_stores.append(n.lineno)
                elif isinstance(n, ast.Attribute) and n.attr == "device" \
                        and isinstance(n.ctx, ast.Load):
                    self.reads.append(n)


def _walked(facts, func) -> _Walked:
    return facts.memo(("infer-walk", id(func)), lambda: _Walked(func))


class _Usable:
    """Whether `name.device` can stand in the statement holding `node`: never a name that
    statement binds (`x = th.ones(2).cuda()` -> `.to(x.device)` reads x before it exists), nor
    the value being moved (`images = images.to("cuda")` -> `images.to(images.device)` moves
    nothing), and a local only when a statement before this one binds it."""

    def __init__(self, facts, func, node):
        self.func = func
        stmt = node
        while stmt is not None and not isinstance(stmt, ast.stmt):
            stmt = facts.get_parent(stmt)
        self.stmt = stmt
        self.bound = _bound_by(stmt) if stmt is not None else set()
        call = _move_call(facts, node)
        self.receiver = simple_name(call.func.value) if call is not None else None
        self.params = set(_params(func))

    def __call__(self, name: str | None) -> bool:
        if not name or name in self.bound or name == self.receiver:
            return False
        base = name.split(".")[0]
        if base in self.bound:
            return False
        if base == "self" or base in self.params or self.stmt is None:
            return True
        start = self.stmt.lineno
        for n in ast.walk(self.func):
            if isinstance(n, ast.Name) and n.id == base and isinstance(n.ctx, ast.Store) \
                    and n.lineno < start:
                return True
            if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno < start:
                if any((a.asname or a.name.split(".")[0]) == base for a in n.names):
                    return True
        return False


def _bound_by(stmt) -> set:
    """The names (and `self.attr` targets) a statement binds."""
    targets = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    out = set()
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Store):
                name = simple_name(n)
                if name:
                    out.add(name)
    for n in ast.walk(stmt) if stmt is not None else ():
        if isinstance(n, ast.NamedExpr):
            out.add(n.target.id)
    return out


def _device_read(facts, func, node, ok=lambda name: True) -> str | None:
    """`x` of the first `x.device` the function reads (x a plain name or self.attr) that can
    stand where `node` is (`ok`)."""
    best = None
    walked = _walked(facts, func)
    calls, stores = walked.calls, walked.stores

    def rebound(name, line):  # stored between the read and `node`: its device may differ there
        return any(line <= at < node.lineno and (s == name or name.startswith(f"{s}."))
                   for at, s in stores if s)

    for n in walked.reads:
        if id(n) in calls:
            continue  # `torch.device(...)` constructs a device, it reads none
        v = n.value
        if isinstance(v, ast.Name) and v.id in facts.aliases:
            continue  # a module (`torch.device`), not a tensor
        if isinstance(v, ast.Name) and v.id != "self":
            if not ok(v.id) or rebound(v.id, n.lineno):
                continue
            key = (n.lineno >= node.lineno, n.lineno, n.col_offset)
            if best is None or key < best[0]:
                best = (key, v.id)
        elif isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) \
                and v.value.id == "self":
            if not ok(f"self.{v.attr}") or rebound(f"self.{v.attr}", n.lineno):
                continue
            key = (n.lineno >= node.lineno, n.lineno, n.col_offset)
            if best is None or key < best[0]:
                best = (key, f"self.{v.attr}")
    return best[1] if best else None


# --- step 1: destination tensor ------------------------------------------------------------

def _move_call(facts, node):
    """The `.to(...)`/`.cuda()` call a hardcoded value belongs to (or node itself)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in _MOVE_METHODS:
        return node
    par = facts.get_parent(node)
    if isinstance(par, ast.keyword):
        par = facts.get_parent(par)
    if isinstance(par, ast.Call) and isinstance(par.func, ast.Attribute) \
            and par.func.attr in _MOVE_METHODS:
        return par
    return None


def _destination(facts, node, func) -> str | None:
    call = _move_call(facts, node)
    if call is None:
        return None
    par = facts.get_parent(call)
    # dst.copy_(x.to("cuda"))
    if isinstance(par, ast.Call) and isinstance(par.func, ast.Attribute) \
            and par.func.attr == "copy_" and call in par.args:
        return simple_name(par.func.value)
    # dst[idx] = x.to("cuda")
    if isinstance(par, ast.Assign) and par.value is call:
        for t in par.targets:
            if isinstance(t, ast.Subscript):
                return simple_name(t.value)
        if len(par.targets) == 1 and isinstance(par.targets[0], ast.Name):
            return _flow(func, par.targets[0].id, par.end_lineno)
    # f(dst, x.to("cuda"))
    if isinstance(par, ast.Call) and call in par.args:
        idx = par.args.index(call)
        return _earlier_tensor_arg(func, par.args[:idx])
    return None


def _flow(func, var: str, after_line: int) -> str | None:
    """Where the moved value `var` goes next: `dst.copy_(var)`, `dst[i] = var`, `f(dst, var)`."""
    for n in ast.walk(func):
        if getattr(n, "lineno", 0) <= after_line:
            continue
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and n.func.attr == "copy_" \
                    and any(isinstance(a, ast.Name) and a.id == var for a in n.args):
                name = simple_name(n.func.value)
                if name:
                    return name
            for i, a in enumerate(n.args):
                if isinstance(a, ast.Name) and a.id == var and i > 0:
                    name = _earlier_tensor_arg(func, n.args[:i])
                    if name:
                        return name
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id == var:
            for t in n.targets:
                if isinstance(t, ast.Subscript):
                    name = simple_name(t.value)
                    if name:
                        return name
    return None


def _earlier_tensor_arg(func, args) -> str | None:
    for a in args:
        if isinstance(a, ast.Name) and _is_tensorish(func, a.id):
            return a.id
    return None


def _is_tensorish(func, name: str) -> bool:
    if name in ("self", "cls"):
        return False
    if _TENSORISH.search(name):
        return True
    for n in ast.walk(func):
        if isinstance(n, ast.Attribute) and n.attr in _TENSOR_ATTRS \
                and isinstance(n.value, ast.Name) and n.value.id == name:
            return True
        if isinstance(n, ast.arg) and n.arg == name and n.annotation is not None \
                and "Tensor" in ast.dump(n.annotation):
            return True
    return False
