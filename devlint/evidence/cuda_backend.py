"""Principle: a test for another runtime's CUDA-only backend establishes CUDA.

ONNX Runtime runs a graph on torch's CUDA device only through its CUDA and TensorRT execution
providers: `if provider in ("CUDAExecutionProvider", "TensorrtExecutionProvider"): return
torch.device("cuda", ...)`, `torch.cuda.is_available() and "CUDAExecutionProvider" in
available`. The test asks "is this runtime on an NVIDIA GPU?", so the code under it, and the
CUDA query joined to it, map that backend to torch's CUDA device on purpose. Evidence: the
test naming the backend (file:line).
Limits: only names of backends that exist for NVIDIA GPUs alone (ONNX Runtime's
`CUDAExecutionProvider`, `TensorrtExecutionProvider`, `NvTensorRTRTXExecutionProvider`); a
membership test in a collection that also names another backend (`("CUDAExecutionProvider",
"ROCMExecutionProvider")`) is no such test; a backend name elsewhere (a list of providers to
try) exempts nothing.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

CUDA_ONLY_BACKENDS = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider",
                                "NvTensorRTRTXExecutionProvider"})


def _backend(node) -> bool:
    return isinstance(node, ast.Constant) and node.value in CUDA_ONLY_BACKENDS


def is_backend_test(test) -> bool:
    """True only where the runtime's CUDA-only backend is in use: `"CUDAExecutionProvider" in
    providers`, `provider == "CUDAExecutionProvider"`, `provider in ("CUDAExecutionProvider",
    "TensorrtExecutionProvider")` (every entry a CUDA-only backend)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, ast.In):
        if _backend(left):
            return True
        return isinstance(right, (ast.Tuple, ast.List, ast.Set)) and bool(right.elts) \
            and all(_backend(e) for e in right.elts)
    if isinstance(op, ast.Eq):
        return _backend(left) or _backend(right)
    return False


def backend_reason(test, path: str | None) -> Reason:
    return Reason("cuda-backend", "a test for another runtime's CUDA-only backend (ONNX "
                  "Runtime's CUDA/TensorRT execution provider)", path,
                  getattr(test, "lineno", None))


def joined_backend_test(test):
    """The backend-test operand of an `and` (`device.type == "cuda" and
    "CUDAExecutionProvider" in available`), else None."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next((v for v in test.values if is_backend_test(v)), None)
    return None
