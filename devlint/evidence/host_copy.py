"""Principle: a CUDA branch that only picks how to copy to the host chooses no device.

```python
if t.device.type == "cuda":
    host = torch.empty_like(t, device="cpu", pin_memory=True)
    host.copy_(t, non_blocking=True)
else:
    host = t.to("cpu", copy=True)
```
Both arms put the same tensor in host memory: the CUDA arm only makes the copy asynchronous
(pinned memory, a non-blocking copy, CUDA events), the alternative copies synchronously from
whatever device the tensor is on. On every other accelerator the result is the same host copy,
so the test chooses an optimisation, not a device (a device.type dispatch whose arms agree).
Evidence: the `if` (or `elif`) with a CUDA test, an `else` that assigns the same names as the
CUDA arm, and both arms moving to the host (a `"cpu"` device, `.cpu()`, `pin_memory`); the
evidence is the `if`'s line.
Limits: only where the CUDA arm itself moves to the host: a CUDA arm that computes on the
device beside an alternative that moves to the CPU is the CPU fallback (a finding); a branch
without an alternative (`if t.is_cuda: t.record_stream(s)`) skips work elsewhere (a finding);
the arms must assign the same names (one result made two ways), and the alternative must name
no CUDA device.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason


def host_copy_reason(stmt: ast.If, path: str | None) -> Reason | None:
    """`stmt` tests for CUDA; the reason when its arm and its else both copy to the host."""
    body, other = stmt.body, stmt.orelse
    if not body or not other or (len(other) == 1 and isinstance(other[0], ast.If)):
        return None
    names = _assigned(body)
    if not names or names != _assigned(other):
        return None
    if not (_to_host(body) and _to_host(other)) or _names_cuda(other):
        return None
    return Reason("host-copy", "both arms copy the tensor to the host (the CUDA arm only "
                  "makes the copy asynchronous)", path, stmt.lineno)


def _assigned(block) -> frozenset:
    out = set()
    for st in block:
        for t in (st.targets if isinstance(st, ast.Assign) else
                  [st.target] if isinstance(st, (ast.AnnAssign, ast.AugAssign)) else ()):
            out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return frozenset(out)


def _to_host(block) -> bool:
    for st in block:
        for n in ast.walk(st):
            if isinstance(n, ast.Constant) and n.value == "cpu":
                return True
            if isinstance(n, ast.Attribute) and n.attr == "cpu" \
                    and isinstance(getattr(n, "ctx", None), ast.Load):
                return True
            if isinstance(n, ast.keyword) and n.arg == "pin_memory":
                return True
    return False


def _names_cuda(block) -> bool:
    for st in block:
        for n in ast.walk(st):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                    and n.value.split(":")[0] == "cuda":
                return True
            if isinstance(n, ast.Attribute) and n.attr == "cuda":
                return True
    return False
