"""Principle: a function that always calls a CUDA-only function of its project is CUDA's own.

A test, a benchmark or a helper whose body calls, outside any `if`/`try`, a project function
that cannot run without CUDA by its own code only exists on CUDA: its device literals, skip
gates and `torch.cuda` calls serve that function and are not findings of their own (the
rubric's "CUDA-specific on purpose"; the callee's own findings stay where they are).
A project function cannot run without CUDA when its body, outside any `if`/`try`:
- asserts CUDA (`assert x.is_cuda`, `assert device.type == "cuda"`,
  `assert torch.cuda.is_available()`) or a compute capability (`assert is_sm_at_least_90()`),
  or raises under a test that rules CUDA out (`if not x.is_cuda: raise ...`) or that asks a
  compute capability (`if get_device_capability() < (9, 0): raise ...`);
- emits inline PTX in a Triton kernel (`tl.inline_asm_elementwise`), or builds a kernel from
  CUDA C++ source (`devlint.evidence.cuda_kernel_source`);
- always calls another function of its module that cannot (the kernel's wrapper): outside
  any `if`/`try`, or in both arms of an `if`/`else`, each arm calling one (`if backend is
  None: backend = pick() else: check(backend)`, both raising unless CUDA);
or when it is defined only under a module-level compute-capability gate
(`if is_sm_at_least_100(): def kernel(...)`, with at most a stub that raises elsewhere), or
when its module is CUDA-only (`cuda-only-module`, through the project stage). A class counts
by its `__init__`, an autograd `Function` by its `forward`, launched as `Op.apply(...)` (or
through a module-level alias `op = Op.apply`); an assert on a flag named for a compute
capability (`assert _SM100_KERNELS_AVAILABLE`) is an assert of one; a nested function that
the scope always calls (`def fwd(): ...`, then `fwd()`) runs with it; a library function
that always calls a function it imports from a project module that cannot run without CUDA
cannot either (for a benchmark's callee the project stage reads its module with
those imports as a seed, one import deep: `to_mxfp8_a2a_dequant` in one module calling `triton_to_mxfp8_dim0`, defined only under
an SM100 gate in another); a requirement under a test of the function's own option that holds
at the option's default counts for a call that keeps the default (`default_option`).
Evidence: the callee's requirement (file:line). Applied by the project stage
(`devlint.engine.project.callees`), which follows the caller's imports (`from pkg.k import f`,
re-exports through a package's `__init__`, also its lazy `__getattr__` table:
`engine/project/lazy_exports.py`) into the project's modules.
Also a module-level value that only such functions read (a benchmark's
`device = torch.device("cuda")`), the decorators of a test class whose every test is one,
and the top-level code of a module (a docs example, a script) that itself always calls one,
or its `if __name__ == "__main__":` block that does: the module cannot be imported, or the
script run, without CUDA (evidence: the callee's requirement; the text names the call's line).
Limits: the scope is the calling function (a method, a module-level function, with its
decorators and nested functions) or the module's own top-level code, never the functions of
the file: one call exempts only the scope that makes it. In a test helper module only a skip counts as a requirement (`raise SkipTest`
unless CUDA): its asserts check what a test produced. A call under `if`/`try` (one backend among others) does not count; nor does a
plain `@triton.jit` kernel (generic Triton, also under `if has_triton():`), nor a call in
a generator expression's body (it runs when consumed, if ever), nor an assert
that also admits another accelerator (`x.is_cuda or x.is_xpu`); availability helpers
(`is_*`, `has_*`, `get_*` ...) of a CUDA-only module are not CUDA-only calls. Calls through a
module object (`k.f()`) and star imports are not followed.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason, capability, cuda_kernel_source, default_option, vocabulary

PRINCIPLE = "calls-cuda-only"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


# what a requirement is written with (a CUDA test, a capability query or gate, inline PTX, a
# CUDA C++ source): a module whose text holds none of them is not parsed for one
_CASED = (r"is_cuda\b", r"[\"']cuda[\"':]", r"cuda\.is_available", r"inline_asm", r"capabilit",
          r"\.cuh?[\"']", r"cuda_(?:sources|files|srcs)")
_UNCASED = (r"sm_?\d", r"sm_at_least", r"hopper", r"blackwell", r"\bmi\d{3}", r"gfx\d")
_MENTIONS = re.compile("|".join(_CASED) + "|(?i:%s)" % "|".join(_UNCASED))
# The same alternatives one by one, each behind a search for the literal it starts with (or
# holds: a leading `\b` or quote hides it), the case-insensitive ones over the lowercased
# text: a search for a pattern that starts with a literal skips ahead to it, where the
# alternation above tries every alternative at every position (5-10x slower; the project
# stage asks it of hundreds of modules). Equal to `_MENTIONS` on a text without the four
# letters outside ASCII that `(?i:)` folds with an ASCII letter or that lowercase to more than
# one (`İ`, `ı`, `ſ`, the Kelvin sign): elsewhere lowercasing maps each ASCII letter to its
# `(?i:)` match and no other letter to an ASCII one, keeping lengths, digits and word
# boundaries. Texts with one take `_MENTIONS`. `tests/test_fast_paths.py` checks the two agree.
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")
_ONE_BY_ONE = [(re.compile(gate), re.compile(p)) for gate, p in (
    ("is_cuda", r"is_cuda\b"), ("cuda[\"':]", r"[\"']cuda[\"':]"),
    *((p, p) for p in _CASED[2:]),
    *((p, p) for p in _UNCASED[:4]), (r"mi\d{3}", r"\bmi\d{3}"), (_UNCASED[5], _UNCASED[5]))]
assert [p.pattern for _, p in _ONE_BY_ONE] == list(_CASED + _UNCASED)
_BUILDS = re.compile(r"\.cuh?[\"']|cuda_(?:sources|files|srcs)")


def mentions(text: str) -> bool:
    """The cheap text gate: the module may hold a function that requires CUDA."""
    if not text.isascii() and any(c in text for c in _FOLDS_TO_ASCII):
        return _MENTIONS.search(text) is not None
    searched = text
    for i, (gate, pattern) in enumerate(_ONE_BY_ONE):
        if i == len(_CASED):
            searched = text.lower()
        if gate.search(searched) and pattern.search(searched):
            return True
    return False


def _is_cuda_const(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) \
        and node.value.split(":")[0] == "cuda"


def _device_type(node) -> bool:
    """`x.device.type`, `device.type`, `str(x.device)`-like operands of a CUDA comparison."""
    return isinstance(node, ast.Attribute) and node.attr in ("type", "device")


def requires_cuda(test) -> bool:
    """`test` true only on CUDA: `x.is_cuda`, `x.device.type == "cuda"`,
    `torch.cuda.is_available()`, a compute-capability query that is met, `and` of those."""
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        return True
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and isinstance(test.ops[0], (ast.Eq, ast.Is)):
        a, b = test.left, test.comparators[0]
        if (_is_cuda_const(b) and _device_type(a)) or (_is_cuda_const(a) and _device_type(b)):
            return True
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) \
            and test.func.attr == "is_available" and isinstance(test.func.value, ast.Attribute) \
            and test.func.value.attr == "cuda":
        return True
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(requires_cuda(v) for v in test.values)
    return capability.met_if_true(test)


def rules_out_cuda(test) -> bool:
    """`test` true whenever CUDA is absent: `not x.is_cuda`, `x.device.type != "cuda"`, an
    `or` holding one of those."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return requires_cuda(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and isinstance(test.ops[0], (ast.NotEq, ast.IsNot)):
        a, b = test.left, test.comparators[0]
        return (_is_cuda_const(b) and _device_type(a)) or (_is_cuda_const(a) and _device_type(b))
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(rules_out_cuda(v) for v in test.values)
    return False


