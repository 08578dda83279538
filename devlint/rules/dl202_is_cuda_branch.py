"""DL202 is-cuda-branch."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.engine.fixkit import make_fix, role_expr
from devlint.rules._device import cuda_tests, guards_cuda_only, skipped
from devlint.rules.base import Invalid, Rule, Valid


class IsCudaBranch(Rule):
    """
    ## What it does
    Flags `if t.is_cuda:` and `if t.device.type == "cuda":` when the branch chooses behaviour
    that is not CUDA-specific: the body moves tensors, builds masks, picks a code path that
    works on any accelerator.

    ## Why is this bad?
    On XPU, NPU or MPS the test is false and the code takes the CPU path, silently: tensors stay
    on the CPU or the slow fallback runs. A branch that guards CUDA-only code (CUDA graphs,
    NVTX, a CUDA kernel, `torch.cuda` calls without a generic form) is fine and not flagged.

    ## Example
    ```python
    if xs_pad.is_cuda:
        mask = mask.cuda()
    ```

    Use instead:
    ```python
    if xs_pad.device.type != "cpu":
        mask = mask.to(xs_pad.device)
    ```

    ## Fix
    The test becomes the profile's accelerator-tensor test (every accelerator, still not the
    CPU).

    ## Fix safety
    Unsafe: on non-CUDA accelerators the other branch used to run; the fix changes which
    branch runs there (that is its purpose, but needs a human look).

    ## Profiles
    - `torch`: `t.device.type != "cpu"`.
    - `vllm`: `t.is_cuda or t.is_xpu`.
    """

    code = "DL202"
    name = "is-cuda-branch"
    summary = "Branch on `is_cuda` chooses device-generic behaviour"

    valid = [
        Valid("if t.is_cuda:\n    torch.cuda.nvtx.range_push('x')\n"),
        Valid("if x.is_cuda:\n    out = ops.cuda_kernel(x)\nelse:\n    out = ref(x)\n"),
        Valid("if t.is_cuda or t.is_xpu:\n    m = m.to(t.device)\n"),
        Valid('if x.device.type == "cuda":\n    g = torch.cuda.CUDAGraph()\n'),
        Valid('if current_platform.is_cuda() and h.is_cuda:\n    out = mm(h)\n'),
        Valid('if d.type == "cuda":\n    n = 1\nelse:\n    raise ValueError(d)\n'),
        Valid('if x.is_cuda:\n    from pkg.nvidia.ops import fused\n    f = fused\n'),
        Valid('if d.type == "cuda" and not current_platform.is_cuda():\n    raise ValueError(d)\n'),
    ]
    invalid = [
        Invalid("def f(xs_pad, mask):\n    if xs_pad.is_cuda:\n        mask = mask.to(xs_pad.device)\n",
                'def f(xs_pad, mask):\n    if xs_pad.device.type != "cpu":\n        mask = mask.to(xs_pad.device)\n'),
        Invalid("import torch\n\n\ndef f(self, device_type):\n    if device_type == 'cuda':\n"
                "        self.stream = torch.cuda.Stream()\n", None, count=1),
        Invalid('def f(cfg, eager):\n    if cfg.device_type == "cuda" and eager:\n        warn_slow()\n', None),
        Invalid('def f(x, y):\n    if x.device.type == "cuda":\n        y = y.pin_memory()\n',
                'def f(x, y):\n    if x.is_cuda or x.is_xpu:\n        y = y.pin_memory()\n',
                profile="vllm"),
    ]

    def check(self, facts):
        if facts.cuda_alike:
            return
        for stmt in facts.ifs:
            if skipped(facts, stmt, api=True):
                continue
            tests = list(cuda_tests(stmt.test))
            if not tests or guards_cuda_only(facts, stmt.body) or _asks_platform(facts, stmt.test):
                continue
            if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.Raise):
                continue  # `if cuda: ... else: raise`: an assertion in disguise, not a choice
            for test, tensor in tests:
                fix = None
                expr = None if tensor is None else role_expr(
                    facts, "accelerator-tensor-test", facts.source(tensor))
                if expr is not None:
                    text = expr.text if test is stmt.test or " or " not in expr.text \
                        else f"({expr.text})"
                    s, e = facts.span(test)
                    fix = make_fix(facts, f"Test for any accelerator: `{text}`",
                                   [Edit(s, e, text)], expr, safe=False)
                yield self.diagnostic(facts, test, f"`{facts.source(test)}` picks the CPU path on "
                                      "every non-CUDA accelerator", fix)


def _asks_platform(facts, test) -> bool:
    """The same condition also asks the platform (`current_platform.is_cuda()`,
    `torch.cuda.is_available()`): the branch is CUDA-specific on purpose."""
    for n in ast.walk(test):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr.startswith("is_") and not n.args:
            owner = facts.qualname(n.func.value) or facts.source(n.func.value)
            if owner.endswith(("current_platform", "torch.cuda")):
                return True
    return False


RULE = IsCudaBranch
