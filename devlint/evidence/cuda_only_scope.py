"""Principle: a function or class that is CUDA-only by its name or its body.

Evidence (a `Reason("cuda-only-scope", ...)` at the scope's `def`/`class` line): its name names
a CUDA-only stack (`_cuda_graph_capture` no, `FlashInferBackend` yes), an unconditional import
of one at its top, or direct use of the CUDA runtime (`.cuda_stream`, `cudart`,
`DeviceType.CUDA`). `FileFacts.cuda_only_scope` also counts a function that always calls into
a CUDA-only module, and `cuda_only_callee` a value passed to such a call.
Limits: test functions are not CUDA-only by their name; a call under `if`/`try` picks a
backend among others; availability checks, getters and setters take no CUDA data.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.vocabulary import _cuda_only_defaults, _imported_modules, _names_cuda_module

_P = "cuda-only-scope"


_VENDOR_NAME = re.compile(r"cuda(?!_?graph)|nccl|cutlass|cutedsl|flashinfer|deepep|deep_gemm"
                          r"|nvshmem|nvfp4|cublas|cudnn|nvtx|nvml|nvls|nixl_?ep")
# direct use of the CUDA runtime (raw stream handles, CUDA IPC, cudart); CUDA graphs are not
# among them: torch.xpu.XPUGraph and friends give them a generic form
# (CUDA IPC makes the whole module CUDA-only: cuda_only.toml `runtime`)
_RUNTIME_ATTRS = {"cuda_stream", "cudart", "cudaStream_t", "MemPool"}
_RUNTIME_NAMES = {"CUstream", "CudaRTLibrary", "cudart", "cuda_rt", "cupy"}
_RUNTIME_MARKERS = tuple(_RUNTIME_ATTRS | _RUNTIME_NAMES | {"DeviceType.CUDA"})


# a name saying it moves data to CUDA or gets/sets CUDA state (`_tensors_to_cuda`,
# `_set_cuda_rng_state`) names the hardcoding itself, which has a generic form, not a CUDA-only
# stack: the bare word `cuda` in such a name exempts nothing, unless the scope reaches into
# torch.cuda internals that have no generic form (`torch.cuda.default_generators`)
_CUDA_ACCESSOR_NAME = re.compile(r"(^|_)(to|get|set)_cuda(_|$)")


def _uses_cuda_only_api(scope) -> bool:
    """The scope reaches into `torch.cuda` beyond the APIs the table gives a generic form
    (`torch.cuda.default_generators`, `torch.cuda.random.get_rng_state`, `_lazy_init`)."""
    from devlint.profiles.torch_api import load_table

    generic = {e.name for e in load_table() if e.replacement}
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and n.id == "_lazy_init":
            return True
        if not isinstance(n, ast.Attribute):
            continue
        parts, cur = [n.attr], n.value
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name):
            parts.append(cur.id)
        dotted = ".".join(reversed(parts))
        if dotted.startswith("torch.cuda.") and dotted.count(".") >= 2 \
                and dotted not in generic and not any(g.startswith(dotted + ".")
                                                      for g in generic):
            return True
    return False


def _scope_reason(scope, text: str, path: str | None = None) -> Reason | None:
    name = scope.name.lower()
    m = _VENDOR_NAME.search(name)
    if m and m.group(0) == "cuda" and _CUDA_ACCESSOR_NAME.search(name) \
            and not _VENDOR_NAME.search(_CUDA_ACCESSOR_NAME.sub("_", name)) \
            and not _uses_cuda_only_api(scope):
        m = None
    if m and not name.startswith("test"):
        return Reason(_P, f"`{scope.name}` names `{m.group(0)}`",
                          path, scope.lineno)
    if not isinstance(scope, ast.ClassDef):
        # an unconditional import at the function's top level (one under an `if` picks a
        # backend, it does not make the function CUDA-only)
        imports = _cuda_only_defaults()[0][2]
        for st in scope.body:
            for qual in _imported_modules(st):
                if _names_cuda_module(qual, imports):
                    return Reason(_P, f"`{scope.name}` imports `{qual}`",
                          path, scope.lineno)
    if not any(marker in text for marker in _RUNTIME_MARKERS):
        return None  # the source says it cheaply; walk the tree only to confirm
    for n in ast.walk(scope):
        if isinstance(n, ast.Attribute) and n.attr in _RUNTIME_ATTRS:
            return Reason(_P, f"`{scope.name}` uses the CUDA runtime (`.{n.attr}`)",
                          path, scope.lineno)
        if isinstance(n, ast.Attribute) and n.attr == "CUDA" and (
                getattr(n.value, "attr", None) == "DeviceType"
                or getattr(n.value, "id", None) == "DeviceType"):
            return Reason(_P, f"`{scope.name}` names the CUDA device type explicitly "
                          "(`DeviceType.CUDA`)",
                          path, scope.lineno)
        if isinstance(n, ast.Name) and n.id in _RUNTIME_NAMES:
            return Reason(_P, f"`{scope.name}` uses the CUDA runtime (`{n.id}`)",
                          path, scope.lineno)
    return None
