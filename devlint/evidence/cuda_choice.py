"""Principle: a function reached only where a flag chosen by a CUDA test is true runs on CUDA only.

```python
# pkg/layers/attention/metadata.py (generic code)
class MetadataMixin:
    use_fused = False                                    # the default: False

    def init_fused(self):
        self.use_fused = requested and is_cuda() and not is_hip()   # the choice
        if self.use_fused:
            from pkg.kernels.fused_metadata import fill  # imported only here
            self._fill = partial(fill, pool=self.pool)

# pkg/kernels/fused_metadata.py
def fill(seq_lens, pool):
    assert seq_lens.is_cuda                              # exempt: reached only on CUDA
```
The choice between a CUDA-only path and a generic one is often made once, in another place
than the code it selects: a flag (a module-level or local name, or an attribute of `self`)
is set from a test that establishes CUDA, and the code that imports, calls or hands on the
CUDA-only function stands under `if flag:` (or after `if not flag: return`). Where every
value the flag is ever given in its file is such a test, or the constant False/None (the
class default), the flag is true only on CUDA, and a site under it runs on CUDA as a site
under the test itself would. It extends `only-called-on-cuda` across modules
(`devlint.evidence.cuda_callers`, applied by `devlint.engine.project.xcallers`, which reads
such flags through `devlint.engine.project.xchoice`): a function every use of which in the
package is a site so chosen (or otherwise CUDA-established) is CUDA's own. A module reached
through a package above it (`from pkg import kernels`) is still followed when that importer
never names the function: it cannot call it by name. Evidence: the flag's assignment from
the CUDA test (file:line), and the site it selects.

Limits: every assignment of the flag in its file must be a CUDA test or False/None (a flag
also set from a setting, a parameter or `True` may be true anywhere); an attribute flag set
in any other file of the package (`backend.use_fused = True`, `setattr(..., "use_fused",
...)`) keeps the findings; the CUDA test must establish CUDA by its positive operand
(`is_cuda() and not is_hip()` does; `not is_xpu() and not is_npu()`, which only rules
platforms out, does not; a CUDA-alike test, `is_cuda_alike()`, does not either), and a test
that is a finding itself (`x.is_cuda`, DL202) chooses nothing; a flag imported from another
module, or read from another object (`other.use_fused`), is not followed; a function of a
module that defines a Triton kernel (`@triton.jit`) keeps its findings when a chosen flag is
what selects CUDA for it, directly or through its callers: a Triton kernel runs on other
accelerators too, so its wrapper is device-generic code whoever chose to reach it (the
rubric's `assert t.is_cuda` in a Triton wrapper; two of four reviewers judged such asserts
true findings where the only caller chose CUDA); every other limit of `only-called-on-cuda`
holds (a use that cannot be resolved keeps the findings).
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "cuda-choice"


class Choice(str):
    """The `why` of a site under a flag chosen by a CUDA test: equal to "test" (a platform
    test selects CUDA there, as for an in-file test), with the flag and its assignment."""

    flag: str
    path: str
    line: int

    def __new__(cls, flag: str, path: str, line: int):
        self = super().__new__(cls, "test")
        self.flag, self.path, self.line = flag, path, line
        return self

    def __reduce__(self):
        return (Choice, (self.flag, self.path, self.line))


def site_text(choice: Choice) -> str:
    return f"under `{choice.flag}`, set only from a CUDA test (line {choice.line})"


def evidence(choice: Choice) -> Reason:
    """The choice itself: the flag's assignment from the CUDA test."""
    return Reason(PRINCIPLE, f"`{choice.flag}` is set only from a CUDA test", choice.path,
                  choice.line)


def reason(name: str, first, choice: Reason) -> Reason:
    """The Reason of a finding in `name`, every use of which runs on CUDA only (`first`: one
    site, `cuda_callers.Site`), some through a flag chosen by a CUDA test (`choice`: its
    assignment, the evidence)."""
    return Reason(PRINCIPLE, f"every use of `{name}` in the package runs on CUDA only "
                  f"(e.g. {_short(first.path)}:{first.row}: {first.why}), reached through a "
                  "flag set only from a CUDA test", choice.path, choice.line)


def _short(path: str) -> str:
    return "/".join(path.replace("\\", "/").split("/")[-3:])
