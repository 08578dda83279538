"""DL102 cuda-method."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import bare, make_fix
from devlint.analysis.infer import infer_device
from devlint.rules._device import indexed_device, skipped
from devlint.rules.base import Invalid, Rule, Valid

_KWARGS = {"device", "non_blocking", "memory_format"}


class CudaMethod(Rule):
    """
    ## What it does
    Flags `.cuda()` calls on tensors and modules: `x.cuda()`, `module.cuda(non_blocking=True)`,
    `x.cuda(i)`.

    ## Why is this bad?
    `.cuda()` exists only for CUDA devices. The same code on Intel XPU, Ascend NPU, Apple MPS or a
    CPU-only machine raises, although `.to(device)` would have worked everywhere.

    ## Example
    ```python
    def pad_mask(xs_pad, mask):
        return mask.cuda() & (xs_pad.device.index >= 0)
    ```

    Use instead:
    ```python
    def pad_mask(xs_pad, mask):
        return mask.to(xs_pad.device) & (xs_pad.device.index >= 0)
    ```

    ## Fix
    `.cuda(...)` becomes `.to(<device>, ...)` keeping `non_blocking` and `memory_format`. The
    device is inferred like DL101's: the destination tensor, a `device` in scope, `self.device`, a tensor whose `.device` the function
    reads, else the profile's device. `.cuda(i)` keeps the index: `.to(torch.device(<type>, i))`.

    ## Fix safety
    Unsafe when the device comes from the surrounding code; safe for the profile's device.

    ## Profiles
    - `torch`: `.to(torch.accelerator.current_accelerator())`.
    - `vllm`: `.to(current_platform.device_type)`.
    """

    code = "DL102"
    name = "cuda-method"
    summary = "`.cuda()` pins a tensor or module to CUDA"

    valid = [
        Valid("x = x.to(device)\n"),
        # on ROCm `.cuda()` moves to the AMD GPU (rocm-guard): a ROCm-only branch, the tests
        # of a class whose set-up skips unless ROCm
        Valid("import torch\n\n\ndef f(x):\n    if current_platform.is_rocm():\n"
              "        x = x.cuda()\n    return x\n"),
        Valid('import torch\n\n\nclass TestSparse(TestCase):\n    def setUp(self):\n'
              '        if not is_ROCM():\n            self.skipTest("hipSPARSELt path requires ROCm")\n'
              '\n    def test_x(self):\n        a = torch.randn(4).cuda()\n'),
        Valid("from vllm.platforms import current_platform\nif current_platform.is_cuda():\n    x = x.cuda()\n"),
        # under a tensor's own CUDA test (cuda-guard): DL202 reports the test and moves the
        # body to the tensor's device with it
        Valid("def f(xs_pad, mask):\n    if xs_pad.is_cuda:\n        mask = mask.cuda()\n"),
        Valid("import torch\nn = torch.cuda.device_count()\n"),
        Valid("class A:\n    def cuda(self):\n        return self\n"),
        Valid("x = x.cuda  # the bound method, not a call\n"),
        # a helper that shares tensors through CUDA IPC is CUDA-only (the helper, not its file)
        Valid('from torch.multiprocessing.reductions import reduce_tensor\n\n\n'
              'def share(t):\n    return reduce_tensor(t.cuda())\n'),
    ]
    invalid = [
        Invalid("import torch\nx = torch.ones(2).cuda()\n",
                'import torch\n'
                'x = torch.ones(2).to(torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        Invalid("def f(x, device):\n    return x.cuda(non_blocking=True)\n",
                "def f(x, device):\n    return x.to(device, non_blocking=True)\n"),
        Invalid("import torch\nx = torch.ones(2).cuda(1)\n",
                'import torch\n'
                'x = torch.ones(2).to(torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", 1))\n'),
        Invalid("x = load()['t'].cuda()\n",
                "from vllm.platforms import current_platform\n"
                "x = load()['t'].to(current_platform.device_type)\n", profile="vllm"),
        # a name saying it moves data to CUDA names the hardcoding, not a CUDA-only stack
        Invalid("def _tensors_to_cuda(args, device):\n    return [x.cuda() for x in args]\n",
                "def _tensors_to_cuda(args, device):\n    return [x.to(device) for x in args]\n"),
        # limit: one IPC helper nested in a trainer says nothing of the trainer
        Invalid('from torch.multiprocessing.reductions import reduce_tensor\n\n\n'
                'def train(model, t):\n    def share(x):\n        return reduce_tensor(x)\n'
                '    model = model.cuda()\n    return share(t), model\n',
                'from torch.multiprocessing.reductions import reduce_tensor\nimport torch\n\n\n'
                'def train(model, t):\n    def share(x):\n        return reduce_tensor(x)\n'
                '    model = model.to(torch.accelerator.current_accelerator() '
                'if torch.accelerator.is_available() else "cpu")\n'
                '    return share(t), model\n'),
    ]

    def check(self, facts):
        for call in facts.calls:
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "cuda"):
                continue
            q = facts.qualname(func.value) or ""
            if q == "torch" or q.startswith("torch."):
                continue  # `torch.cuda()` is no tensor method
            if len(call.args) > 1 or any(k.arg not in _KWARGS for k in call.keywords):
                continue
            if skipped(facts, call):
                continue
            yield self._finding(facts, call, func)

    def _finding(self, facts, call, func):
        _, fend = facts.span(func)
        _, cend = facts.span(call)
        name_start = fend - len("cuda")
        dev_arg = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "device"), None)
        others = [facts.source(k) for k in call.keywords if k.arg != "device"]
        if dev_arg is None:
            expr = infer_device(facts, call, "device")
            dev_text = bare(expr.text) if expr else None
        elif "device" in facts.source(dev_arg):
            expr = None
            dev_text = facts.source(dev_arg)
        else:
            expr = indexed_device(facts, facts.source(dev_arg))
            dev_text = expr.text
        fix = None
        if dev_text is not None:
            new = "to(" + ", ".join([dev_text, *others]) + ")"
            why = expr.evidence if expr else f"the device `{dev_text}` it was given"
            fix = make_fix(facts, f"Use `.to({dev_text})` ({why})",
                           [Edit(name_start, cend, new)], expr)
        return self.diagnostic(facts, (name_start, cend),
                               f"`.{facts.text[name_start:cend]}` pins the value to CUDA", fix)


RULE = CudaMethod
