"""DL202 is-cuda-branch."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import Expr, make_fix, role_expr
from devlint.evidence.fast_path import fast_path_reason
from devlint.rules._api_table import guard_body_edits, target_of
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
    CPU); a device-type string test (`device_type == "cuda"`) becomes `device_type != "cpu"`.

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
        # a CUDA fast path whose alternative computes the same on the tensor's own device
        Valid("def f(q, k):\n    if q.is_cuda and HAS_TILELANG:\n        return fast(q, k)\n"
              "    return reference(q, k)\n"),
        Valid("def f(h, w):\n    if h.is_cuda and h.dtype == w.dtype:\n"
              "        out = torch.mm(h, w.t(), out_dtype=torch.float32)\n    else:\n"
              "        out = F.linear(h.float(), w.float())\n    return out\n"),
        Valid('if x.device.type == "cuda":\n    g = torch.cuda.CUDAGraph()\n'),
        Valid('if current_platform.is_cuda() and h.is_cuda:\n    out = mm(h)\n'),
        Valid('if d.type == "cuda":\n    n = 1\nelse:\n    raise ValueError(d)\n'),
        Valid('if x.is_cuda:\n    from pkg.nvidia.ops import fused\n    f = fused\n'),
        Valid('if d.type == "cuda" and not current_platform.is_cuda():\n    raise ValueError(d)\n'),
        # the assigned test in a CUDA-only function
        Valid('def setup_nccl(cfg, n):\n    is_gpu = cfg.device_type == "cuda"\n'
              '    if is_gpu and n > 8:\n        enable_chunking()\n'),
        # the assigned test only guards CUDA-only code
        Valid('def f(cfg):\n    on_gpu = cfg.device_type == "cuda"\n    if on_gpu:\n'
              '        torch.cuda.nvtx.range_push("x")\n'),
        # print-only: the test only chooses a message
        Valid('def f(image):\n    if image.is_cuda:\n        logger.warning_once("moving to the CPU")\n'
              '    return image.cpu()\n'),
    ]
    invalid = [
        # the alternative moves to the CPU: no generic path
        Invalid("def f(x):\n    if x.is_cuda:\n        return kernel(x)\n    return ref(x.cpu())\n",
                "def f(x):\n    if x.device.type != \"cpu\":\n        return kernel(x)\n    return ref(x.cpu())\n"),
        Invalid('def f(cfg, n):\n    is_gpu = cfg.device_type == "cuda"\n    if is_gpu and n > 8:\n'
                '        enable_chunking()\n',
                'def f(cfg, n):\n    is_gpu = cfg.device_type != "cpu"\n    if is_gpu and n > 8:\n'
                '        enable_chunking()\n'),
        Invalid("def f(xs_pad, mask):\n    if xs_pad.is_cuda:\n        mask = mask.to(xs_pad.device)\n",
                'def f(xs_pad, mask):\n    if xs_pad.device.type != "cpu":\n        mask = mask.to(xs_pad.device)\n'),
        Invalid("import torch\n\n\ndef f(self, device_type):\n    if device_type == 'cuda':\n"
                "        self.stream = torch.Stream()\n",
                "import torch\n\n\ndef f(self, device_type):\n    if device_type != 'cpu':\n"
                "        self.stream = torch.Stream()\n"),
        Invalid('def f(cfg, eager):\n    if cfg.device_type == "cuda" and eager:\n        warn_slow()\n',
                'def f(cfg, eager):\n    if cfg.device_type != "cpu" and eager:\n        warn_slow()\n'),
        Invalid('def f(x, y):\n    if x.device.type == "cuda":\n        y = y.pin_memory()\n',
                'def f(x, y):\n    if x.is_cuda or x.is_xpu:\n        y = y.pin_memory()\n',
                profile="vllm"),
    ]

    def _assigned_tests(self, facts):
        for node in facts.strings:
            if node.value != "cuda":
                continue
            compare = facts.get_parent(node)
            if not isinstance(compare, ast.Compare) or skipped(facts, node, api=True):
                continue
            ifs = _assigned_test_uses(facts, node, compare)
            if not ifs or any(guards_cuda_only(facts, st.body) or _asks_platform(facts, st.test)
                              for st in ifs):
                continue
            expr = _not_cpu_test(facts, compare)
            if expr is None:
                continue
            s, e = facts.span(compare)
            fix = make_fix(facts, f"Test for any accelerator: `{expr.text}`", [Edit(s, e, expr.text)],
                           expr, safe=False)
            yield self.diagnostic(facts, compare, f"`{facts.source(compare)}` picks the CPU path "
                                  "on every non-CUDA accelerator (it chooses a branch below)", fix)

    def check(self, facts):
        if facts.cuda_alike:
            return
        yield from self._assigned_tests(facts)
        for stmt in facts.ifs:
            if skipped(facts, stmt, api=True):
                continue
            tests = list(cuda_tests(stmt.test))
            if not tests or guards_cuda_only(facts, stmt.body) or _asks_platform(facts, stmt.test):
                continue
            if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.Raise):
                continue  # `if cuda: ... else: raise`: an assertion in disguise, not a choice
            if any(t is not None for _, t in tests) and _fast_path(facts, stmt):
                continue  # a CUDA fast path beside a generic one
            for test, tensor in tests:
                fix = None
                expr = None if tensor is None else role_expr(
                    facts, "accelerator-tensor-test", facts.source(tensor))
                if expr is None:
                    expr = _not_cpu_test(facts, test)
                # the body is not a finding of its own (it stands under this guard): the fix
                # rewrites its `torch.cuda` calls too, or there is none
                body = guard_body_edits(facts, stmt.body, target_of(facts))
                if expr is not None and body is not None:
                    text = expr.text if test is stmt.test or " or " not in expr.text \
                        else f"({expr.text})"
                    s, e = facts.span(test)
                    fix = make_fix(facts, f"Test for any accelerator: `{text}`",
                                   [Edit(s, e, text), *body], expr, safe=False)
                yield self.diagnostic(facts, test, f"`{facts.source(test)}` picks the CPU path on "
                                      "every non-CUDA accelerator", fix)


def _fast_path(facts, stmt):
    """The `devlint.evidence.fast_path` reason of a tensor's CUDA branch, if any."""
    par = facts.tree_parent(stmt)
    rest = []
    for field in ("body", "orelse", "finalbody"):
        block = getattr(par, field, None)
        if isinstance(block, list) and any(st is stmt for st in block):
            rest = block[block.index(stmt) + 1:]
    return fast_path_reason(stmt, rest, facts.path)