def _asks_capability(test) -> bool:
    return any(capability._is_capability_call(n) for n in ast.walk(test))


def _below_capability(test) -> bool:
    """`test` true whenever CUDA is absent or below a compute capability: `not x.is_cuda`,
    `get_device_capability() < (9, 0)`, `torch.cuda.is_available() and not is_sm_100()`,
    an `or` holding one of those. Not a test that also asks something else
    (`use_fp4 and not is_sm_100()` raises only for one option)."""
    if rules_out_cuda(test) or capability.met_if_false(test):
        return True
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(_below_capability(v) for v in test.values)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return all(requires_cuda(v) or _below_capability(v) for v in test.values) \
            and any(_below_capability(v) for v in test.values)
    return False


def _raises(body) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _is_skip(raise_stmt) -> bool:
    exc = raise_stmt.exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    name = exc.attr if isinstance(exc, ast.Attribute) else getattr(exc, "id", "")
    return "skip" in name.lower()


def _body_requirement(fn, test_module: bool = False, asm: bool = True) -> ast.AST | None:
    """The statement or call by which `fn`'s own body (outside `if`/`try`) needs CUDA. In a
    test module only a skip counts: its asserts check what the test produced."""
    body = fn.body
    for st in body:  # the function's own top-level checks
        if isinstance(st, ast.Assert) and not test_module and (
                requires_cuda(st.test) or default_option.named_capability_flag(st.test)):
            return st
        if isinstance(st, ast.If) and _raises(st.body) and not st.orelse \
                and _below_capability(st.test) \
                and (not test_module or _is_skip(st.body[-1])):
            return st
    if not asm:
        return None
    for n in vocabulary.unconditional_in(body):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr == "inline_asm_elementwise":
            return n
    return None


