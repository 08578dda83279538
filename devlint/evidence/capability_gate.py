"""Principle: a CUDA query that gates a CUDA compute-capability test asks for a CUDA feature.

`torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)`,
`torch.cuda.is_available() and not is_sm_at_least_89()`, `not torch.cuda.is_available() or
not is_sm_at_least_90()`: the availability test only protects the capability query (an SM
version exists on NVIDIA GPUs only), so the whole test asks "is this an SM89+ CUDA GPU?", and
it is no hardcoding of the device (a skip gate of this form skips only old CUDA GPUs or
machines without that feature). So is an availability gate stacked with a capability gate on
the same test or class (`@skipIf(not torch.cuda.is_available())` above `@skipIf(not
is_sm_at_least_90())`, both marks of one `pytestmark` list, or a method's gate inside a class
gated on a capability): the test already requires an SM90+ (or MI300) GPU, and an
accelerator-generic availability gate would skip it on exactly the same machines.
Evidence: the capability operand (`get_device_capability`/`get_device_properties` compared,
or a helper named after an SM version or NVIDIA architecture: `is_sm_at_least_90`,
`is_hopper`), and its line; for a stacked gate, the line of the gate that requires the
capability (resolved through the module's own names: `devlint.evidence.capability`).
Limits: only operands of the same `and`/`or`, or gates of the same test, its enclosing
classes or the module's `pytestmark`; a bare `torch.cuda.is_available()` elsewhere in the
function is still a finding, and so is an availability gate whose test a capability check
inside its body narrows (the body's check is no gate).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.capability import module_names, requiring_mark

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def capability_reason(operand, path: str | None) -> Reason:
    return Reason("capability-gate", "one operand of a test for a CUDA compute capability",
                  path, getattr(operand, "lineno", None))


def stacked_reason(gate, tree, parent_of, path: str | None) -> Reason | None:
    """The reason for the skip gate `gate` (a decorator, or a mark of a `pytestmark` list)
    stacked with a gate requiring a compute capability on the same test or class, an
    enclosing class or the module's `pytestmark`; `parent_of(node)` is the node's parent."""
    names = module_names(tree)
    others = []
    par = parent_of(gate)
    if isinstance(par, (ast.List, ast.Tuple)):  # `pytestmark = [skipif(...), skipif(...)]`
        others.extend(m for m in par.elts if m is not gate)
        par = parent_of(par)
    while par is not None:
        if isinstance(par, (*_FUNCS, ast.ClassDef)):
            others.extend(d for d in par.decorator_list if d is not gate)
        par = parent_of(par)
    for st in getattr(tree, "body", ()):
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                              for t in st.targets):
            others.extend(st.value.elts if isinstance(st.value, (ast.List, ast.Tuple))
                          else [st.value])
    for d in others:
        if d is not gate and requiring_mark(d, names):
            return Reason("capability-gate", "stacked with a gate that requires a given NVIDIA "
                          "compute capability or AMD architecture: the test already requires "
                          "such a GPU", path, getattr(d, "lineno", None))
    return None
