"""Principle: a literal under a guard that already established CUDA is CUDA's own.

Evidence: the enclosing test (`if t.is_cuda:`, `if current_platform.is_cuda():`,
`torch.cuda.is_initialized()`, `device.type == "cuda"`, the else-branch of the opposite test,
an early `if not <cuda>: return`, the same exit for each element of a loop, over the
code after it (`for v in videos: if v.device.type != "cuda": return None`: it runs only where
every element is on CUDA, or there is none; no `break`, `continue` or `else` in the loop), `if TYPE_CHECKING:`), or the literal's own expression
testing for a CUDA-alike platform (`"cuda" if is_cuda_alike() else "cpu"`).
Also `torch.cuda.is_available()`, `torch.cuda.device_count() > 0`,
`len(torch.cuda.default_generators) > 0`, a CUDA capability test (`get_device_capability() >=
(9, 0)`, `is_sm_at_least_90()`, `is_hopper()`), a flag assigned from any of these
(`_is_cuda = torch.cuda.is_available()`, at module or function level), a helper of the same
file that returns such a test or asserts/requires one before anything else (`_require_cuda()`
as a statement guards the rest of its block; a helper whose first statement returns a false
value unless CUDA is there, `if not torch.cuda.is_available(): return False`, is true only on
CUDA: `if check_gpu_memory():` guards its body, and the helper's own test stays the finding),
`torch.cuda.is_current_stream_capturing()` (true only while a CUDA stream captures a CUDA
graph; a flag assigned from it too), `isinstance(x, C)` where the class `C` is named after a
CUDA-only stack (`NVLSAllGatherVDispatcher`, `FlashInferBackend`: `cuda_only_scope`'s words;
every class of a tuple must be), a test that an object is, or a class is, the CUDA
implementation of something (`isinstance(comm, CudaCommunicator)`, `assert comm_cls ==
CudaCommunicator`: a CamelCase class name that starts with `Cuda`/`CUDA`), and the skip gate of the enclosing test or class
(`@skipif(not torch.cuda.is_available())`, `@skipUnless(is_sm_at_least_90())`,
`@requires_cuda`, a skip mark bound to a name at module level: `requires_hopper =
pytest.mark.skipif(...)` then `@requires_hopper`) where that gate is itself a finding (DL203)
or asks for a compute capability (NVIDIA SM or AMD architecture) or a CUDA toolkit version
(`torch.version.cuda`: `devlint.evidence.cuda_build`); a gate on a flag (`skipIf(not
_CUDA_IS_AVAILABLE)`) is no such finding, and upstream fixed the devices under one (torchao's
test_qat.py, cross corpus 020); a gate on a query that merely asks (`not current_platform.is_cuda()`) exempts
nothing under it (upstream fixes the literals under such gates, vLLM PR #37566). `and`/`or`/`not` combine them: the else-branch of
`x or device.type != "cuda"` is CUDA's; in `_is_cuda and x.is_cuda and ...` the operands after
one that establishes CUDA (and is no finding itself: a platform query, a flag, a capability
test, not `torch.cuda.is_available()`, whose fix rewrites them too) run only on CUDA.
# --- tensorguard (issue #18): a tensor's own CUDA test ---
A tensor's own CUDA test (`t.is_cuda`; `t.device.type == "cuda"` already was one) establishes
CUDA for the code it guards: the if-body, the true arm of `x if t.is_cuda else y`, the code
under a flag bound to a test that requires it (`two_stream = s is not None and x.is_cuda`,
then `if two_stream:`), and the operands after it in an `and` (except another CUDA test, which
DL202 judges with it). The rubric counts code under a test that established CUDA as CUDA's
own; judged FP: `torch.autocast("cuda") if t.is_cuda else nullcontext()`,
`if t.is_cuda: t.record_stream(torch.cuda.current_stream(t.device))`, a two-stream block
under `use_two_stream = ... and x.is_cuda`. The test itself stays DL202's finding where it
chooses generic behaviour, its extent runs over the body, and its fix (unsafe) rewrites the
test and the body together, the body's devices to `t.device` (`mask.cuda()` ->
`mask.to(device=xs_pad.device)`: what upstream did in vLLM's phi4mm audio encoder and its
bitsandbytes loader, both corpus cases), or none where the body rebinds the tensor. Limits:
where DL202 leaves the test (a CUDA-only body, a fast path beside a generic one) the body
is not reported at all; a test inside an `assert` (DL201's finding) guards nothing after it.
# --- end tensorguard ---
Limits: `is_cuda_alike()` / `is_rocm()` cover ROCm too, where devices still come from the
platform; `if device == "cpu": return` is not evidence of CUDA, nor is excluding some
platforms (`not is_xpu() and not is_rocm()`). The guard itself is no exemption: an
`if torch.cuda.is_available():` with no arm for another platform stays a finding (DL401),
and a fix of it rewrites the guard and its body together, unsafely (it changes which branch
runs).
The polarity of a test is computed by the triage descent (`devlint.analysis.descent`), which
puts the `guard_reason` of the innermost guard on the `Where` of each candidate under it.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason

# Only a test that establishes NVIDIA CUDA itself exempts the code under it. `is_cuda_alike()`
# and `is_rocm()` cover ROCm too, where upstream still derives devices from the platform
# (vLLM fixed `device="cuda"` under `if current_platform.is_rocm():`).
_PLATFORM_CUDA_QUERIES = {"is_cuda"}
# `torch.cuda.is_available()` is not among the guards: code uses it to ask "is there a GPU?",
# and upstream fixes rewrite the literals under it (vLLM PR #38901 keeps the test and changes
# `device = "cuda:0"` below it); it is itself a DL401 finding.
_TORCH_CUDA_QUERIES = {"torch.cuda.is_initialized", "torch.cuda.is_available",
                       # true only while a CUDA stream captures a graph
                       "torch.cuda.is_current_stream_capturing"}
# counts that are positive only with a CUDA device: `torch.cuda.device_count() > 0`,
# `len(torch.cuda.default_generators) > 0`
_TORCH_CUDA_COUNTS = {"torch.cuda.device_count", "torch.cuda.default_generators"}
# a compute-capability query or a helper named after one (an NVIDIA SM version or
# architecture): true only on a CUDA GPU
_CAPABILITY_NAME = re.compile(
    r"(?i)^_*(?:is_|has_|check_|at_least_)?(?:sm_?\d+\w*|sm_at_least\w*|hopper|blackwell|ampere)$"
    r"|(?:^|_)sm_at_least(?:_|$)|(?:^|_)sm_?\d{2,3}(?:_|$)"
    # AMD architectures (`is_MI300`, `is_gfx950`): ROCm's device type is "cuda" too
    r"|^_*(?:is_|has_)?(?:mi\d{3}|gfx\d+|cdna\d*)\w*$")
_CAPABILITY_QUERIES = {"torch.cuda.get_device_capability", "torch.cuda.get_device_properties"}
# decorators that skip a test unless CUDA is there (the gate is DL203's finding; the test's
# body is CUDA's)
GATE_NAME = re.compile(r"(?i)^(requires?_cuda|requires?_gpu|skip_?if_?no_?cuda|cuda_only|"
                       r"needs_cuda|only_cuda|skip_?unless_?cuda)$")
SKIP_IF = frozenset({"skipif", "skipIf", "skip_if"})
SKIP_UNLESS = frozenset({"skipUnless", "skip_unless"})


def _alike_polarity(test) -> int:
    """+1 for `is_cuda_alike()` / `current_platform.is_cuda_alike()` (also as one operand of
    `and`), -1 for its negation, 0 otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -_alike_polarity(test.operand)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return 1 if any(_alike_polarity(v) > 0 for v in test.values) else 0
    if isinstance(test, ast.Call):
        test = test.func
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return 1 if name == "is_cuda_alike" else 0


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