def _assigned_test_uses(facts, literal, compare):
    """`is_gpu = cfg.device_type == "cuda"` whose name later chooses an `if` branch in the
    same function: the `if` statements (none when the name is rebound or used otherwise)."""
    w = facts.where_of(literal)
    stmt = w.statement if w is not None else None
    if not (isinstance(stmt, ast.Assign) and stmt.value is compare and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return []
    scope = w.function
    if scope is None:
        return []
    name = stmt.targets[0].id
    ifs = []
    for n in ast.walk(scope):
        if isinstance(n, ast.If):
            conj = n.test.values if isinstance(n.test, ast.BoolOp) and isinstance(
                n.test.op, ast.And) else [n.test]
            if any(isinstance(c, ast.Name) and c.id == name for c in conj):
                ifs.append(n)
        elif isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) \
                and n is not stmt.targets[0]:
            return []
    return ifs


def _not_cpu_test(facts, test):
    """`device_type == "cuda"` (a device-type string, no tensor to ask) becomes
    `device_type != "cpu"`: every accelerator, still not the CPU."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and right.value == "cuda") \
            or isinstance(left, ast.Constant):
        return None
    s, _ = facts.span(right)
    q = facts.text[s] if facts.text[s] in "'\"" else '"'
    return Expr(f"{facts.source(left)} != {q}cpu{q}", (), "", False)


def _asks_platform(facts, test) -> bool:
    """The same condition also asks the platform (`current_platform.is_cuda()`,
    `torch.cuda.is_available()`): the branch is CUDA-specific on purpose. A negated query
    (`not current_platform.is_rocm()`) only excludes a platform."""
    negated = {id(n.operand) for n in ast.walk(test)
               if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)}
    for n in ast.walk(test):
        if id(n) in negated:
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr.startswith("is_") and not n.args:
            owner = facts.qualname(n.func.value) or facts.source(n.func.value)
            if owner.endswith(("current_platform", "torch.cuda")):
                return True
    return False


RULE = IsCudaBranch
