"""DL104 device-literal-constant."""
from __future__ import annotations

import ast
import re

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import bare, make_fix, role_expr
from devlint.rules._device import why_skipped, device_string, index_of, skipped
from devlint.rules.base import Invalid, Rule, Valid

_DEVICE_NAME = re.compile(r"(?i)dev")
# inside functions only plain device variables count (`device = "cuda:0"`)
_LOCAL_DEVICE_NAME = re.compile(r"(?i)(?:^|_)dev(?:ice)?$")


class DeviceLiteralConstant(Rule):
    """
    ## What it does
    Flags module and class constants that hardcode a CUDA device: `DEVICE = "cuda"`,
    `DEVICES = ["cuda:0", "cuda:1"]`, `TORCH_DEVICE: str = "cuda"`, and local device
    variables assigned a literal (`device = "cuda:0"`).

    Also flags platform ladders that re-derive the device type by hand (each arm assigning
    a device-type literal, or the same expression around one):
    `if current_platform.is_cuda_alike(): self.device_type = "cuda" elif ...is_xpu(): ... = "xpu"`
    or `if torch.cuda.is_available(): device = "cuda" elif torch.backends.mps.is_available(): ...`.

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
    A ladder becomes one assignment of the profile's device type (unsafe: a platform missing
    from the ladder now gets its own type instead of the ladder's fallback). Otherwise the
    literal becomes the profile's device type string; `"cuda:N"` keeps its index as an
    f-string. Only names that say they hold a device (`DEVICE`, `device`, `DEVICES`,
    `TORCH_DEVICE`, `_DEV` ...) are checked, so a kernel-backend name `BACKEND = "cuda"` is not a
    finding.

    ## Fix safety
    Safe: on a CUDA machine the expression evaluates to the same string.

    ## Profiles
    - `torch`: `(torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")).type`
      (target-torch 2.7+; 2.6 asks `torch.accelerator.is_available()` first; none below 2.6).
    - `vllm`: `current_platform.device_type`.
    """

    code = "DL104"
    name = "device-literal-constant"
    summary = "Module or class constant hardcodes a CUDA device"

    valid = [
        # the arms do different things: not one value re-derived per platform
        Valid('import torch\nif torch.cuda.is_available():\n    backend = pick("cuda", fast=True)\n'
              'else:\n    backend = other("cpu")\n'),
        Valid('DDP_RANK_DEVICES = ["cuda", "xpu"]\n'),
        Valid('SUPPORTED_DEVICES = ("cuda:0", "npu:0", "mps")\n'),
        Valid('BACKEND = "cuda"\n'),
        Valid('DEVICE = "cpu"\n'),
        Valid('def f():\n    backend = "cuda"\n    return backend\n'),
        Valid('def f(x):\n    if x.device.type == "cuda":\n        device = "cuda"\n'),
        Valid('from vllm.platforms import current_platform\nDEVICE = current_platform.device_type\n',
              profile="vllm"),
        Valid('DEVICE_MAP = {"cuda": "nccl", "xpu": "xccl"}\n'),
    ]
    invalid = [
        Invalid('import pytest\n\nDEVICE = "cuda"\n',
                'import pytest\nfrom vllm.platforms import current_platform\n\n'
                'DEVICE = current_platform.device_type\n', profile="vllm"),
        Invalid('import torch\nDEVICE = "cuda"\n',
                'import torch\n'
                'DEVICE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'),
        Invalid('DEVICES = ["cuda:0", "cuda:1"]\n',
                'from vllm.platforms import current_platform\n'
                'DEVICES = [f"{current_platform.device_type}:0", f"{current_platform.device_type}:1"]\n',
                profile="vllm", count=2),
        Invalid('def f():\n    device = "cuda:0"\n    return device\n',
                'from vllm.platforms import current_platform\n'
                'def f():\n    device = f"{current_platform.device_type}:0"\n    return device\n',
                profile="vllm"),
        Invalid('def f(self):\n    if current_platform.is_cuda_alike():\n        self.device_type = "cuda"\n'
                '    elif current_platform.is_xpu():\n        self.device_type = "xpu"\n'
                '    else:\n        raise RuntimeError("no device")\n    return 1\n',
                'from vllm.platforms import current_platform\n'
                'def f(self):\n    self.device_type = current_platform.device_type\n    return 1\n',
                profile="vllm"),
        Invalid('import torch\nif torch.cuda.is_available():\n    device = "cuda"\n'
                'elif torch.backends.mps.is_available():\n    device = "mps"\nelse:\n    device = "cpu"\n',
                'import torch\n'
                'device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'),
        # the arms wrap the literal in the same expression
        Invalid('import torch\n\n\ndef f(device_type=None):\n    if torch.cuda.is_available():\n'
                '        device_type = "cuda" if device_type is None else device_type\n'
                '    else:\n        device_type = "cpu" if device_type is None else device_type\n'
                '    return device_type\n',
                'import torch\nfrom vllm.platforms import current_platform\n\n\n'
                'def f(device_type=None):\n'
                '    device_type = current_platform.device_type if device_type is None else device_type\n'
                '    return device_type\n', profile="vllm"),
        Invalid('class T:\n    device: str = "cuda"\n',
                'from vllm.platforms import current_platform\n'
                'class T:\n    device: str = current_platform.device_type\n', profile="vllm"),
    ]

    def check(self, facts):
        in_ladder: set = set()
        inner = set()
        for stmt in facts.ifs:
            if id(stmt) in inner:
                continue
            ladder = _ladder(stmt)
            if ladder is None:
                continue
            target, nested = ladder
            inner.update(id(n) for n in nested)
            in_ladder.update(id(b) for n in (stmt, *nested) for b in (*n.body, *n.orelse))
            why = why_skipped(facts, stmt)
            if why is not None and getattr(why, "principle", "") != "platform-ladder":
                continue  # the ladder itself is what this finding is about
            expr = role_expr(facts, "device-type")
            s, e = facts.span(stmt)
            value = _templated_value(facts, stmt, expr.text)
            new = f"{target} = {value if value is not None else bare(expr.text)}"
            fix = make_fix(facts, f"Use `{expr.text}`", [Edit(s, e, new)], expr, safe=False)
            yield self.diagnostic(facts, (s, e), f"Platform ladder re-derives `{target}` by hand",
                                  fix)
        for stmt in facts.assigns:
            if id(stmt) in in_ladder:
                continue
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [_name(t) for t in targets]
            if stmt.value is None:
                continue
            w = facts.where_of(stmt)
            if w is not None and w.level == "function":
                if not any(n and _LOCAL_DEVICE_NAME.search(n) for n in names) \
                        or not isinstance(stmt.value, ast.Constant):
                    continue
            elif not any(n and _DEVICE_NAME.search(n) for n in names):
                continue
            for node in _device_literals(stmt.value):
                if skipped(facts, node):
                    continue
                expr = device_string(facts, node.value)
                s, e = facts.span(node)
                fix = make_fix(facts, f"Use `{expr.text}` ({expr.evidence})",
                               [Edit(s, e, expr.text)], expr)
                yield self.diagnostic(facts, (s, e), f"Device constant `{names[0]}` hardcodes "
                                      f"{facts.source(node)}", fix)



