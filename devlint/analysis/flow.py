"""Values that exist only on CUDA, followed through the file (`devlint.evidence.cuda_value`):
which functions return a value only under a CUDA test (else None), which names and `self`
attributes hold only such values (or None), and which tests of them (`is not None`, truth,
`assert`) therefore establish CUDA. Mixed into the triage descent, which asks `value_test`
about the `if`s, early exits and asserts that stand over candidates.

Size: ~525 lines, one mixin whose parts (producers, names and attributes, stores, tests) call each other
through the same memo, budget and taint state; the per-file caches of the stores and the
functions' own nodes (`_store_nodes`, `_own_functions`) belong with them."""
from __future__ import annotations

import ast
from bisect import bisect_left
from collections import deque

from devlint.analysis.imported import imported_producer
from devlint.analysis.model import _EXITS, _FUNCS
from devlint.analysis.walk import child_statements, children, nodes, statements
from devlint.evidence.cuda_alike_guard import alike_polarity
from devlint.evidence.cuda_guard import _CAPABILITY_QUERIES, is_capability_name
from devlint.evidence.cuda_value import value_reason
from devlint.evidence.rocm_guard import rocm_polarity

_DEPTH = 12  # producer -> name -> parameter -> ...: how far a value is followed (a value
# handed down a model's constructors, `Model -> Layer -> Attention`, takes two steps a level)
_BUSY = object()  # a memo entry still being decided
# tests that are findings themselves, whose fix asks for any accelerator
_FIXED_WITH_IT = {"torch.cuda.is_available", "torch.cuda.device_count",
                  "torch.cuda.is_initialized"}
_BUDGET = 2000  # values a file may ask about (each memoized); beyond it nothing is followed
# the nodes `_assigned` answers for: every other node stores nothing
_STORE_NODES = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor,
                ast.comprehension, ast.withitem, ast.NamedExpr, ast.Delete)


def joined_level(found) -> str:
    """The level of values from several sources, `found` = [(level, evidence)]: theirs where
    they all share it ("cuda", "rocm"), else "alike" (CUDA or ROCm)."""
    first = found[0][0]
    return first if all(lv == first for lv, _ in found) else "alike"


def _target_roots(node) -> list:
    """The target expressions of a store node (`ValueFlow._assigned` reads only these)."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        return node.targets
    if isinstance(node, ast.withitem):
        return [node.optional_vars] if node.optional_vars is not None else []
    target = getattr(node, "target", None)
    return [target] if target is not None else []


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _own_nodes(fn):
    """The nodes of a function's body, not those of functions or classes nested in it."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*_FUNCS, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(children(node))  # `ast.iter_child_nodes`, contexts aside


