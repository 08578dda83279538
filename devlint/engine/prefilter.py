"""Stage 1: a file without a trigger token cannot hold a finding and is done after one scan.

Every finding of the Python rules contains one of these tokens on some line of the file:
- `.cuda` (the `torch.cuda` module through any alias, and the `.cuda()` method),
- a string starting with `cuda` (`"cuda"`, `'cuda:0'`, `f"cuda:{i}"`),
- `is_cuda`, `CUDA_VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES`,
- an import binding a name from `torch.cuda` (`from torch import cuda`),
- a quoted distributed backend name.
tests/test_prefilter.py runs the rules without the prefilter over the fixtures and the rule
examples and checks that no file with a finding is dropped.
"""
from __future__ import annotations

import re

TRIGGER = re.compile(
    rb"\.cuda\b|[\"']cuda|is_cuda|import[^\n]*\bcuda\b|CUDA_VISIBLE|HIP_VISIBLE"
    rb"|[\"'](?:nccl|gloo|hccl|xccl)")
# rows worth descending into: any mention (aliases of torch.cuda names are added per file)
TRIGGER_LINE = re.compile(r"(?im)^.*?(?:cuda|nccl)")


def may_have_findings(data: bytes) -> bool:
    return TRIGGER.search(data) is not None
