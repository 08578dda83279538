"""The device values of a CUDA guard's body, rewritten with the guard (`rules._api_table`'s
guard fix, DL203's gate fix).

`if torch.cuda.is_available(): model = model.to("cuda")` is one finding, the guard's (the
body stands under it: the cuda-guard principle), and its fix rewrites the test to
`torch.accelerator.is_available()`. The body then runs on every accelerator, so its device
values must follow in the same fix, or the fix alone would send `"cuda"` to an XPU: where the
rewritten guard lets the body run only with an accelerator available, the accelerator is
`torch.accelerator.current_accelerator()` (without `check_available`, which is right there:
the guard already asked).

Forms (each run original against fixed by tests/runtime, `dl401-guard-device-values`):
- `"cuda"` as a device argument (`.to("cuda")`, `device="cuda"`, `torch.device("cuda")`,
  `map_location="cuda"`) -> `torch.accelerator.current_accelerator()`;
- `"cuda"` assigned to a name that holds a device (`device = "cuda"`) ->
  `torch.accelerator.current_accelerator().type` (a string, like the original);
- `x.cuda()` / `x.cuda(non_blocking=b)` -> `x.to(device=torch.accelerator.current_accelerator()[,
  non_blocking=b])`, and `x.cuda(i)` for an index (an int, `device_id`, `local_rank`) ->
  `x.to(device=torch.device(torch.accelerator.current_accelerator().type, i))`: the keyword
  form, which tensors, modules and storages (`map_location=lambda s, loc: s.cuda(i)`) all take.
- `f"cuda:{i}"` -> `f"{torch.accelerator.current_accelerator().type}:{i}"`, and `"cuda:1"` in
  the same places as `"cuda"` -> `f"{torch.accelerator.current_accelerator().type}:1"` (a
  string, which every device argument takes);
- a table API that takes the device type first (`torch.cuda.amp.autocast(enabled=e)`,
  `torch.cuda.amp.GradScaler()`) -> its replacement with the accelerator's type inserted.
- `assert x.device.type == "cuda"` -> `... == torch.accelerator.current_accelerator().type`
  (an assertion follows the placement it checks; a comparison that picks a branch does not).
Anything else (`"cuda"` compared in a test or used as a key, `.cuda(device)`, `"cuda:" + str(i)`) has
no form here: the guard's fix is not offered (None).
"""
from __future__ import annotations

import ast
import re

from devlint.diagnostics import Edit

_DEVICE_KEYWORDS = ("device", "map_location")
# `"cuda:1"`: the same index on the accelerator the guard found
_INDEXED = re.compile(r"cuda:(\d+)")


def _accelerator(torch_local, target):
    """(the accelerator's device object, its type string) where a guard established one: the
    `torch.accelerator` forms from 2.6, below that the torch profile's device ladder (the
    first device module that says `is_available()`, as the rewritten guard asked)."""
    if target is None or target >= (2, 6):
        acc = f"{torch_local}.accelerator.current_accelerator()"
        return acc, f"{acc}.type"
    from devlint.profiles.torch_api import _ladder

    typ = _ladder().replace("{torch}", torch_local)
    return typ, typ  # a type string is a device wherever torch takes one, like "cuda" was


def accelerator_value_edits(facts, body, literals, torch_local, target=None, device=None):
    """Edits for the device values of `body` (the statements of a guard that establishes an
    available accelerator); `literals` are its CUDA device strings and f-strings. None where
    one of them has no form. `target`: the target torch (below 2.6 the forms are the device
    ladder's). `device`: (device object, type string) of a tensor's own test (`if t.is_cuda:`
    rewritten to `t.device.type != "cpu"`: the body runs where `t` is, `t.device`)."""
    acc, acc_type = device or _accelerator(torch_local, target)
    edits = []
    for node in literals:
        if isinstance(node, ast.JoinedStr):
            head = _fstring_head(facts, node)
            if head is None:
                return None
            start = facts.span(node)[0]
            quote = facts.text[start:head].lstrip("rRfFbBuU")[:1]
            inner = acc_type.replace('"', "'") if quote == '"' else acc_type
            edits.append(Edit(head, head + len("cuda"), f"{{{inner}}}"))
            continue
        indexed = isinstance(node, ast.Constant) and isinstance(node.value, str) \
            and _INDEXED.fullmatch(node.value)
        if not (isinstance(node, ast.Constant) and (node.value == "cuda" or indexed)):
            return None
        where = _device_position(facts, node)
        if where is None and node.value == "cuda" and _asserted_type(facts, node):
            where = "type"  # `assert t.device.type == "cuda"`: the placement the body made
        if where is None:
            return None
        s, e = facts.span(node)
        if indexed:
            quote = facts.text[s]
            if quote not in "'\"":
                return None  # a prefixed or implicitly joined string
            inner = acc_type.replace('"', "'") if quote == '"' else acc_type.replace("'", '"')
            edits.append(Edit(s, e, f"f{quote}{{{inner}}}:{indexed.group(1)}{quote}"))
            continue
        edits.append(Edit(s, e, acc if where == "object" else acc_type))
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                    and n.func.attr == "cuda" and not _is_torch(facts, n.func):
                if len(n.args) > 1 or any(k.arg != "non_blocking" for k in n.keywords):
                    return None
                dev = acc
                if n.args:
                    if not _is_index(n.args[0]):
                        return None  # `.cuda(device)`: a device of its own
                    dev = f"{torch_local}.device({acc_type}, {facts.source(n.args[0])})"
                _, value_end = facts.span(n.func.value)
                kws = "".join(f", {facts.source(k)}" for k in n.keywords)
                edits.append(Edit(value_end, facts.span(n)[1], f".to(device={dev}{kws})"))
    return edits