class ValueFlow:
    """Mixed into `Descent`: needs `self.f` (the FileFacts), `self._sides` and `self._exits`,
    and `PrivateUses` (`devlint.analysis.flow_uses`: the file's references to a name)."""

    def _flow_init(self):
        self._producers: dict = {}  # id(def) -> (level, evidence node) | None
        self._names: dict = {}  # (id(scope), name) -> (level, evidence node) | None
        self._defs: dict | None = None  # name -> [module-level defs]
        self._methods: dict | None = None  # id(method) -> class
        self._sites: dict | None = None  # module-level name -> its references
        self._truth = False  # following a value for a truth test: flags count too
        self._tainted = False  # the value being decided read one still being decided
        self._budget = _BUDGET  # questions left for this file
        self._global_decl: dict | None = None  # name -> functions declaring it global
        self._outer: dict | None = None  # id(nested def) -> (enclosing def, its class)
        self._store_cache: dict = {}  # body key -> (body, `_store_nodes(body)`)
        self._own_fns = None  # `_own_functions()`
        self._own_stmts: dict = {}  # id(function) -> `_own_statements(function)`
        self._for_rows = False  # `_loop_rows()`, False until computed

    def _memo(self, cache: dict, key, compute):
        """`compute()` memoized in `cache`, except a result that depended on a value still
        being decided (a cycle: `self.s` stored from `state`, `state` read from `self.s`),
        which is computed again when asked again."""
        if key in cache:
            if cache[key] is _BUSY:
                self._tainted = True
                return None
            return cache[key]
        self._budget -= 1
        if self._budget < 0:  # a file whose values are too tangled: nothing is followed
            return None
        cache[key] = _BUSY
        outer, self._tainted = self._tainted, False
        try:
            found = compute()
        finally:
            tainted = self._tainted
            self._tainted = outer or tainted
            if tainted:
                del cache[key]
        if not tainted:
            cache[key] = found
        return found

    # --- producers --------------------------------------------------------------------
    def _test_level(self, test, function=False, klass=None) -> tuple[str | None, str | None]:
        """(level when true, level when false): "cuda" where the test establishes CUDA,
        "rocm" where it holds only on ROCm (`evidence.rocm_guard`), "alike" where it
        establishes a CUDA-alike platform (CUDA or ROCm), else None."""
        if self._fixed_with_it(test):
            return None, None
        on_true, on_false, tensor = self._sides(test)
        if tensor is not None:
            on_true = False  # `t.is_cuda` says where a tensor is, not which platform runs
        alike = alike_polarity(test)
        if not (on_true or on_false or alike) and function is not False:
            found = self._value_polarity(test, function, klass)  # `s is not None`
            if found is not None:
                lv = found[1][0]
                return (lv if found[0] > 0 else None, lv if found[0] < 0 else None)
        rocm = "rocm" if alike and rocm_polarity(test) == alike else "alike"
        return ("cuda" if on_true else rocm if alike > 0 else None,
                "cuda" if on_false else rocm if alike < 0 else None)

    def _fixed_with_it(self, test) -> bool:
        """A test that is itself a finding whose fix makes the value on any accelerator
        (`torch.cuda.is_available()`, `device_count()`), unless it also asks for a compute
        capability (CUDA-only by purpose)."""
        asks = False
        for n in ast.walk(test):
            if isinstance(n, ast.Call):
                q = self.f.qualname(n.func) or ""
                if q in _FIXED_WITH_IT:
                    asks = True
                elif q in _CAPABILITY_QUERIES or is_capability_name(
                        getattr(n.func, "attr", getattr(n.func, "id", ""))):
                    return False
        return asks

    def producer(self, fn):
        """(level, evidence) where every value `fn` returns other than None is computed under
        a test that establishes CUDA ("cuda") or a CUDA-alike platform ("alike"), and it
        returns one somewhere; else None. A generator is no producer."""
        return self._memo(self._producers, id(fn), lambda: self._producer(fn))

    def _producer(self, fn):
        found = []  # (level, evidence)
        ok = [True]

        def visit(stmts, level, evidence):
            for st in stmts:
                if not ok[0]:
                    return
                if isinstance(st, (*_FUNCS, ast.ClassDef)):
                    continue
                if isinstance(st, ast.Return):
                    v = st.value
                    if v is None or _is_none(v):
                        continue
                    if isinstance(v, ast.IfExp) and (_is_none(v.orelse) or _is_none(v.body)):
                        t, f = self._test_level(v.test)
                        lv = t if _is_none(v.orelse) else f
                        if lv is not None:
                            found.append((lv, v))
                            continue
                    if level is None:
                        lv = self.value_level(v, fn, klass_of.get(id(fn)), 1)
                        if lv is None:
                            ok[0] = False
                            return
                        found.append(lv)
                        continue
                    found.append((level, evidence))
                    continue
                if isinstance(st, ast.If):
                    t, f = self._test_level(st.test)
                    visit(st.body, level or t, evidence if level else st)
                    visit(st.orelse, level or f, evidence if level else st)
                    if level is None and f is not None and not st.orelse and st.body \
                            and self._exits(st.body[-1]):
                        level, evidence = f, st  # `if not is_cuda(): return None`
                    continue
                if isinstance(st, ast.Assert) and level is None:
                    t = self._test_level(st.test)[0]
                    if t is not None:
                        level, evidence = t, st
                for name in ("body", "orelse", "finalbody"):
                    visit(getattr(st, name, ()) or (), level, evidence)
                for h in getattr(st, "handlers", ()) or ():
                    visit(h.body, level, evidence)
                for c in getattr(st, "cases", ()) or ():
                    visit(c.body, level, evidence)

        klass_of = self._klass_of()
        # (`visit` is a recursive closure: its cycle would hold the tree until collected)
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fn)):
            del visit
            return None
        visit(fn.body, None, None)
        del visit
        if not ok[0] or not found:
            return None
        return joined_level(found), found[0][1]

    def _klass_of(self) -> dict:
        """id(method) -> its class, for the classes at module level."""
        if self._methods is None:
            self._methods = {id(st): cls for cls in self.f.tree.body
                             if isinstance(cls, ast.ClassDef)
                             for st in cls.body if isinstance(st, _FUNCS)}
        return self._methods

    def _globals(self) -> dict:
        """name -> the functions that declare it `global`."""
        if self._global_decl is None:
            self._global_decl = {}
            if "global " in self.f.text:
                for fn, own in self._own_functions()[1]:
                    for n in own:
                        if isinstance(n, ast.Global):
                            for name in n.names:
                                self._global_decl.setdefault(name, []).append(fn)
        return self._global_decl

    def _enclosing(self) -> dict:
        """id(function defined in a function) -> (that enclosing function, its class)."""
        if self._outer is None:
            self._outer = {}
            klass_of = self._klass_of()
            for fn, own in self._own_functions()[1]:
                for n in own:
                    if isinstance(n, _FUNCS):
                        self._outer[id(n)] = (fn, klass_of.get(id(fn)))
        return self._outer

    def _own_functions(self):
        """(None, [(function, the Global and def nodes among its `_own_nodes`)]) in
        `ast.walk` order: one walk of the tree's statement lists for `_globals` and
        `_enclosing` (both nodes are statements, which only stand in statement lists:
        `walk.statements` keeps `ast.walk`'s order without visiting an expression)."""
        if self._own_fns is None:
            order, own = [], {}
            queue = deque([(self.f.tree, None)])
            while queue:
                node, fn = queue.popleft()
                if isinstance(node, _FUNCS):
                    if fn is not None:
                        own[id(fn)].append(node)
                    order.append(node)
                    own[id(node)] = []
                    queue.extend((c, node) for c in child_statements(node))  # its body
                    continue
                if fn is not None and isinstance(node, ast.Global):
                    own[id(fn)].append(node)
                inner = None if isinstance(node, ast.ClassDef) else fn
                queue.extend((c, inner) for c in child_statements(node))
            self._own_fns = (None, [(fn, own[id(fn)]) for fn in order])
        return self._own_fns

    def _own_statements(self, fn) -> list:
        """The statement-like nodes among `_own_nodes(fn)` (nested functions and classes
        themselves, not what they hold), memoized per function: `global`, `nonlocal` and
        `def` are statements, so the searches for them need no expression."""
        hit = self._own_stmts.get(id(fn))
        if hit is None:
            hit = list(fn.body)
            for n in hit:
                if not isinstance(n, (*_FUNCS, ast.ClassDef)):
                    hit.extend(child_statements(n))
            self._own_stmts[id(fn)] = hit
        return hit

    def _module_defs(self) -> dict:
        if self._defs is None:
            self._defs = {}
            for st in self.f.tree.body:
                if isinstance(st, _FUNCS):
                    self._defs.setdefault(st.name, []).append(st)
        return self._defs

    def _called_producer(self, call, klass):
        """The producer `call` calls: a module-level function of the file (`f(...)`), or a
        method of the enclosing class (`self.f(...)`); every definition of that name must be
        one."""
        func = call.func
        defs = None
        if isinstance(func, ast.Name):
            defs = self._module_defs().get(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in ("self", "cls") and klass is not None:
            defs = [st for st in klass.body if isinstance(st, _FUNCS) and st.name == func.attr]
        if not defs:
            # --- a producer imported from a project module (project stage re-runs only) ---
            if isinstance(func, ast.Name) and func.id not in self._module_defs():
                level = imported_producer(func.id)
                return (level, call) if level else None
            return None
        found = [self.producer(d) for d in defs]
        if any(x is None for x in found):
            return None
        return joined_level(found), found[0][1]

    # --- values -----------------------------------------------------------------------
    def value_level(self, node, function, klass, depth: int = 0):
        """(level, evidence) of an expression that is None or a value that exists only on
        CUDA ("cuda") or on a CUDA-alike platform ("alike"); else None."""
        if depth > _DEPTH:
            self._tainted = True  # not followed to its end: asked again from nearer, it may be
            return None
        if isinstance(node, ast.Call):
            return self._called_producer(node, klass)
        if isinstance(node, ast.IfExp) and (_is_none(node.orelse) or _is_none(node.body)):
            t, f = self._test_level(node.test, function, klass)
            lv = t if _is_none(node.orelse) else f
            if lv is not None:
                return lv, node
            other = node.body if _is_none(node.orelse) else node.orelse
            return self.value_level(other, function, klass, depth + 1)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            # an item or slice of such a value (`streams[0]`, `streams[:3]`): None has none
            return self.value_level(node.value, function, klass, depth + 1)
        if isinstance(node, ast.Name):
            return self._name_level(node.id, function, klass, depth)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "self" and klass is not None:
            return self._attr_level(node.attr, klass, depth)
        return None

    def _stores(self, body, function=None, klass=None):
        """[(values, level, evidence)] of each statement of `body` (nested blocks included,
        nested functions and classes not) that stores into something: `values` as
        `_assigned` gives them, `level`/`evidence` the CUDA test the statement stands under
        in `body` (an `if`, an early exit), or None."""
        out = []

        def visit(stmts, level, evidence):
            for st in stmts:
                if isinstance(st, (*_FUNCS, ast.ClassDef)):
                    continue
                if isinstance(st, ast.If):
                    out.append((st.test, level, evidence))
                    t, f = self._test_level(st.test)
                    visit(st.body, level or t, evidence if level else st)
                    visit(st.orelse, level or f, evidence if level else st)
                    if level is None and f is not None and not st.orelse and st.body \
                            and self._exits(st.body[-1]):
                        level, evidence = f, st
                    continue
                if isinstance(st, ast.Assert) and level is None:
                    t = self._test_level(st.test)[0]
                    if t is not None:  # `assert comm_cls == CudaCommunicator`
                        level, evidence = t, st
                blocks = [getattr(st, n, None) or [] for n in ("body", "orelse", "finalbody")]
                blocks += [h.body for h in getattr(st, "handlers", None) or []]
                blocks += [c.body for c in getattr(st, "cases", None) or []]
                if any(blocks):
                    for field in st._fields:  # `ast.iter_fields`, without its generator
                        value = getattr(st, field, None)
                        if field not in ("body", "orelse", "finalbody", "handlers", "cases"):
                            for v in value if isinstance(value, list) else [value]:
                                if isinstance(v, ast.AST):
                                    out.append((v, level, evidence))
                    for b in blocks:
                        visit(b, level, evidence)
                else:
                    out.append((st, level, evidence))

        visit(body, None, None)
        del visit  # (a recursive closure: its cycle would hold the tree until collected)
        return out

    def _store_nodes(self, body):
        """The nodes of `_stores(body)`'s roots that can store (the only ones `_assigned`
        answers for), in walk order, with the level and evidence of their statement. Walked
        once per body and file: every name and attribute asked about walks the same body (a
        5,000-line model runner's class, once per `self.` attribute). The cache holds the body,
        so the ids in its key are not reused while it lives."""
        if not body:
            return []
        key = (id(body[0]), id(body[-1]), len(body))
        hit = self._store_cache.get(key)
        if hit is None:
            hit = [body, [(n, level, evidence) for root, level, evidence in self._stores(body)
                          for n in self._root_stores(root)], None]
            self._store_cache[key] = hit
        return hit[1]

    def _stores_into(self, body, key):
        """The entries of `_store_nodes(body)` (same order) whose targets hold a name `key`
        = ("name", id) or a `self` attribute ("self", attr): the only ones whose `_assigned`
        answers for a target of that name. Indexed once per body (a class of 400 stores,
        asked about each of its 200 attributes)."""
        entries = self._store_nodes(body)
        if not entries:
            return entries
        hit = self._store_cache[(id(body[0]), id(body[-1]), len(body))]
        if hit[2] is None:
            index: dict = {}
            for entry in entries:
                seen = set()
                for t in _target_roots(entry[0]):
                    for m in nodes(t):
                        if isinstance(m, ast.Name):
                            k = ("name", m.id)
                        elif isinstance(m, ast.Attribute) and isinstance(m.value, ast.Name) \
                                and m.value.id == "self":
                            k = ("self", m.attr)
                        else:
                            continue
                        if k not in seen:
                            seen.add(k)
                            index.setdefault(k, []).append(entry)
            hit[2] = index
        return hit[2].get(key, ())

    # --- the store nodes of one root, without walking an expression that holds none -------
    def _root_stores(self, root) -> list:
        """`[n for n in ast.walk(root) if isinstance(n, _STORE_NODES)]`. A root of `_stores`
        is a simple statement, an expression or a `with` item: no statement stands in it, so
        the only store nodes below it are comprehensions (spelled with `for`) and `:=`
        expressions. Where the rows the root spans hold neither spelling, the root is its
        only candidate and its expressions are not walked."""
        rows = self._loop_rows()
        first = getattr(root, "lineno", None)
        if rows is not None and first is not None:
            i = bisect_left(rows, first)
            if i == len(rows) or rows[i] > (root.end_lineno or first):
                return [root] if isinstance(root, _STORE_NODES) else []
        return [n for n in nodes(root) if isinstance(n, _STORE_NODES)]  # `ast.walk`'s order

    def _loop_rows(self):
        """The rows (1-based, sorted) of the file's text that hold `for` or `:=`; None where
        the rows may not be the tree's (a `\r` line end, a text shorter than the tree)."""
        if self._for_rows is False:
            text = self.f.text or ""
            lines = text.split("\n")
            last = self.f.tree.body[-1] if getattr(self.f.tree, "body", None) else None
            if "\r" in text or (last is not None and (last.end_lineno or 0) > len(lines)):
                self._for_rows = None
            else:
                self._for_rows = [i for i, line in enumerate(lines, 1)
                                  if "for" in line or ":=" in line]
        return self._for_rows

    def _store_levels(self, body, is_target, function, klass, depth):
        """[(level, evidence)] of the values `body` stores into `is_target`'s targets, None
        where one is not followed or may exist off CUDA, [] where nothing is stored."""
        levels = []
        key = getattr(is_target, "key", None)
        entries = self._store_nodes(body) if key is None else self._stores_into(body, key)
        for n, level, evidence in entries:
            for v in self._assigned(n, is_target):
                if v is None:
                    return None
                if _is_none(v) or (self._truth and isinstance(v, ast.Constant)
                                   and not v.value):
                    continue
                if level is not None:  # stored under a CUDA test
                    levels.append((level, evidence))
                    continue
                lv = self.value_level(v, function, klass, depth + 1)
                if lv is None and self._truth:  # a flag: `_is_cuda and not disabled`
                    on_true = self._test_level(v, function, klass)[0]  # chains: `a and _is_hip`
                    lv = None if on_true is None else (on_true, v)
                if lv is None:
                    return None
                levels.append(lv)
        return levels

    @staticmethod
    def _joined(levels):
        if not levels:
            return None
        return joined_level(levels), levels[0][1]

    def _name_level(self, name, function, klass, depth):
        scope = function if function is not None else self.f.tree
        return self._memo(self._names, (id(scope), name, self._truth),
                          lambda: self._name_level_of(name, function, klass, depth))

    def _name_level_of(self, name, function, klass, depth):
        def is_name(t):
            return isinstance(t, ast.Name) and t.id == name

        is_name.key = ("name", name)

        if function is not None:
            a = function.args
            params = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs,
                                       *(y for y in (a.vararg, a.kwarg) if y is not None))]
            passed = []
            if name in params:
                passed = self._passed_levels(function, klass, name, depth)
                if passed is None:
                    return None  # a parameter: its callers choose its value
            levels = self._store_levels(function.body, is_name, function, klass, depth)
            if levels is not None and name in params:
                return self._joined(passed + levels)
            if levels == [] and not any(isinstance(n, (ast.Global, ast.Nonlocal))
                                        for n in self._own_statements(function)):
                outer = self._enclosing().get(id(function))
                if outer is not None:  # a closure's free name: the enclosing function's
                    return self._name_level(name, outer[0], outer[1], depth + 1)
                return self._name_level(name, None, None, depth + 1)  # a module name
            if levels is not None and any(
                    isinstance(n, ast.Nonlocal) and name in n.names
                    for d in self._own_statements(function) if isinstance(d, _FUNCS)
                    for n in statements(d)):
                return None  # a nested function stores into it too
        else:
            levels = self._store_levels(self.f.tree.body, is_name, None, None, depth)
            # the functions that declare it `global` store into it too (a cached singleton:
            # `global _s; if _s is None and is_cuda(): _s = torch.cuda.Stream()`)
            for fn in self._globals().get(name, ()):
                if levels is None:
                    break
                more = self._store_levels(fn.body, is_name, fn, None, depth)
                levels = None if more is None else levels + more
        return None if levels is None else self._joined(levels)

    def _attr_level(self, attr, klass, depth):
        """`self.attr` of `klass`: every value any method stores into it (and the class
        attribute of that name, its default)."""
        return self._memo(self._names, (id(klass), "self." + attr, self._truth),
                          lambda: self._attr_level_of(attr, klass, depth))

    def _attr_level_of(self, attr, klass, depth):
        def is_attr(t):
            return isinstance(t, ast.Attribute) and t.attr == attr \
                and isinstance(t.value, ast.Name) and t.value.id == "self"

        is_attr.key = ("self", attr)

        levels = []
        for st in klass.body:
            if isinstance(st, _FUNCS):
                found = self._store_levels(st.body, is_attr, st, klass, depth)
            elif isinstance(st, ast.ClassDef):
                continue
            else:
                found = self._store_levels(
                    [st], lambda t: isinstance(t, ast.Name) and t.id == attr, None, klass,
                    depth)
            if found is None:
                return None
            levels += found
        return self._joined(levels)

    @staticmethod
    def _assigned(node, is_target):
        """The values `node` assigns to a target `is_target` accepts; None for a store the
        value of which is not followed (augmented, unpacked, a loop or `with` target, `:=`,
        a deletion)."""
        if isinstance(node, ast.Assign):
            out = []
            for t in node.targets:
                if is_target(t):
                    out.append(node.value)
                elif isinstance(t, (ast.Tuple, ast.List)) and any(
                        is_target(e) for e in ast.walk(t)):
                    out.append(None)
            return out
        if isinstance(node, ast.AnnAssign) and is_target(node.target):
            return [node.value if node.value is not None else ast.Constant(None)]
        if isinstance(node, ast.AugAssign) and is_target(node.target):
            return [None]
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and any(
                is_target(e) for e in ast.walk(node.target)):
            return [None]
        if isinstance(node, ast.withitem) and node.optional_vars is not None and any(
                is_target(e) for e in ast.walk(node.optional_vars)):
            return [None]
        if isinstance(node, ast.NamedExpr) and is_target(node.target):
            return [node.value]
        if isinstance(node, ast.Delete) and any(is_target(t) for t in node.targets):
            return [None]
        return []

    # --- tests ------------------------------------------------------------------------
    def value_test(self, test, function, klass):
        """(polarity, Reason): +1 where the test is true only if a value that exists only on
        CUDA (or a CUDA-alike platform) is there (`s is not None`, `s`, `x and s`), -1 where
        it is false only then (`s is None`); None otherwise. The Reason's principle is
        `cuda-value`, or `cuda-alike-guard` for a CUDA-alike value (the API rules only)."""
        found = self._value_polarity(test, function, klass)
        if found is None:
            return None
        pol, (level, evidence) = found
        return pol, value_reason(level, evidence, test, self.f.path)

    def _value_polarity(self, test, function, klass):
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            found = self._value_polarity(test.operand, function, klass)
            return None if found is None else (-found[0], found[1])
        if isinstance(test, ast.BoolOp):
            want = 1 if isinstance(test.op, ast.And) else -1
            every = []
            for v in test.values:
                found = self._value_polarity(v, function, klass)
                if found is not None and found[0] == want:
                    return found
                every.append(found)
            # `_is_cuda or (env and _use_hip)`: true only where one operand is, each of them
            # only on CUDA or ROCm (and `not a and not b` false only there)
            if all(f is not None and f[0] == -want for f in every):
                return -want, (joined_level([f[1] for f in every]), every[0][1][1])
            return None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 \
                and _is_none(test.comparators[0]):
            op = test.ops[0]
            pol = 1 if isinstance(op, (ast.IsNot, ast.NotEq)) else \
                -1 if isinstance(op, (ast.Is, ast.Eq)) else 0
            if not pol:
                return None
            truth, self._truth = self._truth, False  # `is None`: False is no None
            try:
                lv = self.value_level(test.left, function, klass)
            finally:
                self._truth = truth
            return None if lv is None else (pol, lv)
        if isinstance(test, (ast.Name, ast.Attribute)):
            truth, self._truth = self._truth, True  # a flag true only on CUDA counts too
            try:
                lv = self.value_level(test, function, klass)
            finally:
                self._truth = truth
            return None if lv is None else (1, lv)
        return None
