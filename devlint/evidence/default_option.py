"""Principle: a kernel wrapper that requires CUDA at its option's default is CUDA-only where a call keeps the default.

A library function (or an autograd `Function`'s `forward`, launched by `Fn.apply(...)`) whose
body asserts CUDA or a compute capability under a test of one of its own parameters that
holds at the parameter's default (`kernel_preference=KernelPreference.AUTO`, then
`if kernel_preference != KernelPreference.EMULATED: assert _SM100_KERNELS_AVAILABLE`, or
`use_kernel=True` then `if use_kernel: assert x.is_cuda`) cannot run without CUDA for a call
that leaves that parameter out: the option is how a caller opts out (an emulated path), and a
benchmark, test or example that does not opt out exercises the CUDA kernel on purpose
(`calls-cuda-only` then applies to it as to an unconditional requirement). A wrapper that
passes its own parameter of the same name and the same default through to it
(`def wrapper(..., kernel_preference=KernelPreference.AUTO): Fn.apply(..., kernel_preference)`)
requires CUDA at its default the same way. An assert on a flag whose name states an NVIDIA
compute capability or architecture (`assert _SM100_KERNELS_AVAILABLE`, `assert HOPPER_OK`) is
such a requirement too: the flag is named for the GPU it needs.
Evidence: the callee's requirement (file:line of the assert or raise), with the parameter and
its default in the text. Applied where `calls-cuda-only` is (`devlint.engine.project.callees`).
Limits: only a test of the parameter alone against a literal or a dotted constant
(`p != A.B`, `p == A.B`, `p is None`, `p`, `not p`), judged by the default's spelling (two
spellings of one value are different values); only the `if`'s body, not an `else`; a call
that passes the parameter by keyword or by position, or passes `*args`/`**kwargs`, keeps no
requirement (unless it passes the caller's own same-default parameter, as above); a
`Function`'s requirement is followed through `Fn.apply` and a module-level alias
(`op = Fn.apply`), not through a re-export of the class.
"""
from __future__ import annotations

import ast

from devlint.evidence import capability

PRINCIPLE = "cuda-by-default"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def named_capability_flag(test) -> bool:
    """`_SM100_KERNELS_AVAILABLE`, `mod.HOPPER_OK`: a flag named for a compute capability."""
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return isinstance(test, (ast.Name, ast.Attribute)) and bool(name) \
        and bool(capability._CAPABILITY.search(name))


def is_function_class(cls) -> bool:
    """An autograd `Function` subclass (`class Op(torch.autograd.Function)`) with a
    `forward`: `Op.apply(...)` runs its `forward`."""
    if not isinstance(cls, ast.ClassDef):
        return False
    if not any((b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "")) == "Function"
               for b in cls.bases):
        return False
    return entry_of(cls) is not None


def entry_of(cls):
    """A class's entry: an autograd Function's `forward`, else its `__init__`."""
    methods = {d.name: d for d in cls.body if isinstance(d, _FUNCS)}
    bases = {(b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "")) for b in cls.bases}
    if "Function" in bases and "forward" in methods:
        return methods["forward"]
    return methods.get("__init__")


def _params(fn, shift: int) -> list:
    """[(name, call position or None, default node or None)] of `fn`'s parameters; `shift`:
    the leading parameters a call does not pass (`self`, `ctx`)."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = [(p.arg, i - shift if i >= shift else None, d)
           for i, (p, d) in enumerate(zip(positional, defaults))]
    out += [(p.arg, None, d) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return out


def _constant(node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))


def _taken_at_default(test, params: dict):
    """The parameter (name) whose default makes `test` true, else None."""
    if isinstance(test, ast.Name) and test.id in params:
        d = params[test.id][1]
        return test.id if isinstance(d, ast.Constant) and d.value else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
            and isinstance(test.operand, ast.Name) and test.operand.id in params:
        d = params[test.operand.id][1]
        return test.operand.id if isinstance(d, ast.Constant) and not d.value else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if not isinstance(left, ast.Name) or left.id not in params:
        left, right = right, left
    if not isinstance(left, ast.Name) or left.id not in params or not _constant(right):
        return None
    d = params[left.id][1]
    if d is None or not _constant(d):
        return None
    same = ast.dump(d) == ast.dump(right)
    if isinstance(op, (ast.Eq, ast.Is)) and same:
        return left.id
    if isinstance(op, (ast.NotEq, ast.IsNot)) and not same \
            and isinstance(d, ast.Constant) == isinstance(right, ast.Constant):
        return left.id  # two dotted constants (enum members), or two literals
    return None


def requirement(fn, shift: int, required) -> tuple | None:
    """(statement, (param, position, default source)) of an `if` at the top of `fn`'s body
    taken at a parameter's default whose body (its top-level statements) holds a statement
    `required(stmt)` accepts, else None."""
    params = {name: (pos, d) for name, pos, d in _params(fn, shift)}
    for st in fn.body:
        if not isinstance(st, ast.If):
            continue
        name = _taken_at_default(st.test, params)
        if name is None:
            continue
        for inner in st.body:
            if required(inner):
                pos, d = params[name]
                return inner, (name, pos, ast.unparse(d))
    return None


def keeps(call, cond, caller=None):
    """How `call` meets a requirement at the default of `cond` (param, position, default):
    "default" when it leaves the parameter out, (param, position, default) of the caller's
    own parameter it passes through (same name and default), else None."""
    name, pos, default = cond
    if any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return None
    passed = next((k.value for k in call.keywords if k.arg == name), None)
    if passed is None and pos is not None and pos < len(call.args):
        passed = call.args[pos]
    if passed is None:
        return "default"
    if caller is None or not isinstance(passed, ast.Name) or passed.id != name:
        return None
    shift = 1 if caller.args.args and caller.args.args[0].arg in ("self", "cls", "ctx") else 0
    for pname, ppos, d in _params(caller, shift):
        if pname == name and d is not None and ast.unparse(d) == default:
            return (pname, ppos, default)
    return None
