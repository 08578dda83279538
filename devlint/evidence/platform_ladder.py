"""Principle: a platform ladder gives each platform its own code.

An if/elif chain in which one arm tests for CUDA (`is_cuda_alike()`, `is_cuda()`,
`torch.cuda.is_available()`) and another names a non-CUDA platform
(`current_platform.is_xpu()`, `torch.xpu.is_available()`) dispatches: the CUDA arm's literals
are that platform's own (SPEC 3). Evidence: the chain's tests (file:line of the CUDA arm).
Limits: excluding the CPU or some platforms (`if not is_xpu() and not is_rocm():`) is not a
ladder: out-of-tree platforms exist. Also which tests name a platform at all
(`is_platform_test`), which the module-level principles use to skip dispatching code.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

# A platform dispatch: an if/elif chain in which one arm tests for CUDA (`is_cuda_alike()`,
# `is_cuda()`, `torch.cuda.is_available()`) and another names a non-CUDA platform gives each
# platform its own code; the CUDA arm's literals are that platform's own (SPEC 3, dispatch).
_CUDA_ARM_QUERIES = {"is_cuda", "is_cuda_alike", "torch.cuda.is_available"}
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
