"""Principle: a CUDA query that gates a CUDA compute-capability test asks for a CUDA feature.

`torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)`,
`torch.cuda.is_available() and not is_sm_at_least_89()`, `not torch.cuda.is_available() or
not is_sm_at_least_90()`: the availability test only protects the capability query (an SM
version exists on NVIDIA GPUs only), so the whole test asks "is this an SM89+ CUDA GPU?", and
it is no hardcoding of the device (a skip gate of this form skips only old CUDA GPUs or
machines without that feature). So is an availability gate stacked with a capability gate on
the same test or class (`@skipIf(not torch.cuda.is_available())` above `@skipIf(not
is_sm_at_least_90())`, both marks of one `pytestmark` list, or a method's gate inside a class
gated on a capability): the test already requires an SM90+ (or MI300) GPU, and an
accelerator-generic availability gate would skip it on exactly the same machines.
Evidence: the capability operand (`get_device_capability`/`get_device_properties` compared,
or a helper named after an SM version or NVIDIA architecture: `is_sm_at_least_90`,
`is_hopper`), and its line; for a stacked gate, the line of the gate that requires the
capability (resolved through the module's own names: `devlint.evidence.capability`).
A skip gate whose own condition requires a compute capability (`@skipif(torch.cuda.
get_device_capability()[0] < 10, reason="needs Blackwell")`) selects an SM-specific kernel:
no accelerator-generic gate can say "an SM100 GPU", and the rubric counts
`get_device_capability` that picks an SM kernel as CUDA on purpose. So is a gate that skips
without CUDA *and* on ROCm (`skipif(not torch.cuda.is_available() or torch.version.hip is not
None, reason="requires NVIDIA CUDA")`): where any GPU would do, the ROCm build (torch's "cuda"
device too) would not be excluded, so the test is about NVIDIA hardware (its kernels, its
numerics, goldens made on it).
So is an availability gate stacked with (or joined by `or` to) a gate on a library of NVIDIA
(and AMD) GPU kernels only (`@skipif(not _is_mslk_available())`, `is_xformers_available()`:
cuda_only.toml `gate_stacks`), or a `parametrize` every value of which carries one: the test
exercises that library's GPU path, which no other accelerator has. So is a gate on a module
flag set only where such a library imports (`HAVE_FA3 = True` after `import flash_attn_3`:
`library_gate`).
Limits: only operands of the same `and`/`or`, or gates of the same test, its enclosing
classes or the module's `pytestmark`; a bare `torch.cuda.is_available()` elsewhere in the
function is still a finding, and so is an availability gate whose test a capability check
inside its body narrows (the body's check is no gate). A gate that only excludes ROCm
(`skipif(torch.version.hip is not None)`) runs on every other platform and says nothing;
`torch.cuda.is_available() and not is_sm_at_least_89()` skips only old CUDA GPUs (the
operand rule above, not this one).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason, library_gate
from devlint.evidence.capability import _is_build, _is_none, module_names, requiring_mark
from devlint.evidence.vocabulary import cuda_library_check

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def capability_reason(operand, path: str | None) -> Reason:
    return Reason("capability-gate", "one operand of a test for a CUDA compute capability",
                  path, getattr(operand, "lineno", None))


def stacked_reason(gate, tree, parent_of, path: str | None) -> Reason | None:
    """The reason for the skip gate `gate` (a decorator, or a mark of a `pytestmark` list)
    stacked with a gate requiring a compute capability on the same test or class, an
    enclosing class or the module's `pytestmark`; `parent_of(node)` is the node's parent."""
    names = module_names(tree)
    if requiring_mark(gate, names):
        return Reason("capability-gate", "the gate itself requires a given NVIDIA compute "
                      "capability or AMD architecture: it selects an SM-specific kernel",
                      path, getattr(gate, "lineno", None))
    rocm = _excludes_rocm(gate)
    if rocm is not None:
        return Reason("capability-gate", "the gate skips without CUDA and on ROCm too: the "
                      "test requires NVIDIA hardware, not any GPU", path, rocm.lineno)
    others = []
    par = parent_of(gate)
    if isinstance(par, (ast.List, ast.Tuple)):  # `pytestmark = [skipif(...), skipif(...)]`
        others.extend(m for m in par.elts if m is not gate)
        par = parent_of(par)
    while par is not None:
        if isinstance(par, (*_FUNCS, ast.ClassDef)):
            others.extend(d for d in par.decorator_list if d is not gate)
        par = parent_of(par)
    for st in getattr(tree, "body", ()):
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                              for t in st.targets):
            others.extend(st.value.elts if isinstance(st.value, (ast.List, ast.Tuple))
                          else [st.value])
    for d in others:
        if d is not gate and requiring_mark(d, names):
            return Reason("capability-gate", "stacked with a gate that requires a given NVIDIA "
                          "compute capability or AMD architecture: the test already requires "
                          "such a GPU", path, getattr(d, "lineno", None))
    for d in [gate] + others:
        lib = library_mark(d)
        if lib:
            return Reason("capability-gate", f"{'stacked with ' if d is not gate else ''}"
                          f"a gate that requires `{lib}`, a library of NVIDIA (and AMD) GPU "
                          "kernels only: the test exercises its GPU path",
                          path, getattr(d, "lineno", None))
    for d in [gate] + others:  # through the module's flags (`FLAG = True` after the import)
        flag = library_gate.mark_reason(d, tree, path)
        if flag is not None:
            return Reason("capability-gate", f"{'stacked with ' if d is not gate else ''}"
                          f"a gate on a library of GPU kernels only: "
                          f"{flag.text.split(': ', 1)[-1]}",
                          flag.path, flag.line)
    return None


def library_mark(mark) -> str | None:
    """The CUDA-only (or CUDA-alike) library a skip mark requires (`skipif(not
    _is_mslk_available())`, `skipUnless(is_xformers_available())`, one operand of the `or`
    of a `skipif`, of the `and` of a `skipUnless`), or that every value of a
    `parametrize` requires through its marks; else None (cuda_only.toml `gate_stacks`)."""
    if isinstance(mark, (ast.List, ast.Tuple)):
        return next((lib for m in mark.elts for lib in [library_mark(m)] if lib), None)
    if not isinstance(mark, ast.Call) or not mark.args:
        return None
    name = _called(mark)
    cond = mark.args[0]
    if name in _SKIP_IF:
        ops = cond.values if isinstance(cond, ast.BoolOp) and isinstance(cond.op, ast.Or) \
            else [cond]
        return next((lib for v in ops if isinstance(v, ast.UnaryOp)
                     and isinstance(v.op, ast.Not)
                     for lib in [cuda_library_check(v.operand)] if lib), None)
    if name in _SKIP_UNLESS:
        ops = cond.values if isinstance(cond, ast.BoolOp) and isinstance(cond.op, ast.And) \
            else [cond]
        return next((lib for v in ops for lib in [cuda_library_check(v)] if lib), None)
    if name == "parametrize" and len(mark.args) > 1 \
            and isinstance(mark.args[1], (ast.List, ast.Tuple)) and mark.args[1].elts:
        libs = []
        for v in mark.args[1].elts:
            marks = next((k.value for k in v.keywords if k.arg == "marks"), None) \
                if isinstance(v, ast.Call) and _called(v) == "param" else None
            lib = library_mark(marks) if marks is not None else None
            if not lib:
                return None
            libs.append(lib)
        return libs[0]
    return None


def _called(call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


_SKIP_IF = frozenset({"skipif", "skipIf"})
_SKIP_UNLESS = frozenset({"skipUnless"})
_ROCM_TESTS = frozenset({"is_hip", "is_rocm", "_is_hip", "_is_rocm"})


def _is_rocm_test(node) -> bool:
    """`torch.version.hip`, `torch.version.hip is not None`, `is_hip()`, `is_rocm()`."""
    if _is_build(node, ("hip",)):
        return True
    if isinstance(node, ast.Compare) and len(node.ops) == 1 \
            and isinstance(node.ops[0], ast.IsNot) and _is_none(node.comparators[0]):
        return _is_build(node.left, ("hip",))
    if isinstance(node, ast.Call) and not node.args:
        f = node.func
        return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in _ROCM_TESTS
    return False


def _is_unavailable(node) -> bool:
    """`not torch.cuda.is_available()`."""
    if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
            and isinstance(node.operand, ast.Call)):
        return False
    f = node.operand.func
    return isinstance(f, ast.Attribute) and f.attr == "is_available" \
        and isinstance(f.value, ast.Attribute) and f.value.attr == "cuda"


def _excludes_rocm(gate):
    """The ROCm operand of `skipif(not torch.cuda.is_available() or <ROCm test>)`, or None."""
    if not isinstance(gate, ast.Call) or not gate.args:
        return None
    f = gate.func
    if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) not in _SKIP_IF:
        return None
    cond = gate.args[0]
    if not (isinstance(cond, ast.BoolOp) and isinstance(cond.op, ast.Or)):
        return None
    if not any(_is_unavailable(v) for v in cond.values):
        return None
    return next((v for v in cond.values if _is_rocm_test(v)), None)
