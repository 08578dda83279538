"""Principle: a CUDA test that only gates a report, and a report switched on by a flag, are not findings (pattern E).

`if t.is_cuda: logger.warning_once("moving the image to the CPU")`,
`if torch.cuda.device_count() > 1 and ...: logger.warning(...)`: the test changes what is
printed, not where anything runs, so no device value is pinned. Evidence: the `if` whose body
holds only reports and `pass` (file:line of the `if`). A report is a message (`print`,
`warnings.warn`, `logger.<level>` / `logging.<level>`, also the `*_once` forms, and a
statement call of a `print_*` helper), a CUDA memory statistic measured into a local name that
only reports read (`peak = torch.cuda.max_memory_allocated() / 2**20`, then
`print(f"{peak} MB")`), a reset of those statistics (`torch.cuda.reset_peak_memory_stats()`),
or an entry of a metrics dict, a local that is only filled (`log_data.update({...})`,
`log_data[k] = v`) and handed to a logger (`accelerator.log(log_data)`, `wandb.log`,
`log_metrics`, `set_postfix`, a message). So are the early exit of a function whose rest
only reports (`if bs in self._logged or not torch.cuda.is_current_stream_capturing(): return`,
then `self._logged.add(bs)` and `logger.info(...)`: the test chooses whether to log once;
the bookkeeping of a set the exit's own test reads is part of the report), and, inside an
`if <flag>:` (a name or an attribute: a switch such as `print_mem`, `args.log_memory`, no
call, no comparison) whose body only reports, the CUDA memory statistics and resets of that
body: the branch is an opt-in report (its value never reaches a device; the rubric's
print-only branch); without the switch nothing in it runs. Evidence: the `if` (file:line).
Limits: only the test of such an `if` (or, for the switch, its reporting body): an
`else`/`elif` that does something else makes the test choose behaviour; a statistic read
outside such a branch stays a finding even when only a message reads it (`logger.info(f"peak
{torch.cuda.max_memory_allocated()}")` in a training loop misreports 0 MB on another
accelerator, and upstream fixes it: cross corpus 032, judged TP in ColossalAI's and
Megatron-LM's samples), as does one whose value decides anything (an `assert`, a threshold,
a batch size, a returned value, a dict handed to anything but a logger). A comparison or a
call as the switch (`if rank == 0:`, `if is_main_process():`) is not a switch: that branch
runs in every normal run, and its report is the run's product. Off CUDA a switched-on report
misbehaves: on torch 2.13's CPU build `torch.cuda.memory_allocated()`,
`max_memory_allocated()`, `memory_reserved()` return 0 and `memory_stats()` an empty dict
silently, while `reset_peak_memory_stats()` raises (AttributeError: no
`torch._C._cuda_resetPeakMemoryStats`) and `mem_get_info()` asserts; that is the cost of the
switch, which its caller turns on. A body that raises is a guard, not a message.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

_LEVELS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log"}
_LOGGERS = {"logger", "log", "logging", "_logger", "LOGGER", "_LOGGER", "warnings"}
# CUDA caching-allocator statistics (and their resets): what a memory report reads
STATISTICS = frozenset({
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "memory_cached", "max_memory_cached", "memory_stats", "mem_get_info",
})
RESETS = frozenset({"reset_peak_memory_stats", "reset_max_memory_allocated",
                    "reset_max_memory_cached", "reset_accumulated_memory_stats"})
# arithmetic on a statistic that changes no state
_PURE = frozenset({"float", "int", "round", "max", "min", "abs", "sum", "str", "len"})
# calls (as statements) that hand a metrics dict or a value to a logger
_SINKS = frozenset({"log", "log_metrics", "log_dict", "set_postfix", "add_scalar",
                    "add_scalars"})
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _called(call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def is_message(stmt) -> bool:
    """`print(...)`, `warnings.warn(...)`, `logger.warning(...)`, `self.logger.info_once(...)`,
    `print_rank_0(...)`."""
    if isinstance(stmt, ast.Pass):
        return True
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    if isinstance(func, ast.Name):
        return func.id in ("print", "warn") or func.id.startswith("print_")
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr.startswith("print_"):  # `coordinator.print_on_master(...)`
        return True
    level = func.attr[:-5] if func.attr.endswith("_once") else func.attr
    if level not in _LEVELS:
        return False
    owner = func.value
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return name in _LOGGERS or name.lower().endswith("logger")


def _sink(stmt) -> bool:
    """A message, or a statement call that hands values to a logger (`accelerator.log(d)`)."""
    return is_message(stmt) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                                and _called(stmt.value) in _SINKS)


def _statistic_only(expr) -> bool:
    """An expression whose calls are all CUDA memory statistics or pure arithmetic, with at
    least one statistic."""
    calls = [n for n in ast.walk(expr) if isinstance(n, ast.Call)]
    return any(_called(c) in STATISTICS for c in calls) and all(
        _called(c) in STATISTICS or _called(c) in _PURE for c in calls)


def _measured(stmt) -> str | None:
    """The name `stmt` assigns a statistic to (`peak = torch.cuda.max_memory_allocated()`)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name):
        target = stmt.targets[0].id
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name) \
            and stmt.value is not None:
        target = stmt.target.id
    else:
        return None
    return target if _statistic_only(stmt.value) else None


