"""Principle: a function or class that is CUDA-only by its name or its body.

Evidence (a `Reason("cuda-only-scope", ...)` at the scope's `def`/`class` line): its name names
a CUDA-only stack (`FlashInferBackend`; `cuda` alone is no stack: `move_to_cuda` is a device
helper, and `_cuda_graph_capture` names no stack), an unconditional import of one at its top,
or direct use of the CUDA runtime (`.cuda_stream`, `cudart`, `DeviceType.CUDA`, CUDA green
contexts: `GreenContext`, `create_greenctx_stream_by_value`); an import under `try:` whose
every handler raises is required, so unconditional; likewise an unconditional import of a
library that takes only the CPU or a CUDA device (`cpu_or_cuda` in cuda_only.toml:
fastsafetensors). `FileFacts.cuda_only_scope` also counts a function that always calls into
a CUDA-only module, and `cuda_only_callee` a value passed to such a call.
Limits: test functions are not CUDA-only by their name; a call under `if`/`try` picks a
backend among others; availability checks, getters and setters take no CUDA data.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.capability import requiring_mark
from devlint.evidence.platform_ladder import _is_platform_test
from devlint.evidence.vocabulary import (
    _cuda_only_data, _cuda_only_defaults, _imported_modules, _names_cuda_module, _runtime_markers,
)

_P = "cuda-only-scope"


# the stacks a function or class name can name; `cuda` alone is no stack: `move_to_cuda`,
# `get_cuda_device` are the device helpers devlint is for (a CUDA twin of a generic helper is
# `cuda_twin`'s business)
_VENDOR_NAME = re.compile(r"nccl|cutlass|cutedsl|flashinfer|deepep|deep_gemm"
                          r"|nvshmem|nvfp4|cublas|cudnn|nvtx|nvml|nvls|nixl_?ep")
# direct use of the CUDA runtime (raw stream handles, CUDA IPC, cudart); CUDA graphs are not
# among them: torch.xpu.XPUGraph and friends give them a generic form
# (CUDA IPC makes the whole module CUDA-only: cuda_only.toml `runtime`)
_RUNTIME_ATTRS = {"cuda_stream", "cudart", "cudaStream_t", "MemPool"}
_RUNTIME_NAMES = {"CUstream", "CudaRTLibrary", "cudart", "cuda_rt", "cupy"}
# CUDA green contexts (the driver's SM partitioning: `torch.cuda.green_contexts.GreenContext`,
# a kernel library's `create_greenctx_stream_by_value`): streams bound to a share of an NVIDIA
# GPU's SMs, which no other accelerator has
_GREEN_CONTEXT = re.compile(r"(?i)greenctx|green_?context")
_RUNTIME_MARKERS = tuple(_RUNTIME_ATTRS | _RUNTIME_NAMES | {"DeviceType.CUDA", "greenctx",
                                                            "green_context", "GreenContext"})


# a name saying it moves data to CUDA or gets/sets CUDA state (`_tensors_to_cuda`,
# `_set_cuda_rng_state`) names the hardcoding itself, which has a generic form, not a CUDA-only
# stack: the bare word `cuda` in such a name exempts nothing, unless the scope reaches into
# torch.cuda internals that have no generic form (`torch.cuda.default_generators`)
_CUDA_ACCESSOR_NAME = re.compile(r"(^|_)(to|get|set)_cuda(_|$)")


def _uses_cuda_only_api(scope) -> bool:
    """The scope reaches into `torch.cuda` beyond the APIs the table gives a generic form
    (`torch.cuda.default_generators`, `torch.cuda.random.get_rng_state`, `_lazy_init`)."""
    from devlint.profiles.torch_api import load_table

    generic = {e.name for e in load_table() if e.replacement}
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and n.id == "_lazy_init":
            return True
        if not isinstance(n, ast.Attribute):
            continue
        parts, cur = [n.attr], n.value
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name):
            parts.append(cur.id)
        dotted = ".".join(reversed(parts))
        if dotted.startswith("torch.cuda.") and dotted.count(".") >= 2 \
                and dotted not in generic and not any(g.startswith(dotted + ".")
                                                      for g in generic):
            return True
    return False


def _scope_reason(scope, text: str, path: str | None = None) -> Reason | None:
    name = scope.name.lower()
    m = _VENDOR_NAME.search(name)
    if m and m.group(0) == "cuda" and _CUDA_ACCESSOR_NAME.search(name) \
            and not _VENDOR_NAME.search(_CUDA_ACCESSOR_NAME.sub("_", name)) \
            and not _uses_cuda_only_api(scope):
        m = None
    if m and not name.startswith("test"):
        return Reason(_P, f"`{scope.name}` names `{m.group(0)}`",
                          path, scope.lineno)
    # CUDA graph capture is no such reason: torch.xpu.XPUGraph gives it a generic form, and
    # upstream makes the synchronisations and devices around a capture generic (vLLM #37566,
    # benchmark_moe.py)
    why = _cuda_contract_reason(scope, path) or _capability_reason(scope, path)
    if why:
        return why
    if not isinstance(scope, ast.ClassDef):
        # an unconditional import at the function's top level (one under an `if` picks a
        # backend, it does not make the function CUDA-only)
        imports = _cuda_only_defaults()[0][2]
        cpu_or_cuda = tuple(_cuda_only_data().get("cpu_or_cuda", ()))
        for st in scope.body:
            for qual in _imported_modules(st) or _required_imports(st):
                if _names_cuda_module(qual, imports):
                    return Reason(_P, f"`{scope.name}` imports `{qual}`",
                          path, scope.lineno)
                if _names_cuda_module(qual, cpu_or_cuda):
                    return Reason(_P, f"`{scope.name}` is built on `{qual}`, which takes only "
                                  "the CPU or a CUDA device", path, st.lineno)
    exact, prefixes, keywords = _runtime_markers()
    if not any(marker in text for marker in _RUNTIME_MARKERS) \
            and not any(m in text for m in exact) and not any(p in text for p in prefixes) \
            and not any(k + "=" in text for k in keywords):
        return None  # the source says it cheaply; walk the tree only to confirm
    for n in own_nodes(scope.body):
        if isinstance(n, ast.Attribute) and n.attr in _RUNTIME_ATTRS:
            return Reason(_P, f"`{scope.name}` uses the CUDA runtime (`.{n.attr}`)",
                          path, scope.lineno)
        if isinstance(n, ast.Attribute) and n.attr == "CUDA" and (
                getattr(n.value, "attr", None) == "DeviceType"
                or getattr(n.value, "id", None) == "DeviceType"):
            return Reason(_P, f"`{scope.name}` names the CUDA device type explicitly "
                          "(`DeviceType.CUDA`)",
                          path, scope.lineno)
        green = n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", None) \
            if isinstance(n, ast.Name) else None
        if green and _GREEN_CONTEXT.search(green) and not green.startswith(("is_", "has_")):
            return Reason(_P, f"`{scope.name}` uses CUDA green contexts (`{green}`: SM "
                          "partitioning)", path, scope.lineno)
        if isinstance(n, ast.Name) and n.id in _RUNTIME_NAMES:
            return Reason(_P, f"`{scope.name}` uses the CUDA runtime (`{n.id}`)",
                          path, scope.lineno)
        marker = runtime_marker(n, exact, prefixes, keywords)
        if marker:
            return Reason(_P, f"`{scope.name}` uses CUDA IPC, the CUDA runtime or toolkit "
                          f"({marker})", path, getattr(n, "lineno", scope.lineno))
    return None


def _required_imports(st) -> list:
    """The imports of `try: from lib import x` whose every handler raises (`except
    ImportError: raise ImportError("install lib")`): the function cannot run without them, so
    they count as unconditional."""
    if not isinstance(st, ast.Try) or not st.handlers or not all(
            h.body and isinstance(h.body[-1], ast.Raise) for h in st.handlers):
        return []
    return [q for s in st.body for q in _imported_modules(s)]


def runtime_marker(n, exact, prefixes, keywords) -> str | None:
    """The CUDA IPC / runtime marker (cuda_only.toml `runtime`) a node is, as text, else None:
    a name or attribute (`reduce_tensor`, `.cudaIpcOpenMemHandle`), or `interprocess=True`.
    An import is no use: the code that calls the imported name is what is CUDA-only."""
    t = type(n)
    if t is ast.Name and (n.id in exact or n.id.startswith(prefixes)):
        return f"`{n.id}`"
    if t is ast.Attribute and (n.attr in exact or n.attr.startswith(prefixes)):
        return f"`.{n.attr}`"
    if t is ast.keyword and n.arg in keywords and not (
            isinstance(n.value, ast.Constant) and not n.value.value):
        return f"`{n.arg}=`"
    return None


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def own_nodes(body):
    """The nodes of a block that are its own: not those of nested functions and classes (a
    marker in one nested helper says nothing of the code around it: the strong signal scopes
    to the smallest unit holding it), nor those under an `if <platform test>:` (code that
    dispatches on the platform uses the CUDA runtime where it is CUDA); the test itself is."""
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, _NESTED):
            # decorators, defaults and bases run with the block
            stack.extend(n.decorator_list)
            if isinstance(n, ast.ClassDef):
                stack.extend(n.bases)
            else:
                stack.extend(d for d in (*n.args.defaults, *n.args.kw_defaults) if d)
            continue
        if isinstance(n, ast.If) and _is_platform_test(n.test):
            stack.append(n.test)
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


_CONTRACT_METHODS = ("__init__", "__post_init__", "validate", "_validate", "check", "_check")
_CUDA_WORD = re.compile(r"(?i)\bcuda\b|nvidia")


def _cuda_contract_reason(scope, path: str | None) -> Reason | None:
    """A function, or a class through its constructor or validators, that rejects every device
    but CUDA by contract: `assert "cuda" in device, "SGLang only supports CUDA"`,
    `if device.type != "cuda": raise ValueError("... requires CUDA")`. Its devices are CUDA's
    on purpose. Limits: the test must be about a device (a comparison with "cuda", not a
    tensor's `is_cuda`, which DL201 reports) and the message must say CUDA (the contract is
    stated, not implied by a check someone forgot to widen)."""
    bodies = [scope.body]
    if isinstance(scope, ast.ClassDef):
        bodies = [m.body for m in scope.body
                  if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and m.name.startswith(_CONTRACT_METHODS)]
    for body in bodies:
        for st in body:
            test, msg = None, None
            if isinstance(st, ast.Assert):
                test, msg = st.test, st.msg
            elif isinstance(st, ast.If) and len(st.body) == 1 and isinstance(st.body[0], ast.Raise) \
                    and not st.orelse:
                test, msg = ast.UnaryOp(ast.Not(), st.test), st.body[0].exc
            if test is None or msg is None or not _requires_cuda_device(test):
                continue
            words = " ".join(c.value for c in ast.walk(msg)
                             if isinstance(c, ast.Constant) and isinstance(c.value, str))
            if _CUDA_WORD.search(words):
                return Reason(_P, f"`{scope.name}` rejects every device but CUDA by contract",
                              path, st.lineno)
    return None


def _requires_cuda_device(test) -> bool:
    """The test holds only for a CUDA device: `"cuda" in device`, `device.type == "cuda"`,
    `str(d).startswith("cuda")`, joined by `and`, or by `or` with `device is None`; the negation
    of the opposite test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _rejects_cuda_device(test.operand)
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And):
            return any(_requires_cuda_device(v) for v in test.values)
        return all(_requires_cuda_device(v) or _is_none_test(v) for v in test.values) \
            and any(_requires_cuda_device(v) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        if isinstance(op, ast.In) and _is_cuda(left) and not _tensor_device(right):
            return True
        if isinstance(op, ast.Eq) and ((_is_cuda(left) and not _tensor_device(right))
                                       or (_is_cuda(right) and not _tensor_device(left))):
            return True
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) \
            and test.func.attr == "startswith" and test.args and _is_cuda(test.args[0]):
        return True
    return False


