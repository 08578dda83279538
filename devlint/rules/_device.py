"""Helpers the device-literal rules share: what a CUDA device string is, where it stands, and
the expressions that replace it."""
from __future__ import annotations

import ast
import re

from devlint.analysis.fixkit import Expr, bare, role_expr, single_quoted
from devlint.analysis.infer import infer_device
from devlint.evidence.abstract_default import abstract_default_reason
from devlint.evidence.capability import build_query_reason
from devlint.evidence.compared_value import compared_value_reason, resolved_device_reason
from devlint.evidence.dead_value import dead_value_reason
from devlint.evidence.dead_default import dead_default_reason
from devlint.evidence.fake_tensor import fake_mode_reason, fake_tensor_reason
from devlint.evidence.load_location import load_location_reason
from devlint.evidence.hip_device import hip_device_reason, hip_scope_reason
from devlint.evidence.mock_target import mock_target_reason
from devlint.evidence.not_a_device import annotation_reason
from devlint.evidence.print_only import (
    RESETS, STATISTICS, print_only_reason, switched_report_reason,
)
from devlint.evidence.version_fallback import version_fallback_reason
from devlint.profiles.torch_api import entries_by_name

_INDEXED = re.compile(r"cuda:(\d+)")


def device_strings(facts):
    """The str constants of the file that name a CUDA device ("cuda", "cuda:N")."""
    from devlint.analysis.model import DEVICE_STRING

    for node in facts.strings:
        if DEVICE_STRING.fullmatch(node.value):
            yield node


def index_of(value: str) -> str | None:
    m = _INDEXED.fullmatch(value)
    return m.group(1) if m else None


def skipped(facts, node, api: bool = False, annotations: bool = False,
            guards: bool = True) -> bool:
    """Not a finding: CUDA-only files, functions and classes (and, for API rules, CUDA-alike
    ROCm files); with `guards`, code under a guard that already established CUDA.

    Under an established CUDA guard neither literals nor table APIs are findings (SPEC 3); the
    guard itself is (DL401 / DL202 report it, and their fix rewrites guard and body together)."""
    reason = why_skipped(facts, node, api, annotations, guards)
    if reason is not None:
        note_exempt(facts, node, reason)
        note_guarded(facts, node, reason)
    return reason is not None


def note_guarded(facts, node, reason) -> None:
    """Record that the CUDA guard on `reason.line` exempts `node`: where the guard is itself
    a finding, that finding's extent runs over the code it guards (`engine.linter`)."""
    if getattr(reason, "principle", None) != "cuda-guard" or not reason.line \
            or reason.path != facts.path:
        return
    end = node[1] if isinstance(node, tuple) else facts.span(node)[1]
    if end > facts.guard_extent.get(reason.line, -1):
        facts.guard_extent[reason.line] = end


def note_exempt(facts, node, reason) -> None:
    """Record, for `--show-exempt`, that the running rule leaves `node` unreported for
    `reason` (a `devlint.evidence.Reason`); nothing unless the run collects them. A place some
    rule reports after all is dropped from the list (`engine.linter.exempt_entries`)."""
    if facts.exempt is not None and facts.rule is not None:
        facts.exempt.append((facts.rule, node, reason))


def why_skipped(facts, node, api: bool = False, annotations: bool = False,
                guards: bool = True):
    """The `devlint.evidence.Reason` for which `skipped` holds, else None (the place a
    `--show-exempt` collects the per-candidate reasons of the rules that use `skipped`)."""
    if facts.cuda_only:
        return facts.cuda_only
    if api and facts.cuda_alike:
        return facts.cuda_alike
    if facts.cuda_alike:  # a ROCm module: its "cuda" literals name the HIP device
        hip = hip_device_reason(facts)
        if hip is not None:
            return hip
    w = facts.where_of(node)
    if w is not None:
        if guards and w.guarded and _honoured(facts, w.guarded):
            return w.guarded
        if w.annotation and not annotations:
            return annotation_reason(node, facts.path)
        if w.statement is not None:  # the candidate is (in) the test of a print-only `if`
            scope = w.function or facts.tree
            printed = (_statement_reason(facts, w.statement, scope, w.function)
                       or (api and _statistic(node)
                           and switched_report_reason(facts, w.statement, facts.path, scope)))
            if printed:
                return printed
    return (facts.cuda_only_scope(node) or hip_scope_reason(facts, node)
            or facts.cuda_only_callee(node)
            or dead_default_reason(facts, node) or abstract_default_reason(facts, node)
            or compared_value_reason(facts, node) or dead_value_reason(facts, node)
            or load_location_reason(facts, node)
            or mock_target_reason(facts, node) or resolved_device_reason(facts, node)
            or fake_tensor_reason(facts, node) or fake_mode_reason(facts, node, api)
            or version_fallback_reason(facts, node))


