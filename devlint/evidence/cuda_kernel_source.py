"""Principle: code that builds a kernel from CUDA C++ source is CUDA's own.

`torch.utils.cpp_extension.load_inline(cuda_sources=...)`, `load(name, sources=["k.cu"])`,
a project's JIT loader given `cuda_files=["norm.cuh"]`: the code compiles CUDA C++ (with
nvcc, or hipcc through hipify: a GPU of torch's "cuda" device type either way), so the
streams, devices and `torch.cuda` calls around the kernel serve something that exists on no
other accelerator.
Evidence: an argument of a call that names a CUDA source file (a string ending in `.cu` or
`.cuh`) or a `cuda_sources=` / `cuda_files=` / `cuda_srcs=` keyword: file:line of that call.
The function holding it is CUDA-only, and so is a function of the same module that always
calls that function (outside `if`/`try`: the kernel's wrapper). The whole module is when its
top-level code builds the kernel unconditionally, or when two or more of its top-level
functions and classes do (a kernel module, not one fast path of a generic one).
Limits: a `.cu` name in a docstring, comment or message is no build (only call arguments
count); a wrapper's call under `if`/`try` picks a backend among others; one loader in a
generic module exempts only its function and that function's wrappers.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason

_P = "cuda-kernel-source"
_SUFFIXES = (".cu", ".cuh")
_KEYWORDS = frozenset({"cuda_sources", "cuda_files", "cuda_srcs"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


# `.cu` or `.cuh` not followed by a letter, digit or underscore: a string whose value ends
# with either suffix spells it so (the closing quote, whitespace or a backslash follows);
# `.cuda` does not (one pass, no nested repetition: nothing to backtrack)
_SUFFIX_IN_TEXT = re.compile(r"\.cuh?(?![A-Za-z0-9_])")


def mentions(text: str) -> bool:
    """The cheap text gate: the source may hold a CUDA source build."""
    return (".cu" in text and _SUFFIX_IN_TEXT.search(text) is not None) \
        or any(k in text for k in _KEYWORDS)


def build_call(node) -> ast.Call | None:
    """`node` if it is a call that builds from CUDA C++ source, else None."""
    if not isinstance(node, ast.Call):
        return None
    for k in node.keywords:
        if k.arg in _KEYWORDS:
            return node
    for arg in (*node.args, *(k.value for k in node.keywords)):
        for n in ast.walk(arg):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                    and n.value.rstrip().endswith(_SUFFIXES) and "\n" not in n.value \
                    and " " not in n.value.strip():
                return node
    return None


def _may_build(node) -> bool:
    """Whether `node` holds what `build_call` looks for (a CUDA source name or a CUDA
    source keyword) anywhere below it: one walk, which spares the search of every call's
    arguments in the statements that hold neither (nearly all of them)."""
    for m in ast.walk(node):
        if isinstance(m, ast.Constant):
            v = m.value
            if isinstance(v, str) and v.rstrip().endswith(_SUFFIXES):
                return True
        elif isinstance(m, ast.keyword) and m.arg in _KEYWORDS:
            return True
    return False


def _first_build(nodes) -> ast.Call | None:
    for n in nodes:
        for m in ast.walk(n):
            call = build_call(m)
            if call is not None:
                return call
    return None


def _unconditional(body):
    """The nodes that run whenever `body` runs; class bodies count as conditional here."""
    from devlint.evidence.vocabulary import _CONDITIONAL, unconditional_in

    return unconditional_in(body, _CONDITIONAL + (ast.ClassDef,))


def module_reason(tree: ast.Module, text: str, path: str | None) -> Reason | None:
    """The whole module builds CUDA kernels: at its top level, or in two of its units."""
    if not mentions(text):
        return None
    units = []
    for st in tree.body:
        if not _may_build(st):
            continue
        if isinstance(st, (*_FUNCS, ast.ClassDef)):
            call = _first_build([st])
            if call is not None:
                units.append(call)
        elif not isinstance(st, (ast.If, ast.Try)):
            call = _first_build(_unconditional([st]))
            if call is not None:
                return Reason(_P, "its top-level code builds a kernel from CUDA C++ source",
                              path, call.lineno)
    if len(units) >= 2:
        return Reason(_P, "it builds kernels from CUDA C++ source in two or more of its "
                      "functions or classes", path, units[0].lineno)
    return None


def builders(tree: ast.Module, text: str) -> dict:
    """name -> the build call, for the module's top-level functions that build a kernel
    from CUDA C++ source."""
    if not mentions(text):
        return {}
    found = {}
    for st in tree.body:
        if isinstance(st, _FUNCS) and _may_build(st):
            call = _first_build(st.body)
            if call is not None:
                found[st.name] = call
    return found


def scope_reason(scope, found: dict, path: str | None) -> Reason | None:
    """`scope` (a function) builds a CUDA kernel itself, or always calls a function of its
    module that does (`found`, from `builders`)."""
    if not found or not isinstance(scope, _FUNCS):
        return None
    if scope.name in found:
        return Reason(_P, f"`{scope.name}` builds a kernel from CUDA C++ source", path,
                      found[scope.name].lineno)
    for n in _unconditional(scope.body):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in found \
                and n.func.id != scope.name:
            return Reason(_P, f"`{scope.name}` always calls `{n.func.id}`, which builds a "
                          "kernel from CUDA C++ source", path, found[n.func.id].lineno)
    return None
