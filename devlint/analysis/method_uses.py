"""The file's calls of its private methods (`devlint.evidence.self_called_on_cuda`): a private
method of a module-level class called only as `self._m(...)` under tests that establish CUDA.
Mixed into the triage descent beside `PrivateUses` (whose `_position` places each call under
its tests), which asks `method_used_on_cuda` about each method of a module-level class that
stands over candidates."""
from __future__ import annotations

import ast

from devlint.analysis.flow_uses import _MISSING
from devlint.analysis.model import _FUNCS
from devlint.analysis.walk import children
from devlint.evidence.self_called_on_cuda import self_called_reason

_MAX_DEPTH = 3  # private methods calling private methods, at most


class MethodUses:
    """Needs `PrivateUses._position` and `self.f`."""

    def _method_refs(self) -> dict:
        """name -> [(node, parent, function, class)] of every `x.name` attribute and `name`
        Name in the file, and ("str", node) of each string constant, by its value."""
        if getattr(self, "_mrefs", None) is None:
            refs: dict = {}

            def walk(node, parent, function, klass):
                if isinstance(node, ast.Attribute):
                    refs.setdefault(node.attr, []).append((node, parent, function, klass))
                elif isinstance(node, ast.Name):
                    refs.setdefault(node.id, []).append((node, parent, function, klass))
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and node.value.isidentifier():
                    refs.setdefault(node.value, []).append((node, parent, function, klass))
                elif isinstance(node, _FUNCS):
                    # the def's own name is no reference; its header runs in the enclosing scope
                    body = {id(b) for b in node.body}
                    for child in children(node):
                        if id(child) in body:
                            walk(child, node, node, klass)
                        else:
                            walk(child, node, function, klass)
                    return
                elif isinstance(node, ast.ClassDef):
                    body = {id(b) for b in node.body}
                    for child in children(node):
                        inside = id(child) in body
                        walk(child, node, None if inside else function,
                             node if inside else klass)
                    return
                for child in children(node):
                    walk(child, node, function, klass)

            walk(self.f.tree, None, None, None)
            del walk  # (a recursive closure: its cycle would hold the tree until collected)
            self._mrefs = refs
        return self._mrefs

    def method_used_on_cuda(self, klass, method, depth: int = 0):
        """The Reason where `method`, a private method of the module-level class `klass`, is
        called only through `self` from its class or a class of the file derived from it,
        each call under a CUDA test (or from a private method that is, recursively). None
        otherwise."""
        name = method.name
        if not name.startswith("_") or name.startswith("__") or klass not in self.f.tree.body \
                or depth > _MAX_DEPTH or not isinstance(method, _FUNCS):
            return None
        if sum(1 for s in klass.body if getattr(s, "name", None) == name) != 1:
            return None  # defined twice (a property's setter, a conditional def)
        family = {klass.name}
        for st in self.f.tree.body:  # classes of the file derived from it (one level each)
            if isinstance(st, ast.ClassDef) and any(
                    getattr(b, "id", None) in family for b in st.bases):
                family.add(st.name)
        found = []
        for ref, parent, fn, cls in self._method_refs().get(name, []):
            if not isinstance(ref, ast.Attribute):
                return None  # a bare name (a class-body alias) or a string (`getattr`)
            if fn is method:
                continue  # a recursive call runs only where the method already runs
            if not (isinstance(ref.value, ast.Name) and ref.value.id in ("self", "cls")
                    and isinstance(ref.ctx, ast.Load) and isinstance(parent, ast.Call)
                    and parent.func is ref and fn is not None and cls is not None
                    and cls.name in family and fn in cls.body):
                return None  # called on another object, passed on, stored, nested def
            where = self._position(fn.body, ref, fn, cls)
            if where is not _MISSING and where is not None and _reported_test(where[1]):
                return None  # the test is a finding itself: its fix lets other devices in
            if where is _MISSING or where is None or where[0] is None:
                where = self._through_private(cls, fn, depth)
                if where is None:
                    return None
            found.append(where)
        if not found:
            return None
        level = "cuda" if all(lv == "cuda" for lv, _ in found) else "alike"
        return self_called_reason(level, klass.name, name, found[0][1], self.f.path)

    def _through_private(self, cls, fn, depth):
        """(level, evidence) when the caller `fn` is itself a private method of a module-level
        class run only on CUDA by this rule."""
        if cls not in self.f.tree.body:
            return None
        why = self.method_used_on_cuda(cls, fn, depth + 1)
        if why is None:
            return None
        return ("cuda" if why.principle != "cuda-alike-guard" else "alike",
                _Line(why.line))


class _Line:
    def __init__(self, line):
        self.lineno = line


def _reported_test(evidence) -> bool:
    """Whether the test at `evidence` (an `if`, `assert`, conditional expression or `and`
    operand) asks where a device or tensor is (`device.type == "cuda"`, `x.is_cuda`): DL202
    reports it ("picks the CPU path on every non-CUDA accelerator"), and its fix
    (`device.type != "cpu"`) sends the other accelerators to the callee too (cross corpus 074:
    `Params4bit._quantize`, reached under `device.type == "cuda"`, fixed upstream)."""
    test = getattr(evidence, "test", evidence)
    if not isinstance(test, ast.AST):
        return False
    called = {id(n.func) for n in ast.walk(test) if isinstance(n, ast.Call)}
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute) and n.attr == "is_cuda" and id(n) not in called:
            return True  # the tensor's property; `platform.is_cuda()` is a platform query
        if isinstance(n, ast.Compare) and any(
                isinstance(x, ast.Constant) and isinstance(x.value, str)
                and x.value.split(":")[0] == "cuda" for x in (n.left, *n.comparators)):
            return True
    return False
