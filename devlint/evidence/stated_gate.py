"""Principle: a test whose skip gate states a CUDA-specific subject is CUDA's on purpose.

A skip gate that asks for CUDA (`skipif(not current_platform.is_cuda(), reason="needs the
CUDA RoPE")`, `skipUnless(torch.cuda.is_available(), "CUDA graphs")`, `reason="fused VAE
kernels need CUDA"`) and whose reason names what the test exercises, a thing that exists only
on CUDA, says why the test is CUDA's: its subject is that thing. An accelerator-generic gate
would run it where the thing is not (its fix would run a CUDA-only feature elsewhere), and
its `device="cuda"`, `.cuda()` and `torch.cuda` calls serve that thing (the rubric's
"CUDA-specific on purpose"). So (a) the gate is no DL203 finding, and (b) the test's body,
the class's for a class gate, the bodies of the module's tests for a `pytestmark`, is
established CUDA, as under a gate that is itself a finding.
Evidence: the gate's line (the decorator, the module-level mark bound to a name and applied,
or the `pytestmark`), whose reason states one of:
- "CUDA <thing>", the thing a CUDA feature (graphs, graph capture, `CUDAGraph`, RoPE,
  kernel(s), fusion(s), stream(s), transfer(s), IPC, event(s), extension(s), JIT, op(s)),
  at most two words after "CUDA" (`"requires CUDA decode stream"`, `"CUDA video transfer"`),
  none of them the platform itself (device, GPU, machine, available, support, runtime,
  toolkit, environment, hardware, version, capability, test ...);
- "<thing> need(s)/require(s)/only works on [NVIDIA] CUDA", with a subject of its own that is
  not the test (`"UIntxWeightOnlyConfig requires CUDA"`, `"hybrid_window_attn_h3 kernels need
  NVIDIA CUDA"`), or "requires CUDA for <thing>" where the thing is a name of code
  (`scaled_fp8_quant`, `flash_hub backend`) or a CUDA feature above; "<thing> is CUDA-only";
- an NVIDIA-only hardware or library word: NVIDIA, cuDNN, CUTLASS, CuTe(-DSL), cuBLAS,
  TensorRT, NVLink, NVSHMEM, NVML, an SM architecture or its name (`SM90`, Hopper, Blackwell,
  Ampere): `"requires NVIDIA GPU"`, `"needs an SM90 or SM100 device with the flash-attn-4
  CuTe package"`.
Limits: only the gate's reason text (a literal or the literal parts of an f-string), not the
comments around it; the gate must skip wherever CUDA is absent (its condition asks about CUDA:
a name or string with `cuda`, an NVIDIA compute capability, through `not`/`and`/`or`):
`skipIf(torch.cuda.is_available() and not is_sm_at_least_89(), "Need sm89+")` skips only an
older CUDA GPU and runs on every other accelerator, so it establishes nothing. Generic reasons stay as they are:
"requires CUDA", "CUDA not available", "Skip if not cuda", "needs GPU", "CUDA is required",
"needs 2 CUDA GPUs", "needs CUDA attention" (attention runs on every accelerator), a subject
naming a generic feature ("CPU offload is only available with CUDA", a gate upstream opened to
every accelerator: cross corpus case 010; "fp16 requires CUDA", "Distributed training requires
CUDA", "torch.compile requires CUDA"), a subject that is the test itself or its model
("Test requires CUDA", "This model requires CUDA", "offloading tests require CUDA") or a
check ("CUDA is required for offload check."). A reason that also names another platform
(XPU, NPU, MPS, ROCm, HIP, AMD, an accelerator) states nothing CUDA-only. The gate must
decorate the test or class itself, be a module-level mark bound to a name and applied to it,
or be the module's `pytestmark` (then it covers the module's `test*` functions and `Test*`
classes); a function nested in a test is not covered by its test's gate; a gate read from
another module is `imported-gate`'s.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.library_subject import _call_name, _reason_text

PRINCIPLE = "stated-gate"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_GATES = frozenset({"skipif", "skipIf", "skipUnless", "skip_if", "skip_unless"})
# features that exist only on CUDA where a reason says "CUDA <feature>"
_FEATURES = frozenset({"graph", "graphs", "cudagraph", "cudagraphs", "rope", "kernel",
                       "kernels", "fusion", "fusions", "stream", "streams", "transfer",
                       "transfers", "ipc", "event", "events", "extension", "extensions", "jit",
                       "op", "ops"})
# words that make "CUDA <word>" the platform itself, or end the phrase
_PLATFORM = frozenset({
    "device", "devices", "gpu", "gpus", "machine", "machines", "available", "availability",
    "unavailable", "support", "supported", "runtime", "toolkit", "environment", "env",
    "hardware", "test", "tests", "testing", "version", "versions", "capability", "build",
    "built", "backend", "platform", "rank", "ranks", "card", "cards", "node", "nodes",
    "tensor", "tensors", "memory", "is", "are", "not", "no", "and", "or", "for", "with", "to",
    "required", "requires", "require", "needed", "needs", "need", "only", "on", "in", "a",
    "an", "the", "be", "enabled", "installed", "present", "found", "context", "setup",
    "cuda", "nvidia", "sm", "attention", "autocast"})
# the test itself, or no subject at all, as the subject of "... requires CUDA"
_SELF = frozenset({"test", "tests", "testcase", "case", "cases", "suite", "it", "this",
                   "that", "these", "module", "file", "class", "function", "we", "one",
                   "which", "skip", "skipping", "skipped", "torch", "pytorch", "gpu", "gpus",
                   "device", "devices", "cuda", "benchmark", "benchmarks", "benchmarking",
                   "check", "checks", "run", "runs", "running", "also", "still", "currently",
                   "unit", "e2e", "integration", "example", "examples", "demo",
                   "model", "models"})
# words that make a subject or a "for" object no CUDA-specific thing
# (offloading to the CPU is a generic feature: "CPU offload is only available with CUDA", a
# gate upstream opened to every accelerator, cross corpus 010)
# (nor are reduced precision, distributed training or compilation: "fp16 requires CUDA",
# "Distributed training requires CUDA", "torch.compile requires CUDA" name what every
# accelerator runs)
_NOT_SUBJECT = frozenset({"attention", "test", "tests", "check", "checks", "device",
                          "devices", "gpu", "gpus", "testing", "benchmark", "benchmarking",
                          "cpu", "offload", "offloading", "memory",
                          "fp16", "bf16", "float16", "bfloat16", "half", "precision", "amp",
                          "distributed", "training", "ddp", "fsdp", "compile", "compiled",
                          "compilation", "inductor", "dynamo"})
_OTHER = re.compile(r"(?i)\b(?:xpu|npu|mps|hpu|mlu|musa|xla|tpu|neuron|rocm|hip|amd|intel"
                    r"|ascend|gaudi|accelerators?|habana|mtia)\b")
_NVIDIA = re.compile(r"(?i)\b(?:nvidia|cudnn|cutlass|cublas(?:lt)?|tensorrt|nvlink|nvshmem"
                     r"|nvml|cute(?:[- ]?dsl)?|sm_?\d{2,3}a?|hopper|blackwell|ampere)\b")
_NEEDS = re.compile(
    r"(?i)\b(?:needs?|requires?|only (?:works|runs) (?:on|for|with)|(?:works|runs) only "
    r"(?:on|for|with)|is only (?:available|supported) (?:on|with))\s+(?:an?\s+|the\s+)?"
    r"(?:nvidia\s+)?cuda\b")
_FOR = re.compile(r"(?i)\bcuda\s+(?:is\s+)?(?:required|needed)?\s*for\s+(.+)$")
_ONLY = re.compile(r"(?i)\b(?:is|are|runs?)\s+(?:on\s+)?cuda[- ]only\b")
_WORDS = re.compile(r"[a-z0-9]+")
_CODE_NAME = re.compile(r"[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w+\(\)")
_CUDA_TEST = re.compile(r"(?i)cuda|nvidia|capability|\bsm_?\d|sm_at_least|hopper|blackwell")


def words(text: str) -> list:
    """The lower-case words of a text, runs of letters and digits (`RoPE` -> rope,
    `CUDAGraph` -> cudagraph, `cuda_graph` -> cuda, graph)."""
    return _WORDS.findall(text.lower())


def stated_subject(text: str) -> str | None:
    """What a gate's reason states as the test's CUDA-specific subject (see the module
    docstring), else None."""
    if not text or _OTHER.search(text):
        return None
    ws = words(text)
    for i, w in enumerate(ws):
        if w in ("cudagraph", "cudagraphs"):
            return "CUDA graphs"
        if w != "cuda":
            continue
        for j in range(i + 1, min(i + 4, len(ws))):
            if ws[j] in _FEATURES:
                return "CUDA " + " ".join(ws[i + 1:j + 1])
            if ws[j] in _PLATFORM or ws[j].isdigit():
                break
    m = _NVIDIA.search(text)
    if m:
        return m.group(0)
    m = re.search(r"(?i)([^,;:()]*)\(cuda[- ]only\)", text)
    if m and _own_subject(m.group(1)):
        return m.group(0).strip()
    for clause in re.split(r"[,;:()]|\.\s", text):
        m = _NEEDS.search(clause)
        if m and _own_subject(clause[:m.start()]) and not _toolkit(clause[m.end():]):
            return clause.strip()
        m = _FOR.search(clause)
        if m:  # "requires CUDA for scaled_fp8_quant": the thing is a name of code
            obj = m.group(1).strip()
            ows = words(obj)
            if ows and _CODE_NAME.search(obj) and not _NOT_SUBJECT.intersection(ows):
                return obj
        m = _ONLY.search(clause)
        if m and _own_subject(clause[:m.start()]):
            return clause.strip()
    return None


def _own_subject(before: str) -> bool:
    """The words before "requires CUDA" name a subject of their own: not the test, not the
    platform, not attention (which runs on every accelerator)."""
    ws = [w for w in words(before) if not w.isdigit()]
    return bool(ws) and ws[-1] not in _SELF and not _NOT_SUBJECT.intersection(ws) \
        and not all(w in _SELF | _PLATFORM for w in ws)


def _toolkit(after: str) -> bool:
    """"requires CUDA version 11.4", "... CUDA toolkit": a requirement on the toolkit."""
    ws = words(after)
    return bool(ws) and ws[0] in ("version", "versions", "toolkit", "runtime", "driver")


def requires_cuda(cond, skip: bool) -> bool:
    """The gate skips wherever CUDA is absent: `cond` (true where the test is skipped, with
    `skip`; where it runs, without) holds only with CUDA (`not torch.cuda.is_available()`,
    `not current_platform.is_cuda() or x`, `torch.cuda.device_count() < 2`, `device !=
    "cuda"`; `skipUnless(torch.cuda.is_available() and x)`). Not `skipIf(torch.cuda.
    is_available() and not is_sm_at_least_89())`: it skips only an older CUDA GPU, and runs
    on every other accelerator."""
    if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):
        return requires_cuda(cond.operand, not skip)
    if isinstance(cond, ast.BoolOp):
        parts = [requires_cuda(v, skip) for v in cond.values]
        return any(parts) if isinstance(cond.op, ast.Or) == skip else all(parts)
    if not _CUDA_TEST.search(ast.unparse(cond)):
        return False
    if isinstance(cond, ast.Compare) and len(cond.ops) == 1:
        op, right = cond.ops[0], cond.comparators[0]
        none = isinstance(right, ast.Constant) and right.value is None
        absent = isinstance(op, (ast.NotEq, ast.Lt, ast.LtE)) or (isinstance(op, ast.Is) and none)
        present = isinstance(op, (ast.Eq, ast.Gt, ast.GtE)) or (isinstance(op, ast.IsNot) and none)
        return absent if skip else present
    return not skip and isinstance(cond, (ast.Call, ast.Name, ast.Attribute))


def gate_reason(call, path: str | None) -> Reason | None:
    """The reason for a skip gate call (`skipif`, `skipIf`, `skipUnless`) whose condition asks
    about CUDA and whose reason states a CUDA-specific subject, else None."""
    if not (isinstance(call, ast.Call) and _call_name(call) in _GATES and call.args):
        return None
    if not requires_cuda(call.args[0], skip=_call_name(call) in ("skipif", "skipIf", "skip_if")):
        return None
    text = _reason_text(call, 1)
    subject = stated_subject(text)
    if subject is None:
        return None
    return Reason(PRINCIPLE, f"its gate's reason states a CUDA-specific subject "
                  f"(`{subject[:60]}`: \"{text[:80]}\")", path, call.lineno)


def _marks(tree) -> tuple:
    """(the module's stated skip marks bound to a name: name -> gate call, the stated gate
    of its `pytestmark` or None, the ids of its top-level statements where it has one);
    computed once per tree."""
    cached = getattr(tree, "_devlint_stated_gate", None)
    if cached is not None:
        return cached
    named, module = {}, None
    for st in tree.body:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)):
            continue
        name = st.targets[0].id
        if name == "pytestmark":
            marks = st.value.elts if isinstance(st.value, (ast.List, ast.Tuple)) else [st.value]
            for m in marks:
                m = named.get(m.id) if isinstance(m, ast.Name) else m
                if isinstance(m, ast.Call) and gate_reason(m, None) is not None:
                    module = m
                    break
        elif isinstance(st.value, ast.Call) and gate_reason(st.value, None) is not None:
            named[name] = st.value
    # the module's own top-level scopes (a `pytestmark` covers their tests), by identity
    top = frozenset(id(st) for st in tree.body) if module is not None else frozenset()
    out = (named, module, top)
    try:
        tree._devlint_stated_gate = out
    except AttributeError:
        pass
    return out


def scope_reason(scope, tree, path: str | None) -> Reason | None:
    """Why the test function or class `scope` is CUDA's by its stated gate: a decorator of
    its own (a gate call, or a name bound to one at module level), or the module's
    `pytestmark` for a `test*` function or `Test*` class of the module's top level."""
    if not isinstance(scope, (*_FUNCS, ast.ClassDef)) or tree is None:
        return None
    named = None
    for d in scope.decorator_list:
        if isinstance(d, ast.Call):
            why = gate_reason(d, path)
            if why is not None:
                return why
        elif isinstance(d, ast.Name):
            if named is None:
                named = _marks(tree)[0]
            gate = named.get(d.id)
            if gate is not None:
                return gate_reason(gate, path)
    if not scope.name.startswith("Test" if isinstance(scope, ast.ClassDef) else "test"):
        return None
    _, module, top = _marks(tree)
    if module is not None and id(scope) in top:
        return gate_reason(module, path)
    return None
