"""The file's references to its module-level names (`devlint.evidence.cuda_value`): the values
its calls pass to a parameter (`analysis.flow` follows them), and the private classes and
functions used only on CUDA: every reference to them in the file stands under a test that
establishes CUDA, or a test of a value made only on CUDA, or in a test skipped unless a
compute capability is met (or a GPU kernel library loads). Mixed into the triage descent,
which asks `used_on_cuda` about each module-level `class`/`def` that stands over
candidates."""
from __future__ import annotations

import ast

from devlint.analysis.model import _FUNCS
from devlint.analysis.walk import children
from devlint.evidence.capability import module_names, requiring_mark
from devlint.evidence.cuda_value import used_on_cuda_reason
from devlint.evidence.library_gate import mark_reason as library_mark_reason

_MISSING = object()  # the reference is not in this subtree


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _type_test(ref, parent) -> bool:
    """`ref` names a type only: `isinstance(x, C)`, `issubclass(t, (C, D))`, an annotation."""
    if isinstance(parent, ast.Tuple):
        return False  # (the tuple's parent is not known here: not followed)
    if isinstance(parent, ast.Call) and getattr(parent.func, "id", "") in (
            "isinstance", "issubclass") and len(parent.args) == 2 and parent.args[1] is ref:
        return True
    return isinstance(parent, ast.AnnAssign) and parent.annotation is ref


def _constructs_itself(klass) -> bool:
    """`klass` makes instances of itself other than by its name: `cls(...)`,
    `type(self)(...)`, `self.__class__(...)`, `__new__`."""
    for n in ast.walk(klass):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id == "cls" or isinstance(f, ast.Call) \
                    and getattr(f.func, "id", "") == "type" \
                    or isinstance(f, ast.Attribute) and f.attr in ("__class__", "__new__"):
                return True
    return False


