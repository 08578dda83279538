"""Principle: a literal under a guard that already established CUDA is CUDA's own.

Evidence: the enclosing test (`if t.is_cuda:`, `if current_platform.is_cuda():`,
`torch.cuda.is_initialized()`, `device.type == "cuda"`, the else-branch of the opposite test,
an early `if not <cuda>: return`, `if TYPE_CHECKING:`), or the literal's own expression
testing for a CUDA-alike platform (`"cuda" if is_cuda_alike() else "cpu"`).
Limits: `is_cuda_alike()` / `is_rocm()` cover ROCm too, where devices still come from the
platform; `torch.cuda.is_available()` asks "is there a GPU?" and guards nothing (it is itself a
DL401 finding); `if device == "cpu": return` is not evidence of CUDA.
The polarity of a test is computed by the triage descent (`devlint.analysis.descent`), which
puts the `guard_reason` of the innermost guard on the `Where` of each candidate under it.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

# Only a test that establishes NVIDIA CUDA itself exempts the code under it. `is_cuda_alike()`
# and `is_rocm()` cover ROCm too, where upstream still derives devices from the platform
# (vLLM fixed `device="cuda"` under `if current_platform.is_rocm():`).
_PLATFORM_CUDA_QUERIES = {"is_cuda"}
# `torch.cuda.is_available()` is not among the guards: code uses it to ask "is there a GPU?",
# and upstream fixes rewrite the literals under it (vLLM PR #38901 keeps the test and changes
# `device = "cuda:0"` below it); it is itself a DL401 finding.
_TORCH_CUDA_QUERIES = {"torch.cuda.is_initialized"}


def _alike_polarity(test) -> int:
    """+1 for `is_cuda_alike()` / `current_platform.is_cuda_alike()` (also as one operand of
    `and`), -1 for its negation, 0 otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -_alike_polarity(test.operand)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return 1 if any(_alike_polarity(v) > 0 for v in test.values) else 0
    if isinstance(test, ast.Call):
        test = test.func
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return 1 if name == "is_cuda_alike" else 0


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


_GUARD_TEXT = {
    "if": "under a test that establishes CUDA",
    "else": "in the else-branch of a test that rules CUDA out",
    "exit": "after an early exit or assert that leaves only CUDA",
    "alike": "its own expression tests for a CUDA-alike platform",
}


def guard_reason(kind: str, test, path: str | None) -> Reason:
    """The reason for a candidate under a CUDA guard: `kind` is "if", "else", "exit" or
    "alike"; the evidence is the test's line."""
    return Reason("cuda-guard", _GUARD_TEXT[kind], path, getattr(test, "lineno", None))
