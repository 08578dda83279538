"""Principle: in a ROCm (HIP) module, "cuda" is the name of the device it runs on.

PyTorch's ROCm build calls the AMD GPU the "cuda" device type (`torch.device("cuda")`,
`.cuda()`, `device="cuda"` all address the HIP device), as its `torch.cuda` API is HIP's. A
module that only ever runs on ROCm (or on CUDA or ROCm) is a CUDA platform module for torch:
its device literals name its own device, like its `torch.cuda` calls, and a device-generic
form would change nothing on any platform the module can run on. So the device-literal rules
(DL101-DL106) do not report them, as the API rules do not.
Evidence: the file-level CUDA-alike reason `analysis.triage` found (`FileFacts.cuda_alike`,
from `evidence/cuda_only_module.py`): a name or folder of AMD's stacks (`rocm_aiter_*.py`,
`amd/`, `hip/`, `flydsl_*`, `mori*`), an unconditional top-level import of one (`aiter`,
`flydsl`, `mori`). The `location` is that evidence's.
Limits: the shared code of a vendor family (a folder whose backends are NVIDIA/AMD folders
only, CUDA-alike for the API rules) is not a ROCm module: a sibling folder that is no vendor
(`triton/` beside `cuda/`) may run elsewhere, so its literals stay reported. A file
CUDA-alike through TransformerEngine (`transformer_engine`) keeps its device literals
reported: that NVIDIA library's ports to other accelerators rebind `torch.cuda.*` to their
own device module, so its API is right there, but a literal "cuda" is not their device. So
does a file CUDA-alike through a torch.cuda shim of another device (`import torchada` on
MUSA, `import torch_npu.contrib.transfer_to_npu` on Ascend). A
test of `is_cuda_alike()` inside a generic file is `cuda_alike_guard`'s business, not this
one's. Cost, on vLLM's history: upstream once replaced `device="cuda"` in a ROCm AITER
module with the query tensor's device (PR #40871): a fix of which GPU (the tensor's own
rather than the current one), not of which platform (the same commit added new
`device="cuda"` literals to that file), so that corpus case is no longer found.

The same holds for a function or class named for AMD's stack (`process_weights_hip_int4`,
`_rocm_fused_moe`, `forward_hip`, `AiterAttnBackend`, `ROCmFlashAttention`) in any file: it is
the ROCm arm of a dispatch, where `torch.cuda` is ROCm's device module and "cuda" the HIP
device, for the API rules and the literal rules alike (`hip_scope_reason`).
Evidence: a whole part of its name (split on `_` and on case changes, `ROCm` one word) is
`hip`, `rocm`, `aiter` or `amd`; or the parameter default of such a function; or an
enclosing function or class so named. The `location` is the scope's `def`/`class` line.
Limits: a part only (`chip`, `ship`, `hipster`, `amdahl` name no vendor); a predicate or a
switch that decides whether to take the ROCm path runs on every platform (`is_hip`,
`use_aiter`, `_should_use_rocm_kernel`, `check_amd`, `enable_aiter`), as does a name that
negates it (`non_rocm_path`, `forward_not_hip`) or also names another accelerator
(`hip_or_xpu`); a test (`test_*`, `Test*`) is collected on every platform whatever its name.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.dead_default import default_of
from devlint.evidence.vocabulary import _cuda_only_data, _imported_modules



def hip_device_reason(facts) -> Reason | None:
    """The reason a device literal of this file names the HIP device, or None."""
    alike = facts.cuda_alike
    if not alike or facts.cuda_only or getattr(alike, "path", None) != facts.path:
        return None  # the evidence of a vendor family is its folder, not this file
    return facts.memo("hip-device", lambda: None if _ported(alike, facts.tree) else Reason(
        "hip-device", "a ROCm (HIP) module, where torch names the AMD GPU \"cuda\" "
        f"({getattr(alike, 'text', alike)})",
        getattr(alike, "path", facts.path), getattr(alike, "line", None)))


def _ported(alike, tree) -> bool:
    """The CUDA-alike evidence is an import of a library with ports (TransformerEngine)."""
    line = getattr(alike, "line", None)
    if not line or tree is None:
        return False
    for stmt in tree.body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            nodes = [stmt] + ([s for s in ast.walk(stmt) if isinstance(s, ast.stmt)]
                              if isinstance(stmt, ast.Try) else [])
            ported = tuple(_cuda_only_data()["cuda_alike"].get("ported", ()))
            return any(q.split(".")[0].startswith(ported)
                       for s in nodes for q in _imported_modules(s))
    return False


# whole name parts that name AMD's GPU stack
_HIP_PARTS = {"hip", "rocm", "aiter", "amd"}
# a first part that makes the name a predicate or a switch (it runs to decide the path)
_DECIDES = {"is", "has", "use", "uses", "using", "should", "can", "supports", "support",
            "enable", "enabled", "disable", "check", "detect", "want", "wants", "needs", "need",
            "maybe", "try", "if", "when"}
_NEGATES = {"non", "not", "no", "without", "except", "skip"}
_OTHER = {"xpu", "npu", "cpu", "mps", "hpu", "musa", "xla", "tpu", "mlu", "gcu", "intel",
          "habana", "ascend", "neuron", "metal", "vulkan", "sycl"}
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+")


def name_parts(name: str) -> list[str]:
    """`process_weights_hip_int4` -> [process, weights, hip, int4];
    `ROCmFlashAttention` -> [rocm, flash, attention]; `HIPBackend` -> [hip, backend]."""
    parts = []
    for chunk in name.replace("ROCm", "Rocm").split("_"):
        parts.extend(p.lower() for p in _CAMEL.findall(chunk))
    return parts


def hip_named(name: str) -> bool:
    """The name says its scope is the ROCm (HIP) arm, within the limits above."""
    parts = name_parts(name)
    if not parts or not _HIP_PARTS & set(parts):
        return False
    if parts[0] in _DECIDES or parts[0] == "test" or _OTHER & set(parts):
        return False
    return not any(p in _NEGATES and i + 1 < len(parts) and parts[i + 1] in _HIP_PARTS
                   for i, p in enumerate(parts))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def hip_scope_reason(facts, node) -> Reason | None:
    """The reason `node` stands in a function or class named for AMD's stack, or None."""
    w = facts.where_of(node)
    if w is None:
        return None
    found = default_of(facts, node) if w.level != "function" or w.function else None
    start = (found[0] if found else None) or w.function or w.klass
    scope = start
    while scope is not None:
        if isinstance(scope, _SCOPES):
            hit = facts.memo(("hip-scope", id(scope)), lambda s=scope: hip_named(s.name))
            if hit:
                return Reason("hip-device", f"`{scope.name}` is named for AMD's ROCm stack, "
                              "where torch names the AMD GPU \"cuda\" and `torch.cuda` is "
                              "ROCm's", facts.path, scope.lineno)
        scope = facts.get_parent(scope) or facts.tree_parent(scope)
    return None
