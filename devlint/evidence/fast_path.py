"""Principle: a CUDA fast path whose alternative is a correct generic path.

`if x.is_cuda and HAS_TILELANG: return tilelang_kernel(x)` followed by
`return torch_reference(x)`, or `if h.is_cuda and ...: logits = torch.mm(..., out_dtype=...)
else: logits = F.linear(...)`: on every other device the alternative computes the same value
on the tensor's own device, so the CUDA test picks an optimisation, not a device (the test is
not a hardcoding, and the CUDA arm is CUDA's own).
Evidence: the `if` with a tensor's CUDA test, an alternative (its `else`, or the code after a
CUDA arm that returns) that produces the same thing (both arms return, or both assign the same
names), and no CPU move or CUDA device in the alternative. The evidence is the `if`'s line.
The arm may return from inside a `with` block, and return a tuple of computed values; an
`elif` arm's alternative is what follows the whole chain (every arm before it is another
backend's fast path, the code after the chain the generic one).
Limits: arms that return or assign constants choose a value (`return 1` / `return 0`);
a branch without an alternative (`if x.is_cuda: mask = mask.to(x.device)`,
`y = y.pin_memory()`) is a finding: on other devices the work is skipped; an alternative that
moves to the CPU (`.cpu()`, `"cpu"`) or names `"cuda"` is no generic path.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

_CPU_MOVES = frozenset({"cpu", "numpy"})


def fast_path_reason(stmt: ast.If, rest, path: str | None) -> Reason | None:
    """`stmt` tests a tensor for CUDA; `rest` is the statements after it in its block."""
    body = stmt.body
    if not body:
        return None
    if stmt.orelse:
        other = stmt.orelse
        same = _returns(body) and _returns(other) or (
            _assigned(body) and _assigned(body) == _assigned(other))
    else:
        other = rest
        same = _returns(body) and bool(rest) and any(
            isinstance(n, ast.Return) and _computed(n.value)
            for st in rest for n in ast.walk(st))
    if not same or not other or not _generic(other):
        return None
    return Reason("fast-path", "a CUDA fast path whose alternative computes the same on any "
                  "device", path, stmt.lineno)


def _returns(block) -> bool:
    """The block ends by returning a computed value (a call): a constant returned is a
    choice, not the same computation done another way."""
    last = block[-1]
    while isinstance(last, (ast.With, ast.AsyncWith)) and last.body:
        last = last.body[-1]  # `with torch.autocast("cuda", enabled=False): return f(x)`
    return isinstance(last, ast.Return) and _computed(last.value)


def _computed(value) -> bool:
    """A call, or a tuple of calls (`return rope(q), rope(k)`)."""
    if isinstance(value, ast.Tuple):
        return bool(value.elts) and all(isinstance(e, ast.Call) for e in value.elts)
    return isinstance(value, ast.Call)


def _assigned(block) -> frozenset:
    names = set()
    for st in block:
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and not isinstance(st.value, ast.Call):
            return frozenset()  # a constant assigned is a choice, not a computation
        if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in getattr(st, "targets", None) or [st.target]:
                names.update(ast.unparse(n) for n in ast.walk(t)
                             if isinstance(n, (ast.Name, ast.Attribute)) and n is t)
    return frozenset(names)


def _generic(block) -> bool:
    for st in block:
        for n in ast.walk(st):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                    and (n.value == "cpu" or n.value.startswith("cuda")):
                return False
            if isinstance(n, ast.Attribute) and (n.attr in _CPU_MOVES or n.attr == "cuda"):
                return False
    return True
