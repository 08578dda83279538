"""The triage descent: walks only the statements that hold hot rows, keeping the context
stack (function, class, the CUDA guards and platform ladders around each node), and records
every candidate node in the file's `FileFacts`."""
from __future__ import annotations

import ast
import bisect

from devlint.analysis.model import (
    _EXITS, _FUNCS, INTERESTING_STRING, FileFacts, Where, collect_imports,
)
from devlint.evidence.cuda_guard import (
    _PLATFORM_CUDA_QUERIES, _TORCH_CUDA_QUERIES, _alike_polarity, _is_type_checking, guard_reason,
)
from devlint.evidence.not_a_device import type_checking_reason
from devlint.evidence.platform_ladder import (
    _CUDA_ARM_QUERIES, _OTHER_PLATFORM_MODULES, _OTHER_PLATFORM_QUERIES, ladder_reason,
)


class Descent:
    """Walks only the statements that contain hot rows, keeping the context stack."""

    def __init__(self, facts: FileFacts, hot: list[int]):
        from devlint.profiles.torch_api import project_api_names

        self.f = facts
        self.hot = hot
        self.query_alias: dict = {}
        self.project_api = project_api_names()  # a project's own CUDA-only helpers
        self.dispatch_arms: set = set()  # ids of `if`s that are a dispatch's CUDA arm
        self.chained: set = set()  # ids of `if`s already seen as part of a chain

    def is_hot(self, node) -> bool:
        first = node.lineno
        for d in getattr(node, "decorator_list", ()):  # decorators stand above `def`/`class`
            first = min(first, d.lineno)
        i = bisect.bisect_left(self.hot, first)
        return i < len(self.hot) and self.hot[i] <= (node.end_lineno or node.lineno)

    def run(self):
        self.block(self.f.tree.body, Where(None, None, False, None, None, "module"))

    # --- statements ----------------------------------------------------------------
    def block(self, body, where: Where):
        for stmt in body:
            if not self.is_hot(stmt):
                # an early exit on "not CUDA" guards the rest of the block
                where = self._after_exit_guard(stmt, where)
                continue
            self.statement(stmt, where)
            where = self._after_exit_guard(stmt, where)

    def _after_exit_guard(self, stmt, where: Where) -> Where:
        """`if not <cuda>: return` and `assert <cuda>` guard the rest of the block."""
        polarity = 0
        if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                and self._exits(stmt.body[-1]):
            polarity = -self.cuda_test(stmt.test)[0]
        elif isinstance(stmt, ast.Assert):
            polarity, tensor = self.cuda_test(stmt.test)
            if tensor is not None:
                polarity = 0  # `assert t.is_cuda` is DL201's finding, not a platform guard
        if polarity > 0:
            return Where(where.function, where.klass, guard_reason("exit", stmt, self.f.path),
                         where.tensor_guard, None, where.level)
        return where

    def _platform_query(self, test) -> str | None:
        """"cuda" or "other" for a bare platform query (`current_platform.is_xpu()`,
        `torch.cuda.is_available()`), else None."""
        if not isinstance(test, ast.Call):
            return None
        func = test.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        q = self.f.qualname(func) or ""
        if name in _OTHER_PLATFORM_QUERIES or (
                name == "is_available" and q.startswith(_OTHER_PLATFORM_MODULES)):
            return "other"
        if name in _CUDA_ARM_QUERIES or q in _CUDA_ARM_QUERIES:
            return "cuda"
        return None

    def _mark_dispatch(self, head: ast.If) -> None:
        """Record the CUDA arm of an if/elif chain that also has an arm for another platform
        (the chain is seen once, from its head)."""
        if id(head) in self.chained:
            return
        arms = []
        node = head
        while isinstance(node, ast.If):
            self.chained.add(id(node))
            arms.append(node)
            node = node.orelse[0] if len(node.orelse) == 1 else None
        kinds = [self._platform_query(a.test) for a in arms]
        if "other" in kinds:
            for arm, kind in zip(arms, kinds):
                if kind == "cuda":
                    self.dispatch_arms.add(id(arm))

    def _query_aliases(self, body):
        """`is_cuda = current_platform.is_cuda_alike()` makes `is_cuda` a guard too."""
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                    and isinstance(st.targets[0], ast.Name):
                p, _ = self.cuda_test(st.value)
                if p:
                    self.query_alias[st.targets[0].id] = p

    def _exits(self, stmt) -> bool:
        if isinstance(stmt, _EXITS):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            q = self.f.qualname(stmt.value.func) or ""
            return q in ("pytest.skip", "pytest.exit", "sys.exit", "unittest.SkipTest")
        return False

    def statement(self, stmt, where: Where):
        here = Where(where.function, where.klass, where.guarded, where.tensor_guard, stmt,
                     where.level)
        if isinstance(stmt, _FUNCS):
            collect_imports([s for s in stmt.body if isinstance(s, (ast.Import, ast.ImportFrom))],
                            self.f.aliases)
            self._query_aliases(stmt.body)
            for d in stmt.decorator_list:
                self.expr(d, stmt, here)
            self.arguments(stmt.args, stmt, here)
            if stmt.returns is not None:
                self.expr(stmt.returns, stmt, here, annotation=True)
            inner = Where(stmt, where.klass, where.guarded, where.tensor_guard, None, "function")
            self.block(stmt.body, inner)
        elif isinstance(stmt, ast.ClassDef):
            for e in (*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)):
                self.expr(e, stmt, here)
            self.block(stmt.body, Where(None, stmt, where.guarded, where.tensor_guard, None,
                                        "class"))
        elif isinstance(stmt, ast.If):
            self.f.ifs.append(stmt)
            self.f.where[id(stmt)] = here
            self.expr(stmt.test, stmt, here)
            polarity, tensor = self.cuda_test(stmt.test)
            why = guard_reason("if", stmt.test, self.f.path)
            if _is_type_checking(stmt.test):
                polarity, tensor = 1, None  # stubs for type checkers never run
                why = type_checking_reason(stmt.test, self.f.path)
            self._mark_dispatch(stmt)
            if id(stmt) in self.dispatch_arms:
                polarity, tensor = 1, None
                why = ladder_reason(stmt, self.f.path)
            body_w = self._guarded(where, polarity > 0, tensor, why)
            else_w = self._guarded(where, polarity < 0, None,
                                   guard_reason("else", stmt.test, self.f.path))
            self.block(stmt.body, body_w)
            self.block(stmt.orelse, else_w)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.expr(stmt.target, stmt, here)
            self.expr(stmt.iter, stmt, here)
            self.block(stmt.body, where)
            self.block(stmt.orelse, where)
        elif isinstance(stmt, ast.While):
            self.expr(stmt.test, stmt, here)
            self.block(stmt.body, where)
            self.block(stmt.orelse, where)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.expr(item.context_expr, stmt, here)
                if item.optional_vars is not None:
                    self.expr(item.optional_vars, stmt, here)
            self.block(stmt.body, where)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.block(stmt.body, where)
            for h in stmt.handlers:
                if h.type is not None:
                    self.expr(h.type, h, here)
                self.block(h.body, where)
            self.block(stmt.orelse, where)
            self.block(stmt.finalbody, where)
        elif type(stmt).__name__ == "Match":
            self.expr(stmt.subject, stmt, here)
            for c in stmt.cases:
                if c.guard is not None:
                    self.expr(c.guard, c, here)
                self.block(c.body, where)
        else:
            if isinstance(stmt, ast.Assert):
                self.f.asserts.append(stmt)
                self.f.where[id(stmt)] = here
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self.f.assigns.append(stmt)
                self.f.where[id(stmt)] = here
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and where.level == "function":
                collect_imports([stmt], self.f.aliases)
            for child_field, child in ast.iter_fields(stmt):
                if isinstance(child, ast.AST):
                    self.expr(child, stmt, here, annotation=child_field == "annotation")
                elif isinstance(child, list):
                    for c in child:
                        if isinstance(c, ast.AST):
                            self.expr(c, stmt, here)

    def arguments(self, args: ast.arguments, owner, where: Where):
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                  *(x for x in (args.vararg, args.kwarg) if x is not None)):
            if a.annotation is not None:
                self.expr(a.annotation, owner, where, annotation=True)
        for d in (*args.defaults, *(d for d in args.kw_defaults if d is not None)):
            self.expr(d, owner, where)

    @staticmethod
    def _guarded(where: Where, on: bool, tensor, why) -> Where:
        """`where` under a guard: a platform guard puts its reason (`why`) on it; a tensor
        guard (`if t.is_cuda:`) only gives the fix its device."""
        if not on:
            return where
        return Where(where.function, where.klass, why if tensor is None else where.guarded,
                     tensor if tensor is not None else where.tensor_guard, None, where.level)

    # --- guards ----------------------------------------------------------------------
    def cuda_test(self, test) -> tuple[int, ast.expr | None]:
        """+1: the test establishes CUDA when true; -1: when false; 0: neither.
        Also returns `t` for `t.is_cuda` tests (a tensor guard, which gives the fix its device)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            p, _ = self.cuda_test(test.operand)
            return -p, None
        if isinstance(test, ast.BoolOp):
            results = [self.cuda_test(v) for v in test.values]
            if isinstance(test.op, ast.And):
                for p, t in results:
                    if p > 0:
                        return 1, t
                return 0, None
            if all(p < 0 for p, _ in results):
                return -1, None
            if all(p > 0 for p, _ in results):
                return 1, None
            return 0, None
        if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
            return 1, test.value
        if isinstance(test, ast.Name) and test.id in self.query_alias:
            return self.query_alias[test.id], None
        if isinstance(test, ast.Call):
            q = self.f.qualname(test.func)
            if q in _TORCH_CUDA_QUERIES:
                return 1, None
            func = test.func
            if isinstance(func, ast.Attribute) and func.attr in _PLATFORM_CUDA_QUERIES:
                return 1, None
            if isinstance(func, ast.Name) and func.id in _PLATFORM_CUDA_QUERIES:
                return 1, None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op = test.ops[0]
            sides = (test.left, test.comparators[0])
            if any(isinstance(s, ast.Constant) and s.value == "cuda" for s in sides):
                if isinstance(op, (ast.Eq, ast.Is)):
                    return 1, None
                if isinstance(op, (ast.NotEq, ast.IsNot)):
                    return -1, None
            if isinstance(op, ast.In) and isinstance(test.left, ast.Constant) \
                    and test.left.value == "cuda":
                return 1, None  # "cuda" in str(device)
        return 0, None

    # --- expressions -------------------------------------------------------------------
    def expr(self, root, parent, where: Where, annotation: bool = False):
        f = self.f
        parents = f.parent
        wmap = f.where
        w = Where(where.function, where.klass, where.guarded, where.tensor_guard,
                  where.statement, where.level, annotation) if annotation else where
        stack = [(root, parent, w)]
        while stack:
            node, par, w = stack.pop()
            parents[id(node)] = par
            t = type(node)
            if t is ast.Call:
                f.calls.append(node)
                wmap[id(node)] = w
            elif t is ast.Constant:
                v = node.value
                if isinstance(v, str) and len(v) <= 20 and INTERESTING_STRING.fullmatch(v):
                    f.strings.append(node)
                    wmap[id(node)] = w
                elif isinstance(v, str) and v.startswith("torch.cuda.") and len(v) < 64:
                    f.api_strings.append(node)
                    wmap[id(node)] = w
                continue
            elif t is ast.JoinedStr:
                f.joined.append(node)
                if node.values and isinstance(node.values[0], ast.Constant) \
                        and isinstance(node.values[0].value, str) \
                        and node.values[0].value.startswith("cuda:") \
                        and (node.values[0].value == "cuda:" or len(node.values) == 1):
                    f.fstrings.append(node)
                    wmap[id(node)] = w
            elif t is ast.BinOp:
                left = node.left
                if isinstance(node.op, (ast.Mod, ast.Add)) and isinstance(left, ast.Constant) \
                        and isinstance(left.value, str) and left.value.startswith("cuda:"):
                    f.fstrings.append(node)
                    wmap[id(node)] = w
            elif t is ast.Attribute or t is ast.Name:
                if not (type(par) is ast.Attribute and par.value is node):
                    q = f.qualname(node)
                    if q is not None and (q == "torch.cuda" or q.startswith("torch.cuda.")
                                          or q in self.project_api):
                        f.torch_refs.append((node, q))
                        wmap[id(node)] = w
                if t is ast.Name:
                    continue
            elif t is ast.IfExp:
                f.ifexps.append(node)
                wmap[id(node)] = w
                # the arms of `a if <cuda test> else b` are guarded like an if statement
                p, tensor = self.cuda_test(node.test)
                kind = "if"
                if not p:
                    # SPEC 3: a literal whose own expression tests for a CUDA-alike platform
                    # (`f"cuda:{i}" if is_cuda_alike() else "cpu"`) says "cuda" on purpose
                    p = _alike_polarity(node.test)
                    kind = "alike"
                path = f.path
                stack.append((node.test, node, w))
                stack.append((node.body, node, self._guarded(
                    w, p > 0, tensor, guard_reason(kind, node.test, path))))
                stack.append((node.orelse, node, self._guarded(
                    w, p < 0, None, guard_reason("else", node.test, path))))
                continue
            elif t is ast.Lambda:
                stack.append((node.body, node, w))
                continue
            for child in ast.iter_child_nodes(node):
                stack.append((child, node, w))
