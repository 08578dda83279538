"""Principle: a benchmark whose measurements need a recent NVIDIA or AMD GPU generation is CUDA's own.

```python
# benchmarks/moe/bench_grouped_mm.py
device = torch.device("cuda")

def main():
    for config in configs:
        if config.recipe == "mxfp8" and torch.cuda.get_device_capability() != (10, 0):
            logging.warning("Skipping MXFP8 benchmarks, only supported on SM100")
            continue
        run_experiment(config)
```
A benchmark exists to time its kernels. When it skips a measurement unless the GPU is an
SM89+ NVIDIA GPU (Ada's FP8, Hopper's WGMMA/TMA, Blackwell's MX formats) or a given AMD
architecture (`is_MI300()`: torch's device type on ROCm is "cuda" too), the kernels it times
are those of that hardware, and its devices, synchronisations, CUDA events and NCCL groups
serve them: on any other accelerator the benchmark has nothing to time.
Evidence (a `Reason("gated-benchmark", ...)`, file:line of the gate): a benchmark module (a
benchmark folder or name, never a test module: `kernel_benchmark.is_benchmark_path`) with an
`if` whose test requires such a generation (`get_device_capability() != (9, 0)`,
`not is_sm_at_least_100()`, `not (is_MI300() or is_MI350())`; also joined by `and` to a
choice of configuration, `recipe == X and <not met>`: that configuration needs it) and whose
arm taken without it only skips: logs or prints, binds placeholders (`us = float("inf")`,
`None`), and leaves measuring nothing (`return`, `return None` or a constant, `continue`,
`break`, `raise`, `sys.exit`, `pytest.skip`). It covers the gate's run: the function (or
method) holding the gate and the module's functions it names, transitively, less those a
function outside the run names too; the whole module only where the gate is the module's own
code (the script stops) or the run names every top-level function and class of the module
(the gated run is all the benchmark does, so its module-level devices serve it).
Limits: `return fallback(...)` measures the fallback, no skip; a function the run does not
reach (another benchmark of the file, a helper it shares with one) and, unless the run is all
the module does, the module-level code keep their findings; a gate below SM89 (`get_device_capability()[0] < 8`: bf16 on pre-Ampere GPUs) skips
old CUDA GPUs, not other accelerators; a capability query that picks a value (`dtype =
fnuz if is_MI300() else fn`, `if is_sm_at_least_89(): dtypes.append(...)`) chooses among
kernels and skips nothing; a test that also asks for availability or another platform
(`torch.cuda.is_available() and not is_sm_at_least_89()`) runs elsewhere; a benchmark that
names another accelerator or a platform layer (`torch.xpu`, `current_platform`, `"xpu"`) is
shared by the platforms; library and test modules are judged by their own principles.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.capability import (
    AMD_ARCH, _capability_value, _is_capability_call, _name, met_if_false, met_if_true,
    module_names,
)

_P = "gated-benchmark"
_FLOOR = 89  # SM89 (Ada: FP8); Hopper is 90, Blackwell 100
_AMD = re.compile(r"(?i)(?:^|_)(?:%s)(?:_|$)" % AMD_ARCH)
_NUMBER = re.compile(r"(?i)(?:sm_?|sm_at_least_|sm_version_?)(\d{2,3})")
_GENERATIONS = {"hopper": 90, "blackwell": 100, "ampere": 80}
_LOGS = frozenset({"warning", "warn", "info", "debug", "error", "log", "print", "print_rank_0",
                   "exception", "critical", "write", "echo", "secho"})
_LEAVES = frozenset({"exit", "skip", "_exit"})
# what names another accelerator or a platform layer: the benchmark is shared by the platforms
_OTHER = re.compile(r"(?i)^(?:xpu|npu|hpu|mps|musa|mlu|current_platform|get_device_module"
                    r"|accelerator|current_accelerator)$")
_AVAILABILITY = re.compile(r"(?i)(?:^|_)(?:is_available|available|device_count|is_cuda|cuda"
                           r"|hip|rocm|version)(?:_|$)")


def mentions(text: str) -> bool:
    """The cheap text gate: the source may hold a capability query."""
    return any(w in text for w in ("capab", "sm_", "_sm", "MI3", "MI2", "gfx", "opper",
                                   "lackwell", "mpere"))


def _generation(node) -> int | None:
    """The generation a capability query names or is compared with (89 for SM89, 90 for
    `(9, 0)`, 100 for `is_sm_at_least_100()`), 1000 for an AMD architecture; None if none."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            name = _name(n.func)
            if _AMD.search(name):
                return 1000
            m = _NUMBER.search(name)
            if m:
                return int(m.group(1))
            low = name.lower()
            for word, gen in _GENERATIONS.items():
                if word in low:
                    return gen
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and _capability_value(node.left):
        value = node.comparators[0]
        if isinstance(value, ast.Tuple) and value.elts and all(
                isinstance(e, ast.Constant) and isinstance(e.value, int) for e in value.elts):
            major = value.elts[0].value
            minor = value.elts[1].value if len(value.elts) > 1 else 0
            return major * 10 + minor
        if isinstance(value, ast.Constant) and isinstance(value.value, int):
            return value.value * 10 if value.value < 20 else value.value
    return None


