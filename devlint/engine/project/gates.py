"""Cheap gates of the project stage: what a module's text says before it is parsed (a CUDA
runtime marker, another platform named, a CUDA-only import), and a module's own CUDA-only
reason from its tree (`devlint.evidence.cuda_only_module`)."""
from __future__ import annotations

import os
from functools import lru_cache

from devlint.engine.project.package import imports_of, top_imports
from devlint.evidence import cuda_only_module, platform_ladder, vocabulary

# platforms other than CUDA and ROCm (an exclusion must name one of them, not CPU alone)
_NON_CUDA_ALIKE = platform_ladder.OTHER_PLATFORMS


def _text_reason(path: str, text: str | None, tree) -> str | None:
    """Why the module's imports or CUDA runtime use make it CUDA-only (not its folders)."""
    if tree is None or text is None:
        return None
    return (cuda_only_module._cuda_only_reason(os.path.basename(path), tree)
            or cuda_only_module._runtime_reason(tree, text))


@lru_cache(maxsize=1)
def _needles() -> tuple:
    """Bytes needles: (runtime markers, names of another platform)."""
    exact, prefixes, _ = vocabulary._runtime_markers()
    markers = tuple(m.encode() for m in (*exact, *prefixes))
    # `torch.cuda.is_available()` asks whether there is CUDA at all: the module has a path
    # without it
    others = tuple(f"is_{p}(".encode() for p in sorted(_NON_CUDA_ALIKE | {"rocm"})) + (
        b"torch.xpu", b"torch.npu", b"torch.mps", b"cuda.is_available(")
    return markers, others


def _names_other_platform(data: bytes) -> bool:
    """The module tests for, or uses, a platform other than NVIDIA CUDA (`is_rocm()`,
    `is_xpu()`, `torch.xpu` ...): it is platform-aware, and a call into a CUDA-only module is
    its CUDA path, not all of it."""
    return any(n in data for n in _needles()[1])


def _may_be_cuda_only(data: bytes) -> bool:
    """Whether the module's own facts could make it CUDA-only: a runtime marker in its text,
    or an import of a CUDA-only stack at its top level (a column-0 import, or any import when
    a column-0 `try:` could hold it). Otherwise it is not parsed for them."""
    if any(m in data for m in _needles()[0]):
        return True
    stacks = vocabulary._cuda_only_defaults()[0][2]
    text = data.decode("utf-8", "replace")
    if any(m and not lvl and vocabulary._names_cuda_module(m, stacks)
           for m, lvl in top_imports(text)):
        return True
    if "\ntry:" not in text and not text.startswith("try:"):
        return False
    seen: list = []
    imports_of("", data, top="", seen=seen)
    return any(vocabulary._names_cuda_module(m, stacks) for m in seen)
