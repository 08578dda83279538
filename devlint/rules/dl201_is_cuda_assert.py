"""DL201 is-cuda-assert."""
from __future__ import annotations

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix, role_expr
from devlint.rules._device import cuda_tests, skipped
from devlint.rules.base import Invalid, Rule, Valid


class IsCudaAssert(Rule):
    """
    ## What it does
    Flags assertions that a tensor lives on CUDA: `assert t.is_cuda`,
    `assert t.device.type == "cuda"`.

    ## Why is this bad?
    The assertion usually means "this tensor must be on an accelerator, not the CPU", but it
    rejects every non-NVIDIA accelerator: an XPU tensor has `is_cuda == False`, so callers fail
    before the (often Triton, device-generic) kernel runs.

    ## Example
    ```python
    assert state.is_cuda
    ```

    Use instead (vllm profile):
    ```python
    assert state.is_cuda or state.is_xpu
    ```

    ## Fix
    The test is widened to accept every accelerator the profile targets while still rejecting
    CPU tensors.

    ## Fix safety
    Safe: on CUDA the assertion passes and fails exactly as before; it only stops rejecting other
    accelerators.

    ## Profiles
    - `torch`: `t.device.type != "cpu"`.
    - `vllm`: `t.is_cuda or t.is_xpu`.
    """

    code = "DL201"
    name = "is-cuda-assert"
    summary = "Assertion accepts only CUDA tensors"

    valid = [
        Valid("assert state.is_cuda or state.is_xpu\n"),
        Valid('assert t.device.type != "cpu"\n'),
        Valid("assert not t.is_cuda\n"),
        Valid("if t.is_cuda:\n    pass\n"),
    ]
    invalid = [
        Invalid("def g(state):\n    assert state.is_cuda\n",
                "def g(state):\n    assert state.is_cuda or state.is_xpu\n", profile="vllm"),
        Invalid("def g(state):\n    assert state.is_cuda, 'need gpu'\n",
                "def g(state):\n    assert state.device.type != \"cpu\", 'need gpu'\n"),
        Invalid('def g(x, y):\n    assert x.is_cuda and y.ndim == 2\n',
                'def g(x, y):\n    assert (x.is_cuda or x.is_xpu) and y.ndim == 2\n', profile="vllm"),
        Invalid('def g(x):\n    assert x.device.type == "cuda"\n',
                'def g(x):\n    assert x.device.type != "cpu"\n'),
    ]

    def check(self, facts):
        if facts.cuda_alike:
            return
        for stmt in facts.asserts:
            if skipped(facts, stmt, api=True):
                continue
            for node, tensor in cuda_tests(stmt.test):
                if tensor is None:
                    continue  # a device-type string, not a tensor: nothing to widen
                expr = role_expr(facts, "accelerator-tensor-test", facts.source(tensor))
                if expr is None:
                    continue
                text = expr.text
                if node is not stmt.test and (" or " in text or " and " in text):
                    text = f"({text})"
                s, e = facts.span(node)
                fix = make_fix(facts, f"Accept any accelerator: `{text}`", [Edit(s, e, text)],
                               expr)
                yield self.diagnostic(facts, (s, e), f"`assert {facts.text[s:e]}` rejects "
                                      f"non-CUDA accelerators", fix)


RULE = IsCudaAssert
