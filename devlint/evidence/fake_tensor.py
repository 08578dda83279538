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

Also: the device of a tensor made inside `with FakeTensorMode():` (torch's fake tensor mode,
`torch._subclasses.fake_tensor`), where every tensor made or moved is a fake one holding only
its metadata: `torch.empty(..., device="cuda")` there checks shapes, dtypes and the
registered fake kernels (`register_fake`) without touching a device, on any machine.
Evidence: the `with` (file:line).
Limits: only a device value (the DL1xx rules; not a `torch.cuda` API call, which runs for
real, nor a backend or an assert), written
inside the `with` block's own body in the same function, where the mode is the `with` item
itself (`with FakeTensorMode():`, `with FakeTensorMode(shape_env=env) as mode:`) or a name
bound to one in the same function; not a mode chosen by a condition
(`FakeTensorMode() if fake else nullcontext()`).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.vocabulary import in_test_file

_FAKES = {"SimpleNamespace", "Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock"}
_METADATA = {"dtype", "shape", "ndim"}


def fake_tensor_reason(facts, node) -> Reason | None:
    if not in_test_file(facts):
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


def _is_fake_mode(expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    f = expr.func
    return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) == "FakeTensorMode"


def fake_mode_reason(facts, node, api: bool = False) -> Reason | None:
    """The Reason of a device value made inside a `with FakeTensorMode():` block, or None."""
    code = str(getattr(facts.rule, "code", "") or "")
    if api or (code and not code.startswith("DL1")) \
            or not facts.memo(("fake-mode",), lambda: "FakeTensorMode" in facts.text):
        return None
    w = facts.where_of(node)
    scope = w.function if w is not None and w.function is not None else facts.tree
    row = getattr(node, "lineno", None)
    if scope is None or row is None:
        return None
    for first, last, st in facts.memo(("fake-mode-blocks", id(scope)),
                                      lambda: _fake_blocks(scope)):
        if first <= row <= last and _same_function(scope, st, node):
            return Reason("fake-tensor", "a device value inside `with FakeTensorMode():`, where "
                          "every tensor is a fake one (metadata only)", facts.path, st.lineno)
    return None


def _fake_blocks(scope) -> list:
    """[(first row, last row, with)] of the `with` statements in `scope` (nested ones too)
    whose items enter a fake tensor mode; found once per scope (asked per candidate, a
    module-level search walked the whole module again for each: torch's sources, 57 % of a
    run)."""
    modes = _mode_names(scope)
    out = []
    for st in ast.walk(scope):
        if isinstance(st, (ast.With, ast.AsyncWith)) and st.body and any(
                _is_fake_mode(i.context_expr) or (isinstance(i.context_expr, ast.Name)
                                                  and i.context_expr.id in modes)
                for i in st.items):
            out.append((st.body[0].lineno, st.body[-1].end_lineno or st.lineno, st))
    return out


def _mode_names(scope) -> set:
    """Names bound to `FakeTensorMode()` by an unconditional statement of the scope's own body
    and bound nowhere else in it (not by an `if`/`else` choice, not in a nested function)."""
    fake: dict = {}
    for st in getattr(scope, "body", ()):
        if isinstance(st, ast.Assign) and _is_fake_mode(st.value):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    fake[t.id] = fake.get(t.id, 0) + 1
    if not fake:
        return set()
    stores: dict = {}
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in fake:
            stores[n.id] = stores.get(n.id, 0) + 1
    return {name for name, k in fake.items() if stores.get(name) == k}


def _same_function(scope, with_stmt, node) -> bool:
    """`node` is in `with_stmt`'s body and not inside a function nested in it."""
    stack = list(with_stmt.body)
    while stack:
        n = stack.pop()
        if n is node:
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False
