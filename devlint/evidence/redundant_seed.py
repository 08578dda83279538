"""Principle: a CUDA seed next to `torch.manual_seed` of the same value is redundant.

`torch.manual_seed(s)` seeds the CPU and every accelerator (CUDA, XPU, MPS, ... through their
device modules); a `torch.cuda.manual_seed(s)` / `manual_seed_all(s)` beside it changes
nothing on any platform, and on a machine without CUDA it is queued lazily and never runs.
Evidence: the `torch.manual_seed` call with the same argument in the same function (or module
code), and its line.
Limits: only the same argument's source counts (`torch.manual_seed(0)` next to
`torch.cuda.manual_seed(seed)` is no evidence); a CUDA seed alone is a finding (DL404); so is
one whose CUDA stream is read or drawn from before the generic seed runs (between the two
calls, a call whose name speaks of the RNG state or random draws: `get_rng_state`,
`torch.randn`): there the CUDA seed decides what is read.
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
                and (qualname(n.func) or "") in _GENERIC_SEEDS and source(n.args[0]) == want \
                and not _read_between(body, call, n):
            return Reason("redundant-seed", "`torch.manual_seed` with the same value already "
                          "seeds every device", path, n.lineno)
    return None


def _read_between(body, cuda_seed, generic_seed) -> bool:
    """The random stream is read (or its state taken) after the CUDA seed and before a later
    generic seed: `torch.cuda.manual_seed(s); state = torch.cuda.get_rng_state();
    torch.manual_seed(s)` keeps a state only the CUDA seed made."""
    start = (cuda_seed.lineno, cuda_seed.col_offset)
    end = (generic_seed.lineno, generic_seed.col_offset)
    if end <= start:
        return False
    for n in _walk_statements(body):
        if isinstance(n, ast.Call) and start < (n.lineno, n.col_offset) < end:
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if "rng_state" in name or name.startswith("rand") or name in _DRAWS:
                return True
    return False


_DRAWS = frozenset({"normal", "normal_", "uniform_", "bernoulli", "multinomial", "dropout",
                    "random_", "exponential_"})


def _walk_statements(body):
    """The nodes of a block, not entering nested functions or classes."""
    stack = list(body)
    while stack:
        n = stack.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(c)
