"""Principle: an expression that names several platforms dispatches among them.

Evidence: a collection or concatenation of device values that also names another accelerator
(`("cuda", "xpu")`, `{"cuda": ..., "npu": ...}`, `["cuda", "mps"] + [f"npu:{i}" ...]`), or a
boolean test whose operands ask about CUDA and about another accelerator
(`torch.cuda.is_available() or torch.backends.mps.is_available()`,
`not torch.cuda.is_available() and not is_torch_xpu_available()`,
`mps_available and not torch.cuda.is_available()`): the CUDA value or query in it is one entry
among the platforms the code handles (SPEC 3: dispatch tables and membership tests).
Also a CUDA fallback behind an accelerator query (`current_accelerator() or
torch.device("cuda")`): the platform already chose the device; the literal is reached only
where no accelerator was found.
Limits: the CPU is no other accelerator (`["cpu", "cuda"]` tests CUDA only); the body of
`if not is_xpu() and not is_rocm():` is not thereby CUDA (out-of-tree platforms exist), only
the queries inside the test are exempt.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.platform_ladder import names_other_accelerator_value, \
    other_accelerator_test

_COLLECTIONS = (ast.Tuple, ast.List, ast.Set)
_ACCELERATOR_QUERY = re.compile(r"(?i)(^|_)(current_)?accelerator(_device)?$")


def _values(node):
    if isinstance(node, _COLLECTIONS):
        return node.elts
    if isinstance(node, ast.Dict):
        return [k for k in node.keys if k is not None]
    if isinstance(node, ast.ListComp):
        return [node.elt]
    return []


def collection_reason(node, path: str | None) -> Reason | None:
    """A display (or `+` of displays) of device values that also names another accelerator."""
    parts = _concatenated(node) if isinstance(node, ast.BinOp) else [node]
    if any(names_other_accelerator_value(v) for p in parts for v in _values(p)):
        return Reason("several-platforms", "one entry of a collection that names several "
                      "platforms", path, node.lineno)
    return None


def _concatenated(node) -> list:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _concatenated(node.left) + _concatenated(node.right)
    return [node]


def test_reason(node, qualname, path: str | None) -> Reason | None:
    """A boolean test (`and`/`or`) whose operands also ask about another accelerator."""
    if isinstance(node, ast.BoolOp) and other_accelerator_test(node, qualname):
        return Reason("several-platforms", "one operand of a test that also asks about "
                      "another accelerator", path, node.lineno)
    return None


def fallback_reason(node, path: str | None) -> Reason | None:
    """`accelerator_query() or <fallback>`: the fallback operands of an `or` whose first
    operand asks the platform for its accelerator."""
    if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or)):
        return None
    first = node.values[0]
    if isinstance(first, ast.Call):
        f = first.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if _ACCELERATOR_QUERY.search(name):
            return Reason("several-platforms", "the fallback of a device the platform already "
                          "chose", path, node.lineno)
    return None
