"""Principle: a function that uses a value that exists only on CUDA cannot run without CUDA.

```python
class MoE(nn.Module):
    def __init__(self, alt_stream=None):
        self.alt_stream = alt_stream          # get_stream() if _is_cuda else None, passed in

    def forward_dual_stream(self, x):
        current = torch.cuda.current_stream() # runs only on CUDA
        self.alt_stream.wait_stream(current)  # None.wait_stream: fails anywhere else
        with torch.cuda.stream(self.alt_stream):
            ...
```
Where `cuda-value` shows that a name or `self` attribute only ever holds a value made under a
test that establishes CUDA, or None (its producer, its stores, the values the file's calls
pass to its parameter), a function that uses it as an object on every path it can complete by
(`v.attr`, `v[i]`, `v(...)`: an error on None) fails everywhere else: it is the CUDA side of
the code that tested the value, like the body of `if s is not None:` or of `assert s is not
None`, and its findings are CUDA's own. Evidence: where the value is made (the CUDA test's
line, or the conditional expression's), as for `cuda-value`.
Limits: the use must be reached on every path before the function can return or yield: a
statement of the function's own body (or of a `with` block's body there, or in both arms of
an `if` there), not under one arm of an `if`, a loop or a `try` (an `except` may catch the error), not in the right operand of `and`/`or`,
an arm of a conditional expression, a lambda or a comprehension's later parts; no `return` or
`yield` before it, nor a test of the value (`assert s is not None`, `if s:`: what follows is
`cuda-value`'s). A dunder attribute (`v.__class__`) exists on None and is no use. The value must be
made elsewhere: a name the function stores itself (other than as an alias, `s =
self.alt_stream`) is made under the function's own test, and what runs before it runs anywhere. A flag
(`_is_cuda and ...`, False elsewhere) is not followed: only values that are None elsewhere.
A value made under `is_cuda_alike()` exists on ROCm too: it exempts the `torch.cuda` API
only (as `cuda-alike-guard`). Every limit of `cuda-value` on how far a value is followed holds.
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "uses-cuda-value"


def uses_value_reason(level: str, name: str, evidence, path: str | None) -> Reason:
    """The Reason of a candidate in a function that uses `name`, a value made only on CUDA
    ("cuda") or on a CUDA-alike platform ("alike") at `evidence`, on every path."""
    line = getattr(evidence, "lineno", None)
    if level == "cuda":
        return Reason(PRINCIPLE, f"the function uses `{name}` on every path, a value that "
                      "exists only on CUDA (made under the CUDA test here; None elsewhere)",
                      path, line)
    return Reason("cuda-alike-guard", f"the function uses `{name}` on every path, a value "
                  "that exists only on a CUDA-alike platform (CUDA or ROCm: torch.cuda is its "
                  "API; made under the test here, None elsewhere)", path, line)