def _gated_defs(tree, names=None) -> dict:
    """name -> the gate of the module-level functions defined only under a compute-capability
    test (`if is_sm_at_least_100(): def f` ...; an `else:` that only defines raising stubs)."""
    gated: dict = {}
    plain: set = set()
    for st in tree.body:
        if isinstance(st, (*_FUNCS, ast.ClassDef)):
            plain.add(st.name)
        elif isinstance(st, ast.If):
            arms = []
            if capability.met_if_true(st.test, names):
                arms, other = st.body, st.orelse
            elif capability.met_if_false(st.test, names):
                arms, other = st.orelse, st.body
            else:
                continue
            for d in arms:
                if isinstance(d, _FUNCS):
                    gated.setdefault(d.name, st)
            for d in other:
                if isinstance(d, _FUNCS) and not _stub(d):
                    plain.add(d.name)
    return {n: g for n, g in gated.items() if n not in plain}


def _stub(fn) -> bool:
    body = [s for s in fn.body if not (isinstance(s, ast.Expr)
                                       and isinstance(s.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def _defs(tree):
    """The module-level functions and classes, also those in module-level `if`/`try` arms."""
    for st in tree.body:
        if isinstance(st, (*_FUNCS, ast.ClassDef)):
            yield st
        elif isinstance(st, (ast.If, ast.Try)):
            for part in (st.body, getattr(st, "orelse", []), getattr(st, "finalbody", [])):
                for d in part:
                    if isinstance(d, (*_FUNCS, ast.ClassDef)):
                        yield d


def _callee_name(call) -> str | None:
    """`f(...)` and a Triton launch `f[grid](...)`: `f`; an autograd Function's launch
    `Op.apply(...)`: `Op.apply`."""
    f = call.func
    if isinstance(f, ast.Subscript):
        f = f.value
    if isinstance(f, ast.Attribute) and f.attr == "apply" and isinstance(f.value, ast.Name):
        return f.value.id + ".apply"
    return f.id if isinstance(f, ast.Name) else None


def body_of(fn) -> list:
    """A function's body; a class's `__init__`'s (an autograd Function's `forward`'s)."""
    if isinstance(fn, ast.ClassDef):
        entry = default_option.entry_of(fn)
        return entry.body if entry is not None else []
    return fn.body


def calls_in(fn) -> list:
    """[(name, call)] of the names `fn` calls (or launches) outside `if`/`try`."""
    out = []
    for n in vocabulary.unconditional_in(body_of(fn)):
        if isinstance(n, ast.Call):
            name = _callee_name(n)
            if name:
                out.append((name, n))
    return out


def paths(body, _nested_depth: int = 0) -> tuple:
    """What a statement list calls on every path, for `always_calls`: ([(name, call)] outside
    `if`/`try`, [(paths of the if-arm, paths of the else-arm)] of each `if` with an `else`
    outside them), those of a function it defines and always calls included. A function's
    (a class's `__init__`'s) body, or a module's. A function or lambda it defines and does not
    call is not called by it, nor is a generator expression's body (it runs when consumed)."""
    calls, forks, nested = [], [], {}
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.If):
            if n.orelse:
                forks.append((paths(n.body), paths(n.orelse)))
            continue
        if isinstance(n, _FUNCS):
            nested[n.name] = n
        if isinstance(n, vocabulary._CONDITIONAL):
            continue
        if isinstance(n, ast.GeneratorExp):
            # its body runs only when the generator is consumed; its first iterable at once
            stack.append(n.generators[0].iter)
            continue
        if isinstance(n, ast.Call):
            name = _callee_name(n)
            if name:
                calls.append((name, n))
        stack.extend(ast.iter_child_nodes(n))
    # a nested function the body always calls (`def fwd(): return kernel(...)`, then
    # `fwd()`) runs with it: what it always calls, the body does (once per name)
    for name in list(dict.fromkeys(c[0] for c in calls if c[0] in nested)):
        if _nested_depth < 4:
            inner_calls, inner_forks = paths(nested.pop(name).body, _nested_depth + 1)
            calls += inner_calls
            forks += inner_forks
    return calls, forks


def always_calls(found_paths, required, own: str | None = None, unless=None, caller=None):
    """(name, call) of a name in `required` (other than `own`) called on every path of
    `found_paths` (`paths`): outside `if`/`try`, or in both arms of an `if`/`else`, each
    arm calling one (`if backend is None: pick() else: check(backend)`), else None.
    `unless`: name -> (param, position, default) of a requirement that holds only at that
    parameter's default (`default_option`): the call must leave it out, or pass `caller`'s
    own same-default parameter through."""
    calls, forks = found_paths
    for name, call in calls:
        if name in required and name != own and (
                not unless or name not in unless
                or default_option.keeps(call, unless[name], caller) is not None):
            return name, call
    for body, orelse in forks:
        hit = always_calls(body, required, own, unless, caller)
        if hit is not None and always_calls(orelse, required, own, unless, caller) is not None:
            return hit
    return None


def _required_stmt(st, test_module: bool) -> bool:
    """An assert of CUDA or of a capability (a flag named for one), or a raise below one."""
    if isinstance(st, ast.Assert):
        return not test_module and (requires_cuda(st.test)
                                    or default_option.named_capability_flag(st.test))
    return isinstance(st, ast.If) and _raises(st.body) and not st.orelse \
        and _below_capability(st.test) and (not test_module or _is_skip(st.body[-1]))


def requirements(tree, text: str, path: str | None, test_module: bool = False,
                 unless: dict | None = None, seed: dict | None = None) -> dict:
    """name -> Reason for the module-level functions and classes of a module that cannot run
    without CUDA by their own code (see the module docstring), their in-module wrappers
    included (an autograd Function as `Op.apply`, and a module-level alias `op = Op.apply`).
    test_module: a test helper module, whose asserts check results (only its skips count).
    unless: gets name -> (param, position, default) of those that require CUDA only at a
    parameter's default (`default_option`). seed: name -> Reason of the names the module
    imports from project modules that cannot run without CUDA (the project stage's), for its
    wrappers of them."""
    if unless is None:
        unless = {}
    own = mentions(text)
    if not own and not seed:
        return {}
    found: dict = dict(seed or {})
    defs = {}
    for d in _defs(tree):
        defs.setdefault(d.name, []).append(d)
    if not own:
        return _wrappers(tree, defs, found, unless) if found else found
    gated = _gated_defs(tree, capability.module_names(tree))
    for name, gate in gated.items():
        found[name] = Reason(PRINCIPLE, f"`{name}` is defined only under a compute-capability "
                             "gate", path, gate.lineno)
    builds = cuda_kernel_source.builders(tree, text) if _BUILDS.search(text) else {}
    asm = "inline_asm" in text
    for name, ds in defs.items():
        if name in found or len(ds) != 1:
            continue
        d = ds[0]
        fn = d
        if isinstance(d, ast.ClassDef):
            fn = default_option.entry_of(d)
            if fn is None:
                continue
            if default_option.is_function_class(d):
                name = name + ".apply"
        where = _body_requirement(fn, test_module, asm)
        if where is None:
            at_default = default_option.requirement(
                fn, 1 if fn is not d else 0, lambda st: _required_stmt(st, test_module))
            if at_default is not None:
                where, cond = at_default
                unless[name] = cond
                found[name] = Reason(default_option.PRINCIPLE, f"`{name}` asserts or raises "
                                     f"unless CUDA (or a compute capability) when "
                                     f"`{cond[0]}` is left at its default `{cond[2]}`", path,
                                     where.lineno)
                continue
        if where is not None:
            what = ("emits inline PTX" if isinstance(where, ast.Call)
                    else "skips" if isinstance(where, ast.If) and _is_skip(where.body[-1])
                    else "asserts or raises")
            if not isinstance(where, ast.Call):
                what += (" below a compute capability" if _asks_capability(
                    getattr(where, "test", where)) else " unless CUDA")
            found[name] = Reason(PRINCIPLE, f"`{name}` {what}", path, where.lineno)
        elif name in builds:
            found[name] = Reason(PRINCIPLE, f"`{name}` builds a kernel from CUDA C++ source",
                                 path, builds[name].lineno)
    # wrappers: functions that always call (or launch) one of those
    if not found:
        return found
    return _wrappers(tree, defs, found, unless)


def _wrappers(tree, defs: dict, found: dict, unless: dict) -> dict:
    """`found` with the module's functions that always call (or launch) one of it."""
    _aliases(tree, found, unless)
    calls, callers = {}, {}
    for name, ds in defs.items():
        if len(ds) == 1:
            key = name + ".apply" if default_option.is_function_class(ds[0]) else name
            if key not in found:
                calls[key], callers[key] = paths(body_of(ds[0])), ds[0]
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name in found:
                continue
            d = callers[name]
            caller = default_option.entry_of(d) if isinstance(d, ast.ClassDef) else d
            hit = always_calls(called, found, name, unless, caller)
            if hit is not None:
                callee = hit[0]
                found[name] = Reason(found[callee].principle if callee in unless else PRINCIPLE,
                                     f"`{name}` always calls `{callee}`: "
                                     + found[callee].text, found[callee].path,
                                     found[callee].line)
                if callee in unless:
                    kept = default_option.keeps(hit[1], unless[callee], caller)
                    if isinstance(kept, tuple):
                        unless[name] = kept
                changed = True
        if _aliases(tree, found, unless):
            changed = True
    return found


def _aliases(tree, found: dict, unless: dict) -> bool:
    """Module-level `op = Op.apply` of a CUDA-requiring Function: `op` requires it too."""
    added = False
    for st in tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                and isinstance(st.targets[0], ast.Name) and st.targets[0].id not in found \
                and isinstance(st.value, ast.Attribute) and st.value.attr == "apply" \
                and isinstance(st.value.value, ast.Name):
            key = st.value.value.id + ".apply"
            if key in found:
                found[st.targets[0].id] = found[key]
                if key in unless:
                    unless[st.targets[0].id] = unless[key]
                added = True
    return added
