"""Principle: a device string a test only stores in a record and compares back is data.

```python
ns = Namespace(model="vllm", device="cuda:1")
cfg = EvaluatorConfig.from_cli(ns)
assert cfg.device == "cuda:1"
```
The test checks that a value is carried through (argument parsing, a config's round trip):
the string never reaches a device, on any machine. Evidence: the assert that compares the
same value (file:line).
Likewise a device a test gives to a function that chooses a device, to check its choice:

```python
device = _resolve_load_device(torch.device("cuda:0"), starts_on_cpu=True)
self.assertEqual(device, torch.device("cpu"))
```
Evidence: the comparison (file:line).
Limits: only in test modules; only a keyword value of a plain record (`argparse.Namespace`,
`types.SimpleNamespace`, `dict(...)`), which holds values and runs nothing; and the same
function must assert equality with the same string. For a function's choice: the device
(`torch.device(...)` or a string, directly or through a local name) is an argument of a call
whose result is assigned to a name, and every use of that name, and of the local, is a direct
operand of an equality assertion (`assert r == ...`, `assertEqual(r, ...)`, `assertIs`) whose
other operand is a device value (`torch.device(...)`, a string, None) or the local; one other
use (`r.shape`, `r` passed on) keeps the finding. A device string passed to anything else (a
model, a tensor factory, a config that builds devices) stays a finding.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.vocabulary import in_test_file

_RECORDS = {"argparse.Namespace", "types.SimpleNamespace", "dict"}


def compared_value_reason(facts, node) -> Reason | None:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    if not in_test_file(facts):
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


_ASSERT_EQ = {"assertEqual", "assertIs", "assertEquals", "assert_equal"}


def _parents(fn) -> dict:
    out = {}
    for n in ast.walk(fn):
        for c in ast.iter_child_nodes(n):
            out[id(c)] = n
    return out


def _is_device_value(node, qualname, local: str | None) -> bool:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str)):
        return True
    if isinstance(node, ast.Name) and node.id == local:
        return True
    return isinstance(node, ast.Call) and (qualname(node.func) or "") == "torch.device"


def _only_compared(fn, parents, name, qualname, local) -> int | None:
    """The line of the first equality assertion, where every load of `name` in `fn` is a
    direct operand of one against a device value; else None."""
    first = None
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        p = parents.get(id(n))
        if isinstance(p, ast.Compare) and len(p.ops) == 1 \
                and isinstance(p.ops[0], (ast.Eq, ast.Is)) \
                and isinstance(parents.get(id(p)), ast.Assert):
            other = p.comparators[0] if p.left is n else p.left
            line = p.lineno
        elif isinstance(p, ast.Call) and n in p.args[:2] and len(p.args) >= 2 \
                and getattr(p.func, "attr", getattr(p.func, "id", "")) in _ASSERT_EQ:
            other = p.args[1] if p.args[0] is n else p.args[0]
            line = p.lineno
        else:
            return None
        if not _is_device_value(other, qualname, local):
            return None
        first = line if first is None else min(first, line)
    return first


def resolved_device_reason(facts, node) -> Reason | None:
    """A device a test passes to a function whose result it only compares with a device."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) and not (
            isinstance(node, ast.Call) and (facts.qualname(node.func) or "") == "torch.device"):
        return None
    if not in_test_file(facts):
        return None
    w = facts.where_of(node)
    fn = w.function if w is not None else None
    if fn is None:
        return None
    parents = facts.memo(("compared-value-parents", id(fn)), lambda: _parents(fn))
    expr = node
    p = parents.get(id(expr))
    if isinstance(p, ast.Call) and (facts.qualname(p.func) or "") == "torch.device" \
            and p.args and p.args[0] is expr:
        expr, p = p, parents.get(id(p))
    local = None
    if isinstance(p, ast.Assign) and len(p.targets) == 1 and isinstance(p.targets[0], ast.Name):
        local = p.targets[0].id  # `runtime_device = torch.device("cuda:0")`, then passed
        uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == local
                and isinstance(n.ctx, ast.Load)]
        stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == local
                  and not isinstance(n.ctx, ast.Load)]
        if not uses or len(stores) != 1:
            return None
    else:
        uses = [expr]
    line = None
    for use in uses:
        q = parents.get(id(use))
        if isinstance(q, ast.keyword):
            q = parents.get(id(q))
        if isinstance(q, ast.Call) and local is not None and use in q.args[:2] \
                and getattr(q.func, "attr", getattr(q.func, "id", "")) in _ASSERT_EQ:
            continue  # the device itself compared (`assertEqual(device, runtime_device)`)
        if not isinstance(q, ast.Call) or use is q.func or (
                facts.qualname(q.func) or "").startswith("torch."):
            return None
        a = parents.get(id(q))
        if not (isinstance(a, ast.Assign) and len(a.targets) == 1
                and isinstance(a.targets[0], ast.Name) and a.value is q):
            return None
        found = _only_compared(fn, parents, a.targets[0].id, facts.qualname, local)
        if found is None:
            return None
        line = found if line is None else min(line, found)
    if line is None:
        return None
    return Reason("compared-value", "a test's device given to a function whose choice of "
                  "device the test compares (it never reaches a device)", facts.path, line)
