"""DL106 cuda-or-cpu-fallback."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix, role_expr
from devlint.rules._device import skipped
from devlint.rules.base import Invalid, Rule, Valid

_FALLBACKS = ("cpu", None)


class CudaOrCpuFallback(Rule):
    """
    ## What it does
    Flags the "CUDA if available, else CPU" idiom: `"cuda" if torch.cuda.is_available() else
    "cpu"`, its `torch.device(...)` form, and the same choice made on a platform query
    (`"cuda" if current_platform.is_cuda() else None`).

    ## Why is this bad?
    On an XPU, NPU or MPS machine the test is false and the code silently runs on the CPU:
    nothing fails, it is just many times slower, and tests that should exercise the accelerator
    do not.

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ```

    Use instead:
    ```python
    device = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
    ```

    ## Fix
    The whole choice becomes the profile's accelerator-or-CPU expression: the device type string
    for string arms, the device object for `torch.device(...)` arms.

    ## Fix safety
    Safe when the fallback is the CPU (a CUDA machine gets the same device, a CPU-only machine the
    CPU). Unsafe when the fallback is `None`: on a machine without CUDA the value becomes the
    platform's device instead of `None`.

    ## Profiles
    - `torch`: `(torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")).type`
      (target-torch 2.7+; 2.6 asks `torch.accelerator.is_available()` first; none below 2.6).
    - `vllm`: `current_platform.device_type`.
    """

    code = "DL106"
    name = "cuda-or-cpu-fallback"
    summary = "CUDA-or-CPU fallback ignores other accelerators"

    valid = [
        Valid('d = "cuda" if is_cuda_alike() else "xpu"\n'),
        Valid('import torch\nn = 2 if torch.cuda.is_available() else 1\n'),
        Valid('d = "cpu" if args.cpu else "xpu"\n'),
    ]
    invalid = [
        Invalid('import torch\nd = "cuda" if torch.cuda.is_available() else "cpu"\n',
                'import torch\n'
                'd = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'),
        Invalid('import torch\nd = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n',
                'import torch\nfrom vllm.platforms import current_platform\n'
                'd = torch.device(current_platform.device_type)\n', profile="vllm"),
        Invalid('import torch\nd = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n',
                'import torch\n'
                'd = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")\n'),
        Invalid('from vllm.platforms import current_platform\n'
                'CUDA_DEVICE = "cuda" if current_platform.is_cuda() else None\n',
                'from vllm.platforms import current_platform\n'
                'CUDA_DEVICE = current_platform.device_type\n', profile="vllm"),
        Invalid('import torch\nd = torch.device("cuda" if args.gpu else "cpu")\n',
                'import torch\n'
                'd = torch.device((torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu") if args.gpu else "cpu")\n'),
        Invalid('import torch\nd = "cpu" if not torch.cuda.is_available() else "cuda"\n',
                'import torch\n'
                'd = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'),
    ]

    def check(self, facts):
        if facts.cuda_only:
            return
        for node in facts.ifexps:
            sense = _availability_test(facts, node.test)
            if sense == 0:
                found = self._user_choice(facts, node)
                if found is not None:
                    yield found
                continue
            cuda_arm, other = (node.body, node.orelse) if sense > 0 else (node.orelse, node.body)
            kind = _cuda_value(facts, cuda_arm)
            fallback = _fallback(facts, other)
            if kind is None or fallback is False:
                continue
            if skipped(facts, node):
                continue
            expr = role_expr(facts, "device-object" if kind == "object" else "device-type")
            s, e = facts.span(node)
            fix = make_fix(facts, f"Use `{expr.text}`", [Edit(s, e, expr.text)], expr,
                           safe=fallback == "cpu")
            yield self.diagnostic(facts, node, "Falls back to the CPU on every non-CUDA "
                                  "accelerator", fix)


    def _user_choice(self, facts, node):
        """`"cuda" if args.use_gpu else "cpu"`: the choice is the user's, the device type is not
        (on an XPU machine "use the GPU" must mean the XPU). Only the CUDA arm changes."""
        for cuda_arm, other in ((node.body, node.orelse), (node.orelse, node.body)):
            if _cuda_value(facts, cuda_arm) == "str" and _fallback(facts, other) == "cpu":
                if skipped(facts, cuda_arm):
                    return None
                t = role_expr(facts, "device-type")
                s, e = facts.span(cuda_arm)
                fix = make_fix(facts, f"Use `{t.text}` for the accelerator arm",
                               [Edit(s, e, t.text)], t)
                return self.diagnostic(facts, cuda_arm, "The accelerator arm of this choice is "
                                       "hardcoded to CUDA", fix)
        return None


def _availability_test(facts, test) -> int:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -_availability_test(facts, test.operand)
    if isinstance(test, ast.Call):
        q = facts.qualname(test.func) or ""
        if q == "torch.cuda.is_available":
            return 1
        f = test.func
        if isinstance(f, ast.Attribute) and f.attr in ("is_cuda", "is_cuda_alike") and \
                (facts.qualname(f.value) or facts.source(f.value)).endswith("current_platform"):
            return 1
    return 0


def _cuda_value(facts, node):
    if isinstance(node, ast.Constant) and node.value == "cuda":
        return "str"
    if isinstance(node, ast.Call) and facts.qualname(node.func) == "torch.device" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
            and node.args[0].value == "cuda":
        return "object"
    return None


def _fallback(facts, node):
    if isinstance(node, ast.Constant) and node.value in _FALLBACKS:
        return "cpu" if node.value == "cpu" else "none"
    if isinstance(node, ast.Call) and facts.qualname(node.func) == "torch.device" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
            and node.args[0].value == "cpu":
        return "cpu"
    return False


RULE = CudaOrCpuFallback
