"""DL201 is-cuda-assert."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix, role_expr
from devlint.analysis.walk import statements
from devlint.rules._device import cuda_tests, skipped
from devlint.rules.base import Invalid, Rule, Valid

_OTHER_TYPES = {"xpu", "npu", "mps", "hpu", "mlu", "musa", "mtia", "xla"}


class IsCudaAssert(Rule):
    """
    ## What it does
    Flags assertions that a tensor lives on CUDA: `assert t.is_cuda`,
    `assert t.device.type == "cuda"`, and the same of an object's device attribute
    (`assert pipe._execution_device.type == "cuda"`), and unittest's
    `self.assertTrue(device == "cuda")` of a device-holding name; and `t.is_cuda` collected into
    a flag that a raise then enforces (`ok &= t.is_cuda` ... `if not ok: raise ...`).

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
        # a local device asserted to be CUDA states what the code below needs
        Valid('def g(device):\n    assert device.type == "cuda"\n'),
        Valid('assert pipe._execution_device.type != "cpu"\n'),
        Valid('assert pipe._execution_device.type in ("cuda", "xpu")\n'),
        Valid('self.assertTrue(all(d in ("cuda", "xpu") for d in devices))\n'),
        Valid('self.assertTrue(backend == "cuda")\n'),
        # a flag nothing enforces: just a value
        Valid('def f(ts):\n    ok = True\n    for t in ts:\n        ok &= t.is_cuda\n    return ok\n'),
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
        Invalid('def test_to(self, devices):\n'
                '    self.assertTrue(all(device == "cuda" for device in devices))\n',
                'def test_to(self, devices):\n'
                '    self.assertTrue(all(device != "cpu" for device in devices))\n'),
        # the requirement collected in a flag that a raise enforces
        Invalid('def is_on_gpu(tensors):\n    on_gpu = True\n    for t in tensors:\n'
                '        on_gpu &= t.is_cuda\n    if not on_gpu:\n        raise RuntimeError("gpu")\n'
                '    return on_gpu\n',
                'def is_on_gpu(tensors):\n    on_gpu = True\n    for t in tensors:\n'
                '        on_gpu &= t.device.type != "cpu"\n    if not on_gpu:\n'
                '        raise RuntimeError("gpu")\n    return on_gpu\n'),
        # an object's device attribute, like a tensor's `.device`
        Invalid('def test_offload(pipe):\n    assert pipe._execution_device.type == "cuda"\n',
                'def test_offload(pipe):\n    assert pipe._execution_device.type != "cpu"\n'),
    ]

    def check(self, facts):
        if facts.cuda_alike:
            return
        yield from self._assert_true_calls(facts)
        yield from self._required_flags(facts)
        for stmt in facts.asserts:
            if skipped(facts, stmt, api=True):
                continue
            for node, tensor in cuda_tests(stmt.test):
                if tensor is None:
                    found = self._device_attribute(facts, node)
                    if found is not None:
                        yield found
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

    def _required_flags(self, facts):
        """`ok &= t.is_cuda` ... `if not ok: raise ...`: an `is_cuda` requirement collected
        into a flag that a raise then enforces, an assertion in two steps."""
        if ".is_cuda" not in facts.text or facts.tree is None:
            return
        seen = set()
        for fn in facts.statements():  # the ifs and assignments looked at are statements
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            enforced = set()
            for n in statements(fn):
                if isinstance(n, ast.If) and isinstance(n.test, ast.UnaryOp) \
                        and isinstance(n.test.op, ast.Not) \
                        and isinstance(n.test.operand, ast.Name) and n.body \
                        and isinstance(n.body[-1], ast.Raise):
                    enforced.add(n.test.operand.id)
            if not enforced:
                continue
            for n in statements(fn):
                values = []
                if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.BitAnd) \
                        and isinstance(n.target, ast.Name) and n.target.id in enforced:
                    values = [n.value]
                elif isinstance(n, ast.Assign) and len(n.targets) == 1 \
                        and isinstance(n.targets[0], ast.Name) and n.targets[0].id in enforced:
                    v = n.value
                    values = v.values if isinstance(v, ast.BoolOp) and isinstance(v.op, ast.And) \
                        else [v]
                for v in values:
                    if not (isinstance(v, ast.Attribute) and v.attr == "is_cuda") \
                            or id(v) in seen:
                        continue
                    seen.add(id(v))
                    if facts.where_of(v) is not None and skipped(facts, v, api=True):
                        continue
                    if facts.cuda_only_scope(v) is not None or facts.cuda_only:
                        continue
                    tensor = facts.source(v.value)
                    expr = role_expr(facts, "accelerator-tensor-test", tensor)
                    fix = None
                    if expr is not None:
                        text = expr.text if " or " not in expr.text else f"({expr.text})"
                        fix = make_fix(facts, f"Accept any accelerator: `{text}`",
                                       [Edit(*facts.span(v), text)], expr)
                    yield self.diagnostic(facts, v, f"`{facts.source(v)}` is required (a raise "
                                          "enforces it): rejects non-CUDA accelerators", fix)

    def _assert_true_calls(self, facts):
        """`self.assertTrue(all(d == "cuda" for d in devices))`: a unittest assertion that
        device-holding names (`device`, `*_device`, `device_type`) are CUDA. Not where the
        argument names another device type (a table of backends)."""
        for call in facts.calls:
            f = call.func
            if not (isinstance(f, ast.Attribute) and f.attr == "assertTrue" and call.args):
                continue
            if skipped(facts, call, api=True):
                continue
            arg = call.args[0]
            if any(isinstance(n, ast.Constant) and isinstance(n.value, str)
                   and n.value in _OTHER_TYPES for n in ast.walk(arg)):
                continue
            for n in ast.walk(arg):
                if not (isinstance(n, ast.Compare) and len(n.ops) == 1
                        and isinstance(n.ops[0], ast.Eq)
                        and isinstance(n.comparators[0], ast.Constant)
                        and n.comparators[0].value == "cuda"):
                    continue
                left = n.left.value if isinstance(n.left, ast.Attribute) \
                    and n.left.attr == "type" else n.left
                name = left.attr if isinstance(left, ast.Attribute) else getattr(left, "id", "")
                if "device" not in name.lower():
                    continue
                cs, e = facts.span(n.comparators[0])
                quote = facts.text[cs] if facts.text[cs] in "'\"" else '"'
                text = f" != {quote}cpu{quote}"
                fix = make_fix(facts, f"Accept any accelerator: `{facts.source(n.left)}{text}`",
                               [Edit(facts.span(n.left)[1], e, text)], ())
                s, e = facts.span(n)
                yield self.diagnostic(facts, (s, e), f"`{facts.text[s:e]}` asserted: rejects "
                                      "non-CUDA accelerators", fix)

    def _device_attribute(self, facts, node):
        """`assert pipe._execution_device.type == "cuda"`: an object's device attribute (a
        name ending in `device`) asserted to be CUDA, like a tensor's `.device`. A bare local
        (`assert device.type == "cuda"`) states what the code below needs (a CUDA guard), and
        is not reported."""
        left = node.left
        if not (isinstance(left, ast.Attribute) and left.attr == "type"
                and isinstance(left.value, ast.Attribute)
                and left.value.attr.lower().endswith("device")):
            return None
        fix = None
        expr = role_expr(facts, "accelerator-tensor-test", "x")
        if expr is not None and expr.text.endswith('.device.type != "cpu"'):
            cs, e = facts.span(node.comparators[0])
            quote = facts.text[cs] if facts.text[cs] in "'\"" else '"'
            text = f" != {quote}cpu{quote}"
            fix = make_fix(facts, f"Accept any accelerator: `{facts.source(left)}{text}`",
                           [Edit(facts.span(left)[1], e, text)], ())
        s, e = facts.span(node)
        return self.diagnostic(facts, (s, e), f"`assert {facts.text[s:e]}` rejects non-CUDA "
                               "accelerators", fix)


RULE = IsCudaAssert
