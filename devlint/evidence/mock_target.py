"""Principle: the target a test mocks is a name, not a use: it never reaches a device.

```python
@patch("torch.cuda.current_stream")          # the target: what the mock replaces
def test_stream(mock_stream): ...

with mock.patch.object(torch.cuda, "synchronize"):
    run()
monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
```
The string (or the module object with an attribute name) says which function the test
replaces with a double; nothing is called on any device there. If the code under test calls a
CUDA-only API, that call is the finding, where it is written. Evidence: the patching call
(file:line).
Limits: only the target of the patching call (the first argument of `patch(...)`,
`mock.patch(...)`, `mocker.patch(...)`, the first two of `patch.object(...)` and of
`monkeypatch.setattr(...)` / `setattr(...)` / `delattr(...)`); the replacement given to it
(`new=`, a third argument, a `side_effect`) is code that may run, and is linted.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

_PATCHERS = frozenset({"patch", "object", "setattr", "delattr", "setitem", "delitem"})


def mock_target_reason(facts, node) -> Reason | None:
    """The Reason of a candidate that is (in) the target of a patching call, or None."""
    child, parent = node, facts.get_parent(node)
    while isinstance(parent, ast.Attribute) and parent.value is child:
        child, parent = parent, facts.get_parent(parent)  # `torch.cuda` in `torch.cuda.x`
    if not isinstance(parent, ast.Call) or child not in parent.args[:2]:
        return None
    func = parent.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in _PATCHERS:
        return None
    if name == "object" and not (isinstance(func, ast.Attribute)
                                 and getattr(func.value, "attr", getattr(func.value, "id", ""))
                                 == "patch"):
        return None  # `x.object(...)` that is not `patch.object`
    if name == "patch" and child is not parent.args[0]:
        return None  # `patch("a.b", "cuda")`: the second argument is the replacement
    return Reason("mock-target", "the target a test patches (a name, not a use)", facts.path,
                  parent.lineno)
