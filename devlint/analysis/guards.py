"""The tests the triage descent asks about: which establish CUDA (and on which side), which
name another accelerator, the ladders they form, the file's CUDA helpers and skip gates. The
principles and their vocabulary are the evidence layer's; this mixin applies them to the
file's facts (imports, flags, helpers)."""
from __future__ import annotations

import ast

from devlint.analysis.model import _EXITS, _FUNCS
from devlint.evidence.capability import applied_mark, module_names, requiring_mark
from devlint.evidence.library_gate import mark_reason as library_mark_reason
from devlint.evidence.capability_gate import capability_reason
from devlint.evidence.cuda_backend import backend_reason, is_backend_test
from devlint.evidence.cuda_build import cuda_build_test
from devlint.evidence.cuda_guard import (
    _CAPABILITY_QUERIES, _PLATFORM_CUDA_QUERIES, _TORCH_CUDA_COUNTS, _TORCH_CUDA_QUERIES,
    GATE_NAME, SKIP_IF, SKIP_UNLESS, cuda_class_test, cuda_only_type, falsy_exit, guard_reason,
    is_capability_name,
)
from devlint.evidence.platform_ladder import (
    _CUDA_ARM_QUERIES, CUDA_AVAILABILITY_NAME, allow_list_with_cuda, ladder_else_reason,
    ladder_test_reason, other_accelerator_test,
)
from devlint.evidence.sibling_platforms import GAP, sibling_reason


# set-up methods (unittest's and pytest's): per test, and per class
_SETUPS = frozenset({"setUp", "setup_method", "setUpClass", "setup_class", "setup"})
_CLASS_SETUPS = frozenset({"setUpClass", "setup_class", "tearDownClass", "teardown_class"})
_TEST_SETUPS = frozenset({"setUp", "setup_method", "tearDown", "teardown_method"})


