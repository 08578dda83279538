"""Stage 1: a file without a trigger token cannot hold a finding and is done after one scan.

Every finding of the Python rules contains one of these tokens on some line of the file:
- `.cuda` (the `torch.cuda` module through any alias, and the `.cuda()` method),
- a string starting with `cuda` (`"cuda"`, `'cuda:0'`, `f"cuda:{i}"`),
- `is_cuda` not called (the tensor property; `current_platform.is_cuda()` and
  `is_cuda_alike()` only ask, and are no findings), `CUDA_VISIBLE_DEVICES` /
  `HIP_VISIBLE_DEVICES`,
- an import binding a name from `torch.cuda` (`from torch import cuda`),
- a quoted distributed backend name,
- a devlint suppression comment (DL900 reports the unused ones),
- a decorator naming CUDA or a GPU (`@requires_cuda`, DL203).
tests/test_prefilter.py runs the rules without the prefilter over the fixtures and the rule
examples and checks that no file with a finding is dropped.
"""
from __future__ import annotations

import re

TRIGGER = re.compile(
    rb"\.cuda\b|[\"']cuda|is_cuda\b(?![ \t]*\()|import[^\n]*\bcuda\b|CUDA_VISIBLE|HIP_VISIBLE"
    rb"|[\"'](?:nccl|gloo|hccl|xccl)|(?i:noqa)[^\n]*DL\d|devlint:|@[\w.]*(?i:cuda|gpu)")
# rows worth descending into: any mention (aliases of torch.cuda names are added per file)
TRIGGER_TOKEN = re.compile(r"(?i)cuda|nccl|hccl|xccl|gloo")


# Every match of TRIGGER lies on one line and contains, in any case, one of these needles
# (keep them in step with TRIGGER; tests/test_prefilter.py checks the two agree): the regex,
# which costs ~0.5 us per byte it scans, then runs only on the lines holding a needle, found by
# a fast substring scan. Same answer as TRIGGER.search(data), ~10x faster on vLLM.
_NEEDLES = (b"cuda", b"gpu", b"hip_visible", b"nccl", b"gloo", b"hccl", b"xccl", b"noqa",
            b"devlint:")


def may_have_findings(data: bytes) -> bool:
    search = TRIGGER.search
    low = data.lower()  # same length and offsets as data
    for needle in _NEEDLES:
        i = low.find(needle)
        while i != -1:
            start = low.rfind(b"\n", 0, i) + 1
            end = low.find(b"\n", i)
            if end == -1:
                end = len(low)
            if search(data, start, end) is not None:
                return True
            i = low.find(needle, end)
    return False