class PrivateUses:
    """Mixed into `Descent` beside `ValueFlow`: needs `value_level`, `_test_level`,
    `_exits` and `self.f`."""

    def _call_sites(self) -> dict:
        """name -> [(node, function, class)] of every reference to a module-level name of
        the file (`f`, `C`), with the function and class it stands in."""
        if self._sites is None:
            self._sites = {}

            def head(node, owner, function, klass):
                # a decorator, a base class, a default: a bare name there is a reference
                # too (`@_deco`, `class D(C)`: D's construction runs C's `__init__`)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self._sites.setdefault(node.id, []).append((node, function, klass, owner))
                walk(node, function, klass)

            def walk(node, function, klass):
                for child in children(node):
                    if isinstance(child, _FUNCS):
                        for d in (*child.decorator_list, *child.args.defaults,
                                  *(x for x in child.args.kw_defaults if x is not None)):
                            head(d, child, function, klass)
                        walk_body(child, child, klass)
                    elif isinstance(child, ast.ClassDef):
                        for d in (*child.decorator_list, *child.bases,
                                  *(k.value for k in child.keywords)):
                            head(d, child, function, klass)
                        walk_body(child, function, child)
                    else:
                        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                            self._sites.setdefault(child.id, []).append(
                                (child, function, klass, node))
                        walk(child, function, klass)

            def walk_body(scope, function, klass):
                for st in scope.body:
                    walk(ast.Module(body=[st], type_ignores=[]), function, klass)

            walk(self.f.tree, None, None)
            # (recursive closures: their cycle would hold the tree until collected)
            del head, walk, walk_body
        return self._sites

    def _passed_levels(self, function, klass, name, depth):
        """[(level, evidence)] of the values the file's calls pass to parameter `name` of a
        module-level function, of a module-level class's `__init__`, or of a private method
        called through `self` (`_private_method_calls`), whose default is None (for a flag's
        truth test, None or False): every reference to it is a call that passes a value made
        only on CUDA, or None, or nothing (the default). None otherwise (a reference that is
        no call, `*args`/`**kw`, a value of another kind)."""
        a = function.args
        positional = [x.arg for x in (*a.posonlyargs, *a.args)]
        defaults = dict(zip(positional[len(positional) - len(a.defaults):], a.defaults))
        defaults.update({x.arg: d for x, d in zip(a.kwonlyargs, a.kw_defaults)})
        default = defaults.get(name)
        if not (_is_none(default) or self._truth and isinstance(default, ast.Constant)
                and default.value is False):
            return None  # (a flag's default may be False: `if flag:` is false there too)
        if klass is not None and function.name != "__init__":
            calls = self._private_method_calls(function, klass)
        else:
            calls = self._named_calls(function, klass)
        if calls is None:
            return None
        if klass is not None:
            positional = positional[1:]  # `self`
        levels = []
        for call, fn, cls in calls:
            value = next((k.value for k in call.keywords if k.arg == name), None)
            # `*args`/`**kw` may fill the parameter, unless the call names it: a second value
            # for a named parameter is a TypeError, so `C(**kw, stream=s)` passes `s`
            if value is None and (any(isinstance(x, ast.Starred) for x in call.args)
                                  or any(k.arg is None for k in call.keywords)):
                return None
            if value is None and name in positional \
                    and positional.index(name) < len(call.args):
                value = call.args[positional.index(name)]
            if value is None or _is_none(value):
                continue
            lv = self.value_level(value, fn, cls, depth + 1)
            if lv is None:
                return None
            levels.append(lv)
        return levels

    def _named_calls(self, function, klass):
        """[(call, function, class)] of the calls of a module-level function, or of a
        module-level class (its `__init__`), by name: None where a reference to it is no call
        (nor a type test, a class attribute, a registry's call) or there is none."""
        if klass is not None:
            if klass not in self.f.tree.body:
                return None
            callee = klass.name
        elif function in self.f.tree.body:
            callee = function.name
        else:
            return None
        sites = self._call_sites().get(callee, [])
        if not sites:
            return None
        calls = []
        for ref, fn, cls, parent in sites:
            if _type_test(ref, parent):
                continue  # `isinstance(x, C)`, `y: C = ...`: no value is passed there
            if klass is not None and isinstance(parent, ast.Attribute) \
                    and parent.value is ref and not _constructs_itself(klass):
                continue  # `partial(C.stage_facts, config)`: the class's attribute, no instance
            if isinstance(parent, ast.Call) and parent.func is ref:
                calls.append((parent, fn, cls))
                continue
            found = self._registry_calls(ref, parent) if fn is None else None
            if found is None:
                return None
            calls.extend(found)
        return calls

    def _private_method_calls(self, function, klass):
        """[(call, method, class)] of the calls of a private method (`_name`, not a dunder) of
        a module-level class, where every reference to the name in the file is
        `self._name(...)` in a method of that class (not in a function nested in one): the
        module holds every use of a private name. None otherwise (another reference, a
        subclass in the file, which may override it or call it, or no call)."""
        name = function.name
        if not name.startswith("_") or name.startswith("__") or klass not in self.f.tree.body \
                or klass.name in self._derived_names():
            return None
        memo = self.__dict__.setdefault("_pmc", {})
        key = (id(klass), name)
        if key not in memo:
            memo[key] = self._private_method_calls_of(klass, name)
        return memo[key]

    def _private_method_calls_of(self, klass, name):
        calls = []
        for ref, parent, fn, _cls in self._method_refs().get(name, ()):
            if not isinstance(ref, ast.Attribute):
                continue
            if not (isinstance(parent, ast.Call) and parent.func is ref
                    and isinstance(ref.value, ast.Name) and ref.value.id == "self"
                    and fn is not None and fn in klass.body
                    and id(parent) not in self._nested_ids(fn)):
                return None
            calls.append((parent, fn, klass))
        return calls or None

    def _derived_names(self) -> set:
        """The names that some class of the file derives from (`class B(A)`: "A")."""
        if getattr(self, "_derived", None) is None:
            self._derived = {b.id for c in ast.walk(self.f.tree) if isinstance(c, ast.ClassDef)
                             for b in c.bases if isinstance(b, ast.Name)}
        return self._derived

    def _nested_ids(self, method) -> set:
        """ids of the nodes of `method` inside a function or lambda nested in it."""
        memo = self.__dict__.setdefault("_nested", {})
        if id(method) not in memo:
            memo[id(method)] = {id(n) for d in ast.walk(method)
                                if isinstance(d, (*_FUNCS, ast.Lambda)) and d is not method
                                for n in ast.walk(d)}
        return memo[id(method)]

    def _registry_calls(self, ref, parent):
        """[(call, function, class)] where `ref` is a value of a module-level registry
        (`LAYERS = {"attention": Attn, "linear": Linear}`) that the file only reads by an
        item, calling it (`LAYERS[kind](...)`) or binding it to a local name that it only
        calls (`cls = LAYERS[kind]; cls(...)`): those calls construct the class. None
        otherwise (a registry stored into, handed on, or read any other way)."""
        if not (isinstance(parent, ast.Dict) and any(v is ref for v in parent.values)):
            return None
        target = next((st.targets[0].id for st in self.f.tree.body
                       if isinstance(st, ast.Assign) and st.value is parent
                       and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)),
                      None)
        sites = self._call_sites().get(target, []) if target is not None else []
        if not sites:
            return None  # a registry the file never reads is there for its importers
        out = []
        for r, fn, cls, item in sites:
            if fn is None or not (isinstance(item, ast.Subscript) and item.value is r
                                  and isinstance(item.ctx, ast.Load)):
                return None
            up = {id(c): n for n in ast.walk(fn) for c in ast.iter_child_nodes(n)}
            use = up.get(id(item))
            if isinstance(use, ast.Call) and use.func is item:
                out.append((use, fn, cls))
                continue
            if not (isinstance(use, ast.Assign) and len(use.targets) == 1
                    and isinstance(use.targets[0], ast.Name)):
                return None
            local = use.targets[0].id
            for n in ast.walk(fn):
                if isinstance(n, ast.Name) and n.id == local and n is not use.targets[0]:
                    call = up.get(id(n))
                    if not (isinstance(n.ctx, ast.Load) and isinstance(call, ast.Call)
                            and call.func is n):
                        return None
                    out.append((call, fn, cls))
        return out

    def used_on_cuda(self, scope):
        """The Reason where `scope`, a module-level class or function whose name starts with
        `_` (its file holds every use), is referenced only under a CUDA test: construction
        or call sites (`isinstance` tests and annotations aside). None otherwise."""
        if not scope.name.startswith("_") or scope.name.startswith("__") \
                or scope not in self.f.tree.body:
            return None
        sites = self._call_sites().get(scope.name, [])
        found = []
        for ref, fn, cls, parent in sites:
            if _type_test(ref, parent):
                continue
            if fn is None or not (isinstance(parent, ast.Call) and parent.func is ref):
                return None  # module-level or class-level use, or passed on as a value
            where = self._position(fn.body, ref, fn, cls)
            if where is None and cls is not None:  # in a private method run only on CUDA
                where = self._through_private(cls, fn, 0)  # (self-called-on-cuda)
            if where is None:  # in a test that only runs past a compute-capability gate
                where = self._capability_test(fn, cls)
            if where is _MISSING or where is None:
                return None
            found.append(where)
        if not found:
            return None
        level = "cuda" if all(lv == "cuda" for lv, _ in found) else "alike"
        return used_on_cuda_reason(level, scope.name, found[0][1], self.f.path)

    def _capability_test(self, fn, cls):
        """("cuda", mark) where `fn` (or its class) is a test skipped unless a compute
        capability is met (`evidence.capability.requiring_mark`) or a library of NVIDIA/AMD GPU
        kernels loads (`evidence.library_gate`): a gate that is itself CUDA's on purpose, not
        a finding, over a body that only runs on such a GPU. An availability gate
        (`skipif(not torch.cuda.is_available())`) is a finding whose fix does not reach the
        helper: a reference under it does not count. None otherwise."""
        names = module_names(self.f.tree)
        for d in (*fn.decorator_list, *(cls.decorator_list if cls is not None else ())):
            if requiring_mark(d, names) \
                    or library_mark_reason(d, self.f.tree, self.f.path) is not None:
                return "cuda", d
        return None

    def _position(self, body, ref, function, klass):
        """(level, evidence) of the innermost CUDA test `ref` stands under in `body`; None
        where it stands under none; _MISSING where it is not in `body`."""
        inside = {}

        def contains(node) -> bool:
            key = id(node)
            if key not in inside:
                inside[key] = any(n is ref for n in ast.walk(node))
            return inside[key]

        def expr(node, level, evidence):
            if node is ref:
                return (level, evidence) if level else None
            if isinstance(node, ast.IfExp):
                t, f = self._test_level(node.test, function, klass)
                for child, lv in ((node.test, level), (node.body, level or t),
                                  (node.orelse, level or f)):
                    if contains(child):
                        return expr(child, lv, evidence if level or not lv else node)
            if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
                lv, ev = level, evidence
                for v in node.values:
                    if contains(v):
                        return expr(v, lv, ev)
                    if lv is None:
                        t = self._test_level(v, function, klass)[0]
                        lv, ev = (t, v) if t else (None, None)
            for child in ast.iter_child_nodes(node):
                if contains(child):
                    return expr(child, level, evidence)
            return _MISSING

        def visit(stmts, level, evidence):
            for st in stmts:
                if not contains(st):
                    if level is None and isinstance(st, ast.If) and not st.orelse \
                            and st.body and self._exits(st.body[-1]):
                        f = self._test_level(st.test, function, klass)[1]
                        if f:
                            level, evidence = f, st
                    elif level is None and isinstance(st, ast.Assert):
                        t = self._test_level(st.test, function, klass)[0]
                        if t:
                            level, evidence = t, st
                    continue
                if isinstance(st, (*_FUNCS, ast.ClassDef)):
                    return None  # inside a nested function: not followed
                if isinstance(st, ast.If) and not contains(st.test):
                    t, f = self._test_level(st.test, function, klass)
                    branch, lv = (st.body, t) if any(contains(s) for s in st.body) \
                        else (st.orelse, f)
                    return visit(branch, level or lv, evidence if level or not lv else st)
                blocks = [getattr(st, n, None) or [] for n in ("body", "orelse", "finalbody")]
                blocks += [h.body for h in getattr(st, "handlers", None) or []]
                for b in blocks:
                    if any(contains(s) for s in b):
                        return visit(b, level, evidence)
                return expr(st, level, evidence)
            return _MISSING

        try:
            return visit(body, None, None)
        finally:  # (recursive closures: their cycle would hold the tree until collected)
            del contains, expr, visit