def _is_index(arg) -> bool:
    """An int literal, or a name that says it holds an index (`device_id`, `local_rank`,
    `idx`): the device ordinal `.cuda(i)` takes."""
    if isinstance(arg, ast.Constant):
        return type(arg.value) is int
    name = arg.attr if isinstance(arg, ast.Attribute) else getattr(arg, "id", "")
    return name.lower().endswith(("_id", "idx", "index", "rank")) or name in ("i", "rank")


def _fstring_head(facts, node):
    """The offset of `cuda` in an f-string that starts `f"cuda:{...}"`, else None."""
    src = facts.source(node)
    i = 0
    while i < len(src) and src[i] in "rRfF":
        i += 1
    quote = src[i:i + 3] if src[i:i + 3] in ('"""', "'''") else src[i:i + 1]
    if src[i + len(quote):i + len(quote) + 5] != "cuda:":
        return None
    return facts.span(node)[0] + i + len(quote)


# `torch.cuda.amp.autocast(enabled=..., dtype=..., cache_enabled=...)`: the keywords
# `torch.autocast(device_type, ...)` takes under the same names
_AUTOCAST_KEYWORDS = frozenset({"enabled", "dtype", "cache_enabled"})


def device_type_call_edits(facts, node, call, entry, torch_local, target=None, device=None):
    """`torch.cuda.amp.GradScaler(...)` -> `torch.amp.GradScaler(<accelerator type>, ...)`,
    `torch.cuda.amp.autocast(enabled=e)` -> `torch.autocast(<accelerator type>, enabled=e)`:
    a table entry that takes the device type first, inside a body that runs only with an
    accelerator available. None where the arguments do not map (positionals of autocast)."""
    if not (isinstance(call, ast.Call) and call.func is node):
        return None
    if entry.args != "same" and (call.args or any(k.arg not in _AUTOCAST_KEYWORDS
                                                  for k in call.keywords)):
        return None
    s, e = facts.span(node)
    _, end = facts.span(call)
    opening = facts.text.index("(", e, end)
    sep = ", " if call.args or call.keywords else ""
    acc = (device or _accelerator(torch_local, target))[1]
    return [Edit(s, e, entry.callee(torch_local)), Edit(opening + 1, opening + 1, acc + sep)]


def _is_torch(facts, func) -> bool:
    return (facts.qualname(func) or "").startswith("torch.")


def _asserted_type(facts, node) -> bool:
    """`assert x.device.type == "cuda"` (or `!=`): an assertion about the placement the
    guarded code made, which follows that placement to the accelerator. Not a comparison that
    chooses a branch (`if x.device.type == "cuda":` may pick CUDA-only code)."""
    par = facts.get_parent(node)
    if not (isinstance(par, ast.Compare) and len(par.ops) == 1
            and isinstance(par.ops[0], (ast.Eq, ast.NotEq))):
        return False
    other = par.left if par.comparators[0] is node else par.comparators[0]
    if other is node or not _is_device_type(other):
        return False
    stmt = facts.get_parent(par)
    return isinstance(stmt, ast.Assert) and stmt.test is par


def _is_device_type(expr) -> bool:
    """`x.device.type`, `device.type`, `device_type`, `self.device_type`."""
    if isinstance(expr, ast.Attribute) and expr.attr == "type":
        inner = expr.value
        name = inner.attr if isinstance(inner, ast.Attribute) else getattr(inner, "id", "")
        return "device" in name.lower()
    name = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
    return name.lower().endswith("device_type")


def _device_position(facts, node):
    """"object" where `node` is a device argument, "type" where it is assigned to a name that
    holds a device, else None."""
    par = facts.get_parent(node)
    if isinstance(par, ast.keyword) and par.arg in _DEVICE_KEYWORDS:
        return "object"
    if isinstance(par, ast.Call) and par.args and par.args[0] is node:
        f = par.func
        if (isinstance(f, ast.Attribute) and f.attr == "to") \
                or facts.qualname(f) == "torch.device":
            return "object"
    if isinstance(par, (ast.Assign, ast.AnnAssign)) and par.value is node:
        targets = par.targets if isinstance(par, ast.Assign) else [par.target]
        if len(targets) == 1:
            t = targets[0]
            name = t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", "")
            if "device" in name.lower():
                return "type"
    return None


