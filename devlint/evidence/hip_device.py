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
own device module, so its API is right there, but a literal "cuda" is not their device. A
test of `is_cuda_alike()` inside a generic file is `cuda_alike_guard`'s business, not this
one's. Cost, on vLLM's history: upstream once replaced `device="cuda"` in a ROCm AITER
module with the query tensor's device (PR #40871): a fix of which GPU (the tensor's own
rather than the current one), not of which platform (the same commit added new
`device="cuda"` literals to that file), so that corpus case is no longer found.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.vocabulary import _imported_modules

# CUDA-alike libraries with ports to other accelerators that rebind `torch.cuda` (their
# `torch.cuda` API is right everywhere they run, a "cuda" device literal is not)
_PORTED = ("transformer_engine",)


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
            return any(q.split(".")[0].startswith(_PORTED)
                       for s in nodes for q in _imported_modules(s))
    return False
