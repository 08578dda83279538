"""Principle: a CUDA seed next to `torch.manual_seed` of the same value is redundant.

`torch.manual_seed(s)` seeds the CPU and every accelerator (CUDA, XPU, MPS, ... through their
device modules); a `torch.cuda.manual_seed(s)` / `manual_seed_all(s)` beside it changes
nothing on any platform, and on a machine without CUDA it is queued lazily and never runs.
Evidence: the `torch.manual_seed` call with the same argument in the same function (or module
code), and its line.
Limits: only the same argument's source counts (`torch.manual_seed(0)` next to
`torch.cuda.manual_seed(seed)` is no evidence); a CUDA seed alone is a finding (DL404).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

CUDA_SEEDS = frozenset({"torch.cuda.manual_seed", "torch.cuda.manual_seed_all"})
_GENERIC_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})


def redundant_seed_reason(call: ast.Call, scope, qualname, source, path) -> Reason | None:
    """`call` is `torch.cuda.manual_seed(_all)(s)`; `scope` the enclosing function (or
    module); `qualname`/`source` resolve names and give a node's text."""
    if len(call.args) != 1 or call.keywords:
        return None
    want = source(call.args[0])
    body = scope.body if scope is not None else []
    for n in _walk_statements(body):
        if isinstance(n, ast.Call) and len(n.args) == 1 \
                and (qualname(n.func) or "") in _GENERIC_SEEDS and source(n.args[0]) == want:
            return Reason("redundant-seed", "`torch.manual_seed` with the same value already "
                          "seeds every device", path, n.lineno)
    return None


def _walk_statements(body):
    """The nodes of a block, not entering nested functions or classes."""
    stack = list(body)
    while stack:
        n = stack.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(c)
