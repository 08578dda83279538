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
"""
from __future__ import annotations

import ast
import re

# AMD GPU architectures (`is_MI300()`, `is_gfx950()`, `_is_cdna3()`): PyTorch's ROCm build is
# the "cuda" device type, so a gate that requires "SM89 or MI300" requires a GPU of that type
AMD_ARCH = r"mi\d{3}|gfx\d+|cdna\d*"
# compute-capability queries: torch's, and a project's `is_sm_at_least_90()`, `_is_hopper()`,
# `is_blackwell()`, `_hopper_or_newer()` (NVIDIA architecture names), and AMD's (`AMD_ARCH`)
_CAPABILITY = re.compile(r"(?i)(?:^|_)(?:sm_?\d+|sm_at_least|sm_version|hopper|blackwell|ampere"
                         r"|device_capability|compute_capability|%s)(?:_|$|\d)" % AMD_ARCH)
_SKIP_IF = {"skipif", "skipIf"}
_SKIP_UNLESS = {"skipUnless"}


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_capability_call(node) -> bool:
    return isinstance(node, ast.Call) and bool(_CAPABILITY.search(_name(node.func)))


def _is_build(node, which=("cuda",)) -> bool:
    """`torch.version.cuda` (`torch_version.cuda`, `version.hip` with which=("hip",))."""
    if not (isinstance(node, ast.Attribute) and node.attr in which):
        return False
    owner = node.value
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return name.endswith("version")


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def met_if_true(x) -> bool:
    """`x` true implies the capability (or a CUDA build, `torch.version.cuda`) is met."""
    if _is_capability_call(x) or _is_build(x):
        return True
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and _is_build(x.left) \
            and isinstance(x.ops[0], ast.IsNot) and _is_none(x.comparators[0]):
        return True
    if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not):
        return met_if_false(x.operand)
    if isinstance(x, ast.BoolOp):
        if isinstance(x.op, ast.And):
            return any(met_if_true(v) for v in x.values)
        return all(met_if_true(v) for v in x.values)
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and _is_capability_call(x.left):
        return isinstance(x.ops[0], (ast.GtE, ast.Gt, ast.Eq, ast.In))
    return False


def met_if_false(x) -> bool:
    """`x` false implies the capability is met (a skip condition that requires it)."""
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and _is_build(x.left) \
            and isinstance(x.ops[0], ast.Is) and _is_none(x.comparators[0]):
        return True
    if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not):
        return met_if_true(x.operand)
    if isinstance(x, ast.BoolOp):
        if isinstance(x.op, ast.Or):
            return any(met_if_false(v) for v in x.values)
        return all(met_if_false(v) for v in x.values)
    if isinstance(x, ast.Compare) and len(x.ops) == 1 and _is_capability_call(x.left):
        return isinstance(x.ops[0], (ast.Lt, ast.LtE, ast.NotEq, ast.NotIn))
    return False


def requiring_mark(mark) -> bool:
    """A skip mark or decorator that requires a compute capability: `skipif(<not cap>)`,
    `skipIf(...)`, `skipUnless(<cap>)`; a list of marks when one of them does."""
    if isinstance(mark, (ast.List, ast.Tuple)):
        return any(requiring_mark(m) for m in mark.elts)
    if not isinstance(mark, ast.Call) or not mark.args:
        return False
    name = _name(mark.func)
    if name in _SKIP_IF:
        return met_if_false(mark.args[0])
    if name in _SKIP_UNLESS:
        return met_if_true(mark.args[0])
    return False


def module_gate(tree) -> ast.stmt | None:
    """The module-level statement that skips the whole module unless a compute capability is
    met: `pytestmark = <requiring mark>`, or `if <cond>: pytest.skip(..., allow_module_level=
    True)` (or `raise unittest.SkipTest`) with `cond` false only on such a GPU."""
    for st in tree.body:
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                              for t in st.targets):
            if requiring_mark(st.value):
                return st
        elif isinstance(st, ast.If) and not st.orelse and st.body and _skips_module(st.body[-1]) \
                and met_if_false(st.test):
            return st
        elif isinstance(st, ast.Assert) and met_if_true(st.test):
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
