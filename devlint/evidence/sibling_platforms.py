"""Principle: platform tests written side by side dispatch like a ladder.

```python
if torch.cuda.is_available():
    torch.cuda.empty_cache()
if torch.xpu.is_available():
    torch.xpu.empty_cache()
```
or flags computed side by side (`cuda_available = torch.cuda.is_available()`, then
`xpu_available = is_torch_xpu_available()`): the code gives CUDA and another accelerator
each their own statement, as a platform ladder gives them their own arms; the CUDA test and
the CUDA statement's body are CUDA's own. Evidence: the other accelerator's statement
(file:line).
Limits: only statements of the same block, with at most one other statement between them;
the other statement must ask about an accelerator other than CUDA (`torch.xpu`,
`is_torch_npu_available()`, `device.type == "mps"`): the CPU is none, and excluding some
platforms (`if not is_xpu():`, an allow-list naming CUDA too: `if device_type not in ("cuda",
"xpu"): return`) is not handling them. A lone `if torch.cuda.is_available():`
stays a finding.
"""
from __future__ import annotations

from devlint.evidence import Reason

# how many statements may stand between the CUDA statement and the other accelerator's
GAP = 1


def sibling_reason(other, path: str | None) -> Reason:
    return Reason("sibling-platforms", "beside a statement for another accelerator (the "
                  "platforms are handled side by side)", path, getattr(other, "lineno", None))
