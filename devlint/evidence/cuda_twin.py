"""Principle: the deliberate CUDA twin of a generic helper is not a finding (pattern J).

`require_torch_multi_gpu` defined next to `require_torch_multi_accelerator`,
`move_to_cuda` next to `move_to_device`: the project offers both on purpose, the generic one
for generic code and the CUDA one for code that needs CUDA. Evidence: the generic twin's `def`
in the same module or class (file:line), whose name is the CUDA one's with `gpu`/`cuda`
replaced by `accelerator`/`device` (plural kept), or, for a per-platform dispatch, `cuda`
replaced by another platform or `native` (`forward_cuda` next to `forward_native`).
Limits: the twin must be defined in the same module or class, not merely imported; a function
named after CUDA with no generic twin is judged by its body like any other.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

# the generic forms, and the other platforms' variants of a per-platform dispatch
# (`forward_cuda` next to `forward_native` / `forward_xpu`); never `cpu`: `to_cuda` next to
# `to_cpu` is a pair of device moves, not a dispatch
_PLATFORMS = ("native", "generic", "default", "xpu", "npu", "hpu", "mps", "hip", "musa", "tpu")
_GENERIC = {"gpu": ("accelerator", "device"), "gpus": ("accelerators", "devices"),
            "cuda": ("accelerator", "device") + _PLATFORMS}


def twin_names(name: str) -> list:
    """The names a generic twin of `name` could have (empty when `name` names no CUDA/GPU)."""
    parts = name.split("_")
    out = []
    for i, p in enumerate(parts):
        for generic in _GENERIC.get(p.lower(), ()):
            out.append("_".join(parts[:i] + [generic] + parts[i + 1:]))
    return out


def twin_reason(scope, siblings: dict, path: str | None) -> Reason | None:
    """`siblings`: {name: def line} of the functions defined next to `scope`."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for twin in twin_names(scope.name):
        if twin in siblings:
            return Reason("cuda-twin", f"`{scope.name}` is the CUDA twin of the generic "
                          f"`{twin}` defined next to it", path, siblings[twin])
    return None


def defined_functions(body) -> dict:
    """{name: line} of the functions a module or class body defines."""
    return {s.name: s.lineno for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
