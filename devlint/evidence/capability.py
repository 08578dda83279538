"""Which gates require an NVIDIA compute capability (shared by `cuda_only_module` and
`cuda_only_scope`): a test module, class or function that only runs when the GPU is an SM90
Hopper, an SM100 Blackwell ... tests a CUDA-only kernel or feature, and its devices are CUDA's
on purpose (pattern D: `pytestmark = skipif(get_device_capability() != (12, 0))`,
`if not is_sm_at_least_90(): pytest.skip(allow_module_level=True)`,
`@skipif(not is_sm_at_least_100())`).

Limits: the gate must *require* the capability (`torch.cuda.is_available() and not
is_sm_at_least_89()` skips only old CUDA GPUs and runs everywhere else); a capability query
that merely picks a kernel inside generic code exempts nothing here.
"""
from __future__ import annotations

import ast
import re

# compute-capability queries: torch's, and a project's `is_sm_at_least_90()`, `_is_hopper()`,
# `is_blackwell()`, `_hopper_or_newer()` (NVIDIA architecture names)
_CAPABILITY = re.compile(r"(?i)(?:^|_)(?:sm_?\d+|sm_at_least|sm_version|hopper|blackwell|ampere"
                         r"|device_capability|compute_capability)(?:_|$|\d)")
_SKIP_IF = {"skipif", "skipIf"}
_SKIP_UNLESS = {"skipUnless"}


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_capability_call(node) -> bool:
    return isinstance(node, ast.Call) and bool(_CAPABILITY.search(_name(node.func)))


def met_if_true(x) -> bool:
    """`x` true implies the capability is met."""
    if _is_capability_call(x):
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
    return None


def _skips_module(stmt) -> bool:
    if isinstance(stmt, ast.Raise):
        return "SkipTest" in ast.dump(stmt.exc) if stmt.exc is not None else False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        return _name(call.func) == "skip" and any(
            k.arg == "allow_module_level" for k in call.keywords)
    return False
