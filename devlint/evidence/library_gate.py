"""Principle: a test gated on a library of NVIDIA (and AMD) GPU kernels only exercises that library's GPU path.

`try: import flash_attn_3; HAVE_FA3 = True` / `except ImportError: HAVE_FA3 = False`, then
`@pytest.mark.skipif(not (is_te_min_version("2.10") and HAVE_FA3), ...)` over a test: the test
runs only where FlashAttention-3 imports, whose kernels exist for Hopper GPUs only, so its
`device="cuda"` tensors and `torch.cuda` calls serve that kernel (the rubric's "CUDA-specific
on purpose"); no accelerator-generic form would let it run elsewhere. So is a gate on a flag
set from such a library's own hardware-support check (`fp8_available, reason =
check_fp8_support()` imported from TransformerEngine in the same `try`: an FP8-capable NVIDIA
or AMD GPU), and on a compiled CUDA extension loaded in the `try` (`import
fused_layer_norm_cuda`, `smoothquant_cuda = SmoothquantBuilder().load()`: torch's
`CUDAExtension` builds, named `*_cuda` by convention).
Evidence: the module-level statement that sets the flag (file:line of the `try` body's
assignment, or of `FLAG = is_xformers_available()`), for the findings in the body the gate
covers (a decorated test's, a decorated class's, the module's tests under a `pytestmark`,
the rest of a test after `if not FLAG: pytest.skip(...)`, and likewise the rest of any
function after `if not FLAG: return ...`: an NVML energy monitor's `if not has_nvml: return
0.0`) and for a CUDA availability gate stacked with it on the same test (`capability_gate`).
The libraries: cuda_only.toml `gate_stacks` and `imports` (xformers, flash-attn and its
FlashAttention-3 packages, apex, MSLK, DeepEP, DeepGEMM, FlashInfer, CUTLASS ...), matched on
the imported module's top-level name.
Limits: only the module's own top-level names (a flag imported from another module is judged
where it is set); an import of TransformerEngine or another CUDA-alike stack by itself is no
such gate (its ports run elsewhere, and its tests are judged on their own), only its
hardware-support check (`check_*_support`, `is_*_supported`); a flag that is true without the
library too is none: every binding of it to anything but a false constant must be one of the
statements that set it past the import (a `True` set before the import in the `try`, or set
anywhere else in the module, under an `if`, in a handler, in a function that declares it
`global`, disqualifies it); a gate on a library that runs anywhere (`scipy`, `triton`,
`bitsandbytes`) says nothing.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.vocabulary import _cuda_only_defaults, cuda_library_check, gate_stacks

PRINCIPLE = "library-gate"
_SKIP_IF = frozenset({"skipif", "skipIf"})
_SKIP_UNLESS = frozenset({"skipUnless"})
# a GPU-kernel library's own query whether the GPU supports a feature (TransformerEngine's
# `check_fp8_support()`, `check_mxfp8_support()`, `is_fp8_supported()`)
_SUPPORT_CHECK = re.compile(r"(?:check_\w+_support|is_\w+_supported)")
# a compiled CUDA extension (torch.utils.cpp_extension.CUDAExtension builds: `*_cuda`)
_EXTENSION = re.compile(r"\w+_cuda")


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _library(qual: str) -> str | None:
    """The CUDA-only library (or compiled CUDA extension) a dotted module path names."""
    top = qual.split(".")[0].lower()
    if top in gate_stacks():
        return top
    # FlashAttention-3's packages (`flash_attn_3`, `flash_attn_interface`) and the like:
    # a stack's name with a version or part suffix
    for lib in gate_stacks():
        if top.startswith(lib + "_") and (top[len(lib) + 1:].isdigit()
                                          or top[len(lib) + 1:] == "interface"):
            return top
    if _EXTENSION.fullmatch(qual.split(".")[-1]):
        return qual.split(".")[-1]
    return None


def _alike(qual: str) -> bool:
    """A CUDA-alike stack (TransformerEngine ...): its support checks count, not its import."""
    return qual.split(".")[0] in {m.split(".")[0] for m in _cuda_only_defaults()[1][2]}


def _try_library(body) -> tuple[str | None, set]:
    """(the CUDA-only library or extension a `try` body imports or loads, the names it
    imports from a CUDA-only or CUDA-alike stack)."""
    lib = None
    imported: set = set()
    for st in body:
        mods = []
        if isinstance(st, ast.Import):
            mods = [a.name for a in st.names]
        elif isinstance(st, ast.ImportFrom) and st.module and not st.level:
            mods = [st.module]
            if _library(st.module) or _alike(st.module):
                imported.update(a.asname or a.name for a in st.names)
        for m in mods:
            lib = lib or _library(m)
        if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                and isinstance(st.targets[0], ast.Name) \
                and _EXTENSION.fullmatch(st.targets[0].id) \
                and isinstance(st.value, ast.Call) and _name(st.value.func) == "load":
            lib = lib or st.targets[0].id  # `smoothquant_cuda = Builder().load()`
    return lib, imported


def _assigned(st) -> tuple[list, ast.AST | None]:
    if isinstance(st, ast.Assign):
        return st.targets, st.value
    if isinstance(st, ast.AnnAssign) and st.value is not None:
        return [st.target], st.value
    return [], None


def _true_names(targets, value) -> list:
    """The names an assignment sets to True (`A = True`, `A = B = True`, `A, r = True, ""`)."""
    out = []
    for t in targets:
        if isinstance(t, ast.Name) and isinstance(value, ast.Constant) and value.value is True:
            out.append(t.id)
        elif isinstance(t, ast.Tuple) and isinstance(value, ast.Tuple) \
                and len(t.elts) == len(value.elts):
            out.extend(n.id for n, v in zip(t.elts, value.elts) if isinstance(n, ast.Name)
                       and isinstance(v, ast.Constant) and v.value is True)
    return out


def _support_flag(targets, value, imported) -> str | None:
    """`ok, why = check_fp8_support()` (the check imported from a GPU-kernel stack): `ok`."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id in imported and _SUPPORT_CHECK.fullmatch(value.func.id)):
        return None
    if len(targets) != 1:
        return None
    t = targets[0]
    if isinstance(t, ast.Tuple) and t.elts and isinstance(t.elts[0], ast.Name):
        return t.elts[0].id
    return t.id if isinstance(t, ast.Name) else None


