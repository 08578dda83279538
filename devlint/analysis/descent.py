"""The triage descent: walks only the statements that hold hot rows, keeping the context
stack (function, class, the CUDA guards and platform ladders around each node), and records
every candidate node in the file's `FileFacts`."""
from __future__ import annotations

import ast
import bisect

from devlint.analysis.flow import ValueFlow
from devlint.analysis.flow_uses import PrivateUses
from devlint.analysis.method_uses import MethodUses
from devlint.analysis.value_use import ValueUse
from devlint.analysis.guards import GuardTests, _called_name
from devlint.analysis.model import (
    _FUNCS, INTERESTING_STRING, VISIBILITY_PREFIX, FileFacts, Where, collect_imports,
)
from devlint.evidence import several_platforms
from devlint.evidence.capability import called_at_import, met_if_false, module_names
from devlint.evidence.cuda_only_arm import arm_reason, cuda_library_call
from devlint.evidence.library_gate import exit_reason as library_exit_reason
from devlint.evidence.cuda_alike_guard import alike_guard_reason, alike_polarity
from devlint.evidence.cuda_graph_capture import capture_query_reason
from devlint.evidence.cuda_guard import (
    _alike_polarity, _is_type_checking, guard_reason, loop_exit_test,
)
from devlint.evidence.not_a_device import type_checking_reason
from devlint.evidence.rocm_guard import rocm_guard_reason, rocm_polarity
from devlint.evidence.platform_ladder import (
    exits_for_other_accelerator, ladder_reason, ladder_test_reason, other_accelerator_test,
)


_DISPLAYS = (ast.Tuple, ast.List, ast.Set, ast.Dict)


def _cpu_device(node) -> bool:
    """`"cpu"` or `torch.device("cpu")`: the CPU as a device value."""
    if isinstance(node, ast.Call) and node.args and not node.keywords \
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "device":
        node = node.args[0]
    return isinstance(node, ast.Constant) and node.value == "cpu"