_DEVICE_TYPES = {"cuda", "xpu", "mps", "cpu", "hpu", "npu", "tpu", "neuron", "openvino",
                 "rocm", "mlu", "musa", "xla", "meta"}


def _ladder(stmt: ast.If):
    """(target source, [nested If nodes]) when `stmt` is an if/elif chain over platform queries
    whose every branch only assigns a device-type literal to one target, one of them "cuda"."""
    target = None
    values = []
    nested = []
    node = stmt
    while True:
        test = node.test
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute)
                and test.func.attr.startswith("is_") and not test.args):
            return None
        value_target = _single_literal_assign(node.body)
        if value_target is None:
            return None
        value, tgt = value_target
        if target is None:
            target = tgt
        elif tgt != target:
            return None
        values.append(value)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            nested.append(node)
            continue
        if node.orelse:
            last = _single_literal_assign(node.orelse)
            if last is not None:
                if last[1] != target:
                    return None
                values.append(last[0])
            elif not (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.Raise)):
                return None
        break
    if len(values) < 2 or "cuda" not in values or not set(values) <= _DEVICE_TYPES:
        return None
    arms = _arm_values(stmt)
    if not all(isinstance(v, ast.Constant) for v in arms) \
            and len({_template(v) for v in arms}) != 1:
        return None  # the arms do different things, not the same thing on another device
    return target, nested


