"""Principle: a script whose entry point requires an NVIDIA (or AMD) GPU generation is CUDA-only.

`def main(): if not is_sm_at_least_100(): raise RuntimeError("requires SM100+")` called from
`if __name__ == "__main__":`: the script stops before doing anything on every other machine,
so what it does afterwards (a benchmark of an SM100 kernel, its `device="cuda"` tensors and
`torch.cuda.Event` timers) is CUDA's on purpose.
Evidence: the gate, file:line: among the first statements of the `__main__` block, of a
module-level function that block always calls, or of a module-level function that one always
calls, an `if <capability not met>: raise / return / sys.exit / pytest.skip`, or an
`assert <capability>`; the capability is an NVIDIA compute capability or an AMD architecture
(`devlint.evidence.capability`), also through the module's own flags and helpers
(`_IS_BLACKWELL = get_device_capability()[0] >= 10`, `def _is_sm100(): ...`).
Limits: a gate on `torch.cuda.is_available()` alone asks "is there a GPU?" and exempts
nothing; a call under `if`/`try` is one path among others; a module without a `__main__`
block is a library, whose functions are judged one by one (an early exit guards the rest of
its own function only).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.capability import _skips_module, met_if_false, met_if_true, module_names

_P = "entry-gate"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LEADING = 6  # how many leading statements a gate may follow (argument parsing, a print)


def _gate(body, names=None) -> ast.stmt | None:
    stmts = [st for st in body if not (isinstance(st, ast.Expr)
                                       and isinstance(st.value, ast.Constant))]
    for st in stmts[:_LEADING]:
        if isinstance(st, ast.If) and not st.orelse and st.body \
                and met_if_false(st.test, names) \
                and (_skips_module(st.body[-1]) or isinstance(st.body[-1], ast.Return)):
            return st
        if isinstance(st, ast.Assert) and met_if_true(st.test, names):
            return st
    return None


def _called(body, defs) -> list:
    """The module-level functions `body` calls outside `if`/`try`/loops, in order."""
    out = []
    stack = list(reversed(body))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.If, ast.Try, ast.For, ast.While, ast.With, *_FUNCS,
                          ast.ClassDef, ast.Lambda, ast.IfExp, ast.BoolOp)):
            if isinstance(n, ast.With):
                stack.extend(reversed(n.body))
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defs:
            out.append(defs[n.func.id])
        stack.extend(reversed(list(ast.iter_child_nodes(n))))
    return out


def _is_main_test(test) -> bool:
    return isinstance(test, ast.Compare) and len(test.ops) == 1 \
        and isinstance(test.ops[0], ast.Eq) and any(
            isinstance(x, ast.Name) and x.id == "__name__"
            for x in (test.left, test.comparators[0])) and any(
            isinstance(x, ast.Constant) and x.value == "__main__"
            for x in (test.left, test.comparators[0]))


def entry_gate_reason(tree: ast.Module, text: str, path: str | None) -> Reason | None:
    if "__main__" not in text:
        return None
    mains = [st for st in tree.body if isinstance(st, ast.If) and _is_main_test(st.test)]
    if not mains:
        return None
    defs = {st.name: st for st in tree.body if isinstance(st, _FUNCS)}
    names = module_names(tree)  # the module's own flags and helpers
    for block in mains:
        gate = _gate(block.body, names)
        if gate is None:
            seen = set()
            for fn in _called(block.body, defs):
                for g in (fn, *_called(fn.body, defs)):
                    if g.name in seen:
                        continue
                    seen.add(g.name)
                    gate = _gate(g.body, names)
                    if gate is not None:
                        break
                if gate is not None:
                    break
        if gate is not None:
            return Reason(_P, "the script's entry point stops unless the GPU has a given "
                          "NVIDIA compute capability or AMD architecture", path, gate.lineno)
    return None
