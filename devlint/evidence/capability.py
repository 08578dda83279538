"""Which gates require an NVIDIA compute capability (shared by `cuda_only_module` and
`cuda_only_scope`): a test module, class or function that only runs when the GPU is an SM90
Hopper, an SM100 Blackwell ... tests a CUDA-only kernel or feature, and its devices are CUDA's
on purpose (pattern D: `pytestmark = skipif(get_device_capability() != (12, 0))`,
`if not is_sm_at_least_90(): pytest.skip(allow_module_level=True)`,
`@skipif(not is_sm_at_least_100())`).

AMD architectures count too (`is_sm_at_least_89() or is_MI300()`): ROCm's torch device type is
"cuda", and such a gate requires a CUDA-alike GPU of a given generation.

Limits: the gate must *require* the capability (`torch.cuda.is_available() and not
is_sm_at_least_89()` skips only old CUDA GPUs and runs everywhere else); a capability query
that merely picks a kernel inside generic code exempts nothing here.

Names are resolved through the module's own top-level statements (`ModuleNames`, static, one
pass in order): a flag assigned from a capability test (`_IS_BLACKWELL = torch.cuda.
get_device_properties(0).major >= 10`), a skip mark bound to a name (`requires_hopper =
pytest.mark.skipif(...)`, `_skip_no_triton`), a list of skip marks so bound one of which
requires it (`requires_sm100 = [skipif(not has_triton()), skipif(not is_sm_at_least_100())]`),
a decorator function that only applies such marks to the test it decorates (`def
_maybe_sm100(fn): for mark in requires_sm100: fn = mark(fn); return fn`: `applied_mark`; the
gate is the same, named), a list of `pytest.param(..., marks=<such a
mark>)` every value of which is gated, a helper that returns true only past a capability test
(`def _is_fp8_sdpa_available(): if get_device_capability() != (9, 0): return False ...`;
local names bound to the capability stand for it: `major, minor = get_device_capability()`,
then `return major >= 9 or (major == 8 and minor >= 9)`), and
a skip-reason helper that returns a reason unless the capability is met (`def
_quant_skip_reason(): if not is_sm_at_least_90(): return "needs SM90" ... return None`, then
`QUANT_SKIP_REASON = _quant_skip_reason()` and `skipIf(QUANT_SKIP_REASON is not None)`).
Names imported from other modules are not resolved (their gates are judged where defined),
except that a skip mark on such a helper whose reason states the GPU generation it needs
(`reason="requires SM100 (Blackwell) + CuteDSL"`) is read as the author states it.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence.capability_value import (  # noqa: F401  (AMD_ARCH, _CAPABILITY: shared)
    _CAPABILITY, AMD_ARCH, _capability_value, _is_capability_call, _name, bind_caps as _bind_caps,
    with_caps as _with_caps,
)

_SKIP_IF = {"skipif", "skipIf"}
_SKIP_UNLESS = {"skipUnless"}


class ModuleNames:
    """What a module's own top-level names say about a compute capability (see the module
    docstring): `flags` (true only with it), `marks` (name -> a requiring skip mark),
    `params` (lists of parameters all gated by one), `helpers` (functions true only with
    it), `reason_funcs` and `reasons` (a skip reason that is None only with it)."""

    def __init__(self):
        self.flags: set = set()
        self.marks: dict = {}
        self.params: set = set()
        self.helpers: set = set()
        self.reason_funcs: set = set()
        self.reasons: set = set()


_FUNC_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def module_names(tree, seed: ModuleNames | None = None) -> ModuleNames:
    """The `ModuleNames` of a module (computed once per tree). `seed`: what names imported
    from other modules are known to be (the project stage's `xflags`); not cached."""
    cached = getattr(tree, "_devlint_capability_names", None) if seed is None else None
    if cached is not None:
        return cached
    names = ModuleNames()
    if seed is not None:
        for field, value in vars(seed).items():
            setattr(names, field, value.copy())
    for st in getattr(tree, "body", ()):
        if isinstance(st, _FUNC_DEFS):
            if _true_only_if_met(st.body, names):
                names.helpers.add(st.name)
            elif _reason_unless_met(st.body, names):
                names.reason_funcs.add(st.name)
            else:
                mark = applied_mark(st, names.marks)
                if mark is not None and requiring_mark(mark, names):
                    names.marks[st.name] = mark  # `@_maybe_sm100`, a decorator of marks
        elif isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                continue
            name, value = targets[0].id, st.value
            if isinstance(value, ast.Call) and _name(value.func) in _SKIP_IF | _SKIP_UNLESS:
                if requiring_mark(value, names):
                    names.marks[name] = value
            elif isinstance(value, (ast.List, ast.Tuple)):
                if _all_params_gated(value, names):
                    names.params.add(name)
                elif _all_skip_marks(value, names.marks) and requiring_mark(value, names):
                    names.marks[name] = value  # `requires_sm100 = [skipif(...), ...]`
            elif met_if_true(value, names):
                names.flags.add(name)
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                    and value.func.id in names.reason_funcs:
                names.reasons.add(name)
    if seed is not None:
        return names
    try:
        tree._devlint_capability_names = names
    except AttributeError:
        pass
    return names


def _is_skip_mark(node, bound) -> bool:
    """A skip mark call (`pytest.mark.skipif(...)`, `unittest.skipUnless(...)`) or a name
    `bound` to one (or to a list of them)."""
    if isinstance(node, ast.Name):
        return node.id in bound
    return isinstance(node, ast.Call) and _name(node.func) in _SKIP_IF | _SKIP_UNLESS


def _all_skip_marks(values, bound) -> bool:
    return bool(values.elts) and all(_is_skip_mark(v, bound) for v in values.elts)


def applied_mark(fn, bound: dict):
    """The skip marks a module-level decorator function applies to the function it decorates,
    as one expression (a mark, or a list of them), else None: `def _maybe_sm100(fn): for mark
    in requires_sm100: fn = mark(fn); return fn`, `return requires_sm100(fn)`, `return
    pytest.mark.skipif(...)(fn)`, the marks `bound` to names at module level resolved. The
    decorated test is the one the marks would decorate: the same gate, named. Limits: the
    function must take the decorated function as its one parameter, hand it to nothing but
    marks and return it (or a mark applied to it); a body doing anything else is a wrapper
    whose effect is not read."""
    args = fn.args
    if len(args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs \
            or args.posonlyargs or fn.decorator_list:
        return None
    param = args.args[0].arg
    loops: dict = {}  # loop variable -> the list of marks it runs over
    applied: list = []

    def mark_of(func):
        if isinstance(func, ast.Name) and func.id in loops:
            return loops[func.id]
        if isinstance(func, ast.Name) and func.id in bound:
            return bound[func.id]
        return func if _is_skip_mark(func, bound) and isinstance(func, ast.Call) else None

    def application(value) -> bool:
        """`<mark>(param)`: records the mark."""
        if not (isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords
                and isinstance(value.args[0], ast.Name) and value.args[0].id == param):
            return False
        mark = mark_of(value.func)
        if mark is not None:
            applied.append(mark)
        return mark is not None

    def statements(body) -> bool:
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                    and isinstance(st.targets[0], ast.Name) and st.targets[0].id == param \
                    and application(st.value):
                continue
            if isinstance(st, ast.For) and isinstance(st.target, ast.Name) and not st.orelse:
                it = st.iter
                marks = bound.get(it.id) if isinstance(it, ast.Name) else it \
                    if isinstance(it, (ast.List, ast.Tuple)) and _all_skip_marks(it, bound) \
                    else None
                if marks is None:
                    return False
                loops[st.target.id] = marks
                if not statements(st.body):
                    return False
                continue
            return False
        return True

    body = _docless(fn.body)
    read = bool(body) and isinstance(body[-1], ast.Return) and body[-1].value is not None \
        and statements(body[:-1])
    del statements  # (a recursive closure: its cycle would outlive the call until collected)
    if not read:
        return None
    ret = body[-1].value
    if not (isinstance(ret, ast.Name) and ret.id == param) and not application(ret):
        return None
    if not applied:
        return None
    return applied[0] if len(applied) == 1 else ast.List(elts=applied, ctx=ast.Load())


def called_at_import(tree) -> frozenset:
    """The names a module calls while it is imported (in its top-level statements, class
    bodies, decorators and defaults, not inside its functions): such a function runs at
    collection, whatever skips the tests (`@parametrize("cfg", get_configs())`)."""
    cached = getattr(tree, "_devlint_import_calls", None)
    if cached is not None:
        return cached
    out = set()
    stack = list(getattr(tree, "body", ()))
    while stack:
        n = stack.pop()
        if isinstance(n, (*_FUNC_DEFS, ast.Lambda)):
            if not isinstance(n, ast.Lambda):
                stack.extend(n.decorator_list)
            stack.extend(n.args.defaults)
            stack.extend(d for d in n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            out.add(n.func.id)
        stack.extend(ast.iter_child_nodes(n))
    out = frozenset(out)
    try:
        tree._devlint_import_calls = out
    except AttributeError:
        pass
    return out


def _docless(body) -> list:
    return [st for st in body if not (isinstance(st, ast.Expr)
                                      and isinstance(st.value, ast.Constant))]


def _falsy(node) -> bool:
    return node is None or (isinstance(node, ast.Constant) and not node.value)


def _true_only_if_met(body, names) -> bool:
    """A function body that returns a false value unless the capability is met: its leading
    statements are `if <cond>: return False` (or None) exits, one of them on the capability
    not met, before any other return; or a `return <capability test>`. A local name bound to
    the capability or a part of it (`major, minor = torch.cuda.get_device_capability()`,
    `cap = get_device_capability()[0]`) stands for it in the tests after."""
    caps: dict = {}
    for st in _docless(body):
        if isinstance(st, ast.If) and not st.orelse and st.body \
                and isinstance(st.body[-1], ast.Return) and _falsy(st.body[-1].value):
            if met_if_false(_with_caps(st.test, caps), names):
                return True
            continue
        if isinstance(st, ast.Return):
            return st.value is not None and met_if_true(_with_caps(st.value, caps), names)
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom)):
            _bind_caps(st, caps)
            continue
        return False
    return False


def _reason_unless_met(body, names) -> bool:
    """A function body that returns a skip reason (a string) unless the capability is met:
    leading `if <cond>: return "<why>"` exits (or `if r := <such a helper>(): return r`), one
    of them on the capability not met, before any other return."""
    caps: dict = {}
    for st in _docless(body):
        if isinstance(st, ast.If) and not st.orelse and st.body \
                and isinstance(st.body[-1], ast.Return) and not _falsy(st.body[-1].value):
            test = st.test.value if isinstance(st.test, ast.NamedExpr) else st.test
            if met_if_false(_with_caps(test, caps), names) or (
                    isinstance(test, ast.Call) and isinstance(test.func, ast.Name)
                    and test.func.id in names.reason_funcs):
                return True
            continue
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom)):
            _bind_caps(st, caps)
            continue
        return False
    return False