def _reset(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and _called(stmt.value) in RESETS


def _filled(stmt) -> str | None:
    """The local a statement fills as a dict: `d.update(...)`, `d[k] = v`."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        if isinstance(f, ast.Attribute) and f.attr == "update" and isinstance(f.value, ast.Name):
            return f.value.id
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Subscript) \
            and isinstance(stmt.targets[0].value, ast.Name):
        return stmt.targets[0].value.id
    return None


def _loads(node, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in ast.walk(node))


def _statements(body):
    """Every statement of `body`, nested blocks included (nested functions too)."""
    for st in body:
        yield st
        for field in _BLOCKS:
            for sub in getattr(st, field, None) or ():
                if isinstance(sub, ast.stmt):
                    yield from _statements([sub])
                else:  # an except handler, a match case
                    yield from _statements(sub.body)


def _only_reported(names, scope) -> bool:
    """Every read of `names` in `scope` (a function, or the module) is by a report: a message
    or logger call, a metrics dict filled for one, or a statistic measured for one (whose own
    name must then be only reported too); and some report reads one."""
    readers = _index(scope)[0]
    todo, seen, reported = list(names), set(), False
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for st in readers.get(name, ()):
            if _sink(st):
                reported = True
                continue
            filled = _filled(st)
            if filled is not None and (not isinstance(st, ast.Assign)
                                       or not _loads(st.targets[0].slice, name)):
                if not _local_dict(filled, scope):
                    return False
                todo.append(filled)  # `d["mem"] = peak`: `d` must be only reported
                continue
            target = _measured(st) or _derived(st)
            if target is not None:
                todo.append(target)  # `delta = peak - base`: `delta` must be only reported
                continue
            return False
    return reported  # a value nothing reports is no report (a flag, a dead store)


def _derived(stmt) -> str | None:
    """The name `stmt` assigns arithmetic on other names to (`delta = peak / 2**20`)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name) and _arithmetic(stmt.value):
        return stmt.targets[0].id
    return None


def _arithmetic(expr) -> bool:
    """An expression of names, constants and pure calls only (`peak - base`, `x / 2**20`)."""
    return all(not isinstance(n, ast.Call) or _called(n) in _PURE for n in ast.walk(expr)) \
        and not any(isinstance(n, (ast.Attribute, ast.Subscript, ast.Lambda, ast.Await,
                                   ast.Yield, ast.YieldFrom, ast.NamedExpr))
                    for n in ast.walk(expr))


def _reports(stmt, scope) -> bool:
    """A statement that only reports (`scope`: the function or module that holds it, to follow
    the names it measures into or fills)."""
    if is_message(stmt) or _reset(stmt):
        return True
    if scope is None:
        return False
    measured = _measured(stmt) or _derived(stmt)
    if measured is not None:
        return _only_reported([measured], scope)
    filled = _filled(stmt)
    if filled is not None and _local_dict(filled, scope):
        return _only_reported([filled], scope)
    return False


def _local_dict(name, scope) -> bool:
    """`name` is bound in `scope` only to dict displays or `dict(...)` (a metrics dict)."""
    _, writers, defined = _index(scope)
    if name in defined:
        return False
    bound = False
    for st in writers.get(name, ()):
        value_ = getattr(st, "value", None)
        if not (isinstance(st, (ast.Assign, ast.AnnAssign)) and (
                isinstance(value_, ast.Dict) or (isinstance(value_, ast.Call)
                                                 and _called(value_) == "dict"))):
            return False
        bound = True
    return bound