def opens_to_accelerator(facts, node, body) -> bool:
    """The rewritten test of `node` (a `torch.cuda.is_available()` / `device_count()` query)
    lets `body` run only where an accelerator is available: the query is the `if` test (or one
    operand of an `and`), `device_count() > 0` or `>= 1`, an `assert`, or the negated test of
    an early exit (`body` is then the rest of the block)."""
    call = facts.get_parent(node)
    if not (isinstance(call, ast.Call) and call.func is node):
        return False
    w = facts.where_of(node)
    stmt = w.statement if w is not None else None
    if not isinstance(stmt, (ast.If, ast.Assert)) or not body \
            or not all(isinstance(st, ast.stmt) for st in body):
        return False
    test = stmt.test
    if isinstance(stmt, ast.Assert):
        return _requires(test, call)
    if body is stmt.body:
        return _requires(test, call)
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
        and _requires(test.operand, call)


def _requires(test, call) -> bool:
    """`test` is true only where `call` is true (or, for a device count, positive)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_requires(v, call) for v in test.values)
    if test is call:
        return isinstance(call.func, ast.Attribute) and call.func.attr == "is_available"
    if isinstance(test, ast.Compare) and test.left is call and len(test.ops) == 1:
        bound = test.comparators[0]
        if isinstance(bound, ast.Constant) and type(bound.value) is int:
            op = test.ops[0]
            return (isinstance(op, ast.Gt) and bound.value >= 0) or \
                (isinstance(op, ast.GtE) and bound.value >= 1)
    return False


def gate_opens_to_accelerator(facts, gate, name) -> bool:
    """The skip gate `gate` (`skipIf(cond)` / `skipUnless(cond)`, `name` its function) on a
    test function lets the test run only where an accelerator is available once its queries
    are the accelerator's: `skipIf(not torch.cuda.is_available())`, `skipIf(torch.cuda.
    device_count() < 2)`, `skipUnless(torch.cuda.is_available())`. Only a decorated function,
    or the module's `pytestmark` (for the bodies of its tests: DL203's gated body): a class's
    body runs at import, skipped or not."""
    par = facts.get_parent(gate)
    if not (isinstance(par, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(d is gate for d in par.decorator_list) or module_mark(facts, gate)) \
            or not gate.args:
        return False
    cond = gate.args[0]
    return _runs_with(cond) if name == "skipUnless" else _skips_without(cond)


def module_mark(facts, mark) -> bool:
    """`mark` is the module's `pytestmark` (or one mark of its list)."""
    par = facts.get_parent(mark)
    if isinstance(par, (ast.List, ast.Tuple)):
        par = facts.get_parent(par)
    return isinstance(par, ast.Assign) and par in facts.tree.body and any(
        isinstance(t, ast.Name) and t.id == "pytestmark" for t in par.targets)


def _query(node, what) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == what and isinstance(node.func.value, ast.Attribute) \
        and node.func.value.attr == "cuda"


def _runs_with(cond) -> bool:
    """`cond` holds only where a CUDA device (an accelerator, once rewritten) is available."""
    if isinstance(cond, ast.BoolOp) and isinstance(cond.op, ast.And):
        return any(_runs_with(v) for v in cond.values)
    if _query(cond, "is_available"):
        return True
    if isinstance(cond, ast.Compare) and len(cond.ops) == 1 and _query(cond.left, "device_count"):
        bound = cond.comparators[0]
        if isinstance(bound, ast.Constant) and type(bound.value) is int:
            op = cond.ops[0]
            return (isinstance(op, ast.Gt) and bound.value >= 0) or \
                (isinstance(op, (ast.GtE, ast.Eq)) and bound.value >= 1)
    return False


def _skips_without(cond) -> bool:
    """`cond` holds wherever no CUDA device is available (so the test runs only with one)."""
    if isinstance(cond, ast.BoolOp) and isinstance(cond.op, ast.Or):
        return any(_skips_without(v) for v in cond.values)
    if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):
        return _runs_with(cond.operand)
    if isinstance(cond, ast.Compare) and len(cond.ops) == 1 and _query(cond.left, "device_count"):
        bound = cond.comparators[0]
        if isinstance(bound, ast.Constant) and type(bound.value) is int:
            op = cond.ops[0]
            return (isinstance(op, ast.Lt) and bound.value >= 1) or \
                (isinstance(op, (ast.LtE, ast.Eq)) and bound.value == 0)
    return False
