"""Principle: under a test for a CUDA-alike platform, the `torch.cuda` API is that platform's.

`if current_platform.is_cuda_alike(): s = torch.cuda.Stream()`, `if is_cuda_alike() and ok:
n = torch.cuda.get_device_properties(0).multi_processor_count`, the else-branch of `if not
is_cuda_alike(): return None`: the branch runs only on CUDA or on ROCm, and PyTorch's ROCm
build *is* the "cuda" device type, so its `torch.cuda` module is the right API on both (the
same reason a ROCm file is CUDA-alike, `cuda_only_module`).
Evidence: the test (a call of `is_cuda_alike()`, also one operand of an `and`, or negated
before an early exit; the same spelt out as an `or` each operand of which asks for CUDA or
ROCm, `is_rocm() or is_cuda()`; `is_rocm()` / `is_hip()` give `rocm-guard`'s reason), and
its line;
a flag assigned from one, also through a chain of flags (`_use_aiter = env and _is_hip`, then
`use_fused = _use_aiter and ok`), is followed as `cuda_value` follows flags, and so is an `or`
of such flags and CUDA flags, each operand true only on CUDA or ROCm (`_use_alt = _is_cuda or
(env and _hip_alt)`; an `or` with an operand that holds anywhere, `_is_cuda or env`, is none).
Limits: only the `torch.cuda` API rules (DL401-DL404) honour it; a device literal, a
visibility variable or a backend name under the same test is still reported (the platform
names its own: upstream vLLM fixed `CUDA_VISIBLE_DEVICES` and `device="cuda"` under `if
is_cuda_alike():`, where the device comes from the platform or the tensors: corpus cases 055
and 104). A test that holds only on ROCm (`is_rocm()`, `is_hip()`, a flag derived from one
by `and`; not `is_cuda_alike()`, which holds on CUDA too) gives `rocm-guard`'s reason
instead, which the device-literal and tensor-test rules honour as well: there "cuda" is the
AMD GPU's name. A test that only rules some platforms out (`not is_xpu()`) is no such test.
A test for torch.distributed's NCCL backend (`if backend == "nccl": torch.cuda.set_device(rank)`,
`dist.get_backend() == "nccl"`) is one too: the process group is NCCL's only on CUDA, or on
ROCm, whose RCCL answers to the same name; NCCL binds the current `torch.cuda` device. A
device literal under it stays a finding (vLLM moved `device = torch.device("cuda")` of its
`elif backend == "nccl":` arm into the platforms: corpus case 097). Limits: `==` or `in` a
collection of `"nccl"` alone; `in ("nccl", "gloo")` and `!=` are no such test.
A project rule that forbids the call outright outranks it (`project_policy`).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.rocm_guard import polarity, rocm_guard_reason, rocm_polarity, rocm_query

# `is_hip()` is `is_rocm()` under another name (sglang, older vLLM): true only on ROCm
_ALIKE_QUERIES = frozenset({"is_cuda_alike", "is_rocm", "is_hip"})


def alike_polarity(test) -> int:
    """+1 where the test is true only on a CUDA-alike platform (`is_cuda_alike()`,
    `is_rocm()`, any case, also as one operand of `and`; an `or` of such tests and CUDA
    platform queries, `is_rocm() or is_cuda()`), -1 for its negation, 0 otherwise."""
    found = polarity(test, _alike_query)
    if found or not isinstance(test, (ast.BoolOp, ast.UnaryOp)):
        return found
    # `is_rocm() or is_cuda()` is `is_cuda_alike()` spelt out: every operand of the `or` holds
    # only on CUDA or on ROCm (a pure CUDA query alone is `cuda_guard`'s business)
    return polarity(test, _alike_or_cuda_query)


def _alike_or_cuda_query(test) -> bool:
    if _alike_query(test):
        return True
    func = getattr(test, "func", None) if isinstance(test, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "is_cuda" and not test.args and not test.keywords


def _nccl_test(test) -> bool:
    """`backend == "nccl"`, `"nccl" == dist.get_backend()`, `backend in ("nccl",)`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    op, sides = test.ops[0], (test.left, test.comparators[0])
    if isinstance(op, ast.Eq):
        return any(isinstance(s, ast.Constant) and s.value == "nccl" for s in sides)
    right = test.comparators[0]
    return isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) \
        and bool(right.elts) and all(isinstance(e, ast.Constant) and e.value == "nccl"
                                     for e in right.elts)


def _alike_query(test) -> bool:
    if _nccl_test(test):
        return True
    if not isinstance(test, ast.Call):
        return False
    func = test.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return (name.lower() in _ALIKE_QUERIES and not test.args) or rocm_query(test)


def alike_guard_reason(test, path: str | None, branch: str = "if") -> Reason:
    """The Reason of a candidate under `test`: `rocm-guard`'s where the test holds only on
    ROCm (`is_rocm()`, not `is_cuda_alike()`), else this principle's (the API rules only)."""
    pol = rocm_polarity(test)
    if pol and pol == alike_polarity(test):
        return rocm_guard_reason(test, path, branch)
    text = {"if": "under a test for a CUDA-alike platform (CUDA or ROCm: torch.cuda is its API)",
            "exit": "after an early exit that leaves only a CUDA-alike platform (CUDA or ROCm: "
                    "torch.cuda is its API)",
            "assert": "after an assert that leaves only a CUDA-alike platform (CUDA or ROCm: "
                      "torch.cuda is its API)"}[branch]
    r = Reason("cuda-alike-guard", text, path, getattr(test, "lineno", None))
    return r