def _all_params_gated(values, names) -> bool:
    """Every value of a parametrisation list is a `pytest.param(..., marks=<requiring>)`."""
    if not values.elts:
        return False
    for v in values.elts:
        if not (isinstance(v, ast.Call) and _name(v.func) == "param"):
            return False
        marks = next((k.value for k in v.keywords if k.arg == "marks"), None)
        if marks is None or not requiring_mark(marks, names):
            return False
    return True


def _is_reason_name(node, names) -> bool:
    return names is not None and isinstance(node, ast.Name) and node.id in names.reasons


def _reason_call(node, names) -> bool:
    return names is not None and isinstance(node, ast.Call) \
        and isinstance(node.func, ast.Name) and node.func.id in names.reason_funcs


def _is_build(node, which=("cuda",)) -> bool:
    """`torch.version.cuda` (`torch_version.cuda`, `version.hip` with which=("hip",))."""
    if not (isinstance(node, ast.Attribute) and node.attr in which):
        return False
    owner = node.value
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return name.endswith("version")


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def met_if_true(x, names: ModuleNames | None = None) -> bool:
    """`x` true implies the capability (or a CUDA build, `torch.version.cuda`) is met;
    `names` resolves the module's own flags, helpers and skip reasons."""
    if _is_capability_call(x) or _is_build(x):
        return True
    if names is not None:
        if isinstance(x, ast.Name) and x.id in names.flags:
            return True
        if isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id in names.helpers:
            return True
        if isinstance(x, ast.Compare) and len(x.ops) == 1 and isinstance(x.ops[0], ast.Is) \
                and _is_none(x.comparators[0]) and (_is_reason_name(x.left, names)
                                                    or _reason_call(x.left, names)):
            return True  # `SKIP_REASON is None`
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and _is_build(x.left) \
            and isinstance(x.ops[0], ast.IsNot) and _is_none(x.comparators[0]):
        return True
    if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not):
        return met_if_false(x.operand, names)
    if isinstance(x, ast.BoolOp):
        if isinstance(x.op, ast.And):
            return any(met_if_true(v, names) for v in x.values)
        return all(met_if_true(v, names) for v in x.values)
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and _capability_value(x.left):
        return isinstance(x.ops[0], (ast.GtE, ast.Gt, ast.Eq, ast.In))
    return False


