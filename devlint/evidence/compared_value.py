"""Principle: a device string a test only stores in a record and compares back is data.

```python
ns = Namespace(model="vllm", device="cuda:1")
cfg = EvaluatorConfig.from_cli(ns)
assert cfg.device == "cuda:1"
```
The test checks that a value is carried through (argument parsing, a config's round trip):
the string never reaches a device, on any machine. Evidence: the assert that compares the
same value (file:line).
Limits: only in test modules; only a keyword value of a plain record (`argparse.Namespace`,
`types.SimpleNamespace`, `dict(...)`), which holds values and runs nothing; and the same
function must assert equality with the same string. A device string passed to anything else
(a model, a tensor factory, a config that builds devices) stays a finding.
"""
from __future__ import annotations

import ast
import os

from devlint.evidence import Reason
from devlint.evidence.vocabulary import is_test_path

_RECORDS = {"argparse.Namespace", "types.SimpleNamespace", "dict"}


def compared_value_reason(facts, node) -> Reason | None:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    if not is_test_path(os.path.abspath(facts.path).replace(os.sep, "/").split("/")):
        return None
    kw = facts.get_parent(node)
    call = facts.get_parent(kw) if isinstance(kw, ast.keyword) else None
    if not isinstance(call, ast.Call):
        return None
    q = facts.qualname(call.func) or getattr(call.func, "id", None)
    if q not in _RECORDS:
        return None
    w = facts.where_of(node)
    fn = w.function if w is not None else None
    if fn is None:
        return None
    for n in ast.walk(fn):
        if isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare) \
                and all(isinstance(op, ast.Eq) for op in n.test.ops) \
                and any(isinstance(s, ast.Constant) and s.value == node.value
                        for s in (n.test.left, *n.test.comparators)):
            return Reason("compared-value", "a test value stored in a record and compared "
                          "back (it never reaches a device)", facts.path, n.lineno)
    return None