class Descent(GuardTests, ValueFlow, PrivateUses, MethodUses, ValueUse):
    """Walks only the statements that contain hot rows, keeping the context stack."""

    def __init__(self, facts: FileFacts, hot: list[int]):
        from devlint.profiles.torch_api import project_api_names

        self.f = facts
        self.hot = hot
        self.query_alias: dict = {}
        self.build_aliases: set = set()  # flags that ask for a CUDA toolkit version
        self.project_api = project_api_names()  # a project's own CUDA-only helpers
        self.dispatch_arms: set = set()  # ids of `if`s that are a dispatch's CUDA arm
        self.chained: set = set()  # ids of `if`s already seen as part of a chain
        self.ladder_tests: dict = {}  # id(if) -> Reason: the test of a ladder's arm
        self.ladder_else: dict = {}  # id(last if of a ladder) -> Reason for its final else
        self.helpers: dict = {}  # name -> "query" | "requires" | "requires+query"
        self.arm_reasons: dict = {}  # id(if) -> Reason of a CUDA arm other than a ladder's
        self.bound_marks: dict = {}  # name -> the skip mark bound to it at module level
        self.module_gate = None  # the Reason of a `pytestmark` that requires CUDA
        self.method_gates: dict = {}  # id(class) -> the Reason gating its methods' bodies
        self._flow_init()

    def is_hot(self, node) -> bool:
        first = node.lineno
        for d in getattr(node, "decorator_list", ()):  # decorators stand above `def`/`class`
            first = min(first, d.lineno)
        i = bisect.bisect_left(self.hot, first)
        return i < len(self.hot) and self.hot[i] <= (node.end_lineno or node.lineno)

    def run(self):
        body = self.f.tree.body
        self._query_aliases(body)
        self._imported_flags(body)
        self._cuda_helpers(body)
        self._bound_marks(body)
        self.module_gate = self._module_gate(body)
        self.block(body, Where(None, None, False, None, None, "module"))

    def block(self, body, where: Where):
        self._mark_siblings(body)
        exits_for_other = None  # an earlier `if <other accelerator>: return` of this block
        for stmt in body:
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                    and self._exits(stmt.body[-1]):
                if exits_for_other is None and exits_for_other_accelerator(stmt.test,
                                                                           self.f.qualname):
                    exits_for_other = stmt
                elif exits_for_other is not None and self._platform_query(stmt.test) != "other" \
                        and any(self._sides(stmt.test)[:2]):
                    # `if not torch.cuda.is_available(): return` after the other platforms
                    # returned: the CUDA arm of a ladder written with early exits
                    self.ladder_tests[id(stmt)] = ladder_test_reason(exits_for_other,
                                                                     self.f.path)
            if not self.is_hot(stmt):
                # an early exit on "not CUDA" guards the rest of the block
                where = self._after_exit_guard(stmt, where)
                continue
            self.statement(stmt, where)
            where = self._after_exit_guard(stmt, where)

    def _after_exit_guard(self, stmt, where: Where) -> Where:
        """`if not <cuda>: return` and `assert <cuda>` guard the rest of the block; so does
        `if get_device_capability()[0] < 10: pytest.skip(...)` (the rest runs only on such a
        GPU: `devlint.evidence.capability`)."""
        polarity = 0
        kind = "exit"
        if not where.guarded and isinstance(stmt, (ast.For, ast.AsyncFor)):
            test = loop_exit_test(stmt, lambda t: self._sides(t)[1])  # each element's exit
            if test is not None:
                return Where(where.function, where.klass, guard_reason("loop", test, self.f.path),
                             where.tensor_guard, None, where.level)
        if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                and self._exits(stmt.body[-1]):
            polarity = 1 if self._sides(stmt.test)[1] or met_if_false(
                stmt.test, module_names(self.f.tree)) else 0
        elif isinstance(stmt, ast.Assert):
            on_true, _, tensor = self._sides(stmt.test)
            # `assert t.is_cuda` is DL201's finding, not a platform guard
            polarity = 1 if on_true and tensor is None else 0
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and self.helpers.get(_called_name(stmt.value)) in ("requires",
                                                                    "requires+query"):
            polarity, kind = 1, "helper"  # `_require_cuda()`
        if polarity > 0:
            return Where(where.function, where.klass, guard_reason(kind, stmt, self.f.path),
                         where.tensor_guard, None, where.level)
        if not where.guarded and (isinstance(stmt, ast.Assert) or (
                isinstance(stmt, ast.If) and not stmt.orelse and stmt.body
                and self._exits(stmt.body[-1]))):
            # `assert s is not None`, `if s is None: return` of a value made only on CUDA
            found = self.value_test(stmt.test, where.function, where.klass)
            if found is not None and found[0] == (1 if isinstance(stmt, ast.Assert) else -1):
                return Where(where.function, where.klass, found[1], where.tensor_guard, None,
                             where.level)
        if not where.guarded and isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                and self._exits(stmt.body[-1]) and alike_polarity(stmt.test) < 0:
            # `if not is_cuda_alike(): return`: the torch.cuda API rules only
            return Where(where.function, where.klass,
                         alike_guard_reason(stmt.test, self.f.path, "exit"),
                         where.tensor_guard, None, where.level)
        if not where.guarded and isinstance(stmt, ast.Assert) and alike_polarity(stmt.test) > 0:
            # `assert current_platform.is_cuda_alike()`: the same, as an assert
            return Where(where.function, where.klass,
                         alike_guard_reason(stmt.test, self.f.path, "assert"),
                         where.tensor_guard, None, where.level)
        if not where.guarded and isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                and self._exits(stmt.body[-1]):
            # `if not HAVE_FA3: pytest.skip(...)`: a library of GPU kernels only (library_gate)
            lib = library_exit_reason(stmt.test, self.f.tree, self.f.path)
            if lib is not None:
                return Where(where.function, where.klass, lib, where.tensor_guard, None,
                             where.level)
        return where

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
            gate = self._skip_gate(stmt) or (
                (self.module_gate if stmt.name not in called_at_import(self.f.tree) else None)
                if where.level == "module" else
                self._method_gate(where.klass, stmt.name) if where.level == "class" else None
            ) or (not where.guarded and where.level == "module" and self.used_on_cuda(stmt)) \
                or (not where.guarded and where.level == "class"  # self-called-on-cuda
                    and self.method_used_on_cuda(where.klass, stmt)) \
                or (not where.guarded and self.uses_cuda_value(stmt, where.klass))
            inner = Where(stmt, where.klass, gate or where.guarded, where.tensor_guard, None,
                          "function")
            self.block(stmt.body, inner)
        elif isinstance(stmt, ast.ClassDef):
            for e in (*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)):
                self.expr(e, stmt, here)
            gate = self._skip_gate(stmt) or (
                not where.guarded and self.used_on_cuda(stmt)) or None
            if gate is None:
                # a gate in the set-up, or the module's `pytestmark`: the methods' bodies run
                # only past it (the class body itself runs at import)
                self.method_gates[id(stmt)] = self._setup_gate(stmt) or (
                    self.module_gate if where.level in ("module", "class") else None) \
                    or self._all_tests_gate(stmt)
            self.block(stmt.body, Where(None, stmt, gate or where.guarded, where.tensor_guard,
                                        None, "class"))
        elif isinstance(stmt, ast.If):
            self.f.ifs.append(stmt)
            self._mark_dispatch(stmt)
            if id(stmt) in self.ladder_tests:  # one arm's test of a platform ladder
                here = self._guarded(here, True, None, self.ladder_tests[id(stmt)])
            self.f.where[id(stmt)] = here
            self.expr(stmt.test, stmt, here)
            on_true, on_false, tensor = self._sides(stmt.test)
            why = guard_reason("if", stmt.test, self.f.path)
            if _is_type_checking(stmt.test):
                on_true, tensor = True, None  # stubs for type checkers never run
                why = type_checking_reason(stmt.test, self.f.path)
            if id(stmt) in self.dispatch_arms:
                on_true, tensor = True, None
                why = self.arm_reasons.get(id(stmt)) or ladder_reason(stmt, self.f.path)
            value_else = value_alike = None
            if not on_true and not on_false and not where.guarded:
                # a test of a value made only on CUDA (`devlint.evidence.cuda_value`)
                found = self.value_test(stmt.test, where.function, where.klass)
                if found is not None and found[1].principle != "cuda-value":
                    value_alike = found
                elif found is not None and found[0] > 0:
                    on_true, tensor, why = True, None, found[1]
                elif found is not None:
                    on_false, value_else = True, found[1]
            if not on_true:
                used = cuda_library_call(stmt.body, self.f.qualname)
                if used is not None:  # the arm calls a CUDA-only library
                    on_true, tensor, why = True, None, arm_reason(*used, self.f.path)
            body_w = self._guarded(where, on_true, tensor, why)
            else_why = value_else or guard_reason("else", stmt.test, self.f.path)
            if id(stmt) in self.ladder_else:
                on_false, else_why = True, self.ladder_else[id(stmt)]
            else_w = self._guarded(where, on_false and not on_true, None, else_why)
            alike = 0 if where.guarded else alike_polarity(stmt.test)
            if alike > 0 and not on_true:  # the torch.cuda API rules only
                body_w = self._guarded(where, True, None,
                                       alike_guard_reason(stmt.test, self.f.path))
            elif alike < 0 and not on_false:
                else_w = self._guarded(where, True, None,
                                       alike_guard_reason(stmt.test, self.f.path))
            elif value_alike is not None and value_alike[0] > 0:  # the torch.cuda API only
                body_w = self._guarded(where, True, None, value_alike[1])
            elif value_alike is not None:
                else_w = self._guarded(where, True, None, value_alike[1])
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
                if id(stmt) in self.ladder_tests:  # a CUDA flag beside another platform's
                    here = self._guarded(here, True, None, self.ladder_tests[id(stmt)])
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

    def _rocm_operand(self, node: ast.BoolOp, where: Where):
        """The operand of the `and` `node` that holds only on ROCm (`is_hip()`, a flag
        derived from one: `evidence.rocm_guard`), or of the `or` that fails only there (`not
        is_hip()`); None otherwise (also under a guard)."""
        if where.guarded:
            return None
        want = 1 if isinstance(node.op, ast.And) else -1
        for v in node.values:
            if rocm_polarity(v) == want:
                return v
            if isinstance(v, (ast.Name, ast.Attribute)) or (
                    isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)
                    and isinstance(v.operand, (ast.Name, ast.Attribute))):
                found = self.value_test(v, where.function, where.klass)
                if found is not None and found[0] == want \
                        and found[1].principle == "rocm-guard":
                    return v
        return None

    @staticmethod
    def _guarded(where: Where, on: bool, tensor, why) -> Where:
        """`where` under a guard: the guard puts its reason (`why`) on it. A tensor's own
        CUDA test (`if t.is_cuda:`, `x if t.is_cuda else y`) establishes CUDA like a platform
        test (the body runs only where `t` is on CUDA: `devlint.evidence.cuda_guard`), and
        also gives the fix its device (`t.device`, what upstream fixes write, e.g.
        `mask.cuda()` -> `mask.to(xs_pad.device)`): the test stays DL202's finding where it
        chooses generic behaviour, and its fix rewrites the body with it."""
        if not on:
            return where
        return Where(where.function, where.klass, why,
                     tensor if tensor is not None else where.tensor_guard, None, where.level)

    # --- guards ----------------------------------------------------------------------
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
                if node.args and _called_name(node) == "param" and isinstance(
                        node.args[0], ast.Constant) and node.args[0].value in ("cuda", "cuda:0"):
                    # `pytest.param("cuda", marks=skipif(not torch.cuda.is_available()))`
                    why = guard_reason("param", node, f.path)
                    for k in node.keywords:
                        stack.append((k, node, self._guarded(w, True, None, why)))
                    for a in node.args:
                        stack.append((a, node, w))
                    stack.append((node.func, node, w))
                    continue
            elif t is ast.Constant:
                v = node.value
                if isinstance(v, str) and len(v) <= 20 and INTERESTING_STRING.fullmatch(v):
                    f.strings.append(node)
                    wmap[id(node)] = w
                elif isinstance(v, str) and v.startswith("torch.cuda.") and len(v) < 64:
                    f.api_strings.append(node)
                    wmap[id(node)] = w
                elif isinstance(v, str) and type(par) is not ast.JoinedStr \
                        and VISIBILITY_PREFIX.match(v):
                    f.env_prefixes.append(node)
                    wmap[id(node)] = w
                continue
            elif t is ast.JoinedStr:
                f.joined.append(node)
                if node.values and isinstance(node.values[0], ast.Constant) \
                        and isinstance(node.values[0].value, str) \
                        and VISIBILITY_PREFIX.match(node.values[0].value):
                    f.env_prefixes.append(node)
                    wmap[id(node)] = w
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
                if isinstance(node.op, ast.Add) and not isinstance(par, ast.BinOp):
                    why = several_platforms.collection_reason(node, f.path)
                    if why is not None:
                        w = self._guarded(w, True, None, why)
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
                rocm = 0 if p or w.guarded else rocm_polarity(node.test)
                if rocm:  # `"cuda" if is_hip() else "cpu"`: the AMD GPU's name
                    why = rocm_guard_reason(node.test, path)
                    stack.append((node.test, node, w))
                    stack.append((node.body, node, self._guarded(w, rocm > 0, None, why)))
                    stack.append((node.orelse, node, self._guarded(w, rocm < 0, None, why)))
                    continue
                stack.append((node.test, node, w))
                if p > 0 and tensor is not None and _cpu_device(node.orelse):
                    # `"cuda" if t.is_cuda else "cpu"` picks a device, CUDA or the CPU: the
                    # choice itself is the finding (DL106), not code a guard established;
                    # the tensor still gives its fix the device
                    stack.append((node.body, node, Where(
                        w.function, w.klass, w.guarded, tensor, w.statement, w.level,
                        w.annotation)))
                    stack.append((node.orelse, node, w))
                    continue
                stack.append((node.body, node, self._guarded(
                    w, p > 0, tensor, guard_reason(kind, node.test, path))))
                stack.append((node.orelse, node, self._guarded(
                    w, p < 0, None, guard_reason("else", node.test, path))))
                continue
            elif t is ast.Lambda:
                stack.append((node.body, node, w))
                continue
            elif t is ast.BoolOp:
                why = (several_platforms.test_reason(node, f.qualname, f.path)
                       or several_platforms.fallback_reason(node, f.path)
                       or self._capability_operand(node)
                       or capture_query_reason(node, f.qualname, f.path))
                if why is not None:
                    if several_platforms.fallback_reason(node, f.path) is why:
                        # only the fallback operands, not the accelerator query
                        stack.append((node.values[0], node, w))
                        for v in node.values[1:]:
                            stack.append((v, node, self._guarded(w, True, None, why)))
                        continue
                    w = self._guarded(w, True, None, why)
                elif (rocm := self._rocm_operand(node, w)) is not None:
                    # `_is_hip and values.is_cuda`: the whole test holds only on ROCm, where
                    # a tensor on the AMD GPU is a "cuda" one (`evidence.rocm_guard`)
                    # only the operands after it: those before run on every platform
                    # (`x.to("cuda").training and is_hip()`)
                    on = self._guarded(w, True, None, rocm_guard_reason(
                        rocm, f.path, "operand"))
                    after = False
                    for v in node.values:
                        if after:
                            wmap[id(v)] = on
                        stack.append((v, node, on if after else w))
                        after = after or v is rocm
                    continue
                elif isinstance(node.op, ast.And) and not w.guarded:
                    # `_is_cuda and x.is_cuda and ...`: the operands after one that
                    # establishes CUDA are evaluated only on CUDA; after a tensor's own
                    # test (`x.is_cuda and use_fused()`) too, except another CUDA test,
                    # which DL202 judges with it (its fix rewrites both)
                    first = next((i for i, v in enumerate(node.values[:-1])
                                  if self._establishes_quietly(v, w)
                                  or self.tensor_test(v)), None)
                    if first is not None:
                        why = guard_reason("operand", node.values[first], f.path)
                        on = self._guarded(w, True, None, why)
                        tensor_first = self.tensor_test(node.values[first])
                        for i, v in enumerate(node.values):
                            if i > first and tensor_first and any(self._sides(v)[:2]):
                                stack.append((v, node, w))
                                continue
                            if i > first:
                                wmap[id(v)] = on  # the operand itself (DL202's tests)
                            stack.append((v, node, on if i > first else w))
                        continue
            elif t in _DISPLAYS:
                why = several_platforms.collection_reason(node, f.path)
                if why is not None:
                    w = self._guarded(w, True, None, why)
            for child in ast.iter_child_nodes(node):
                stack.append((child, node, w))
