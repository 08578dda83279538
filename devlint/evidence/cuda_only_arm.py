"""Principle: the arm of an `if` that calls a CUDA-only library is CUDA's own.

```python
elif is_sagemaker_mp_enabled():
    device = torch.device("cuda", smp.local_rank())   # smp: smdistributed.modelparallel
    torch.cuda.set_device(device)
```
The arm runs only where that library runs, and the library (`cuda_only.toml` `imports`:
CUTLASS, FlashInfer, cuda-python, NVML, SageMaker's distributed libraries ...) runs on NVIDIA
GPUs alone: the arm's devices are CUDA's on purpose, like code under a CUDA guard. Evidence:
the call into the library (file:line).
Limits: only the body of an `if`/`elif` arm (never an `else`, a whole function or a file: a
module calling the library somewhere is not CUDA-only, `cuda_only_module` decides that), and
only a call the arm makes itself (not one inside a nested function); an import alone is no
call.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.vocabulary import _cuda_only_defaults, _names_cuda_module

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def cuda_library_call(body, qualname):
    """(call, module path) of the first call the statements make into a CUDA-only library,
    else None. `qualname` resolves a name through the file's imports."""
    imports = _cuda_only_defaults()[0][2]
    stack = list(reversed(body))
    while stack:
        n = stack.pop()
        if isinstance(n, _NESTED):
            continue
        if isinstance(n, ast.Call):
            q = qualname(n.func) or ""
            if q and not q.startswith("torch.") and _names_cuda_module(q, imports):
                return n, q
        stack.extend(reversed(list(ast.iter_child_nodes(n))))
    return None


def arm_reason(call, qual: str, path: str | None) -> Reason:
    lib = qual.split(".")[0]
    return Reason("cuda-only-arm", f"in an arm that calls the CUDA-only library `{lib}`",
                  path, call.lineno)
