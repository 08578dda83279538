"""Principle: the deliberate CUDA twin of a generic helper is not a finding (pattern J).

`require_torch_multi_gpu` defined next to `require_torch_multi_accelerator`,
`move_to_cuda` next to `move_to_device`: the project offers both on purpose, the generic one
for generic code and the CUDA one for code that needs CUDA. Evidence: the generic twin's `def`
in the same module or class (file:line), whose name is the CUDA one's with `gpu`/`cuda`
replaced by `accelerator`/`device` (plural kept), or, for a per-platform dispatch, `cuda`
replaced by another platform or `native` (`forward_cuda` next to `forward_native`).
The generic twin may also be defined by a base class of the method's class, in the file or in
another project module (`forward_cuda` of a class derived from a dispatcher that defines
`forward_native`; the project stage resolves the base through the file's imports,
`devlint.engine.project.xtwins`, evidence: the twin's `def`); a private method of the class
that the file mentions only as `self._m(...)` calls inside such arms (or inside methods
established so) runs only there.
Also a stand-in for torch's own CUDA API: a function the module assigns over it
(`torch.Tensor.cuda = _checked_cuda`) implements that API, whose meaning is CUDA (evidence: the
assignment).
Limits: the twin must be defined in the same module or class, or in a base class the stage
resolves (a `Name` base imported with `from M import Base` from a project module, re-exports
and the base's own bases followed a few hops; an attribute base `mod.Base`, a base from
outside the project, a relative import in a namespace package is not followed), not merely
imported; a private method also mentioned anywhere else in the file (another class, a
string, a callback) keeps its findings, and a caller in another module is not seen (the
leading `_` says there is none); a function
named after CUDA with no generic twin is judged by its body like any other; a stand-in must be
assigned over a `torch` name holding `cuda` (`torch.Tensor.cuda`, `torch.cuda.synchronize`).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

# the generic forms, and the other platforms' variants of a per-platform dispatch
# (`forward_cuda` next to `forward_native` / `forward_xpu`); never `cpu`: `to_cuda` next to
# `to_cpu` is a pair of device moves, not a dispatch
_PLATFORMS = ("native", "generic", "default", "xpu", "npu", "hpu", "mps", "hip", "musa", "tpu")
_GENERIC = {"gpu": ("accelerator", "device"), "gpus": ("accelerators", "devices"),
            "cuda": ("accelerator", "device") + _PLATFORMS}


def twin_names(name: str) -> list:
    """The names a generic twin of `name` could have (empty when `name` names no CUDA/GPU)."""
    parts = name.split("_")
    out = []
    for i, p in enumerate(parts):
        for generic in _GENERIC.get(p.lower(), ()):
            out.append("_".join(parts[:i] + [generic] + parts[i + 1:]))
    return out


def twin_reason(scope, siblings: dict, path: str | None) -> Reason | None:
    """`siblings`: {name: def line} of the functions defined next to `scope`."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for twin in twin_names(scope.name):
        if twin in siblings:
            return Reason("cuda-twin", f"`{scope.name}` is the CUDA twin of the generic "
                          f"`{twin}` defined next to it", path, siblings[twin])
    return None


def defined_functions(body) -> dict:
    """{name: line} of the functions a module or class body defines."""
    return {s.name: s.lineno for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


def api_stand_ins(tree, statements=None) -> dict:
    """{function name: line} of the `torch.<...cuda...> = name` assignments (at any depth: an
    `install()` function often does it). statements: the tree's statements in `ast.walk`
    order, when the caller has them (assignments are statements)."""
    out: dict = {}
    if tree is None:
        return out
    for st in ast.walk(tree) if statements is None else statements:
        if not (isinstance(st, ast.Assign) and isinstance(st.value, ast.Name)):
            continue
        for t in st.targets:
            parts = []
            while isinstance(t, ast.Attribute):
                parts.append(t.attr)
                t = t.value
            if isinstance(t, ast.Name) and t.id == "torch" and "cuda" in parts:
                out[st.value.id] = st.lineno
    return out


def stand_in_reason(scope, stand_ins: dict, path: str | None, klass=None) -> Reason | None:
    """A function assigned over torch's CUDA API, or a method `cuda` of a class (it overrides
    `Tensor.cuda` / `Module.cuda`, whose meaning is CUDA)."""
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope.name == "cuda" \
            and klass is not None and scope in klass.body:
        return Reason("cuda-twin", f"`{klass.name}.cuda` overrides the `.cuda()` method: its "
                      "meaning is CUDA", path, scope.lineno)
    line = stand_ins.get(getattr(scope, "name", None)) if not isinstance(
        scope, ast.ClassDef) else None
    if line is None:
        return None
    return Reason("cuda-twin", f"`{scope.name}` stands in for torch's CUDA API (assigned over "
                  "it): its meaning is CUDA", path, line)