def _statement_reason(facts, statement, scope, function):
    """`print_only_reason` or `build_query_reason` of the statement holding a candidate: both
    read only the statement and its scope, so they are asked once per statement (each
    candidate there, of each rule, asked them again: four times per `if` of a generated
    module)."""
    return facts.memo(("print-or-build", id(statement), id(scope), id(function)), lambda: (
        print_only_reason(statement, facts.path, scope)
        or build_query_reason(statement, facts.path, function)))


def _statistic(node) -> bool:
    """The candidate is a CUDA memory statistic or its reset (`torch.cuda.memory_allocated`)."""
    if isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Attribute) and node.attr in STATISTICS | RESETS


def _honoured(facts, reason) -> bool:
    """The running rule honours the guard `reason`: every rule a CUDA guard, the `torch.cuda`
    API rules only a CUDA-alike one, the rules that list it a ROCm-only one
    (`evidence.rocm_guard`: not the visibility-variable and backend rules)."""
    principle = getattr(reason, "principle", None)
    if principle == "cuda-alike-guard":
        return _torch_cuda_api_rule(facts)
    if principle == "rocm-guard":
        return principle in getattr(facts.rule, "exempt_by", ())
    return True


def _torch_cuda_api_rule(facts) -> bool:
    """The running rule is one of the `torch.cuda` API rules (DL401-DL404), the only ones a
    CUDA-alike test exempts (`evidence.cuda_alike_guard`)."""
    code = getattr(facts.rule, "code", "") or ""
    return code.startswith("DL4")


def device_type_expr(facts, in_fstring_quote: str | None = None) -> Expr:
    """The profile's device-type string, quoted to fit inside an f-string if asked."""
    e = role_expr(facts, "device-type")
    if in_fstring_quote == '"':
        return Expr(single_quoted(e.text), e.imports, e.evidence, e.safe)
    if in_fstring_quote == "'":
        return Expr(e.text.replace("'", '"'), e.imports, e.evidence, e.safe)
    return e


def device_string(facts, value: str) -> Expr:
    """A string naming the profile's device in place of "cuda" / "cuda:N" (an f-string keeps
    the index)."""
    idx = index_of(value)
    if idx is None:
        return role_expr(facts, "device-type")
    t = device_type_expr(facts, '"')
    return Expr(f'f"{{{t.text}}}:{idx}"', t.imports, t.evidence, True)


def indexed_device(facts, index: str, want_object: bool = False) -> Expr:
    """A device of the profile's type with an explicit index, e.g. for "cuda:1"."""
    if facts.profile == "vllm" and not want_object:
        t = device_type_expr(facts, '"')
        return Expr(f'f"{{{t.text}}}:{index}"', t.imports, t.evidence, True)
    t = device_type_expr(facts)
    torch_local = facts.torch_name()
    imports = t.imports
    if torch_local is None:
        torch_local = "torch"
        imports = tuple(dict.fromkeys(imports + ("import torch",)))
    return Expr(f"{torch_local}.device({bare(t.text)}, {index})", imports, t.evidence, True)


def device_for_literal(facts, node: ast.Constant, role: str = "device",
                       fallback_role: str | None = None) -> Expr:
    """The replacement for a hardcoded "cuda"/"cuda:N" value: inferred from context, or the
    profile's device (with the index kept for "cuda:N")."""
    idx = index_of(node.value)
    found = infer_device(facts, node, role)
    if found is not None and not found.safe:
        return found
    if idx is not None:
        return indexed_device(facts, idx, want_object=role == "device-object")
    if fallback_role and fallback_role != role:
        return role_expr(facts, fallback_role)
    return found


def string_prefix_and_quote(src: str) -> tuple[str, str]:
    """('rf', '"') for rf"..." ; the quote is the delimiter's first character."""
    i = 0
    while i < len(src) and src[i] in "rRbBuUfF":
        i += 1
    return src[:i], src[i]


