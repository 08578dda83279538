"""Principle: a skip gate that reads a capability or GPU-library flag imported from a project module gates as it would in that module.

`from ._distributed_test_utils import get_blockwise_linear_skip_reason`, then
`LINEAR_SKIP_REASON = get_blockwise_linear_skip_reason(...)` and
`@unittest.skipIf(LINEAR_SKIP_REASON is not None, ...)` over a test, where the helper returns
a skip reason unless the GPU is an SM90+ one; or `@skipif(not is_deep_ep_available() and not
is_hybrid_ep_available())` whose helpers return flags set only where DeepEP imports: the
test runs only on such a GPU (or with such a library), exactly as under the same gate built
from the file's own names (`capability` `ModuleNames`, `library_gate`), so the devices of its
body are CUDA's and an availability gate stacked with it asks nothing more. The imported name
is resolved statically to its definition in the project (`from M import name`, through
re-exports; and a helper of the file whose body only imports a name from a project module and
returns it), and judged there by the in-file predicates: a flag true only past a
compute-capability test, a helper true only with it, a skip-reason helper that returns a
reason unless it is met, or a flag set only where a library of GPU kernels imports.
Evidence: the definition (file:line) in the defining module. Applied by the project stage
(`devlint.engine.project.xflags`) over the bodies such a gate covers (a decorated test's, a
decorated class's, the module's tests under a `pytestmark`), and over the other skip gates
of the same test or class (the stacked availability gate, DL203); and over the rest of a
module that skips itself on such a name (`if reason := get_skip_reason(...):
pytest.skip(reason, allow_module_level=True)`: the walrus form too), also where the name comes
from a sibling module of a script-style test (`from _distributed_test_utils import f`, run
with its folder on `sys.path`: resolved in the file's own folder when no package holds it).
Limits: only names imported with `from M import name` from the project (a third-party flag,
a star import, a module attribute `utils.FLAG` is not followed); a definition that only asks
for CUDA (`HAS_CUDA = torch.cuda.is_available()`) is no such gate (the gate stays a
finding); a gate inside a test's body is not read; a file outside a package is not read.
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "imported-flag"


def flag_reason(local: str, module: str, definition: Reason) -> Reason:
    """The Reason for a finding under a gate that reads `local`, imported from `module`;
    `definition` is the verdict on the name in its own module."""
    return Reason(PRINCIPLE, f"gated on `{local}` (from `{module}`): {definition.text}",
                  definition.path, definition.line)
