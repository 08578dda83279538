"""Principle: a CUDA query that gates a CUDA compute-capability test asks for a CUDA feature.

`torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)`,
`torch.cuda.is_available() and not is_sm_at_least_89()`, `not torch.cuda.is_available() or
not is_sm_at_least_90()`: the availability test only protects the capability query (an SM
version exists on NVIDIA GPUs only), so the whole test asks "is this an SM89+ CUDA GPU?", and
it is no hardcoding of the device (a skip gate of this form skips only old CUDA GPUs or
machines without that feature).
Evidence: the capability operand (`get_device_capability`/`get_device_properties` compared,
or a helper named after an SM version or NVIDIA architecture: `is_sm_at_least_90`,
`is_hopper`), and its line.
Limits: only operands of the same `and`/`or`; a bare `torch.cuda.is_available()` elsewhere in
the function is still a finding.
"""
from __future__ import annotations

from devlint.evidence import Reason


def capability_reason(operand, path: str | None) -> Reason:
    return Reason("capability-gate", "one operand of a test for a CUDA compute capability",
                  path, getattr(operand, "lineno", None))
