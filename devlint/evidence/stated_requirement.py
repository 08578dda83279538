"""Principle: a module whose docstring states that it requires CUDA is CUDA-only by contract.

a module docstring `Megatron-LM backend ... Requirements: - PyTorch with CUDA support`, or
`Fused channel RMSNorm + SiLU. Even channel counts up to 2048. CUDA only.`: the module
says what it is for, and its devices are CUDA's on purpose (a backend wrapping a CUDA-only
framework, a CUDA kernel's launcher). Evidence: the docstring's line that states it (file:line).
Limits: only the module's own docstring (not comments, not a function's); the statement must
be a sentence or a list item of its own (`Requires CUDA.`, `- PyTorch with CUDA support`,
`CUDA only.`): `CUDA-only primitives, so on ROCm we ...` describes something else, and a
statement that also names another platform (`requires CUDA or XPU`) is no CUDA contract. Test
modules are never CUDA-only by their docstring: their gates say where they run.
A benchmark module (`kernel_benchmark.is_benchmark_path`) whose docstring states the NVIDIA
hardware it models or measures (`a roofline estimation based on TOPS and peak compute
bandwidth of an NVIDIA H100 or B200`) states it the same way: its timings and spec tables are
those GPUs', and its devices are CUDA's on purpose. Limits: `NVIDIA` followed by a GPU model or
architecture (`NVIDIA H100`, `NVIDIA B200`, `NVIDIA Hopper`), not a bare model code (`H100` may
name a config); a docstring that also names another vendor's hardware or another platform
(AMD, MI300, ROCm, Intel, XPU, Gaudi, TPU, Ascend, MPS) states no CUDA-only purpose; only
benchmarks (a library module naming the GPU it was tuned on still runs elsewhere).
"""
from __future__ import annotations

import ast
import os
import re

from devlint.evidence import Reason
from devlint.evidence.vocabulary import is_test_path

# at the start of a line or a sentence, after an optional list bullet
_STATED = re.compile(
    r"(?im)(?:^|(?<=[.:;]\s))\s*(?:[-*\u2022]\s*)?(?:"
    r"(?:it |this (?:module|file|backend) )?requires? (?:an? )?(?:NVIDIA )?(?:CUDA\b|GPU with CUDA)"
    r"|(?:PyTorch|torch) (?:built )?with CUDA(?: support)?\s*$"
    r"|CUDA[- ]only\s*(?:[.;:]|$))")
_OTHER = re.compile(r"(?i)\b(?:or|and|/|,)\s*(?:xpu|npu|mps|hpu|mlu|musa|xla|tpu|neuron|rocm|hip"
                    r"|cpu|other accelerators?)\b")


# a benchmark's statement of the NVIDIA hardware it models, and what cancels it
_NVIDIA_GPU = re.compile(r"\bNVIDIA\s+(?:[ABHL]\d{2,3}\b|GB\d{3}\b|H20\b|RTX\s?\d{4}\b"
                         r"|Hopper\b|Blackwell\b|Ampere\b)")
_OTHER_HARDWARE = re.compile(r"(?i)\b(?:AMD|MI\d{3}\w*|ROCm|HIP|Intel|XPU|Gaudi|HPU|TPU|Ascend"
                             r"|NPU|MPS|Apple|Instinct)\b")


def stated_requirement_reason(tree: ast.Module, path: str | None) -> Reason | None:
    """The reason for a module whose docstring states a CUDA requirement, else None."""
    if path is not None and is_test_path(os.path.abspath(path).replace(os.sep, "/").split("/")):
        return None
    body = tree.body
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return None
    doc = body[0].value.value
    if "NVIDIA" in doc and path is not None:
        why = _stated_hardware(doc, path, body[0].lineno)
        if why is not None:
            return why
    if "CUDA" not in doc and "cuda" not in doc:
        return None
    for offset, line in enumerate(doc.splitlines()):
        m = _STATED.search(line)
        if m and not _OTHER.search(line):
            return Reason("stated-requirement", "its docstring states that it requires CUDA "
                          f"(`{line.strip()[:60]}`)", path, body[0].lineno + offset)
    return None


def _stated_hardware(doc: str, path: str, first: int) -> Reason | None:
    """A benchmark's docstring naming the NVIDIA GPUs it models and no other hardware."""
    from devlint.evidence.kernel_benchmark import is_benchmark_path

    m = _NVIDIA_GPU.search(doc)
    if m is None or _OTHER_HARDWARE.search(doc) or not is_benchmark_path(path):
        return None
    offset = doc.count("\n", 0, m.start())
    line = doc.splitlines()[offset].strip()
    return Reason("stated-requirement", "its docstring states the NVIDIA hardware the "
                  f"benchmark models (`{line[:60]}`)", path, first + offset)


# a function's or class's docstring saying it wraps or launches a CUDA-only stack
_WRAPS = re.compile(
    r"(?i)\b(?:wrap(?:per|s|ping)?|launch(?:es|er|ing)?|binding|bindings|interface)\b"
    r"[^.\n]{0,40}?\b(cute[- ]?dsl|cutlass|flashinfer|deep[-_ ]?gemm|nvshmem|cublas(?:lt)?|cudnn"
    r"|tensorrt|nccl)\b")


def scope_reason(scope, path: str | None) -> Reason | None:
    """A function or class whose docstring's first paragraph states that it requires CUDA
    (as a module's does, above), or that it wraps or launches a CUDA-only stack (`Opaque
    wrapper around the CuTe-DSL CSR build`, `Launches the CUTLASS kernel`). Limits: the first
    paragraph only (what the scope is for, not its notes); test functions and classes are not
    CUDA-only by their docstring; a mention with another platform (`or ROCm`) is none; CUDA
    graphs are no CUDA-only stack (other accelerators have graphs too)."""
    if scope.name.lower().startswith("test"):
        return None
    doc = ast.get_docstring(scope, clean=False) if not isinstance(scope, ast.Lambda) else None
    if not doc or ("CUDA" not in doc and not re.search(r"(?i)cute|cutlass|flashinfer|gemm"
                                                       r"|nvshmem|cublas|cudnn|tensorrt|nccl",
                                                       doc)):
        return None
    first = doc.strip().split("\n\n", 1)[0]
    for offset, line in enumerate(first.splitlines()):
        m = _STATED.search(line) or _WRAPS.search(line)
        if m and not _OTHER.search(line):
            return Reason("stated-requirement", f"`{scope.name}`'s docstring states that it "
                          f"is CUDA-only (`{line.strip()[:60]}`)", path,
                          scope.body[0].lineno + offset)
    return None