def _called_name(call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


class GuardTests:
    """Mixed into `Descent`: needs `self.f` (the FileFacts), `self.query_alias`,
    `self.helpers`, `self.chained`, `self.ladder_tests`, `self.ladder_else`,
    `self.dispatch_arms`."""

    def _cuda_helpers(self, body):
        """The file's functions (module level and methods) that return a CUDA test
        (`def _is_hopper(): return torch.cuda.is_available() and ...`) or require CUDA before
        anything else (`def _require_cuda(): if not torch.cuda.is_available(): raise ...`)."""
        defs = [st for st in body if isinstance(st, _FUNCS)]
        for cls in (st for st in body if isinstance(st, ast.ClassDef)):
            defs.extend(st for st in cls.body if isinstance(st, _FUNCS))
        for fn in defs:
            stmts = [st for st in fn.body if not (isinstance(st, ast.Expr) and isinstance(
                st.value, ast.Constant))]  # skip the docstring
            if not stmts:
                continue
            first = stmts[0]
            if len(stmts) == 1 and isinstance(first, ast.Return) and first.value is not None \
                    and self._sides(first.value)[0]:
                self.helpers[fn.name] = "query"
            elif isinstance(first, ast.Assert) and self._sides(first.test)[0]:
                self.helpers[fn.name] = "requires"
            elif isinstance(first, ast.If) and not first.orelse and first.body \
                    and self._exits(first.body[-1]) and self._sides(first.test)[1]:
                # `if not torch.cuda.is_available(): return False` before anything else: a
                # true result means CUDA (`if check_gpu_memory():`), `cuda_guard`'s helper
                self.helpers[fn.name] = "requires+query" if falsy_exit(first.body[-1]) \
                    else "requires"

    # --- statements ----------------------------------------------------------------
    def _platform_query(self, test) -> str | None:
        """"other" for a test that asks about an accelerator other than CUDA (also mixed with
        CUDA: `torch.xpu.is_available() or torch.cuda.is_available()`), "cuda" for one that
        establishes CUDA when true (`torch.cuda.is_available()`, `is_cuda_alike()`,
        `device.type == "cuda"`), else None."""
        if other_accelerator_test(test, self.f.qualname):
            return "other"
        if self._sides(test)[0]:
            return "cuda"
        if isinstance(test, ast.Call):
            func = test.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _CUDA_ARM_QUERIES or (self.f.qualname(func) or "") in _CUDA_ARM_QUERIES \
                    or (name and CUDA_AVAILABILITY_NAME.match(name)):
                return "cuda"
        return None

    def _mark_siblings(self, body) -> None:
        """`if torch.cuda.is_available(): ...` (or a flag assigned from it) beside a statement
        for another accelerator (`devlint.evidence.sibling_platforms`): the CUDA statement's
        test and body are CUDA's own."""
        kinds = []
        for st in body:
            test = None
            if isinstance(st, ast.If):
                test = st.test
            elif isinstance(st, ast.Assign) and len(st.targets) == 1 \
                    and isinstance(st.targets[0], ast.Name):
                test = st.value
            kind = self._platform_query(test) if test is not None else None
            if kind == "other" and (any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)
                                        for n in ast.walk(test)) or allow_list_with_cuda(test)):
                kind = None  # excluding a platform is not handling it
            kinds.append(kind)
        if "cuda" not in kinds or "other" not in kinds:
            return
        for i, (st, kind) in enumerate(zip(body, kinds)):
            if kind != "cuda" or id(st) in self.ladder_tests:
                continue
            near = range(max(0, i - GAP - 1), min(len(body), i + GAP + 2))
            other = next((body[j] for j in near if kinds[j] == "other"), None)
            if other is None:
                continue
            why = sibling_reason(other, self.f.path)
            self.ladder_tests[id(st)] = why
            if isinstance(st, ast.If):
                self.dispatch_arms.add(id(st))
                self.arm_reasons[id(st)] = why

    def _mark_dispatch(self, head: ast.If) -> None:
        """Record the arms of an if/elif chain that also has an arm for another accelerator
        (the chain is seen once, from its head): its CUDA arms, the tests of its arms and its
        final else."""
        if id(head) in self.chained:
            return
        arms = []
        node = head
        while isinstance(node, ast.If):
            self.chained.add(id(node))
            arms.append(node)
            node = node.orelse[0] if len(node.orelse) == 1 else None
        kinds = [self._platform_query(a.test) for a in arms]
        if "other" not in kinds:
            return
        path = self.f.path
        for arm, kind in zip(arms, kinds):
            self.ladder_tests[id(arm)] = ladder_test_reason(arm, path)
            if kind == "cuda":
                self.dispatch_arms.add(id(arm))
        last = arms[-1]
        # the final else is the ladder's default only where the ladder gave CUDA its own arm or
        # handled several other accelerators: after `if is_tpu(): ...` alone, the else is
        # where CUDA, XPU and the rest all go (vLLM PR fixing `torch.cuda.set_device` there)
        complete = "cuda" in kinds or sum(k == "other" for k in kinds) >= 2
        if complete and last.orelse and not (
                len(last.orelse) == 1 and isinstance(last.orelse[0], ast.If)):
            self.ladder_else[id(last)] = ladder_else_reason(head, path)

    def _query_aliases(self, body):
        """`is_cuda = current_platform.is_cuda_alike()` makes `is_cuda` a guard too; so does
        a flag that requires a tensor's own CUDA test (`two_stream = s is not None and
        x.is_cuda`: true only where `x` is on CUDA)."""
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                    and isinstance(st.targets[0], ast.Name):
                on_true, on_false, tensor = self._sides(st.value)
                if on_true or on_false:
                    self.query_alias[st.targets[0].id] = (on_true, on_false)
                    if cuda_build_test(st.value, self.f.qualname):
                        self.build_aliases.add(st.targets[0].id)

    def _imported_flags(self, body):
        """`from pkg.utils import _is_cuda`, where `pkg/utils.py` sets `_is_cuda = is_cuda()`:
        the project stage's answer (`devlint.analysis.imported.FLAGS`, empty in the per-file
        run) makes the name a guard as the same assignment in this file would, unless the
        module binds the name itself."""
        from devlint.analysis.imported import imported_flags

        flags = imported_flags()
        if not flags:
            return
        own = {t.id for st in body if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign))
               for tg in (getattr(st, "targets", None) or [st.target]) for t in ast.walk(tg)
               if isinstance(t, ast.Name)}
        for name, sides in flags.items():
            if name not in own:
                self.query_alias.setdefault(name, tuple(sides))

    def _exits(self, stmt) -> bool:
        if isinstance(stmt, _EXITS):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            q = self.f.qualname(stmt.value.func) or ""
            func = stmt.value.func
            # `self.skipTest(...)`: unittest's skip from inside the test
            return q in ("pytest.skip", "pytest.exit", "sys.exit", "unittest.SkipTest") or (
                isinstance(func, ast.Attribute) and func.attr == "skipTest"
                and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"))
        return False

    def cuda_test(self, test) -> tuple[int, ast.expr | None]:
        """+1: the test establishes CUDA when true; -1: when false; 0: neither.
        Also returns `t` for `t.is_cuda` tests (a tensor guard, which gives the fix its device)."""
        on_true, on_false, tensor = self._sides(test)
        return (1 if on_true else -1 if on_false else 0), tensor

    def _sides(self, test) -> tuple[bool, bool, ast.expr | None]:
        """(true establishes CUDA, false establishes CUDA, `t` of a `t.is_cuda` test)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            on_true, on_false, _ = self._sides(test.operand)
            return on_false, on_true, None
        if isinstance(test, ast.BoolOp):
            results = [self._sides(v) for v in test.values]
            tensor = next((t for a, _, t in results if a and t is not None), None)
            if isinstance(test.op, ast.And):  # true: every operand; false: one of them
                return any(a for a, _, _ in results), all(b for _, b, _ in results), tensor
            return all(a for a, _, _ in results), any(b for _, b, _ in results), \
                tensor if all(a for a, _, _ in results) else None
        if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
            return True, False, test.value
        if isinstance(test, ast.Name) and test.id in self.query_alias:
            a, b = self.query_alias[test.id]
            return a, b, None
        if isinstance(test, ast.Call):
            q = self.f.qualname(test.func)
            if q in _TORCH_CUDA_QUERIES:
                return True, False, None
            func = test.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _PLATFORM_CUDA_QUERIES or is_capability_name(name) \
                    or self.helpers.get(name) in ("query", "requires+query"):
                return True, False, None
            if q in _TORCH_CUDA_COUNTS:  # a bare count: true with a device
                return True, False, None
        if is_backend_test(test):  # `"CUDAExecutionProvider" in providers`
            return True, False, None
        if cuda_only_type(test) or cuda_class_test(test):  # `isinstance(d, NVLSDispatcher)`
            return True, False, None
        build = cuda_build_test(test, self.f.qualname)
        if build:  # `version.parse(torch.version.cuda) > version.parse("11.4")`
            return build > 0, build < 0, None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op = test.ops[0]
            sides = (test.left, test.comparators[0])
            if any(isinstance(s, ast.Constant) and s.value == "cuda" for s in sides):
                if isinstance(op, (ast.Eq, ast.Is)):
                    return True, False, None
                if isinstance(op, (ast.NotEq, ast.IsNot)):
                    return False, True, None
            if isinstance(op, ast.In) and isinstance(test.left, ast.Constant) \
                    and test.left.value == "cuda":
                return True, False, None  # "cuda" in str(device)
            if self._cuda_count(test.left) and isinstance(op, (ast.Gt, ast.GtE)) \
                    and isinstance(test.comparators[0], ast.Constant) \
                    and isinstance(test.comparators[0].value, int) \
                    and test.comparators[0].value >= (1 if isinstance(op, ast.GtE) else 0):
                return True, False, None  # `torch.cuda.device_count() > 0`
            if isinstance(op, (ast.Gt, ast.GtE, ast.Eq, ast.Lt, ast.LtE)) \
                    and self._capability(test.left):
                return True, False, None  # `get_device_capability() >= (9, 0)`
        return False, False, None

    def _cuda_count(self, node) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "len" and node.args:
            node = node.args[0]
        elif isinstance(node, ast.Call):
            node = node.func
        return (self.f.qualname(node) or "") in _TORCH_CUDA_COUNTS

    def _capability(self, node) -> bool:
        while isinstance(node, (ast.Subscript, ast.Attribute)) and not (
                isinstance(node, ast.Attribute) and self.f.qualname(node)):
            node = node.value
        return isinstance(node, ast.Call) and (
            self.f.qualname(node.func) or "") in _CAPABILITY_QUERIES

    def _capability_operand(self, node: ast.BoolOp):
        """The Reason of a test one of whose operands (also negated) asks for a CUDA compute
        capability (`torch.cuda.is_available() and not is_sm_at_least_89()`). A parenthesised
        operand of the same operator is part of the same test (`a and (b and c)` is `a and b
        and c`: `torch.cuda.is_available() and (is_sm_at_least_100() and cuda >= 12.8)`)."""
        for v in node.values:
            if isinstance(v, ast.BoolOp) and type(v.op) is type(node.op):
                why = self._capability_operand(v)
                if why is not None:
                    return why
                continue
            while isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not):
                v = v.operand
            if isinstance(v, ast.Call) and is_capability_name(_called_name(v)) or (
                    isinstance(v, ast.Compare) and self._capability(v.left)):
                return capability_reason(v, self.f.path)
            if is_backend_test(v) and isinstance(node.op, ast.And):
                return backend_reason(v, self.f.path)
        return None

    def _skip_gate(self, stmt):
        """The Reason of a decorator that skips the test (or class) unless CUDA is there:
        `@skipif(<false establishes CUDA>)`, `@skipUnless(<true establishes CUDA>)`,
        `@requires_cuda`-style gates."""
        return self._gate_among(stmt.decorator_list)

    def _gate_among(self, decorators):
        """The Reason of the first of `decorators` (or marks) that is such a gate."""
        for d in self._bound_among(decorators):
            target = d.func if isinstance(d, ast.Call) else d
            name = target.attr if isinstance(target, ast.Attribute) else \
                getattr(target, "id", "")
            if GATE_NAME.match(name):
                return guard_reason("gate", d, self.f.path)
            if isinstance(d, ast.Call) and d.args and self._reported_gate(d.args[0]):
                on_true, on_false, tensor = self._sides(d.args[0])
                if tensor is None and ((name in SKIP_IF and on_false)
                                       or (name in SKIP_UNLESS and on_true)):
                    return guard_reason("gate", d, self.f.path)
        names = module_names(self.f.tree)
        for d in decorators:
            # through the module's own names: a flag, a helper, a skip reason, a
            # parametrisation every value of which is gated (`devlint.evidence.capability`)
            if requiring_mark(d, names):
                return guard_reason("gate", d, self.f.path)
        # a gate on a module flag set only where a library of GPU kernels imports
        # (`devlint.evidence.library_gate`)
        for d in self._bound_among(decorators):
            why = library_mark_reason(d, self.f.tree, self.f.path)
            if why is not None:
                return why
        return None

    def _module_gate(self, body):
        """The Reason of a module-level `pytestmark` that skips every test of the module unless
        CUDA is there (a mark as `_skip_gate` takes it, or one of a list of marks): the bodies
        of the module's tests and classes run only past it, as a decorated test's do."""
        for st in body:
            if not (isinstance(st, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in st.targets)):
                continue
            marks = st.value.elts if isinstance(st.value, (ast.List, ast.Tuple)) else [st.value]
            why = self._gate_among(marks)
            if why is not None:
                return why
        return None

    def _setup_gate(self, cls):
        """The Reason of a class whose set-up skips unless CUDA is there (`def setUp(self): if
        not torch.cuda.is_available(): self.skipTest(...)`, `def setup_method(self):
        _require_cuda()`): each test runs only past it. (The Reason, and whether the set-up is
        the per-test one, which does not gate the class-level set-up.)"""
        from devlint.analysis.model import Where

        for fn in cls.body:
            if not (isinstance(fn, _FUNCS) and fn.name in _SETUPS):
                continue
            where = Where(None, None, False, None, None, "function")
            for st in [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(
                    s.value, ast.Constant))][:3]:
                if isinstance(st, ast.If) and st.body and isinstance(st.body[-1], ast.Return):
                    continue  # a `return` ends the set-up, and the test still runs
                after = self._after_exit_guard(st, where)
                if getattr(after.guarded, "principle", None) in ("cuda-guard", "rocm-guard"):
                    return after.guarded, fn.name not in _CLASS_SETUPS
        return None

    def _all_tests_gate(self, cls):
        """The Reason of a class every test of which has a skip gate that requires CUDA: its
        per-test set-up and tear-down (`setUp`, `setup_method` ...) run only for a test that
        runs (pytest and unittest skip before them); the gate of its first test."""
        tests = [fn for fn in cls.body if isinstance(fn, _FUNCS) and fn.name.startswith("test")]
        gates = [self._skip_gate(fn) for fn in tests]
        if not gates or not all(gates):
            return None
        return gates[0], "setups"

    def _method_gate(self, cls, name):
        """The Reason gating the body of the method `name` of `cls` (`method_gates`)."""
        gate = self.method_gates.get(id(cls))
        if isinstance(gate, tuple):  # a set-up's gate: not over the class-level set-up
            gate, per_test = gate
            if per_test == "setups":  # every test gated: only the per-test set-up
                return gate if name in _TEST_SETUPS else None
            if per_test and name in _CLASS_SETUPS:
                return None
        return gate

    def _bound_marks(self, body):
        """Skip marks bound to a name at module level (`requires_hopper =
        pytest.mark.skipif(<cap != (9, 0)>, ...)`, then `@requires_hopper`): the decorator is
        the mark. So is a list of marks so bound (`requires_gpu = [skipif(...), ...]`), and a
        decorator function that only applies marks (`def _maybe_gpu(fn): for m in
        requires_gpu: fn = m(fn); return fn`: `evidence.capability.applied_mark`). The gate's
        evidence is the mark's line."""
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                    and isinstance(st.targets[0], ast.Name) and isinstance(st.value, ast.Call) \
                    and _called_name(st.value) in SKIP_IF | SKIP_UNLESS:
                self.bound_marks[st.targets[0].id] = st.value
            elif isinstance(st, ast.Assign) and len(st.targets) == 1 \
                    and isinstance(st.targets[0], ast.Name) \
                    and isinstance(st.value, (ast.List, ast.Tuple)) and st.value.elts \
                    and all(_called_name(v) in SKIP_IF | SKIP_UNLESS if isinstance(v, ast.Call)
                            else isinstance(v, ast.Name) and v.id in self.bound_marks
                            for v in st.value.elts):
                self.bound_marks[st.targets[0].id] = st.value
            elif isinstance(st, _FUNCS):
                mark = applied_mark(st, self.bound_marks)
                if mark is not None:
                    self.bound_marks[st.name] = mark

    def _bound_among(self, decorators, depth=0):
        """`decorators` with the names bound to marks (or lists of marks) replaced by them."""
        for d in decorators:
            if isinstance(d, ast.Name) and d.id in self.bound_marks:
                d = self.bound_marks[d.id]  # `@requires_hopper`, bound to a skip mark
            if isinstance(d, (ast.List, ast.Tuple)) and depth < 3:
                yield from self._bound_among(d.elts, depth + 1)
            else:
                yield d

    def tensor_test(self, test) -> bool:
        """`t.is_cuda` (also one operand of `and` requiring it): true only where the tensor
        is on CUDA. The test itself may be DL202's finding (it chooses a branch)."""
        on_true, _, tensor = self._sides(test)
        return on_true and tensor is not None

    def _establishes_quietly(self, test, where=None) -> bool:
        """A test that establishes CUDA when true and is no finding itself (a platform query,
        a flag, a capability or stack test, a value made only on CUDA; not
        `torch.cuda.is_available()`, whose fix rewrites the operands after it too)."""
        on_true, _, tensor = self._sides(test)
        if not on_true and tensor is None and where is not None:
            found = self.value_test(test, where.function, where.klass)  # `self.comm and ...`
            return found is not None and found[0] > 0 and found[1].principle == "cuda-value"
        return on_true and tensor is None and not self._reported_gate(test)

    def _reported_gate(self, test) -> bool:
        """A gate that is itself a finding (DL203: it asks `torch.cuda`), or that asks for a
        CUDA compute capability (CUDA-only by purpose). A gate on a platform query that merely
        asks (`not current_platform.is_cuda()`) exempts nothing under it: the finding would
        vanish with it, and upstream fixes the literals under such gates (vLLM PR #37566)."""
        for n in ast.walk(test):
            if isinstance(n, ast.Call) and is_capability_name(_called_name(n)):
                return True
            if isinstance(n, ast.Name) and n.id in self.build_aliases \
                    or cuda_build_test(n, self.f.qualname):
                return True  # a CUDA toolkit version: `devlint.evidence.cuda_build`
            if isinstance(n, ast.Attribute) and (self.f.qualname(n) or "").startswith(
                    "torch.cuda."):
                return True
        return False

    # --- expressions -------------------------------------------------------------------