def _requires(test, names) -> bool:
    """`test` is one that a recent generation answers: a capability query of SM89 or newer
    (or an AMD architecture), alone, negated, or-joined to another such query."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _requires(test.operand, names)
    if isinstance(test, ast.BoolOp):
        return all(_requires(v, names) for v in test.values)
    if not (_is_capability_call(test) or isinstance(test, ast.Compare)
            and len(test.ops) == 1 and _capability_value(test.left)):
        return False
    gen = _generation(test)
    return gen is not None and gen >= _FLOOR


def _asks_availability(node) -> bool:
    """`torch.cuda.is_available()`, `torch.version.hip`, `x.is_cuda`: a test that runs on
    other platforms when false."""
    for n in ast.walk(node):
        name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) \
            else None
        if name and _AVAILABILITY.search(name) and not _is_capability_name(name):
            return True
    return False


def _is_capability_name(name: str) -> bool:
    return bool(_NUMBER.search(name) or _AMD.search(name) or "capability" in name.lower())


def _unmet_arm(st: ast.If, names):
    """The arm of `st` that runs whenever the generation is missing, else None."""
    test = st.test
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        gates = [v for v in test.values if _requires(v, names) and met_if_false(v, names)]
        rest = [v for v in test.values if v not in gates]
        if gates and not any(_asks_availability(v) for v in rest):
            return st.body  # `recipe == X and <not met>`: configuration X needs it
        return None
    if _requires(test, names) and met_if_false(test, names):
        return st.body
    if _requires(test, names) and met_if_true(test, names) and st.orelse:
        return st.orelse
    return None


def _placeholder(value) -> bool:
    """`None`, a constant, `float("inf")`, an empty collection."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.Set)):
        return not any(True for _ in ast.iter_child_nodes(value) if not isinstance(
            _, (ast.Load, ast.Store)))
    if isinstance(value, ast.UnaryOp):
        return _placeholder(value.operand)
    return isinstance(value, ast.Call) and _name(value.func) == "float" \
        and all(isinstance(a, ast.Constant) for a in value.args)


def _skips(arm) -> bool:
    """The arm only logs, binds placeholders and leaves; it does one of the first or last."""
    said = False
    for st in arm:
        if isinstance(st, ast.Return):  # `return fallback(...)` still measures something
            return st.value is None or _placeholder(st.value)
        if isinstance(st, (ast.Continue, ast.Break, ast.Raise)):
            return True
        if isinstance(st, ast.Pass):
            continue
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            name = _name(st.value.func)
            if name in _LEAVES:
                return True
            if name in _LOGS:
                said = True
                continue
            return False
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None \
                and _placeholder(st.value):
            continue
        return False
    return said


def _shared(tree) -> bool:
    for n in ast.walk(tree):
        name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) \
            else (n.asname or n.name).rpartition(".")[2] if isinstance(n, ast.alias) else None
        if name and _OTHER.match(name):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                and n.value in ("xpu", "npu", "hpu", "mps", "musa", "mlu"):
            return True
    return False


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_UNITS = (*_FUNCS, ast.ClassDef)


def _gates(tree, names) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, ast.If)
            and (arm := _unmet_arm(n, names)) and _skips(arm)]


def gated_run(tree, text: str, path: str | None):
    """(the first gate, the ids of the functions its run covers, whether that is the whole
    module), or None; computed once per tree. A gate's run: the top-level function (or
    method) that holds it and the module's functions it reaches through their names,
    transitively; the whole module where a gate stands at module level or the runs reach
    every top-level function and class (all the benchmark does is the gated run), else the
    functions of the runs that nothing outside them names, and the functions nested in
    them."""
    cached = getattr(tree, "_devlint_gated_run", False)
    if cached is not False:
        return cached
    from devlint.evidence.kernel_benchmark import is_benchmark_path

    out = None
    if path and is_benchmark_path(path) and mentions(text):
        gates = _gates(tree, module_names(tree))
        if gates and not _shared(tree):
            out = _run_of(tree, gates)
    try:
        tree._devlint_gated_run = out
    except AttributeError:
        pass
    return out


def _run_of(tree, gates):
    top = {st.name: st for st in tree.body if isinstance(st, _UNITS)}
    units = []
    for st in tree.body:
        if isinstance(st, _FUNCS):
            units.append(st)
        elif isinstance(st, ast.ClassDef):
            units.extend(m for m in st.body if isinstance(m, _FUNCS))

    def unit_of(gate):
        return next((u for u in units if u.lineno <= gate.lineno <= u.end_lineno), None)

    held = [unit_of(g) for g in gates]
    if any(u is None for u in held):  # a gate of the module's own code: the script stops
        return gates[0], set(), True

    def named(node) -> set:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in top}

    run = {id(u): u for u in held}
    todo = list(held)
    while todo:
        for name in named(todo.pop()):
            unit = top[name]
            if id(unit) not in run:
                run[id(unit)] = unit
                todo.append(unit)
    if all(id(u) in run for u in top.values()):
        return gates[0], set(run), True
    outside = set()
    for st in tree.body:
        # a unit outside the run, or the module's own code (`if __name__ == "__main__":`)
        if not isinstance(st, _UNITS) or id(st) not in run:
            outside |= named(st)
    ids = set()
    for unit in run.values():
        if unit in held or getattr(unit, "name", None) not in outside:
            ids |= {id(n) for n in ast.walk(unit) if isinstance(n, _UNITS)}
    return gates[0], ids, False


def _reason(gate, path) -> Reason:
    return Reason(_P, "a benchmark that skips its measurements unless the GPU is of a "
                  "recent NVIDIA compute capability or AMD architecture", path, gate.lineno)


def module_reason(tree: ast.Module, text: str, path: str | None) -> Reason | None:
    """The Reason for a benchmark module that skips its measurements without a recent GPU
    generation (see the module docstring), where its gated runs are all it does, else None."""
    found = gated_run(tree, text, path)
    return _reason(found[0], path) if found and found[2] else None


def scope_reason(scope, tree: ast.Module, text: str, path: str | None) -> Reason | None:
    """The Reason for a function (or class) of a gated run of a benchmark module that also
    does something else (see `gated_run`), else None."""
    found = gated_run(tree, text, path)
    return _reason(found[0], path) if found and not found[2] and id(scope) in found[1] \
        else None