_GUARD_TEXT = {
    "if": "under a test that establishes CUDA",
    "else": "in the else-branch of a test that rules CUDA out",
    "exit": "after an early exit or assert that leaves only CUDA",
    "alike": "its own expression tests for a CUDA-alike platform",
    "gate": "in a test or class whose skip gate requires CUDA",
    "helper": "after a call of a helper that requires CUDA",
    "param": "a skip mark of the CUDA value of a parametrisation (it gates only that value)",
    "operand": "an operand of `and` after one that establishes CUDA (evaluated only on CUDA)",
    "loop": "after a loop that returns unless each element it tests establishes CUDA",
}


# --- an early exit inside a loop (`for v in videos: if v.device.type != "cuda": return`) ----
def loop_exit_test(loop, false_is_cuda):
    """The `if` of `loop`'s body that leaves the function (`return`, `raise`) unless its test
    establishes CUDA (`false_is_cuda(test)`), for each element: the code after the loop runs
    only where every element passed it (or there was none). None where the loop has an `else`,
    a `break` or `continue` of its own (an element may skip the test, or the loop stop before
    testing them all), or the exit is not a statement of its body."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)) or loop.orelse:
        return None
    stack = list(loop.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Break, ast.Continue)):
            return None
        if not isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef,
                              ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))
    for st in loop.body:
        if isinstance(st, ast.If) and not st.orelse and st.body \
                and isinstance(st.body[-1], (ast.Return, ast.Raise)) and false_is_cuda(st.test):
            return st
    return None


def cuda_only_type(test) -> bool:
    """`isinstance(x, C)` (or a tuple of classes) where every class is named after a CUDA-only
    stack: an instance exists only where that stack runs."""
    from devlint.evidence.cuda_only_scope import _VENDOR_NAME

    if not (isinstance(test, ast.Call) and getattr(test.func, "id", "") == "isinstance"
            and len(test.args) == 2):
        return False
    types = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    names = [t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", "") for t in types]
    return bool(names) and all(n and _VENDOR_NAME.search(n.lower()) for n in names)


_CUDA_CLASS = re.compile(r"^_*(?:Cuda|CUDA)(?=[A-Z])")


def cuda_class_test(test) -> bool:
    """`x == CudaCommunicator`, `x is CudaCommunicator`, `isinstance(x, CudaCommunicator)`:
    the object is the CUDA implementation of something (a class whose CamelCase name starts
    with `Cuda`/`CUDA`), which exists only on CUDA."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and isinstance(test.ops[0], (ast.Eq, ast.Is)):
        sides = [test.left, test.comparators[0]]
    elif isinstance(test, ast.Call) and getattr(test.func, "id", "") == "isinstance" \
            and len(test.args) == 2:
        sides = [test.args[1]]
    else:
        return False
    return any(_CUDA_CLASS.match(s.attr if isinstance(s, ast.Attribute)
                                 else getattr(s, "id", "")) for s in sides)


def falsy_exit(stmt) -> bool:
    """`return`, `return None`, `return False`, `return 0`: an exit whose value is false, so a
    helper that takes it unless CUDA is there returns a true value only on CUDA."""
    if not isinstance(stmt, ast.Return):
        return False
    v = stmt.value
    return v is None or (isinstance(v, ast.Constant) and not v.value
                         and not isinstance(v.value, str))


def is_capability_name(name: str) -> bool:
    """A helper named after an NVIDIA compute capability or architecture
    (`is_sm_at_least_90`, `is_sm100`, `is_hopper`)."""
    return bool(_CAPABILITY_NAME.search(name))


def guard_reason(kind: str, test, path: str | None) -> Reason:
    """The reason for a candidate under a CUDA guard: `kind` is "if", "else", "exit" or
    "alike"; the evidence is the test's line."""
    return Reason("cuda-guard", _GUARD_TEXT[kind], path, getattr(test, "lineno", None))
