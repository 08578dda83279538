"""`rocm-guard` (devlint/evidence/rocm_guard.py): under a test that holds only on ROCm, "cuda"
is the AMD GPU's name; the limits (a negation's branch, an `or`, `is_cuda_alike()`, the
visibility-variable and backend rules) keep their findings."""
from __future__ import annotations

import ast

import pytest

from devlint.api import check_source
from devlint.evidence.rocm_guard import rocm_polarity, rocm_query


def _test(src: str):
    return ast.parse(src, mode="eval").body


@pytest.mark.parametrize("src,want", [
    ("is_hip()", True), ("current_platform.is_rocm()", True), ("is_ROCM()", True),
    ("is_hip_runtime()", True), ("is_rocm_platform()", True),
    ("is_cuda_alike()", False), ("is_rocm_or_cuda()", False), ("is_hip_not_supported()", False),
    ("is_hip(device)", False), ("is_hipster()", False), ("use_rocm_kernels()", False),
    # another word after the query asks something else, true on CUDA machines too
    ("is_rocm_disabled()", False), ("is_hip_unsupported()", False),
])
def test_rocm_query(src, want):
    assert rocm_query(_test(src)) is want


@pytest.mark.parametrize("src,want", [
    ("is_hip()", 1), ("ok and is_rocm()", 1), ("not is_hip()", -1), ("x or not is_hip()", -1),
    ("x or is_hip()", 0), ("not (x and is_hip())", -1), ("x and not is_hip()", 0),
])
def test_rocm_polarity(src, want):
    assert rocm_polarity(_test(src)) == want


SRC = '''import os
import torch
from sglang.srt.utils import is_hip

_is_hip = is_hip()
_use_aiter = get_bool_env_var("USE_AITER") and _is_hip


def f(values, n):
    if _use_aiter:
        a = torch.zeros(n, device="cuda")
    if _is_hip and values.is_cuda:
        return values
    if not _is_hip:
        b = torch.zeros(n, device="cuda")
    else:
        c = torch.zeros(n).cuda()
    if _is_hip or n > 2:
        d = torch.zeros(n, device="cuda")
    if current_platform.is_cuda_alike():
        e = torch.zeros(n, device="cuda")
    if _is_hip:
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        torch.distributed.init_process_group("nccl")
    return values
'''


def test_rocm_guard_findings_and_limits():
    found = sorted((d.code, d.location[0]) for d in check_source(SRC, "m.py", profile="torch"))
    # kept: the negation's own branch (15), an `or` (19), is_cuda_alike() (21), the
    # visibility variable (23) and the backend name (24) under the ROCm test
    assert found == [("DL103", 15), ("DL103", 19), ("DL103", 21), ("DL301", 23), ("DL501", 24)]


def test_rocm_guard_is_shown_with_its_evidence():
    from devlint.api import process
    from devlint.settings import Settings

    res = process(SRC.encode(), "m.py", Settings(show_exempt=True, profile="torch"))
    rocm = sorted((e.location[0], e.code, e.evidence_line) for e in res.exempt
                  if e.principle == "rocm-guard")
    # the flag chain's assignment (6), the `and` beside the flag (12), the else of the
    # negation (the flag's assignment, 5)
    assert rocm == [(11, "DL103", 6), (12, "DL202", 12), (17, "DL102", 5)]


ORDER = '''import torch
from sglang.srt.utils import is_hip

_is_hip = is_hip()


def warm(model):
    if model.to("cuda").training and is_hip():
        return model


def free_mem():
    return torch.cuda.mem_get_info()[0] > 2**30 and _is_hip


def after(x):
    return _is_hip and x.to("cuda")
'''


def test_only_the_operands_after_the_rocm_test_are_its():
    # `A and is_hip()` evaluates A on every platform: only what follows the ROCm test
    # decides on ROCm alone (the review of c425291 found A exempted too)
    found = sorted((d.code, d.location[0]) for d in check_source(ORDER, "m.py", profile="torch"))
    assert found == [("DL101", 8), ("DL401", 13)]


EITHER = '''import torch
from sglang.srt.utils import get_bool_env_var, is_cuda, is_hip

_is_cuda = is_cuda()
_is_hip = is_hip()
_hip_alt = get_bool_env_var("SGLANG_ALT_STREAM") and _is_hip
_use_alt = _is_cuda or (get_bool_env_var("SGLANG_QK_ALT", "False") and _hip_alt)
_loose = _is_cuda or get_bool_env_var("SGLANG_QK_ALT", "False")


def overlap(self, q):
    if self.alt_stream is not None and _use_alt:
        s = torch.cuda.current_stream()
        q = q.to("cuda")
    if not _use_alt:
        return q
    torch.cuda.synchronize()
    return q


def loose():
    if _loose:
        torch.cuda.current_stream()
'''


def test_a_flag_true_on_cuda_or_on_rocm_is_a_cuda_alike_guard():
    # `_use_alt` holds only where one operand of its `or` holds, each only on CUDA or ROCm
    # (through `_hip_alt`, itself `and _is_hip`): the torch.cuda API under it is the
    # platform's (13, and after the negated early exit, 17); a device literal under it stays
    # a finding (14, cuda-alike-guard's limit), and an `or` with an environment switch (23)
    # holds anywhere
    found = sorted((d.code, d.location[0]) for d in check_source(EITHER, "m.py", profile="torch"))
    assert found == [("DL101", 14), ("DL401", 23)]