def cuda_tests(test):
    """(test node, tensor or None) for each CUDA test a condition requires (through `and`):
    `t.is_cuda` and `t.device.type == "cuda"` (with the tensor), `device.type == "cuda"` and
    `config.device_type == "cuda"` (without one)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for v in test.values:
            yield from cuda_tests(v)
        return
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        if not platform_object(test.value):
            yield test, test.value
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        left, right = test.left, test.comparators[0]
        if isinstance(right, ast.Constant) and right.value == "cuda" \
                and isinstance(left, ast.Name) and left.id == "device_type":
            yield test, None
            return
        if not (isinstance(right, ast.Constant) and right.value == "cuda"
                and isinstance(left, ast.Attribute)):
            return
        if left.attr == "type" and isinstance(left.value, ast.Attribute) \
                and left.value.attr == "device":
            yield test, left.value.value
        elif left.attr == "device_type" or (left.attr == "type" and _devicey(left.value)):
            yield test, None



def platform_object(expr) -> bool:
    """`get_platform()`, `current_platform`, `self.platform`: an object named for the platform,
    whose `is_cuda` is the platform's query (a property), not a tensor's test."""
    if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
        expr = expr.func
    name = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
    return "platform" in name.lower()


def _devicey(expr) -> bool:
    name = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
    return "device" in name.lower()


# names whose presence in a branch body means it guards CUDA-only code
_CUDA_ONLY_NAME = re.compile(r"(?i)cuda|nccl|cutlass|cublas|cudnn|nvtx|cupy|nvml|^_C$|graph")
_CUDA_ONLY_MODULE = re.compile(r"(?i)(^|\.)(nvidia|cuda|cutlass|flashinfer|deep_gemm|cupy|pynvml)"
                               r"(\.|$)|_C$")


# CUDA-only housekeeping with nothing to do elsewhere: `torch.cuda.ipc_collect()` frees the
# memory of CUDA IPC handles other processes released; beside `empty_cache()` it is part of a
# cleanup whose other steps have generic forms, so it does not make the branch CUDA-only (the
# guard stays a finding; its fix is withheld, since the call has no generic form)
_CUDA_HOUSEKEEPING = frozenset({"torch.cuda.ipc_collect"})


def _generic_api(facts, node) -> bool | None:
    """`torch.cuda.X` with a device-generic replacement in the table (or the tensor method
    `.cuda()`) is no reason to keep a branch CUDA-only: the API rules rewrite it. None for
    CUDA housekeeping (`_CUDA_HOUSEKEEPING`): generic only beside such a call."""
    q = facts.qualname(node)
    if q is None or not q.startswith("torch.cuda."):
        return False
    if q in _CUDA_HOUSEKEEPING:
        return None  # generic only beside another step that is (`guards_cuda_only`)
    for rule in ("DL401", "DL402", "DL403", "DL404"):
        if any(e.replacement for e in entries_by_name(rule).get(q, ())):
            return True
    return False


def _stored(nodes) -> set:
    return {n.id for top in nodes for n in ast.walk(top)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _introduced_names(facts, body) -> set:
    """The names the statements introduce (`cuda_tensor = torch.randn(...)`, loop and `with
    ... as` targets) and the code before them in the same function (or module) does not bind:
    such a name is only a label of what the body builds, which is walked too. A name bound
    before (a per-device account, `cuda_use = 0` ... `cuda_use += n`) is the surrounding
    code's own record of CUDA and stays evidence."""
    names = _stored(body)
    if not any(_CUDA_ONLY_NAME.search(n) for n in names):
        return names
    scope = facts.tree_parent(body[0])
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Module)):
        scope = facts.tree_parent(scope)
    first = body[0].lineno
    before = [n for n in ast.walk(scope if scope is not None else facts.tree)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < first]
    return names - _stored(before)


def guards_cuda_only(facts, body) -> bool:
    """The body uses CUDA-only code (so the branch guards it), or only rejects the input. A
    name the body introduces is no evidence (`cuda_tensor = torch.randn(4, device="cuda")` is
    a tensor like any other); the value bound to it is."""
    if len(body) == 1 and isinstance(body[0], ast.Raise):
        return True
    local = _introduced_names(facts, body)
    generic = set()
    housekeeping = []
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Attribute):
                g = _generic_api(facts, n)
                if g:
                    generic.update(id(x) for x in ast.walk(n))
                elif g is None:
                    housekeeping.append(n)
    if generic:
        for n in housekeeping:
            generic.update(id(x) for x in ast.walk(n))
    for stmt in body:
        for n in ast.walk(stmt):
            if id(n) in generic:
                continue
            if isinstance(n, ast.ImportFrom) and n.module and _cuda_only_module(n.module):
                return True
            if isinstance(n, ast.Import) and any(_cuda_only_module(a.name) for a in n.names):
                return True
            if isinstance(n, ast.Attribute):
                if n.attr == "cuda":
                    if not _is_method_call(stmt, n):
                        return True  # torch.cuda.* inside the branch
                elif _CUDA_ONLY_NAME.search(n.attr):
                    return True
            elif isinstance(n, ast.Name) and n.id not in local and _CUDA_ONLY_NAME.search(n.id):
                return True
    return False


def _cuda_only_module(name: str) -> bool:
    """A CUDA-only library, or a module whose file is CUDA-only by its name (a part of the
    dotted name holding one of `devlint/data/cuda_only.toml`'s stems as a "_"-separated word,
    `pkg.ops.gemm.cutedsl_bf16_gemm`: CuTe DSL kernels), as `cuda-only-module` judges it:
    CUDA graphs have generic forms (torch.xpu.XPUGraph), so `pkg.cuda_graph_runner` is none."""
    if _CUDA_ONLY_MODULE.search(name):
        return True
    from devlint.evidence.vocabulary import _cuda_only_defaults, _names_cuda_stem

    stem_re = _cuda_only_defaults()[0][1]
    return any(_names_cuda_stem(stem_re, part.lower()) for part in name.split("."))


def _is_method_call(stmt, attr) -> bool:
    """`x.cuda(...)`: the tensor method, which DL102 rewrites to `.to(...)`."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.Call) and n.func is attr:
            return True
    return False