def met_if_false(x, names: ModuleNames | None = None) -> bool:
    """`x` false implies the capability is met (a skip condition that requires it)."""
    if isinstance(x, ast.NamedExpr):  # `if reason := skip_reason(): pytest.skip(reason)`
        return met_if_false(x.value, names)
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and _is_build(x.left) \
            and isinstance(x.ops[0], ast.Is) and _is_none(x.comparators[0]):
        return True
    if _is_reason_name(x, names) or _reason_call(x, names):
        return True  # `skipIf(SKIP_REASON, SKIP_REASON)`: a reason unless met
    if isinstance(x, ast.Call) and _name(x.func) == "bool" and len(x.args) == 1 \
            and (_is_reason_name(x.args[0], names) or _reason_call(x.args[0], names)):
        return True
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and isinstance(x.ops[0], ast.IsNot) \
            and _is_none(x.comparators[0]) and (_is_reason_name(x.left, names)
                                                or _reason_call(x.left, names)):
        return True  # `SKIP_REASON is not None`
    if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not):
        return met_if_true(x.operand, names)
    if isinstance(x, ast.BoolOp):
        if isinstance(x.op, ast.Or):
            return any(met_if_false(v, names) for v in x.values)
        return all(met_if_false(v, names) for v in x.values)
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and _capability_value(x.left):
        return isinstance(x.ops[0], (ast.Lt, ast.LtE, ast.NotEq, ast.NotIn))
    return False


