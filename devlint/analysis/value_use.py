"""Functions that use a value made only on CUDA on every path
(`devlint.evidence.uses_cuda_value`): the statements a function runs before it can return,
and the uses there of a name or `self` attribute that `analysis.flow` shows to hold only such
a value or None (`v.attr`, `v[i]`, `v(...)`). Mixed into the triage descent beside
`ValueFlow`, which asks `uses_cuda_value` about each function that stands over candidates."""
from __future__ import annotations

import ast

from devlint.analysis.model import _FUNCS
from devlint.analysis.walk import children
from devlint.evidence.uses_cuda_value import uses_value_reason

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LEAVES = (ast.Return, ast.Yield, ast.YieldFrom)


def _eager(node):
    """The nodes of expression `node` that are evaluated whenever it is: not the right operands
    of `and`/`or`, the arms of a conditional expression, a lambda's body, or a comprehension's
    element and later clauses (only its first iterable)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, ast.BoolOp):
            stack.append(n.values[0])
        elif isinstance(n, ast.IfExp):
            stack.append(n.test)
        elif isinstance(n, _COMPREHENSIONS):
            stack.append(n.generators[0].iter)
        else:
            stack.extend(children(n))


def _leaves(stmt) -> bool:
    """`stmt` may return or yield (nested functions and classes aside)."""
    stack = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, _LEAVES):
            return True
        if isinstance(n, (*_FUNCS, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(children(n))
    return False


_NESTED = (*_FUNCS, ast.ClassDef, ast.Lambda)
_child_fields_memo: dict = {}


def _child_fields(cls) -> tuple:
    """The fields of node class `cls` that may hold nodes the readers of `_own` look at: not
    `ctx` or `op` (the load/store context and operator singletons, which none reads)."""
    fields = _child_fields_memo.get(cls)
    if fields is None:
        fields = _child_fields_memo[cls] = tuple(f for f in cls._fields
                                                 if f not in ("ctx", "op"))
    return fields


def _own(fn) -> list:
    """The nodes of a function's body, not those of nested functions or classes (nor the
    context and operator singletons), in no particular order: its readers build sets or ask
    whether any node qualifies. One loop over a growing list instead of the generators of
    `ast.iter_child_nodes` (a third of `uses_cuda_value`'s time in a large module)."""
    out = list(fn.body)
    append = out.append
    for n in out:
        if isinstance(n, _NESTED):
            continue
        for name in _child_fields(n.__class__):
            value = getattr(n, name, None)
            if value.__class__ is list:
                for child in value:
                    if isinstance(child, ast.AST):
                        append(child)
            elif isinstance(value, ast.AST):
                append(value)
    return out


def _alias(node) -> bool:
    """`s = self.alt_stream`, `s = streams[0]`: a store that only names a value made
    elsewhere (the targets of every other store count as made here)."""
    v = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
    while isinstance(v, ast.Subscript):
        v = v.value
    return isinstance(v, ast.Name) or (isinstance(v, ast.Attribute)
                                       and isinstance(v.value, ast.Name)
                                       and v.value.id == "self")


def _targets(node):
    """The names and attributes `node` stores into (`x`, `self.x`), as written."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        yield node.id  # what `ast.unparse` writes of a name
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
        yield ast.unparse(node)
    elif isinstance(node, ast.Global):
        yield from node.names


def _used(node):
    """The object `node` uses, where None would fail there: `v` of `v.attr`, `v[i]`, `v(...)`
    (a dunder attribute exists on None)."""
    if isinstance(node, ast.Attribute) and not (node.attr.startswith("__")
                                                 and node.attr.endswith("__")):
        return node.value
    if isinstance(node, ast.Subscript):
        return node.value
    if isinstance(node, ast.Call):
        return node.func
    return None


def _suppresses(item) -> bool:
    """A `with` item that may swallow the error (`contextlib.suppress(...)`)."""
    f = item.context_expr.func if isinstance(item.context_expr, ast.Call) else None
    return getattr(f, "attr", getattr(f, "id", "")) == "suppress"


def _free_test(test, klass) -> bool:
    """`ValueFlow.value_test(test, ...)` is None without asking its memo (or its budget):
    the forms `_value_polarity` follows are absent or end in a value `value_level` answers
    None at once (an attribute not of `self`, a constant); calls, names, conditional and
    subscripted values are not free."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _free_test(test.operand, klass)
    if isinstance(test, ast.BoolOp):
        return all(_free_test(v, klass) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None \
            and isinstance(test.ops[0], (ast.IsNot, ast.NotEq, ast.Is, ast.Eq)):
        return _free_value(test.left, klass)
    if isinstance(test, (ast.Name, ast.Attribute)):
        return _free_value(test, klass)
    return True


def _free_value(node, klass) -> bool:
    """`ValueFlow.value_level(node, ...)` answers None at once."""
    if isinstance(node, (ast.Call, ast.IfExp, ast.Subscript, ast.Name)):
        return False
    if isinstance(node, ast.Attribute):
        return not (isinstance(node.value, ast.Name) and node.value.id == "self"
                    and klass is not None)
    return True


class ValueUse:
    """Needs `ValueFlow.value_level` and `self.f`."""

    def uses_cuda_value(self, fn, klass):
        """The Reason where `fn` uses a value made only on CUDA (else None) on every path it
        can return by, a value it does not store itself (then its own code makes it, under
        its own test, and what runs before that test runs anywhere); None otherwise."""
        nodes = _own(fn)
        aliased = {id(t) for n in nodes if _alias(n)
                   for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
        self._stored_here = {t for n in nodes if id(n) not in aliased for t in _targets(n)}
        if not self._may_ask(nodes, klass):
            return None  # `_first_use` would find nothing and change nothing
        found = self._first_use(fn.body, fn, klass)
        if not found:
            return None
        node, (level, evidence) = found
        return uses_value_reason(level, ast.unparse(node), evidence, self.f.path)

    def _may_ask(self, nodes, klass) -> bool:
        """Some node of the function's own `nodes` (a superset of those `_first_use` reads)
        could ask `ValueFlow` something: a use of a name or `self` attribute that `_use_in`
        does not skip (the instance, an imported name, one stored here), or an `if` or
        `assert` test that could reach the flow's memo (`_free_test`). Where none can,
        `_first_use` is not run (a large generated module: 7,142 functions walked three
        more times each per lint, to find nothing)."""
        aliases, stored = self.f.aliases, self._stored_here
        for n in nodes:
            v = _used(n)
            if isinstance(v, ast.Name):
                if v.id != "self" and v.id not in aliases and v.id not in stored:
                    return True
            elif isinstance(v, ast.Attribute) and klass is not None \
                    and isinstance(v.value, ast.Name) and v.value.id == "self" \
                    and "self." + v.attr not in stored:  # as `ast.unparse` writes it
                return True
            if isinstance(n, (ast.Assert, ast.If)) and not _free_test(n.test, klass):
                return True
        return False

    def _first_use(self, body, fn, klass):
        for st in body:
            if isinstance(st, (*_FUNCS, ast.ClassDef)):
                continue
            if isinstance(st, (ast.With, ast.AsyncWith)):
                for item in st.items:
                    found = self._use_in(item.context_expr, fn, klass)
                    if found:
                        return found
                if any(_suppresses(item) for item in st.items):
                    return None
                found = self._first_use(st.body, fn, klass)
                if found is not None:  # a use, or a return before one (False)
                    return found
                continue
            if isinstance(st, (ast.Assert, ast.If)) and self.value_test(st.test, fn, klass):
                return None  # `assert s is not None`: cuda-value's own evidence from here on
            if isinstance(st, (ast.If, ast.While)):
                roots = [st.test]
            elif isinstance(st, (ast.For, ast.AsyncFor)):
                roots = [st.iter]
            elif isinstance(st, ast.Try) or type(st).__name__ in ("TryStar", "Match"):
                roots = [getattr(st, "subject", None)] if hasattr(st, "subject") else []
            else:
                roots = [st]
            for root in roots:
                found = self._use_in(root, fn, klass)
                if found:
                    return found
            if isinstance(st, ast.If) and st.orelse:  # used in both arms, before they return
                arms = [self._first_use(st.body, fn, klass),
                        self._first_use(st.orelse, fn, klass)]
                if all(arms):
                    return arms[0]
            if _leaves(st):
                return False
        return None

    def _use_in(self, root, fn, klass):
        """(used node, (level, evidence)) of the first object `root` always uses that holds
        only a value made on CUDA, or None."""
        for n in _eager(root):
            if isinstance(n, (ast.Lambda, *_COMPREHENSIONS)):
                continue
            v = _used(n)
            if isinstance(v, ast.Name) and (v.id == "self" or v.id in self.f.aliases):
                continue  # the instance, an imported module or name
            if isinstance(v, ast.Name) or (
                    isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name)
                    and v.value.id == "self" and klass is not None):
                written = v.id if isinstance(v, ast.Name) else "self." + v.attr  # unparsed
                if written in self._stored_here:
                    continue  # made here: the function's own test stands before its use
                lv = self.value_level(v, fn, klass)
                if lv is not None:
                    return v, lv
        return None
