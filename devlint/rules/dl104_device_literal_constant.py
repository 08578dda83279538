"""DL104 device-literal-constant."""
from __future__ import annotations

import ast
import re

from devlint.diagnostics import Edit
from devlint.engine.fixkit import Expr, make_fix, role_expr
from devlint.rules._device import device_type_expr, index_of, skipped
from devlint.rules.base import Invalid, Rule, Valid

_DEVICE_NAME = re.compile(r"(?i)dev")


class DeviceLiteralConstant(Rule):
    """
    ## What it does
    Flags module and class constants that hardcode a CUDA device: `DEVICE = "cuda"`,
    `DEVICES = ["cuda:0", "cuda:1"]`, `TORCH_DEVICE: str = "cuda"`.

    ## Why is this bad?
    A device constant is read by everything below it: one literal pins a whole test module or
    component to NVIDIA GPUs, so none of it runs on XPU, NPU, MPS or CPU-only machines.

    ## Example
    ```python
    DEVICE = "cuda"
    ```

    Use instead:
    ```python
    from vllm.platforms import current_platform

    DEVICE = current_platform.device_type
    ```

    ## Fix
    The literal becomes the profile's device type string; `"cuda:N"` keeps its index as an
    f-string. Only names that say they hold a device (`DEVICE`, `device`, `DEVICES`,
    `TORCH_DEVICE`, `_DEV` ...) are checked, so a kernel-backend name `BACKEND = "cuda"` is not a
    finding.

    ## Fix safety
    Safe: on a CUDA machine the expression evaluates to the same string.

    ## Profiles
    - `torch`: `(torch.accelerator.current_accelerator() or torch.device("cpu")).type`.
    - `vllm`: `current_platform.device_type`.
    """

    code = "DL104"
    name = "device-literal-constant"
    summary = "Module or class constant hardcodes a CUDA device"

    valid = [
        Valid('BACKEND = "cuda"\n'),
        Valid('DEVICE = "cpu"\n'),
        Valid('def f():\n    device = "cuda"\n    return device\n'),
        Valid('from vllm.platforms import current_platform\nDEVICE = current_platform.device_type\n',
              profile="vllm"),
        Valid('DEVICE_MAP = {"cuda": "nccl", "xpu": "xccl"}\n'),
    ]
    invalid = [
        Invalid('import pytest\n\nDEVICE = "cuda"\n',
                'import pytest\nfrom vllm.platforms import current_platform\n\n'
                'DEVICE = current_platform.device_type\n', profile="vllm"),
        Invalid('import torch\nDEVICE = "cuda"\n',
                'import torch\nDEVICE = (torch.accelerator.current_accelerator() or torch.device("cpu")).type\n'),
        Invalid('DEVICES = ["cuda:0", "cuda:1"]\n',
                'from vllm.platforms import current_platform\n'
                'DEVICES = [f"{current_platform.device_type}:0", f"{current_platform.device_type}:1"]\n',
                profile="vllm", count=2),
        Invalid('class T:\n    device: str = "cuda"\n',
                'from vllm.platforms import current_platform\n'
                'class T:\n    device: str = current_platform.device_type\n', profile="vllm"),
    ]

    def check(self, facts):
        for stmt in facts.assigns:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [_name(t) for t in targets]
            if not any(n and _DEVICE_NAME.search(n) for n in names) or stmt.value is None:
                continue
            for node in _device_literals(stmt.value):
                if skipped(facts, node):
                    continue
                idx = index_of(node.value)
                if idx is None:
                    expr = role_expr(facts, "device-type")
                else:
                    t = device_type_expr(facts, '"')
                    expr = Expr(f'f"{{{t.text}}}:{idx}"', t.imports, t.evidence, True)
                s, e = facts.span(node)
                fix = make_fix(facts, f"Use `{expr.text}` ({expr.evidence})",
                               [Edit(s, e, expr.text)], expr)
                yield self.diagnostic(facts, (s, e), f"Device constant `{names[0]}` hardcodes "
                                      f"{facts.source(node)}", fix)


def _name(target) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def _device_literals(value):
    if isinstance(value, ast.Constant) and isinstance(value.value, str) \
            and (value.value == "cuda" or index_of(value.value) is not None):
        yield value
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        for elt in value.elts:
            yield from _device_literals(elt)


RULE = DeviceLiteralConstant
