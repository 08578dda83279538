"""Principle: a private method called only through `self` under a CUDA test is CUDA's own.

```python
class Worker:
    def _measure_peak(self):
        torch.cuda.reset_peak_memory_stats()       # runs only on CUDA
        ...

    def prewarm(self):
        if not is_cuda():
            return self.fallback()
        return self._measure_peak()
```
A method of a module-level class whose name starts with `_` (not a dunder: its class holds
every use) that the file only ever calls as `self._name(...)` (or `cls._name(...)`) from
methods of its class or of a class of the same file derived from it, each call under a test
that establishes CUDA (an `if`, an early `if not is_cuda(): return`, an `assert`, a
conditional expression, a test of a value made only on CUDA: the tests `cuda-value` reads),
or from another such private method that itself runs on CUDA only by this rule, runs only on
CUDA: its body is exempt like code under the test, and a private class or function of the
file (`cuda-value`) constructed or called there counts as used under that test. Evidence: the first call's test
(file:line). It extends `cuda-value`'s private module-level functions and classes, and the
project stage's `only-called-on-cuda` (module-level functions), to methods.
Limits: a test that is itself a finding (`device.type == "cuda"`, `x.is_cuda`: DL202 reports
it, and its fix sends the other accelerators to the method too) establishes nothing for it;
every mention of the name in the file must be such a call (one passed on as a value,
`getattr(self, "_name")`, a string naming it, an assignment in a class body, a call on
another object, keeps the findings); a subclass or caller in another module is not seen
(the leading `_` says there is none, as for `cuda-value`'s private functions); a test that
establishes CUDA-or-ROCm (`is_cuda_alike()`) exempts only the torch.cuda API (as
`cuda-alike-guard`); a public method keeps its findings (any caller may reach it); no more
than a few private methods deep.
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "self-called-on-cuda"


def self_called_reason(level: str, klass: str, name: str, evidence, path: str | None) -> Reason:
    """The Reason of a candidate in the private method `klass.name`, called only through
    `self` under a test that establishes CUDA ("cuda") or a CUDA-alike platform ("alike")."""
    line = getattr(evidence, "lineno", None)
    if level == "cuda":
        return Reason(PRINCIPLE, f"`{klass}.{name}` is private and called only through `self` "
                      "under a test that establishes CUDA", path, line)
    return Reason("cuda-alike-guard", f"`{klass}.{name}` is private and called only through "
                  "`self` under a test for a CUDA-alike platform (CUDA or ROCm: torch.cuda is "
                  "its API)", path, line)