def _falsy(node) -> bool:
    return isinstance(node, ast.Constant) and not node.value


def _names_bound(node):
    """(name, value) of each name `node` itself binds; `value` is the value assigned where
    known (`A = v`, `A, B = v, w`), else None."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets, value = _assigned(node)
        for t in targets:
            if isinstance(t, ast.Name):
                yield t.id, value
            elif isinstance(t, (ast.Tuple, ast.List)):
                vals = value.elts if isinstance(value, (ast.Tuple, ast.List)) \
                    and len(value.elts) == len(t.elts) else [None] * len(t.elts)
                for x, v in zip(t.elts, vals):
                    yield from ((y.id, v if y is x else None) for y in ast.walk(x)
                                if isinstance(y, ast.Name))
    elif isinstance(node, (ast.AugAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name):
        yield node.target.id, None
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        yield from ((y.id, None) for y in ast.walk(node.target) if isinstance(y, ast.Name))
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        yield from ((y.id, None) for y in ast.walk(node.optional_vars)
                    if isinstance(y, ast.Name))
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for a in node.names:
            yield (a.asname or a.name).split(".")[0], None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _bindings(tree):
    """(name, node, value) of every binding of a module-level name: at module level (also
    inside `if`/`for`/`while`/`with`/`try` and their headers, an augmented assignment, a loop
    or `with` target, an import), and in a function that declares the name `global`."""
    stack = list(getattr(tree, "body", ()))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            declared = {n for x in ast.walk(node) if isinstance(x, ast.Global) for n in x.names}
            if declared:
                for x in ast.walk(node):
                    for name, value in _names_bound(x):
                        if name in declared:
                            yield name, x, value
            continue
        if isinstance(node, _SCOPES):
            continue
        for name, value in _names_bound(node):
            yield name, node, value
        stack.extend(ast.iter_child_nodes(node))


def library_flags(tree) -> dict:
    """{flag name: (what sets it, its line)} of the module's top-level flags true only with a
    CUDA-only library (see the module docstring): every binding of the flag to something
    other than a false value is one of the statements that set it past the library's import
    (or its hardware-support check, or the library's own availability query); computed once
    per tree."""
    cached = getattr(tree, "_devlint_library_flags", None)
    if cached is not None:
        return cached
    flags: dict = {}
    setters: dict = {}  # flag -> the statements that set it true only with the library
    for st in getattr(tree, "body", ()):
        if isinstance(st, ast.Try) and st.handlers:
            lib, imported = None, set()
            for s in st.body:  # in order: a flag set before the import is true without it
                targets, value = _assigned(s)
                support = value is not None and _support_flag(targets, value, imported)
                if support:
                    flags[support] = (f"`{support}` is set by `{value.func.id}()`, a "
                                      "GPU-kernel library's own hardware-support check",
                                      s.lineno)
                    setters.setdefault(support, set()).add(s)
                elif lib and value is not None:
                    for n in _true_names(targets, value):
                        flags[n] = (f"`{n}` is set only where `{lib}` (NVIDIA/AMD GPU "
                                    "kernels only) imports or loads", s.lineno)
                        setters.setdefault(n, set()).add(s)
                got, names = _try_library([s])
                lib = lib or got
                imported |= names
        else:
            targets, value = _assigned(st)
            if value is not None and len(targets) == 1 and isinstance(targets[0], ast.Name):
                lib = cuda_library_check(value)
                if lib:
                    flags[targets[0].id] = (f"`{targets[0].id}` asks whether `{lib}` (NVIDIA/AMD "
                                            "GPU kernels only) is available", st.lineno)
                    setters.setdefault(targets[0].id, set()).add(st)
                else:
                    flags.pop(targets[0].id, None)  # rebound: no longer the library's flag
    if flags:  # a flag also set true (or to a value not known false) elsewhere: not only
        for name, node, value in _bindings(tree):  # with the library
            if name in flags and node not in setters.get(name, ()) and not _falsy(value):
                del flags[name]
    out = flags
    try:
        tree._devlint_library_flags = out
    except AttributeError:
        pass
    return out


def requires_if_true(x, flags):
    """The flag's (text, line) for which `x` true implies the library is there, else None."""
    if isinstance(x, ast.Name) and x.id in flags:
        return flags[x.id]
    if isinstance(x, ast.Call) and cuda_library_check(x):
        return None  # named checks are `capability_gate`'s stacks; a flag is resolved here
    if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not):
        return requires_if_false(x.operand, flags)
    if isinstance(x, ast.BoolOp):
        found = [requires_if_true(v, flags) for v in x.values]
        if isinstance(x.op, ast.And):
            return next((f for f in found if f), None)
        return found[0] if all(found) else None
    return None


