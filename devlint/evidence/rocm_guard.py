"""Principle: under a test that holds only on ROCm, "cuda" is the name of the AMD GPU.

```python
_is_hip = is_hip()
_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip

if _is_hip:
    ON_GFX950 = "gfx950" in torch.cuda.get_device_properties("cuda").gcnArchName
if _use_aiter and x.is_cuda:
    ...
```
PyTorch's ROCm build calls the AMD GPU the "cuda" device type (`torch.device("cuda")`,
`.cuda()`, `device="cuda"`, `t.is_cuda` all address the HIP device), as its `torch.cuda` API
is HIP's. Code that runs only where the platform is ROCm is a ROCm module in small
(`hip-device`): its device literals name its own device, its `t.is_cuda` tells a device
tensor from a host one, and a device-generic form would change nothing on the one platform
it runs on. So neither the device-literal rules (DL101-DL106), the tensor tests (DL201,
DL202) nor the `torch.cuda` API rules (DL401-DL404) report code under such a test.
Evidence: the test and its line: a call of `is_rocm()` or `is_hip()` (any receiver,
`current_platform.is_rocm()`, any case, `is_ROCM()`; a longer name of the same predicate,
`is_hip_runtime()`, `is_rocm_platform()`), also as one operand of an `and`
(`is_hip() and ok`), the else-branch of its negation (`if not is_rocm(): ... else:`), the
rest of a block after `if not is_hip(): return` or `assert is_rocm()`; a flag assigned one,
also through a chain of flags, each an `and` one operand of which is the previous flag
(`_is_hip = is_hip()`, `_use_aiter = env and _is_hip`, `use_fused = _use_aiter and ok`),
as `cuda_value` follows flags; a value made only under such a test (else None), tested.
The other operands of an `and` with such an operand (`_is_hip and values.is_cuda`), or of an
`or` with its negation (`not is_hip() or not torch.cuda.is_available()`): the whole test
holds (or fails) only on ROCm, so what stands beside it decides nothing elsewhere. A
test class whose set-up skips unless ROCm (`if not is_ROCM(): self.skipTest(...)`) is one
too for its tests' bodies.
Limits: only a test that holds ONLY on ROCm: `is_cuda_alike()` also holds on CUDA
(`cuda-alike-guard`: the API rules only, its device literals stay reported), a negation's
own branch (`if not _is_hip: x.cuda()`) runs everywhere else, and an `or` with another
condition (`_is_hip or use_triton`) is no such test; a name that also names another
platform or a negation (`is_rocm_or_cuda`, `is_hip_not_supported`), or any word but
`runtime`, `platform`, `build`, `available`, `enabled`, `device`, `backend` after `is_rocm` /
`is_hip` (`is_rocm_disabled`), is no ROCm query; in an `and` only the operands after the ROCm
test are its (`x.to("cuda").training and is_hip()` runs the first everywhere); an early exit
counts for the rest of its own block only. A visibility variable or a backend name under the test stays reported
(DL301, DL501: `HIP_VISIBLE_DEVICES` is ROCm's variable, and a backend name is chosen by
the distributed layer, not by the device type). A value that mixes a ROCm-only source with
a CUDA or CUDA-alike one is `cuda-alike-guard`'s. A project rule that forbids the call
outright outranks it (`project_policy`).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

PRINCIPLE = "rocm-guard"
# the platform queries true only on ROCm (`is_hip()` is `is_rocm()` under another name)
_ROCM_PARTS = frozenset({"rocm", "hip"})
# a part that makes `is_rocm_...` name something else than ROCm alone
_NOT_ALONE = frozenset({"or", "not", "non", "no", "cuda", "nvidia", "xpu", "npu", "cpu", "mps",
                        "hpu", "musa", "xla", "tpu", "mlu"})

# the words after `is_rocm` / `is_hip` that keep the name the same question (`is_hip_runtime()`,
# `is_rocm_platform()`); any other (`is_rocm_disabled()`, `is_hip_unsupported()`) asks
# something else, true on CUDA machines too
_SAME_QUERY = frozenset({"runtime", "platform", "build", "available", "enabled", "device",
                         "backend"})


def rocm_query(test) -> bool:
    """`is_rocm()`, `current_platform.is_rocm()`, `is_hip()`, `is_ROCM()`, `is_hip_runtime()`,
    `is_rocm_platform()`: a platform query (no argument) true only on ROCm."""
    if not isinstance(test, ast.Call) or test.args or test.keywords:
        return False
    func = test.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    parts = name.lower().split("_")
    return len(parts) >= 2 and parts[0] == "is" and parts[1] in _ROCM_PARTS \
        and not _NOT_ALONE & set(parts) and set(parts[2:]) <= _SAME_QUERY


def polarity(test, query) -> int:
    """+1 where `test` is true only where the platform `query` (a predicate of a call) asks
    about holds (the query, also as one operand of `and`, or every operand of an `or`), -1
    where it is false only there (its negation, an `or` with a negated one), 0 otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -polarity(test.operand, query)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return 1 if any(polarity(v, query) > 0 for v in test.values) else 0
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        signs = [polarity(v, query) for v in test.values]
        if any(s < 0 for s in signs):
            return -1
        return 1 if all(s > 0 for s in signs) else 0
    return 1 if query(test) else 0


def rocm_polarity(test) -> int:
    """`polarity` of a test about ROCm (`is_rocm()`, `not is_hip()`, `ok and is_rocm()`)."""
    return polarity(test, rocm_query)


_TEXT = {
    "if": "under a test that holds only on ROCm, where torch names the AMD GPU \"cuda\" and "
          "`torch.cuda` is HIP's",
    "exit": "after an early exit that leaves only ROCm, where torch names the AMD GPU "
            "\"cuda\" and `torch.cuda` is HIP's",
    "assert": "after an assert that leaves only ROCm, where torch names the AMD GPU \"cuda\" "
              "and `torch.cuda` is HIP's",
    "operand": "beside a ROCm test in an `and` (or its negation in an `or`): it decides only "
               "on ROCm, where a tensor on the AMD GPU is a \"cuda\" tensor",
    "value": "under a test of a value that exists only on ROCm (made under the test here; "
             "None or false elsewhere), where torch names the AMD GPU \"cuda\"",
}


def rocm_guard_reason(test, path: str | None, branch: str = "if", line=None) -> Reason:
    """The Reason of a candidate under `test` (or, for "value", at `line`)."""
    return Reason(PRINCIPLE, _TEXT[branch], path, line or getattr(test, "lineno", None))
