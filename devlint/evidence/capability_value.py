"""What a compute-capability query's value is, and the local names a helper binds to it (the
base of `devlint.evidence.capability`).

`major, minor = torch.cuda.get_device_capability()`, then `return major >= 9 or (major == 8
and minor >= 9)`: the names stand for the capability query's value (or an item of it) in the
helper's tests after them, so the tests read as the query itself would. A name bound again to
anything else stands for nothing after that."""
from __future__ import annotations

import ast
import copy
import re

# AMD GPU architectures (`is_MI300()`, `is_gfx950()`, `_is_cdna3()`): PyTorch's ROCm build is
# the "cuda" device type, so a gate that requires "SM89 or MI300" requires a GPU of that type
AMD_ARCH = r"mi\d{3}|gfx\d+|cdna\d*"
# compute-capability queries: torch's, and a project's `is_sm_at_least_90()`, `_is_hopper()`,
# `is_blackwell()`, `_hopper_or_newer()` (NVIDIA architecture names), and AMD's (`AMD_ARCH`)
_CAPABILITY = re.compile(r"(?i)(?:^|_)(?:sm_?\d+|sm_at_least|sm_version|hopper|blackwell|ampere"
                         r"|device_capability|compute_capability|%s)(?:_|$|\d)" % AMD_ARCH)


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_capability_call(node) -> bool:
    return isinstance(node, ast.Call) and bool(_CAPABILITY.search(_name(node.func)))


def _capability_value(node) -> bool:
    """A capability query's value, or a part of it: `get_device_capability()`,
    `get_device_capability()[0]`, `get_device_properties(0).major`."""
    if isinstance(node, ast.Attribute) and node.attr in ("major", "minor") \
            and isinstance(node.value, ast.Call) \
            and _name(node.value.func) == "get_device_properties":
        return True
    while isinstance(node, (ast.Subscript, ast.Attribute)) and not _is_capability_call(node):
        node = node.value
    return _is_capability_call(node)


def bind_caps(st, caps: dict) -> None:
    """Record in `caps` the local names `st` binds to a capability value (a tuple target takes
    its items: `major, minor = get_device_capability()` binds `major` to `...[0]`); forget
    the names it binds to anything else."""
    targets = st.targets if isinstance(st, ast.Assign) else [getattr(st, "target", None)]
    value = getattr(st, "value", None)
    for t in targets:
        if isinstance(t, ast.Name):
            caps.pop(t.id, None)
            if value is not None and _capability_value(value):
                caps[t.id] = value
        elif isinstance(t, (ast.Tuple, ast.List)):
            for i, elt in enumerate(t.elts):
                if isinstance(elt, ast.Name):
                    caps.pop(elt.id, None)
                    if value is not None and _capability_value(value):
                        caps[elt.id] = ast.Subscript(value=value, slice=ast.Constant(i),
                                                     ctx=ast.Load())


class _Substitute(ast.NodeTransformer):
    def __init__(self, caps: dict):
        self.caps = caps

    def visit_Name(self, n):
        v = self.caps.get(n.id)
        return copy.deepcopy(v) if v is not None and isinstance(n.ctx, ast.Load) else n


def with_caps(expr, caps: dict):
    """`expr` with the local capability names of `caps` replaced by their values (a copy)."""
    if not caps or not any(isinstance(n, ast.Name) and n.id in caps for n in ast.walk(expr)):
        return expr
    return _Substitute(caps).visit(copy.deepcopy(expr))
