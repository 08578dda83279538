"""Principle: a value an imported project function makes only on CUDA establishes CUDA where code tests for it.

```python
# utils/torch_utils.py
def aux_stream():
    global _aux_stream
    if _aux_stream is None and current_platform.is_cuda_alike():
        _aux_stream = torch.cuda.Stream()
    return _aux_stream

# layers/shared_experts.py
from utils.torch_utils import aux_stream
...
self._stream = aux_stream()
...
assert self._stream is not None
with torch.cuda.stream(self._stream):      # only where the stream exists
```
`cuda_value` within one file, across a module boundary: a function imported with `from M
import name` whose every value other than None is made under a test that establishes CUDA
(judged in its own module by the same producer rule, `devlint.analysis.flow`) is followed
into the importing module as that module's own producer would be, through names, `self`
attributes and None-defaulting parameters, to the `is not None` / truth / assert tests that
guard the code. Evidence: the producer's test in its module (file:line). Applied by the
project stage (`devlint.engine.project.xguards`), which re-runs the importing file's analysis
knowing the imported producers and drops the findings that run then exempts.
A flag works the same way: `from pkg.utils import _is_cuda`, where `pkg/utils.py` sets
`_is_cuda = is_cuda()` once at module level (or `_use_fused = _is_cuda and ok`), is a guard in
the importing module as the same assignment there would be (`cuda_value`'s flags and
`cuda_guard`'s tests included). Evidence: the flag's assignment (file:line).
Limits: the name must resolve statically to a module-level function of a project module
(through re-exports); a producer whose value exists on ROCm too (`is_cuda_alike()`) exempts
the `torch.cuda` API only, never a device literal, as in the file; a producer that is itself
a finding's test (`torch.cuda.is_available()`) makes no such value; a method, a module object's
attribute (`utils.aux_stream()`) or a value passed in by an importer's caller is not followed.
A flag must be bound once in its module, at module level, by one assignment (not by a
function's `global` store, a loop or an unpacking), from a test that establishes CUDA by the
module's own rules; one that asks `torch.cuda` for a GPU (`torch.cuda.is_available()`,
`device_count()`) is a finding of its own and guards nothing; an importing module that binds
the name again is judged by its own value.
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "imported-guard"


def producer_reason(local: str, module: str, level: str, path: str | None,
                    line: int | None) -> Reason:
    where = "CUDA" if level == "cuda" else "a CUDA-alike platform (CUDA or ROCm)"
    return Reason(PRINCIPLE, f"under a test of a value made by `{local}` (imported from "
                  f"`{module}`), which returns one only on {where} (None elsewhere)",
                  path, line)


def flag_reason(local: str, module: str, path: str | None, line: int | None) -> Reason:
    return Reason(PRINCIPLE, f"under a test of `{local}` (imported from `{module}`), a flag "
                  "that module sets from a platform query that establishes CUDA", path, line)