def requires_if_false(x, flags):
    """The flag's (text, line) for which `x` false implies the library is there (a skip condition)."""
    if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not):
        return requires_if_true(x.operand, flags)
    if isinstance(x, ast.BoolOp):
        found = [requires_if_false(v, flags) for v in x.values]
        if isinstance(x.op, ast.Or):
            return next((f for f in found if f), None)
        return found[0] if all(found) else None
    return None


def mark_reason(mark, tree, path: str | None) -> Reason | None:
    """The Reason of a skip mark (`skipif(not FLAG)`, `skipUnless(FLAG)`) that requires a
    library of the module's `library_flags`, else None."""
    if not isinstance(mark, ast.Call) or not mark.args:
        return None
    name = _name(mark.func)
    if name not in _SKIP_IF and name not in _SKIP_UNLESS:
        return None
    flags = library_flags(tree)
    if not flags:
        return None
    found = requires_if_false(mark.args[0], flags) if name in _SKIP_IF \
        else requires_if_true(mark.args[0], flags)
    return flag_reason(found, path)


def exit_reason(test, tree, path: str | None) -> Reason | None:
    """The Reason of an early exit `if <test>: pytest.skip(...)` (or `return`) whose test is
    false only with the library: the rest of the block runs only with it."""
    flags = library_flags(tree)
    return flag_reason(requires_if_false(test, flags), path) if flags else None


def flag_reason(found, path: str | None) -> Reason | None:
    if not found:
        return None
    text, line = found
    return Reason(PRINCIPLE, f"gated on a library of GPU kernels only: {text}", path, line)