def _rejects_cuda_device(test) -> bool:
    """The opposite: true for every device but CUDA (`device.type != "cuda"`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _requires_cuda_device(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        if isinstance(op, ast.NotIn) and _is_cuda(left):
            return True
        if isinstance(op, ast.NotEq) and (_is_cuda(left) or _is_cuda(right)):
            return True
    return False


def _tensor_device(node) -> bool:
    """`t.device.type`, `str(t.device)`: a tensor's device (DL201 reports asserts on it), not
    a configured one (`device`, `self.device.type`)."""
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    if isinstance(node, ast.Attribute) and node.attr == "type":
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr == "device":
        return not (isinstance(node.value, ast.Name) and node.value.id == "self")
    return False


def _is_cuda(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == "cuda"


def _is_none_test(node) -> bool:
    return isinstance(node, ast.Compare) and len(node.ops) == 1 \
        and isinstance(node.ops[0], ast.Is) and isinstance(node.comparators[0], ast.Constant) \
        and node.comparators[0].value is None


def _capability_reason(scope, path: str | None) -> Reason | None:
    """A test function or class whose skip decorator requires an NVIDIA compute capability
    (`@skipif(not is_sm_at_least_100())`, `@skipUnless(_is_hopper() and has_fa3())`) tests
    a CUDA-only kernel or feature (`devlint.evidence.capability`)."""
    for d in getattr(scope, "decorator_list", ()):
        if requiring_mark(d):
            return Reason(_P, f"`{scope.name}` only runs on a given NVIDIA compute capability",
                          path, d.lineno)
    return None
