"""Principle: a module every reference to which in its package runs on CUDA only is CUDA's own.

```python
# pkg/platforms/cuda.py (CUDA-only by its name: the CUDA platform)
def get_attn_backend_cls(selected):
    if selected == Backend.SLA:
        return "pkg.layers.attention.backends.sla.SLABackend"   # resolved only here

# pkg/layers/attention/backends/sla.py (generic folder and name)
class SLABackend:
    def forward(self, q, k, v):
        major, _ = torch.cuda.get_device_capability()          # exempt: reached only on CUDA
```
A module is reached through its references: the imports of it, and the dotted-path strings that
name it or something in it (`"pkg.mod.Class"`, `"pkg.mod:fn"`), which a registry or a platform
resolves lazily. Where every such reference in the package stands in a CUDA-only module by its
name or folder (`cuda-only-module`, e.g. the CUDA platform module that alone resolves a
backend; not by what it imports: a generic runner may import a CUDA plugin at its top), or
every use of what an import binds stands where CUDA is established (under a CUDA test, after an
early exit without CUDA, in a CUDA-only scope, or under a flag set from a CUDA test:
`cuda-choice`), the module only runs on CUDA and its device literals are exempt like code under
that guard. Evidence: a reference (file:line of the use, or the file of the CUDA-only module),
with why it runs on CUDA only. Applied by the project stage (`devlint.engine.project.xreach`)
to what the other passes leave.

Limits: a module with no reference at all (an entry point, a plugin loaded by a name built at
run time) is not reached "only on CUDA"; a reference through the module object (`import
pkg.mod`, or a package above it whose importer names the module: `from pkg import ops`), a star
import, a re-export by a package's `__init__`, an import never used, an `isinstance` or
annotation use, or a formatted string that may name it (`f"pkg.ops.{m}"`, `"pkg.ops." + m` for
a module of `pkg.ops`) in generic code keeps the findings; references from test code
(`test_*.py`, `*_test.py`, `conftest.py`, files under `test/`, `tests/`, `unittests/`; not a
shipped `testing/` package) are not counted: tests exercise what they name wherever they run,
they are not the product code that reaches it; a string in a module that is not CUDA-only keeps
them (the stage does not judge where a string is resolved); one use elsewhere keeps them (the
chain stops at the first generic use: a module also imported unconditionally by generic code is
not reached only through the choice); where an importer imports it at its own import, the
module's top-level code runs there and keeps its findings (only its functions and classes wait
for the guarded uses); a test module, a package `__init__.py` and a module with more than
twelve references are not judged; a Triton kernel's module reached through a flag chosen by a
CUDA test keeps its findings (`cuda-choice`'s limit); ruling out some platforms (`not
is_xpu()`) or a CUDA-alike test establishes nothing, and a table API (`torch.cuda.synchronize()`)
reached through a platform test stays a finding, as for `only-called-on-cuda`.
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "cuda-reach"


def reason(modname: str, path: str, row: int | None, why: str) -> Reason:
    where = f"{_short(path)}:{row}" if row else _short(path)
    return Reason(PRINCIPLE, f"every reference to `{modname}` in the package runs on CUDA "
                  f"only (e.g. {where} {why})", path, row)


def _short(path: str) -> str:
    return "/".join(path.replace("\\", "/").split("/")[-3:])