def _single_literal_assign(body):
    """(device type, target) of a branch that assigns one device-type literal, or an
    expression around exactly one (`'cuda' if device_type is None else device_type`): the
    arms of a ladder then differ only in that literal (`_template` checks they agree)."""
    if len(body) != 1:
        return None
    st = body[0]
    if isinstance(st, ast.Assign) and len(st.targets) == 1:
        tgt, value = st.targets[0], st.value
    elif isinstance(st, ast.AnnAssign) and st.value is not None:
        tgt, value = st.target, st.value
    else:
        return None
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        literal = _the_device_literal(value)
        if literal is None:
            return None
        value = literal
    if isinstance(tgt, ast.Name):
        return value.value, tgt.id
    if isinstance(tgt, ast.Attribute) and isinstance(tgt.value, ast.Name):
        return value.value, f"{tgt.value.id}.{tgt.attr}"
    return None


def _the_device_literal(value):
    """The one device-type string literal inside `value` (None: none or several)."""
    found = [n for n in ast.walk(value) if isinstance(n, ast.Constant)
             and isinstance(n.value, str) and n.value in _DEVICE_TYPES]
    return found[0] if len(found) == 1 else None


def _template(value) -> str:
    """`value` with its device-type literal blanked, to compare the arms of a ladder."""
    literal = value if isinstance(value, ast.Constant) else _the_device_literal(value)
    saved = literal.value
    literal.value = "\x00"
    try:
        return ast.dump(value)
    finally:
        literal.value = saved


def _arm_values(stmt):
    """The assigned values of every arm of the ladder headed by `stmt`."""
    out, node = [], stmt
    while isinstance(node, ast.If):
        out.append(node.body[0].value)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if node.orelse and isinstance(node.orelse[0], (ast.Assign, ast.AnnAssign)):
            out.append(node.orelse[0].value)
        break
    return out


def _templated_value(facts, stmt, role_text):
    """For arms that wrap their literal in the same expression
    (`'cuda' if device_type is None else device_type`), that expression with the profile's
    device type in place of the literal; None for bare literals or arms that differ."""
    values = _arm_values(stmt)
    if all(isinstance(v, ast.Constant) for v in values):
        return None
    if len({_template(v) for v in values}) != 1:
        return None
    first = values[0]
    literal = _the_device_literal(first)
    s, e = facts.span(first)
    ls, le = facts.span(literal)
    return facts.text[s:ls] + role_text + facts.text[le:e]


def _name(target) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


# accelerator device types other than CUDA (the CPU and meta are not platforms a list of
# CUDA devices would be an alternative to)
_OTHER_ACCELERATORS = _DEVICE_TYPES - {"cuda", "cpu", "meta"}


def _names_other_platforms(value) -> bool:
    """A collection that names another accelerator beside CUDA (`["cuda", "xpu"]`) lists
    platforms: each entry is that platform's own, not a hardcoding (SPEC 3, dispatch tables)."""
    for elt in value.elts:
        if isinstance(elt, ast.Constant) and isinstance(elt.value, str) \
                and elt.value.split(":")[0] in _OTHER_ACCELERATORS:
            return True
    return False


def _device_literals(value):
    if isinstance(value, ast.Constant) and isinstance(value.value, str) \
            and (value.value == "cuda" or index_of(value.value) is not None):
        yield value
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        if _names_other_platforms(value):
            return
        for elt in value.elts:
            yield from _device_literals(elt)


RULE = DeviceLiteralConstant
