"""Principle: a test for another runtime's CUDA-only backend establishes CUDA.

ONNX Runtime runs a graph on torch's CUDA device only through its CUDA and TensorRT execution
providers: `if provider in ("CUDAExecutionProvider", "TensorrtExecutionProvider"): return
torch.device("cuda", ...)`, `torch.cuda.is_available() and "CUDAExecutionProvider" in
available`. The test asks "is this runtime on an NVIDIA GPU?", so the code under it, and the
CUDA query joined to it, map that backend to torch's CUDA device on purpose. Evidence: the
test naming the backend (file:line).
A device a class derives from such a backend is CUDA exactly where the backend is: a property
(or method) whose every `return` is either the CPU device or stands under such a test
(`if provider in (...): return torch.device("cuda", i)` then `return torch.device("cpu")`)
gives CUDA or the CPU, by construction; `device = self.device` then `device.type == "cuda"`
tells those two apart (evidence: the property's backend test).
Limits: only names of backends that exist for NVIDIA GPUs alone (ONNX Runtime's
`CUDAExecutionProvider`, `TensorrtExecutionProvider`, `NvTensorRTRTXExecutionProvider`); a
membership test in a collection that also names another backend (`("CUDAExecutionProvider",
"ROCMExecutionProvider")`) is no such test; a backend name elsewhere (a list of providers to
try) exempts nothing.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

CUDA_ONLY_BACKENDS = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider",
                                "NvTensorRTRTXExecutionProvider"})


def _backend(node) -> bool:
    return isinstance(node, ast.Constant) and node.value in CUDA_ONLY_BACKENDS


def is_backend_test(test) -> bool:
    """True only where the runtime's CUDA-only backend is in use: `"CUDAExecutionProvider" in
    providers`, `provider == "CUDAExecutionProvider"`, `provider in ("CUDAExecutionProvider",
    "TensorrtExecutionProvider")` (every entry a CUDA-only backend)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, ast.In):
        if _backend(left):
            return True
        return isinstance(right, (ast.Tuple, ast.List, ast.Set)) and bool(right.elts) \
            and all(_backend(e) for e in right.elts)
    if isinstance(op, ast.Eq):
        return _backend(left) or _backend(right)
    return False


def backend_reason(test, path: str | None) -> Reason:
    return Reason("cuda-backend", "a test for another runtime's CUDA-only backend (ONNX "
                  "Runtime's CUDA/TensorRT execution provider)", path,
                  getattr(test, "lineno", None))


def joined_backend_test(test):
    """The backend-test operand of an `and` (`device.type == "cuda" and
    "CUDAExecutionProvider" in available`), else None."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next((v for v in test.values if is_backend_test(v)), None)
    return None


def _cpu_device(node) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "device" \
        and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "cpu"


def backend_device_test(prop) -> ast.expr | None:
    """The backend test of a function whose every return is the CPU device or stands under a
    test for a CUDA-only backend (what it returns is then CUDA or the CPU), else None."""
    found = None
    stack = [(st, None) for st in prop.body]
    returns = 0
    while stack:
        node, test = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If):
            inner = node.test if is_backend_test(node.test) else test
            stack.extend((st, inner) for st in node.body)
            stack.extend((st, test) for st in node.orelse)
            continue
        if isinstance(node, ast.Return):
            returns += 1
            if node.value is not None and _cpu_device(node.value):
                continue
            if test is None:
                return None
            found = found or test
            continue
        stack.extend((c, test) for c in ast.iter_child_nodes(node))
    return found if returns else None


def derived_device_reason(compare, scope, klass, path: str | None) -> Reason | None:
    """`device.type == "cuda"` where the function set `device = self.<attr>` and the class's
    `<attr>` gives CUDA only through a CUDA-only backend (`backend_device_test`)."""
    if klass is None or scope is None or not isinstance(compare, ast.Compare):
        return None
    subject = compare.left
    if not (isinstance(subject, ast.Attribute) and subject.attr == "type"):
        return None
    base = subject.value
    attr = None
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) \
            and base.value.id == "self":
        attr = base.attr
    elif isinstance(base, ast.Name):
        sources = [st.value for st in ast.walk(scope) if isinstance(st, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == base.id for t in st.targets)]
        if len(sources) == 1 and isinstance(sources[0], ast.Attribute) \
                and isinstance(sources[0].value, ast.Name) and sources[0].value.id == "self":
            attr = sources[0].attr
    if attr is None:
        return None
    prop = next((m for m in klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and m.name == attr), None)
    test = backend_device_test(prop) if prop is not None else None
    if test is None:
        return None
    return Reason("cuda-backend", f"`self.{attr}` is CUDA only through another runtime's "
                  "CUDA-only backend, else the CPU", path, test.lineno)
