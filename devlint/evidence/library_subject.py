"""Principle: a test whose subject is a library of NVIDIA/AMD GPU kernels is CUDA's on purpose.

A test that exists to exercise such a library's own op or layer (TransformerEngine's fused
RoPE or grouped GEMM, a FlashAttention kernel, apex's fused Adam, DeepGEMM, FlashInfer) only
runs where the library runs: on NVIDIA GPUs and, through a ROCm port (TransformerEngine's,
flash-attn's), on AMD GPUs, whose torch device type is "cuda" too. Its `device="cuda"`,
`.cuda()` and `torch.cuda` calls serve that kernel (the rubric's "a CUDA-only kernel wrapper
... CUDA-specific on purpose"); no accelerator-generic form would let it run elsewhere. A
test of a generic feature that merely builds with the library (a model test using its layer
spec, an attention test gated on its version) is not such a test, and stays reported.
Evidence (a `Reason` at the line that names the library), in a test module that refers to the
library by its full name (imports it, a module named for it such as a project's wrapper
`extensions.transformer_engine`, or a name naming it such as
`get_gpt_layer_with_transformer_engine_spec`; its initials there say nothing), for the test's
whole body (and its skip gate, through `cuda_only_test`). Such a test is CUDA-alike-only, not
NVIDIA-only: where the library has a ROCm port, its "cuda" is also the AMD GPU's device name,
so the literal is right on every platform the test can run on. The signals:
- the test function's or test class's own name names the library (`test_te_grouped_linear`,
  `TestTEParallelSequentialMLP`, `test_flashinfer_decode`): its name, its words joined
  (`TransformerEngine`, `DeepGEMM`), or the initials of a name of two words or more (`te`,
  `fa3`) as a word of the test's name;
- a skip gate over the test or class, or a skip of the whole test in its own body (not of
  one parametrised case: under an `if` that compares or joins with `and`), whose reason names
  the library together with a kernel of it (`"Fused RoPE requires TE >= 1.4.0"`, `"TE fused
  router ops not available"`: the words fused, fusion, kernel, op, GEMM);
- the test imports the library's own API in its own body (not through a wrapper), as a
  requirement (unconditionally, or under a `try` whose every handler returns, raises or
  skips): `from transformer_engine.pytorch.optimizers import FusedAdam` at the top of a test
  that then compares that optimizer; an availability, support or version check is no API;
- the whole module skips unless the library is there (`pytest.skip(..., allow_module_level=
  True)` under an `if`, or a `pytestmark` skip gate, whose reason names the library) and
  imports the library's own package at module level, and the function (a test, a helper, a
  fixture) uses that package's API itself (`te.Linear`, `fp8_autocast`);
- the whole module skips unless the library is there (as above) and imports the library's
  package itself, unconditionally, at its top (`import transformer_engine.pytorch as te`: a
  module, not some of its names): the module cannot even be imported without the library,
  and it builds the library's objects throughout (`te.Linear`, `te.ops.GroupedLinear`, and
  helpers that wrap them), so it runs only where the library runs and every function and
  class in it (its workers, fixtures, gates and tests alike) is the library's: its device
  lines name the device the library runs on (NVIDIA, or AMD through a ROCm port). Evidence:
  Megatron-LM's generalized-tensor-parallel tests (`if not HAVE_GTP: pytest.skip("GTP
  requires TransformerEngine >= 2.19", allow_module_level=True)` then `import
  transformer_engine.pytorch as te`), whose every judged line (ten, over five rounds:
  workers, a fixture, CUDA events, the tests' CUDA gates) reviewers found CUDA's on purpose.
The libraries: cuda_only.toml `gate_stacks`, `imports` and `[cuda_alike] imports` (flash-attn,
apex, xformers, MSLK, FlashInfer, DeepGEMM, DeepEP, CUTLASS, TransformerEngine, aiter ...),
by their top-level names; `cuda` and `nvidia` name the platform, not a library.
Limits: test modules only; a gate on the library's version or availability alone, or a reason
that names the library without a kernel of it ("QK clipping requires TE >= 2.9.0"), says the
test needs the library, not that the library is its subject; a test's name naming the library
counts only where the module refers to it (the initials alone would be a guess); an import of
the library at the module's top (a test module is never the library's by its imports alone:
`cuda_only.toml`), or an import of a project's wrapper of it inside the test, is no evidence;
a non-test helper is covered only by the module-wide skip, and only where it uses the
library's API itself (a function of such a module that only builds tensors and process groups
tests something generic), unless the module imports the library's package itself; findings
outside any function or class (module level) are not covered. The whole-module signal needs
both halves: a module that skips without the library but takes only some of its names
(`from transformer_engine.pytorch import fp8_autocast`, an FP8 context for some of its tests)
tests the project's own code under the library's version gate (a judged TP: an expert-bias
test of the router's process groups in such a module), and a module that skips unless a
feature's library version is there but never imports the library (the feature is the
project's, built on it elsewhere) says only what its tests need, not that the library is
their subject (a judged TP: a `torch.cuda.device_count()` gate in such a module); a module
that imports the library at its top without such a skip merely builds with it (judged TPs:
generic optimizer and inference tests beside a TE import, a QK-norm test with the local layer
spec beside `import transformer_engine as te`). An `import` under `try`/`if` is optional, not
a requirement.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache

from devlint.evidence import Reason
from devlint.evidence.vocabulary import _cuda_only_data, _cuda_only_defaults

PRINCIPLE = "library-subject"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# the platform itself, not a library of it: `test_cuda_...` names the hardcoding devlint is for
_PLATFORM = frozenset({"cuda", "nvidia"})
# a word of a gate's reason that names a kernel of the library
_KERNEL_WORDS = frozenset({"fused", "fusion", "kernel", "kernels", "op", "ops", "gemm", "gemms"})
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# an availability, support or version check of the library, no API of it
_CHECK = re.compile(r"(?i)(?:check_\w*|is_\w*|has_\w*|\w*_available|\w*version\w*|have_\w*)")
_SKIPS = frozenset({"skip", "skipTest"})
_GATES = frozenset({"skipif", "skipIf", "skipUnless"})


@lru_cache(maxsize=None)
def libraries() -> tuple:
    """The top-level names of the libraries of NVIDIA/AMD GPU kernels (cuda_only.toml)."""
    # whole packages only: `nemo.collections.nlp` is one collection of a broader package
    data = _cuda_only_data()
    names = {n.lower() for n in (*data.get("gate_stacks", ()), *data.get("imports", ()),
                                 *_cuda_only_defaults()[1][2]) if "." not in n}
    return tuple(sorted(names - _PLATFORM))


def words(text: str) -> list:
    """The lower-case words of a name or a text (`TestTEParallel` -> test, te, parallel)."""
    return [w.lower() for w in _WORD.findall(text)]


def names_library(ws: list, initials: bool = True) -> str | None:
    """The library the words name: its name or its words joined, or (with `initials`) its
    initials as a word."""
    for lib in libraries():
        parts = [p for p in lib.split("_") if p]
        joined = "".join(parts)
        if initials and len(parts) >= 2 and "".join(p[0] for p in parts) in ws:
            return lib
        for i in range(len(ws)):
            acc = ""
            for w in ws[i:]:
                acc += w
                if acc == joined:
                    return lib
                if not joined.startswith(acc):
                    break
    return None


def _own_library(module: str) -> str | None:
    """The library whose own package a dotted module path is (`flash_attn_3` counts)."""
    top = module.split(".")[0].lower()
    for lib in libraries():
        if top == lib or (top.startswith(lib + "_") and (top[len(lib) + 1:].isdigit()
                                                        or top[len(lib) + 1:] == "interface")):
            return lib
    return None


def _call_name(call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _text(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " ".join(v.value for v in node.values
                        if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return ""


def _reason_text(call, first: int) -> str:
    """The reason text of a skip call: `reason=`, else its positional argument `first`."""
    for k in call.keywords:
        if k.arg in ("reason", "msg"):
            return _text(k.value)
    return _text(call.args[first]) if len(call.args) > first else ""


def _kernel_reason(text: str, refers: frozenset) -> str | None:
    ws = words(text)
    lib = names_library(ws) if _KERNEL_WORDS.intersection(ws) else None
    return lib if lib in refers else None


def module_facts(tree) -> tuple:
    """(the libraries the module refers to, the module-wide skip's Reason text and line or
    None); computed once per tree."""
    cached = getattr(tree, "_devlint_library_subject", None)
    if cached is not None:
        return cached
    refers = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            mods, names = [a.name for a in n.names], [a.asname or "" for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            mods, names = [n.module or ""], [x for a in n.names for x in (a.name, a.asname or "")]
        else:
            continue
        for m in mods:
            lib = _own_library(m)
            if lib:
                refers.add(lib)
            for part in m.split("."):
                lib = names_library(words(part), initials=False) if part else None
                if lib:
                    refers.add(lib)
        for nm in names:
            lib = names_library(words(nm), initials=False) if nm else None
            if lib:
                refers.add(lib)
    refers = frozenset(refers)
    wide = None
    skip = _module_skip(tree) if refers else None
    if skip is not None:
        text, line = skip
        lib = names_library(words(text))
        api = set()  # the names the module's own imports of the library's package bind
        package = False  # an `import` of the library's package itself (`import ... as te`)
        for st in tree.body:
            if isinstance(st, ast.Import):
                bound = [(a.asname or a.name.split(".")[0]) for a in st.names
                         if _own_library(a.name) == lib]
                api.update(bound)
                package = package or bool(bound)
            elif isinstance(st, ast.ImportFrom) and st.module and not st.level \
                    and _own_library(st.module) == lib:
                api.update(a.asname or a.name for a in st.names if not _CHECK.fullmatch(a.name))
        if lib in refers and api:
            wide = (lib, text, line, frozenset(api), package)
    out = (refers, wide)
    try:
        tree._devlint_library_subject = out
    except AttributeError:
        pass
    return out


def _module_skip(tree):
    """(reason text, line) of a module-wide skip: `if ...: pytest.skip(...,
    allow_module_level=True)` or `pytestmark = pytest.mark.skipif(..., reason=...)`."""
    for st in tree.body:
        if isinstance(st, ast.If):
            for s in st.body:
                if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) \
                        and _call_name(s.value) == "skip" and any(
                            k.arg == "allow_module_level" for k in s.value.keywords):
                    text = _reason_text(s.value, 0)
                    if text:
                        return text, s.lineno
        elif isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in st.targets):
            marks = st.value.elts if isinstance(st.value, (ast.List, ast.Tuple)) else [st.value]
            for m in marks:
                if isinstance(m, ast.Call) and _call_name(m) in _GATES:
                    text = _reason_text(m, 1)
                    if text:
                        return text, m.lineno
    return None


def _exits(handler) -> bool:
    last = handler.body[-1] if handler.body else None
    return isinstance(last, (ast.Return, ast.Raise)) or (
        isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
        and _call_name(last.value) in _SKIPS | {"xfail", "fail"})


def _own_import(scope, refers) -> tuple | None:
    """(library, line) of a required import of the library's own API in the test's body,
    used there (a bare `import transformer_engine` that only asks whether it imports is a
    check)."""
    used = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name)}
    for st in scope.body:
        stmts = [st]
        if isinstance(st, ast.Try):
            if not st.handlers or not all(_exits(h) for h in st.handlers):
                continue
            stmts = st.body
        for s in stmts:
            if isinstance(s, ast.ImportFrom) and s.module and not s.level:
                lib = _own_library(s.module)
                if lib in refers and any(not _CHECK.fullmatch(a.name)
                                         and (a.asname or a.name) in used for a in s.names):
                    return lib, s.lineno
            elif isinstance(s, ast.Import):
                for a in s.names:
                    lib = _own_library(a.name)
                    if lib in refers and (a.asname or a.name.split(".")[0]) in used:
                        return lib, s.lineno
    return None


def _skip_call(st):
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) \
            and _call_name(st.value) in _SKIPS:
        return st.value
    return None


def _body_skips(scope):
    """The skips that stop the whole test: a skip among the test's own statements, or the
    body of an `if` among them whose test asks nothing else (no `and`, no comparison: `if
    optimizer_type == "fused_adam" and not HAVE_TE_ADAM:` skips one case of a generic test)."""
    for st in scope.body:
        call = _skip_call(st)
        if call is not None:
            yield call
        elif isinstance(st, ast.If) and not any(
                isinstance(n, ast.Compare) or (isinstance(n, ast.BoolOp)
                                               and isinstance(n.op, ast.And))
                for n in ast.walk(st.test)):
            yield from filter(None, map(_skip_call, st.body))


def subject_reason(scope, tree, path: str | None, in_test_file: bool) -> Reason | None:
    """Why the function or class `scope` of a test module is a test of a library of GPU
    kernels (see the module docstring), else None."""
    if not in_test_file or not isinstance(scope, (*_FUNCS, ast.ClassDef)):
        return None
    refers, wide = module_facts(tree)
    if not refers:
        return None
    if wide is not None and wide[4]:
        lib, text, line = wide[:3]
        return Reason(PRINCIPLE, f"the module skips unless `{lib}` is there (\"{text}\") "
                      f"and imports `{lib}`'s package at its top: every test in it is "
                      f"`{lib}`'s", path, line)
    if wide is not None and not isinstance(scope, ast.ClassDef):
        lib, text, line, api = wide[:4]
        if any(isinstance(n, ast.Name) and n.id in api for n in ast.walk(scope)) \
                or _own_import(scope, refers):
            return Reason(PRINCIPLE, f"the module skips unless `{lib}` is there (\"{text}\") "
                          f"and this function uses `{lib}`'s own API", path, line)
    is_class = isinstance(scope, ast.ClassDef)
    if not scope.name.startswith("Test" if is_class else "test"):
        return None
    lib = names_library(words(scope.name))
    if lib in refers:
        return Reason(PRINCIPLE, f"the test `{scope.name}` is named for `{lib}`, a library "
                      "of NVIDIA/AMD GPU kernels", path, scope.lineno)
    for d in scope.decorator_list:
        if isinstance(d, ast.Call) and _call_name(d) in _GATES:
            text = _reason_text(d, 1)
            lib = _kernel_reason(text, refers)
            if lib:
                return Reason(PRINCIPLE, f"its gate's reason names a kernel of `{lib}` "
                              f"(\"{text}\")", path, d.lineno)
    if is_class:
        return None
    for call in _body_skips(scope):
        text = _reason_text(call, 0)
        lib = _kernel_reason(text, refers)
        if lib:
            return Reason(PRINCIPLE, f"it skips without a kernel of `{lib}` (\"{text}\")",
                          path, call.lineno)
    found = _own_import(scope, refers)
    if found:
        return Reason(PRINCIPLE, f"the test imports `{found[0]}`'s own API, a library of "
                      "NVIDIA/AMD GPU kernels", path, found[1])
    return None