def _index(scope):
    """({name: statements that read it}, {name: statements that store or delete it}, names of
    the functions and classes defined), over every statement of `scope` (nested blocks
    included), each in its own expressions only, in the order of the body. Built once per
    scope and kept on its node: each `if` of a function asks about the same scope, and a walk
    per question made a function of many `if`s quadratic."""
    index = getattr(scope, "_devlint_report_index", None)
    if index is not None:
        return index
    readers, writers, defined = {}, {}, set()
    for st in _statements(scope.body):
        is_def = isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if is_def:
            defined.add(st.name)
        loads, stores = set(), set()
        for field, value in ast.iter_fields(st):
            if field in _BLOCKS:
                continue
            for v in value if isinstance(value, list) else [value]:
                if not isinstance(v, ast.AST):
                    continue
                for n in ast.walk(v):
                    if isinstance(n, ast.Name):
                        (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
        for name in loads:
            readers.setdefault(name, []).append(st)
        if not is_def:  # a definition binds its own name only (`defined`)
            for name in stores:
                writers.setdefault(name, []).append(st)
    index = scope._devlint_report_index = (readers, writers, defined)
    return index


def print_only_reason(stmt, path: str | None, scope=None) -> Reason | None:
    """The reason for a candidate in the test of `stmt`, an `if` that only reports, or the
    early exit of a function whose rest only reports, else None. `scope`: the function (or
    module) that holds `stmt`."""
    if not isinstance(stmt, ast.If) or not stmt.body:
        return None
    if all(_reports(s, scope) for s in stmt.body) and (
            not stmt.orelse or all(_reports(s, scope) for s in stmt.orelse)) \
            and not all(_reset(s) for s in stmt.body):  # a reset alone reports nothing
        return Reason("print-only", "the test only chooses a message (its branch only logs, "
                      "prints or measures for a report)", path, stmt.lineno)
    if _report_exit(stmt, scope):
        return Reason("print-only", "the test only chooses whether the function reports (it "
                      "returns early; the rest of the function only logs)", path, stmt.lineno)
    return None


def _report_exit(stmt, scope) -> bool:
    """`if <test>: return` at the top of a function's body whose rest only reports (and
    records, in a set its own test reads, that it has)."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or stmt.orelse \
            or not all(isinstance(s, ast.Return) and (s.value is None or (
                isinstance(s.value, ast.Constant) and s.value.value is None))
                       for s in stmt.body):
        return False
    body = scope.body
    if not any(s is stmt for s in body):
        return False
    rest = body[[i for i, s in enumerate(body) if s is stmt][0] + 1:]
    marks = {ast.dump(n) for n in ast.walk(stmt.test)}
    return bool(rest) and any(is_message(s) for s in rest) and all(
        _reports(s, scope) or _bookkeeping(s, marks) for s in rest)


def _bookkeeping(stmt, marks) -> bool:
    """`self._logged.add(key)`: records in a set the exit's test reads that it reported."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    f = stmt.value.func
    return isinstance(f, ast.Attribute) and f.attr in ("add", "append") \
        and ast.dump(f.value) in marks and not any(
            isinstance(n, ast.Call) for a in stmt.value.args for n in ast.walk(a))


def switched_report_reason(facts, statement, path: str | None, scope=None) -> Reason | None:
    """The reason for a CUDA memory statistic (or reset) in `statement`, a report inside an
    `if <flag>:` whose body only reports, else None."""
    if not (_reset(statement) or _measured(statement) is not None or is_message(statement)):
        return None
    parent = facts.tree_parent(statement)
    if not (isinstance(parent, ast.If) and any(s is statement for s in parent.body)):
        return None
    test = parent.test
    while isinstance(test, ast.Attribute):
        test = test.value
    if not isinstance(test, ast.Name) or parent.orelse:
        return None
    if not all(_reports(s, scope) for s in parent.body) or all(_reset(s) for s in parent.body):
        return None
    return Reason("print-only", "an opt-in report: the branch of a switch that only measures "
                  "memory and prints it", path, parent.lineno)
