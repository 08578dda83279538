"""Principle: a platform ladder gives each platform its own code.

An if/elif chain in which one arm tests for CUDA (`is_cuda_alike()`, `is_cuda()`,
`torch.cuda.is_available()`) and another names a non-CUDA platform
(`current_platform.is_xpu()`, `torch.xpu.is_available()`) dispatches: the CUDA arm's literals
are that platform's own (SPEC 3). Evidence: the chain's tests (file:line of the CUDA arm).
Limits: excluding the CPU or some platforms (`if not is_xpu() and not is_rocm():`) is not a
ladder: out-of-tree platforms exist; nor is an allow-list that names CUDA beside the others
(`if device_type not in ("cuda", "xpu"): return`): CUDA and XPU go on together. Also which tests name a platform at all
(`is_platform_test`), which the module-level principles use to skip dispatching code.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason

# A platform dispatch: an if/elif chain in which one arm tests for CUDA (`is_cuda_alike()`,
# `is_cuda()`, `torch.cuda.is_available()`) and another names a non-CUDA platform gives each
# platform its own code; the CUDA arm's literals are that platform's own (SPEC 3, dispatch).
_CUDA_ARM_QUERIES = {"is_cuda", "is_cuda_alike", "torch.cuda.is_available"}
# a project's CUDA availability helper, the twin of `is_torch_npu_available()` in the same
# ladder (`is_torch_cuda_available()`, `is_cuda_available()`, `cuda_is_available()`): it names
# CUDA's arm only where another arm names another accelerator (`_mark_dispatch`)
CUDA_AVAILABILITY_NAME = re.compile(
    r"(?i)^_*(?:is_(?:torch_)?cuda_(?:is_)?available|(?:torch_)?cuda_(?:is_)?available)$")
# platforms other than CUDA and ROCm, as `current_platform.is_<name>()` asks for them
OTHER_PLATFORMS = frozenset({"xpu", "tpu", "cpu", "hpu", "npu", "mps", "neuron", "out_of_tree"})
_OTHER_PLATFORM_QUERIES = {f"is_{p}" for p in OTHER_PLATFORMS}
_OTHER_PLATFORM_MODULES = ("torch.xpu", "torch.mps", "torch.npu", "torch.hpu", "torch.backends.mps")


_PLATFORM_TEST_NAMES = {"is_cuda", "is_cuda_alike", "is_rocm"} | _OTHER_PLATFORM_QUERIES


def _is_platform_test(test) -> bool:
    """A test that names a platform (`current_platform.is_cuda_alike()`, `not is_rocm()`,
    `torch.cuda.is_available()`, and `and`/`or` of them)."""
    if isinstance(test, ast.UnaryOp):
        return _is_platform_test(test.operand)
    if isinstance(test, ast.BoolOp):
        return any(_is_platform_test(v) for v in test.values)
    if isinstance(test, ast.Call):
        f = test.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name in _PLATFORM_TEST_NAMES or (
            name == "is_available" and isinstance(f, ast.Attribute)
            and getattr(f.value, "attr", None) in ("cuda", "xpu", "mps", "npu"))
    return False


def _outside_platform_tests(tree):
    """The nodes of a module outside `if <platform test>:` blocks: code that dispatches on the
    platform uses the CUDA runtime where it is CUDA (kv_offload's `host_register`)."""
    stack = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.If) and _is_platform_test(n.test):
            stack.append(n.test)
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


def ladder_reason(arm, path: str | None) -> Reason:
    """The reason for a candidate in the CUDA arm of a platform ladder (evidence: the arm's
    test)."""
    return Reason("platform-ladder", "in the CUDA arm of a platform ladder that also names "
                  "another platform", path, arm.lineno)


# --- which tests name an accelerator other than CUDA ------------------------------------
# Accelerators torch and its plugins know besides CUDA (ROCm is "cuda" to torch). The CPU is
# not among them: excluding or choosing the CPU says nothing about the other accelerators.
ACCELERATORS = frozenset({"xpu", "npu", "mps", "hpu", "mlu", "musa", "xla", "tpu", "neuron",
                          "neuroncore", "ipu", "sdaa", "gcu", "maia", "mtia", "dml",
                          "directml", "privateuseone", "habana", "gaudi", "ascend"})
_ACC = "|".join(sorted(ACCELERATORS, key=len, reverse=True))
# `is_torch_xpu_available()`, `is_npu_available()`, `has_xpu`, `_is_npu`, `IS_HPU`,
# `xpu_is_available()`, `use_mlu`, `torch_npu_available`: a query or a flag named after one
_OTHER_NAME = re.compile(
    rf"(?i)^_*(?:(?:is|has|use|with|on)_(?:torch_)?(?:{_ACC})(?:_(?:is_)?available|_backend)?"
    rf"|(?:torch_)?(?:{_ACC})_(?:is_)?available)$")
_DEVICE_VALUE = re.compile(rf"(?i)^(?:{_ACC})(?::\d+)?$")


