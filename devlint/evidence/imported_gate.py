"""Principle: a skip gate imported from a project module covers its tests as one defined in the file does.

`from ..testing_utils import require_torch_gpu` then `@require_torch_gpu` over a test or a
test class, or `pytestmark = skip_if_no_cuda` with the mark built in a helper module: the
test runs only where the gate lets it, exactly as under a gate written in the test's own file
(`cuda_guard`'s skip gates), so the devices of its body are CUDA's and the gate is the
finding. The imported name is resolved statically to its definition in the project (a
relative or absolute `from M import name`, through re-exports, `src/` layouts included), and
that definition is judged in its own module by the same predicate as an in-file gate: a skip
mark bound to the name (`skip_if_no_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
...)`), or a gate helper returning one (`def require_cuda(test): return unittest.skipUnless(
torch.cuda.is_available(), ...)(test)`), is such a gate where the mark asks `torch.cuda`
(then it is DL203's finding where it is defined), asks for a compute capability or a CUDA
build, or where its name is a `@requires_cuda`-style gate name. A gate helper that tests a
device name (`torch_device == "cuda"`) is no finding of its own, and exempts its tests only
as the deliberate CUDA twin of a generic gate defined next to it (`require_torch_gpu` beside
`require_torch_accelerator`: `cuda_twin`), which the project offers for tests that need CUDA.
Evidence: the definition of the gate (file:line of its mark). Applied by the project stage
(`devlint.engine.project.xgates`), over the bodies the in-file gate would cover: a decorated
test's body, a decorated class's body, and for a `pytestmark` the bodies of the module's tests
and of its classes' methods (not a function the module calls at import).
Limits: a name that does not resolve to a definition in the project (a third-party gate, a
star import, a gate built at run time) keeps the findings; a gate that only excludes some
platforms or only the CPU (`torch_device == "cpu"`, `skip_if_rocm`) is no CUDA gate; a gate
on a platform query that merely asks (`not current_platform.is_cuda()`) or on a flag exempts
nothing, as in the file; a decorator factory (`@skip_if_lt_x_gpu(2)`) or a module attribute
(`@utils.require_cuda`) is not followed; the skip gates of the tests themselves (DL203) stay
findings; a file outside a package (no `__init__.py`) is not read by the project stage.
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "imported-gate"


def gate_reason(local: str, module: str, definition: Reason) -> Reason:
    """The Reason of a candidate in a body gated by `local`, imported from `module`;
    `definition` is the gate's own verdict in its module (its path and line are the
    evidence)."""
    return Reason(PRINCIPLE, f"in a test or class whose skip gate `@{local}` (imported from "
                  f"`{module}`) requires CUDA: {definition.text}", definition.path,
                  definition.line)


def twin_gate_reason(name: str, twin: str, path: str | None, line: int | None) -> Reason:
    """The verdict on a gate helper that tests a device name for "cuda" and has a generic
    twin `twin` defined next to it."""
    return Reason(PRINCIPLE, f"`{name}` skips unless the device is CUDA, the deliberate CUDA "
                  f"twin of the generic `{twin}` defined next to it", path, line)