def requiring_mark(mark, names: ModuleNames | None = None) -> bool:
    """A skip mark or decorator that requires a compute capability: `skipif(<not cap>)`,
    `skipIf(...)`, `skipUnless(<cap>)`; a list of marks when one of them does; with `names`,
    a mark bound to a name and a `parametrize` whose every value carries such a mark."""
    if isinstance(mark, (ast.List, ast.Tuple)):
        return any(requiring_mark(m, names) for m in mark.elts)
    if names is not None and isinstance(mark, ast.Name) and mark.id in names.marks:
        return True
    if not isinstance(mark, ast.Call) or not mark.args:
        return False
    name = _name(mark.func)
    if name in _SKIP_IF | _SKIP_UNLESS and _stated_capability(mark):
        return True
    if name in _SKIP_IF:
        return met_if_false(mark.args[0], names)
    if name in _SKIP_UNLESS:
        return met_if_true(mark.args[0], names)
    if name == "parametrize" and names is not None and len(mark.args) > 1:
        values = mark.args[1]
        return (isinstance(values, ast.Name) and values.id in names.params) or (
            isinstance(values, (ast.List, ast.Tuple)) and _all_params_gated(values, names))
    return False


# a skip reason that states an NVIDIA GPU generation or compute capability
_STATED = re.compile(r"(?i)\b(?:requires?|needs?|only (?:on|for)|supported only on)\b[^.;]{0,40}?"
                     r"(?:\bsm[_ ]?\d{2,3}\+?(?!\w)|\bsm\s*>=?\s*\d+|hopper|blackwell|"
                     r"compute capability|\b[hb]\d{3}\b)")