def names_other_accelerator_value(node) -> bool:
    """A str constant (or an f-string's head) naming another accelerator's device:
    `"xpu"`, `"npu:0"`, `f"npu:{i}"`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(_DEVICE_VALUE.fullmatch(node.value))
    if isinstance(node, ast.JoinedStr) and node.values \
            and isinstance(node.values[0], ast.Constant) \
            and isinstance(node.values[0].value, str):
        head = node.values[0].value
        return head.endswith(":") and bool(_DEVICE_VALUE.fullmatch(head[:-1]))
    return False


def other_accelerator_test(test, qualname) -> bool:
    """A test that asks about an accelerator other than CUDA, written with torch's own device
    modules (`torch.xpu.is_available()`, `torch.backends.mps.is_available()`,
    `torch.npu.device_count() > 0`, `hasattr(torch, "npu")`, `getattr(torch.version, "musa",
    None)`, `torch.version.musa`, a module held under the accelerator's name:
    `npu.is_available()`), a project's availability
    helpers or flags named after one (`is_torch_xpu_available()`, `is_npu_available()`,
    `_is_hpu`), a device-type comparison (`device.type == "xpu"`, `"npu" in device_type`), or
    `and`/`or`/`not` of them. `qualname` resolves a name through the file's imports.
    Limits: only names and values that name the accelerator count (never one project's list of
    helpers); the CPU is no other accelerator."""
    if isinstance(test, ast.UnaryOp):
        return other_accelerator_test(test.operand, qualname)
    if isinstance(test, ast.BoolOp):
        return any(other_accelerator_test(v, qualname) for v in test.values)
    if isinstance(test, ast.Compare):
        return any(names_other_accelerator_value(s) or _other_collection(s)
                   or other_accelerator_test(s, qualname)
                   for s in (test.left, *test.comparators))
    if isinstance(test, ast.Call):
        f = test.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name in ("hasattr", "getattr") and len(test.args) >= 2 \
                and isinstance(test.args[1], ast.Constant) \
                and str(test.args[1].value).lower() in ACCELERATORS:
            # `hasattr(torch, "npu")`, `getattr(torch.version, "musa", None) is not None`
            return True
        if name in ("is_available", "device_count", "is_initialized"):
            q = qualname(f) or ""
            parts = q.split(".")
            if len(parts) >= 3 and parts[0] == "torch" and parts[-2] in ACCELERATORS:
                return True
            # `npu = getattr(torch, "npu", None)` then `npu.is_available()`: the module is
            # asked under the accelerator's own name
            recv = f.value if isinstance(f, ast.Attribute) else None
            return isinstance(recv, ast.Name) and recv.id.lower() in ACCELERATORS
        return bool(_OTHER_NAME.match(name)) or name in _OTHER_PLATFORM_QUERIES - {"is_cpu"}
    if isinstance(test, ast.Attribute) and test.attr.lower() in ACCELERATORS \
            and isinstance(test.value, ast.Attribute) and test.value.attr == "version":
        return True  # `torch.version.musa`: a MUSA build of torch
    if isinstance(test, (ast.Name, ast.Attribute)):
        name = test.attr if isinstance(test, ast.Attribute) else test.id
        return bool(_OTHER_NAME.match(name))
    return False


def _other_collection(node) -> bool:
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(
        names_other_accelerator_value(e) for e in node.elts)


def exits_for_other_accelerator(test, qualname) -> bool:
    """The test of an early exit (`if <test>: return`) that sends another accelerator away
    first, so that a later CUDA test of the block is one arm of a ladder written with early
    exits. Limits: not an allow-list that names CUDA too (`allow_list_with_cuda`)."""
    return not allow_list_with_cuda(test) and other_accelerator_test(test, qualname)


def allow_list_with_cuda(test) -> bool:
    """`device_type not in ("cuda", "tpu", "xpu")` (or `not (... in ...)`): true for the
    platforms the list does not name; CUDA and the accelerators it names are not told apart,
    they all go on together. Such a test excludes platforms, it handles none of them (not a
    ladder arm, not a statement beside CUDA's)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
            and isinstance(test.operand, ast.Compare):
        test = ast.Compare(test.operand.left, [_negated_op(op) for op in test.operand.ops],
                           test.operand.comparators)
    return isinstance(test, ast.Compare) and any(isinstance(op, ast.NotIn) for op in test.ops) \
        and any(_names_cuda_too(s) for s in (test.left, *test.comparators))


def _negated_op(op):
    return ast.NotIn() if isinstance(op, ast.In) else ast.In() if isinstance(op, ast.NotIn) else op


def _names_cuda_too(node) -> bool:
    """A collection of device values that names CUDA and another accelerator."""
    return _other_collection(node) and any(
        isinstance(e, ast.Constant) and isinstance(e.value, str)
        and e.value.split(":")[0] == "cuda" for e in node.elts)


def ladder_else_reason(head, path: str | None) -> Reason:
    """The final `else:` of a ladder whose arms handled other accelerators: what is left is
    the ladder's own default (evidence: the ladder's first test). Limits: only where the
    ladder also has a CUDA arm or handled two other accelerators or more; after one other
    platform alone (`if is_tpu(): ... else:`) the else is every remaining platform's."""
    return Reason("platform-ladder", "in the final else of a platform ladder that handled "
                  "other accelerators", path, head.lineno)


def ladder_test_reason(arm, path: str | None) -> Reason:
    """The CUDA test of one arm of a ladder: it only picks CUDA's own arm."""
    return Reason("platform-ladder", "the test of one arm of a platform ladder that also "
                  "names another accelerator", path, arm.lineno)
