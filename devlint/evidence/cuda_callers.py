"""Principle: a function every caller of which in the package runs on CUDA only is CUDA's own,
across modules and through callers of callers.

```python
# pkg/quant/utils.py (a generic utils module)
def convert_scales(scales):
    assert scales.is_cuda                 # exempt: only CUDA code calls it

# pkg/kernels/cutlass_w4a8.py (CUDA-only by its name)
from pkg.quant.utils import convert_scales
def prepare(layer):
    convert_scales(layer.scales)

# pkg/layers/mixer.py
from pkg.quant.utils import convert_scales
def _cuda_prepare(layer):                  # only called under the test below
    convert_scales(layer.scales)
def setup(layer):
    if current_platform.is_cuda():
        _cuda_prepare(layer)
```
This extends `only-called-on-cuda` (which follows the callers in the function's own module
and the package's direct calls under a test or in a CUDA-only module or scope): a
module-level function (or a private method of a module-level class, called as
`self._m(...)`) every call site of which in the package is itself CUDA-established runs
only on CUDA. A call site is CUDA-established when its module is CUDA-only (by its name,
folder, imports or runtime use, or by the modules it always calls: `cuda-only-module`), it
stands under a test that establishes CUDA (or after an early exit without it), in a
function or class CUDA-only by its name, imports or runtime use (`cuda-only-scope`), in the
CUDA arm of a per-platform dispatch (`forward_cuda` beside a generic twin, also in a base
class of another module: `cuda-twin`), or in a function or private method that is itself
only called on CUDA by this rule (at most three callers deep), or in a block of a function
that always runs a CUDA-only kernel library (a call named after CUTLASS, FlashInfer,
DeepGEMM, CuTe DSL, NVSHMEM, DeepEP, cuBLAS or cuDNN, before the site or after it with no
exit between: `convert(w); ops.cutlass_encode_and_reorder(w)`; not a question about the
library, `cutlass_fp8_supported()`, nor one operand of a conditional). A method (public or
private) of a module-level class every construction of which in the package is such a site
runs only on CUDA as well: no instance exists elsewhere (an annotation or an `isinstance`
test builds nothing). Evidence: a caller's file:line, with why it runs on CUDA only. The
finding is dropped as `only-called-on-cuda`.

Limits: every call site must be seen and resolved: a use of the name as a value (passed
on, stored, registered as a callback), through the module object (`from pkg import mod;
mod.f()`, `import pkg.mod`), a star import, `getattr`, a re-export by a package's
`__init__`, or an import that is never used keeps the findings; a function with no caller
at all is not "called only on CUDA"; a public function listed in its module's (or an
importer's) `__all__` is public API whose callers outside the package are not seen, and
keeps its findings (a public name of a module that does not export it, called only inside
the package, is judged by its callers: an application's internal helpers are importable
too); a public method keeps its findings (any object's caller may reach it), and so does a
private method mentioned in its file other than as `self._m(...)` from its class, unless
its class is only constructed on CUDA; a class used otherwise than constructed (a base of
another class, `C.create()`, handed on as a value) may have instances anywhere; a test
that is a finding itself (`x.is_cuda`, `device.type == "cuda"`: DL202) establishes nothing
(its fix lets other accelerators in); a test for a CUDA-alike platform (`is_cuda_alike()`)
establishes nothing either; where a platform test is what selects CUDA for one caller, a
table API (`torch.cuda.synchronize()`) stays a finding, as under an in-file guard; ruling
out the CPU or some platforms is no CUDA test; callers outside the package (tests beside
it, users) are not seen. A module of a folder without `__init__.py` (a namespace part of a
package) is named through its absolute imports or the package above it; such a caller's
module counts as CUDA-only by its own name, folder or imports only (the stage does not judge
it through the modules it calls).
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.only_called_on_cuda import PRINCIPLE

_ALL = re.compile(r"^__all__\s*(?::[^=\n]*)?(?:=|\+=)\s*[\[(]([^\])]*)[\])]", re.M)


def exported(text: str, *names: str) -> bool:
    """Whether the module's `__all__` (a literal list or tuple, also `+=`) names one of
    `names`; an `__all__` built otherwise is taken to export everything."""
    if "__all__" not in text:
        return False
    found = _ALL.findall(text)
    if not found or re.search(r"^__all__\s*(?::[^=\n]*)?(?:=|\+=)\s*[^\[(\s]", text, re.M):
        return True
    listed = set(re.findall(r"[\"'](\w+)[\"']", " ".join(found)))
    return any(n in listed for n in names)


# the kernel libraries a call names (its function, or the object or module it is called on):
# a block that always calls one runs on CUDA only (`ops.cutlass_encode_and_reorder(...)`)
_KERNEL = re.compile(r"(?i)cutlass|flashinfer|deep_?gemm|cutedsl|nvshmem|deepep|cublas|cudnn")
# asking or configuring, not running a kernel (`has_flashinfer()`, `use_deep_gemm()`,
# `cutlass_fp8_supported()`)
_ASKS = re.compile(r"(?i)^(?:has|is|supports?|check|get|set|use|should|can|maybe|enable|"
                   r"disable)_|supported|available|enabled")
_SKIP = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
         ast.GeneratorExp)


# a scope CUDA-only by what its body uses somewhere (the CUDA runtime, IPC, green contexts,
# `DeviceType.CUDA`) may use it under a condition: strong enough for its own findings, not to
# vouch for every call it makes
_WEAK_SCOPE = ("uses the CUDA runtime", "uses CUDA IPC", "names the CUDA device type",
               "uses CUDA green contexts")


def strong_scope(reason) -> bool:
    """Whether a `cuda-only-scope` reason holds for the whole scope (its name, its imports,
    its stated contract or capability), so that every call in it runs on CUDA."""
    return not any(w in str(reason) for w in _WEAK_SCOPE)


def kernel_call(stmt):
    """(name, line) of a call that `stmt` (a simple statement) always makes into a CUDA-only
    kernel library, by the names it is reached through; else None."""
    if not isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)):
        return None
    stack = [stmt.value] if stmt.value is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, _SKIP):
            continue  # an operand that may not run
        if isinstance(n, ast.Call):
            parts, cur = [], n.func
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name):
                parts.append(cur.id)
            parts.reverse()
            if parts and parts[:2] != ["torch", "backends"] and not _ASKS.search(parts[-1]) \
                    and any(_KERNEL.search(p) for p in parts[1:] or parts):
                return ".".join(parts), n.lineno
        stack.extend(ast.iter_child_nodes(n))
    return None


def kernel_reason(call, path: str) -> Reason:
    name, line = call
    return Reason("cuda-only-scope", f"its block always calls `{name}` (line {line}), a "
                  "CUDA-only kernel", path, line)


class Site:
    """A call site that runs on CUDA only: where it is, and why."""

    def __init__(self, path: str, row: int, why: str):
        self.path, self.row, self.why = path, row, why


def site(path: str, row: int, why: str) -> Site:
    return Site(path, row, why)


def reason(name: str, first: Site) -> Reason:
    """The Reason of a finding in `name`, every call of which runs on CUDA only (`first`: one
    caller, the evidence)."""
    return Reason(PRINCIPLE, f"every call of `{name}` in the package runs on CUDA only "
                  f"(e.g. {_short(first.path)}:{first.row}: {first.why})", first.path,
                  first.row)


def constructed(method: str, why: Reason) -> Reason:
    """The Reason of a finding in `method`, whose class is only constructed on CUDA (`why`:
    the class's own reason)."""
    text = why.text.replace("every call of", "every construction of", 1)
    return Reason(PRINCIPLE, f"`{method}` runs only on an instance, and {text}", why.path,
                  why.line)


def _short(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-3:])
