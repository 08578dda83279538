"""Principle: the device of a fake tensor whose device work is mocked never reaches a device.

```python
query = SimpleNamespace(device=torch.device("cuda"), dtype=torch.bfloat16, shape=(1, 256, 8, 64))
with patch.object(backend, "_dense_attention", return_value=out) as dense:
    assert impl.forward(query, query, query, None) is out
dense.assert_called_once_with(query, query, query, softmax_scale=..., causal=False)
```
A record that stands in for a tensor (its `device` beside tensor metadata: `dtype`, `shape`,
`ndim`) holds no memory; where the test replaces the code that would run on a device with a
mock and asserts how that mock was called, the device is metadata the code under test reads
and routes on. Evidence: the mock assertion (file:line).
Limits: only in test modules; only the `device=` keyword of `types.SimpleNamespace(...)` or a
`Mock`/`MagicMock`/`NonCallableMock` constructor that also carries `dtype`, `shape` or
`ndim`; and the same test function asserts a call of a mock (`assert_called*`,
`assert_not_called`, `assert_awaited*`). A real tensor, or a fake one given to unmocked
code, stays a finding.
"""
from __future__ import annotations

import ast
import os

from devlint.evidence import Reason
from devlint.evidence.vocabulary import is_test_path

_FAKES = {"SimpleNamespace", "Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock"}
_METADATA = {"dtype", "shape", "ndim"}


def fake_tensor_reason(facts, node) -> Reason | None:
    if not is_test_path(os.path.abspath(facts.path).replace(os.sep, "/").split("/")):
        return None
    expr = node
    p = facts.get_parent(expr)
    if isinstance(p, ast.Call) and (facts.qualname(p.func) or "") == "torch.device" \
            and p.args and p.args[0] is expr:
        expr, p = p, facts.get_parent(p)
    if not (isinstance(p, ast.keyword) and p.arg == "device"):
        return None
    call = facts.get_parent(p)
    if not isinstance(call, ast.Call):
        return None
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    if name not in _FAKES or not _METADATA & {k.arg for k in call.keywords}:
        return None
    w = facts.where_of(node)
    fn = w.function if w is not None else None
    if fn is None:
        return None
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                n.func.attr.startswith(("assert_called", "assert_awaited"))
                or n.func.attr in ("assert_not_called", "assert_not_awaited", "assert_any_call")):
            return Reason("fake-tensor", "the device of a fake tensor (a record with tensor "
                          "metadata) given to code whose device work is mocked", facts.path,
                          n.lineno)
    return None