def _stated_capability(mark) -> bool:
    """A skip mark on a helper the module does not define (`skipif(not
    cutedsl_kernels_available(), reason="requires SM100 (Blackwell) + CuteDSL")`) whose reason
    states that the test requires a given NVIDIA GPU generation: the author says what the
    helper checks. Limits: only a condition that calls such a helper (not torch's own queries,
    which are read as they are) and a reason that states a requirement (`requires`, `needs`)."""
    reason = next((k.value for k in mark.keywords if k.arg in ("reason", "msg")), None)
    if reason is None and len(mark.args) > 1:
        reason = mark.args[1]
    if not (isinstance(reason, ast.Constant) and isinstance(reason.value, str)
            and _STATED.search(reason.value)):
        return False
    for n in ast.walk(mark.args[0]):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                and n.value.id == "torch":
            return False  # `torch.cuda.is_available()`: read as it is
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               for n in ast.walk(mark.args[0]))


def module_gate(tree, names: ModuleNames | None = None) -> ast.stmt | None:
    """The module-level statement that skips the whole module unless a compute capability is
    met: `pytestmark = <requiring mark>`, or `if <cond>: pytest.skip(..., allow_module_level=
    True)` (or `raise unittest.SkipTest`) with `cond` false only on such a GPU (the module's
    own names resolved: `ModuleNames`, or `names` where the project stage knows imported
    ones)."""
    if names is None:
        names = module_names(tree)
    for st in tree.body:
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                              for t in st.targets):
            if requiring_mark(st.value, names):
                return st
        elif isinstance(st, ast.If) and not st.orelse and st.body and _skips_module(st.body[-1]) \
                and met_if_false(st.test, names):
            return st
        elif isinstance(st, ast.Assert) and met_if_true(st.test, names):
            return st  # `assert torch.version.cuda is not None`: it does not import elsewhere
    return None


def build_query_reason(stmt, path: str | None, function=None):
    """The reason for a candidate in the test of `stmt` (an `if` or `assert`) that also asks
    which build torch is (`torch.version.hip`, `torch.version.cuda`): `not torch.version.hip
    or not torch.cuda.is_available()` asks about ROCm, `not torch.cuda.is_available() or
    torch.version.cuda is None` about a CUDA build; their `torch.cuda` queries are that build's
    own. So is a platform flag built the same way, `IS_ROCM = torch.cuda.is_available() and
    torch.version.hip is not None` (a target named after the build it detects: `rocm`, `hip`,
    `cuda`, `nvidia`, `amd`), and the return of a detector so named (`def is_rocm():
    return ...`). Limits: only the test, never the body it guards; a flag named after what it
    decides (`use_pin = torch.cuda.is_available() and not torch.version.hip`) picks a
    behaviour, and stays a finding."""
    from devlint.evidence import Reason

    test = getattr(stmt, "test", None)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Return)) and stmt.value is not None:
        test = stmt.value if _names_a_build(stmt, function) else None
    elif not isinstance(stmt, (ast.If, ast.Assert)):
        return None
    if test is None:
        return None
    for n in ast.walk(test):
        if _is_build(n, ("cuda", "hip")):
            return Reason("cuda-only-scope", f"the test asks which build torch is "
                          f"(`version.{n.attr}`)", path, stmt.lineno)
    return None


_BUILD_WORD = re.compile(r"(?i)(?:^|_)(?:rocm|hip|cuda|nvidia|amd)(?:_|$)")


def _names_a_build(stmt, function) -> bool:
    """The assignment's targets (for a `return`, the function returning) name a build."""
    if isinstance(stmt, ast.Return):
        return function is not None and bool(_BUILD_WORD.search(function.name))
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = [t.id if isinstance(t, ast.Name) else getattr(t, "attr", "") for t in targets]
    return bool(names) and all(_BUILD_WORD.search(n) for n in names)


def _skips_module(stmt) -> bool:
    if isinstance(stmt, ast.Raise):
        return True  # `raise unittest.SkipTest(...)`, `raise ImportError("needs SM90")`
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        return (_name(call.func) == "skip" and any(
            k.arg == "allow_module_level" for k in call.keywords)) or _name(call.func) == "exit"
    return False
