"""Stage 1: a file without a trigger token cannot hold a finding and is done after one scan.

Every rule's finding contains, on some line of the file, one of these tokens: a CUDA device
literal or API (`cuda`, `CUDA_VISIBLE_DEVICES`, `is_cuda`, `torch.cuda` and any import that
binds a name from it) or a distributed backend name. A test runs the rules without the prefilter
over the fixtures and the corpus to prove it drops nothing.
"""
from __future__ import annotations

import re

TRIGGER = re.compile(rb"(?i)cuda|nccl")
TRIGGER_TEXT = re.compile(r"(?i)cuda|nccl")


def may_have_findings(data: bytes) -> bool:
    return TRIGGER.search(data) is not None
