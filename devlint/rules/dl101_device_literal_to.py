"""DL101 device-literal-to."""
from __future__ import annotations

import ast

from devlint.analysis.fixkit import make_fix
from devlint.analysis.infer import infer_device
from devlint.rules._device import device_for_literal, device_strings, skipped
from devlint.rules.base import Invalid, Rule, Valid


class DeviceLiteralTo(Rule):
    """
    ## What it does
    Flags `.to(...)` calls whose target device is a CUDA literal: `x.to("cuda")`,
    `x.to("cuda:0", non_blocking=True)`, `x.to(device="cuda")`, `model.to(torch.device("cuda"))`.

    ## Why is this bad?
    The value can only ever land on an NVIDIA (or ROCm) GPU. On Intel XPU, Ascend NPU, Apple MPS
    or a CPU-only machine the call raises (`Torch not compiled with CUDA enabled`), even when the
    code around it is device-generic.

    ## Example
    ```python
    kv_cache = kv_cache_cpu.to("cuda", non_blocking=True)
    inject_kv_into_layer(kv_cache_layer, kv_cache, slot_mapping)
    ```

    Use instead:
    ```python
    kv_cache = kv_cache_cpu.to(kv_cache_layer.device, non_blocking=True)
    inject_kv_into_layer(kv_cache_layer, kv_cache, slot_mapping)
    ```

    ## Fix
    The device is inferred from the code around the call, in order: the destination tensor the
    moved value is written into (`dst.copy_(x)`, `dst[i] = x`, `f(dst, x)`), a `device` parameter
    or local, `self.device` when the class sets it, a tensor whose `.device` the function already
    reads, and last the profile's platform device.

    ## Fix safety
    A device taken from the surrounding code (the first four sources) is an unsafe fix: it is
    almost always what the author meant, but needs a human look. The profile's platform device
    is a safe fix: on a CUDA machine it is the same device.

    ## Profiles
    - `torch`: `torch.accelerator.current_accelerator()` (`None` on a CPU-only machine, which
      `.to()` treats as "stay where you are").
    - `vllm`: `current_platform.device_type`.
    """

    code = "DL101"
    name = "device-literal-to"
    summary = "Hardcoded CUDA device passed to `.to()`"

    valid = [
        # a private helper only a test that is always skipped runs (not-a-device)
        Valid('import pytest\n\n\ndef _run_old_torch(rank):\n    x = make().to("cuda")\n\n\n'
              '@pytest.mark.skip(reason="torch 1.11 only")\ndef test_old_torch():\n'
              '    spawn(_run_old_torch, 1)\n', path="tests/test_codegen.py"),
        # the CUDA arm of a ladder written with a project's availability helpers
        Valid('if is_torch_npu_available():\n    x = x.to("npu")\n'
              'elif is_torch_cuda_available():\n    x = x.to("cuda")\n'),
        # a function named for AMD's stack: "cuda" is the HIP device there (hip-device)
        Valid('def forward_hip(self, x):\n    return self.kernel(x.to("cuda"))\n'),
        Valid("x = x.to(y.device)\n"),
        Valid("x = x.to(torch.float16)\n"),
        Valid('from vllm.platforms import current_platform\nif current_platform.is_cuda():\n    x = x.to("cuda")\n'),
        Valid('x = x.to("cpu")\n'),
        Valid('print("move it with x.to(\'cuda\')")\n'),
        Valid('x = x.to("cuda") if current_platform.is_cuda() else x\n'),
        # under a tensor's own CUDA test (cuda-guard): the test is DL202's finding, whose fix
        # moves the body to `xs_pad.device` with it
        Valid('def f(xs_pad, mask):\n    if xs_pad.is_cuda:\n        mask = mask.to("cuda")\n'
              '    return mask\n'),
        Valid('def f(x, y):\n    if y.device.type == "cuda":\n        x = x.to("cuda")\n'),
    ]
    invalid = [
        # ... but not one whose name negates it or names another accelerator too
        Invalid('def forward_non_hip(self, x):\n    return self.kernel(x.to("cuda"))\n',
                'import torch\ndef forward_non_hip(self, x):\n    return self.kernel(x.to('
                'torch.accelerator.current_accelerator() if torch.accelerator.is_available() '
                'else "cpu"))\n'),
        # ... but a test that is only skipped somewhere still runs it
        Invalid('import pytest\n\n\ndef _run_new_torch(rank):\n    x = make().to("cuda")\n\n\n'
                '@pytest.mark.skipif(OLD, reason="torch 1.12+")\ndef test_new_torch():\n'
                '    spawn(_run_new_torch, 1)\n',
                'import pytest\nimport torch\n\n\ndef _run_new_torch(rank):\n'
                '    x = make().to(torch.accelerator.current_accelerator() if '
                'torch.accelerator.is_available() else "cpu")\n\n\n'
                '@pytest.mark.skipif(OLD, reason="torch 1.12+")\ndef test_new_torch():\n'
                '    spawn(_run_new_torch, 1)\n', path="tests/test_codegen.py"),
        Invalid(
            'import torch\n\n\ndef load(dst, src):\n    src_gpu = src.to("cuda", non_blocking=True)\n'
            '    dst.copy_(src_gpu)\n',
            'import torch\n\n\ndef load(dst, src):\n    src_gpu = src.to(dst.device, non_blocking=True)\n'
            '    dst.copy_(src_gpu)\n'),
        Invalid(
            'import torch\nx = torch.ones(2).to("cuda")\n',
            'import torch\n'
            'x = torch.ones(2).to(torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        Invalid(
            'import torch as th\nx = th.ones(2).to(device="cuda:1")\n',
            'import torch as th\n'
            'x = th.ones(2).to(device=th.device(th.accelerator.current_accelerator().type if th.accelerator.is_available() else "cpu", 1))\n'),
        Invalid(
            'import torch\nx = torch.ones(2).to("cuda")\n',
            'import torch\nfrom vllm.platforms import current_platform\n'
            'x = torch.ones(2).to(current_platform.device_type)\n',
            profile="vllm"),
        Invalid(
            'import torch\n\n\ndef f(x, device):\n    return x.to(torch.device("cuda"))\n',
            'import torch\n\n\ndef f(x, device):\n    return x.to(device)\n'),
    ]

    def check(self, facts):
        for node in device_strings(facts):
            call = self._to_call_of(facts, node)
            if call is None or skipped(facts, node):
                continue
            expr = device_for_literal(facts, node, "device")
            yield self._finding(facts, node, node, expr)
        for call in facts.calls:
            q = facts.qualname(call.func)
            if q != "torch.device" or not call.args or len(call.args) > 1:
                continue
            arg = call.args[0]
            if not (isinstance(arg, ast.Constant) and arg.value in ("cuda",)):
                continue
            if self._to_call_of(facts, call) is None or skipped(facts, call):
                continue
            expr = infer_device(facts, call, "device-object")
            yield self._finding(facts, call, call, expr)

    @staticmethod
    def _to_call_of(facts, node):
        par = facts.get_parent(node)
        if isinstance(par, ast.keyword):
            if par.arg != "device":
                return None
            call = facts.get_parent(par)
        else:
            call = par
            if not isinstance(call, ast.Call) or not call.args or call.args[0] is not node:
                return None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr == "to":
            return call
        return None

    def _finding(self, facts, node, replaced, expr):
        s, e = facts.span(replaced)
        fix = None
        if expr is not None:
            fix = make_fix(facts, f"Move to `{expr.text}` ({expr.evidence})",
                           [self.edit(s, e, expr.text)], expr)
        return self.diagnostic(facts, (s, e),
                               f"Hardcoded CUDA device `{facts.text[s:e]}` passed to `.to()`", fix)

    @staticmethod
    def edit(s, e, text):
        from devlint.diagnostics import Edit

        return Edit(s, e, text)


RULE = DeviceLiteralTo
