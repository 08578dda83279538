"""DL105 device-fstring."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix
from devlint.rules._device import device_type_expr, skipped, string_prefix_and_quote
from devlint.rules.base import Invalid, Rule, Valid


class DeviceFstring(Rule):
    """
    ## What it does
    Flags device strings built from a CUDA prefix: `f"cuda:{i}"`, `"cuda:%d" % i`,
    `"cuda:" + str(i)`, `"cuda:{}".format(i)`. Not in the CUDA arm of a platform dispatch
    (an `if`/`elif` chain that also has an arm for `is_xpu()`, `is_cpu()`, ...): each arm
    names its own platform's device there (this holds for every device-literal rule).

    ## Why is this bad?
    The index is generic, the prefix is not: `f"cuda:{rank}"` names a device that only NVIDIA
    (or ROCm) machines have.

    ## Example
    ```python
    device = torch.device(f"cuda:{local_rank}")
    ```

    Use instead:
    ```python
    device = torch.device(f"{current_platform.device_type}:{local_rank}")
    ```

    ## Fix
    The `cuda` prefix becomes the profile's device type inside an f-string; `%`-formatted,
    concatenated and `.format()` strings become f-strings for the prefix and keep the rest.

    ## Fix safety
    Safe: on a CUDA machine the string is the same.

    ## Profiles
    - `torch`: `(torch.accelerator.current_accelerator(check_available=True) or torch.device('cpu')).type`
      (target-torch 2.7+; 2.6 asks `torch.accelerator.is_available()` first; none below 2.6).
    - `vllm`: `current_platform.device_type`.
    """

    code = "DL105"
    name = "device-fstring"
    summary = "Device string built from a hardcoded `cuda:` prefix"

    valid = [
        # a project's CUDA availability helper is one arm of its ladder (platform-ladder)
        Valid('import torch\n\n\ndef pick(i):\n    if is_torch_mlu_available():\n'
              '        return torch.device(f"mlu:{i}")\n    elif is_torch_cuda_available():\n'
              '        return torch.device(f"cuda:{i}")\n    elif is_torch_npu_available():\n'
              '        return torch.device(f"npu:{i}")\n    return torch.device("cpu")\n'),
        Valid('name = f"cuda_graph_{i}"\n'),
        Valid('msg = f"{device_type}:{i}"\n'),
        Valid('if current_platform.is_cuda():\n    d = f"cuda:{i}"\n'),
        Valid('logger.info("running on cuda:%d", i)\n'),
        # a platform dispatch: each platform's arm names its own device
        Valid('if current_platform.is_cuda_alike():\n    d = f"cuda:{visible(i)}"\n'
              'elif current_platform.is_xpu():\n    d = f"xpu:{i}"\nelse:\n    d = "cpu"\n'),
    ]
    invalid = [
        # `is_cuda_alike()` alone covers ROCm too, where the device comes from the platform
        Invalid('if current_platform.is_cuda_alike():\n    d = f"cuda:{i}"\n',
                'from vllm.platforms import current_platform\n'
                'if current_platform.is_cuda_alike():\n    d = f"{current_platform.device_type}:{i}"\n',
                profile="vllm"),
        Invalid('d = f"cuda:{i}"\n',
                'from vllm.platforms import current_platform\nd = f"{current_platform.device_type}:{i}"\n',
                profile="vllm"),
        Invalid("import torch\nd = f'cuda:{rank}'\n",
                'import torch\n'
                'd = f\'{(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")}:{rank}\'\n'),
        Invalid('d = "cuda:%d" % i\n',
                'from vllm.platforms import current_platform\nd = f"{current_platform.device_type}:%d" % i\n',
                profile="vllm"),
        Invalid('d = "cuda:" + str(i)\n',
                'from vllm.platforms import current_platform\nd = f"{current_platform.device_type}:" + str(i)\n',
                profile="vllm"),
        Invalid('d = "cuda:{}".format(i)\n',
                'from vllm.platforms import current_platform\nd = f"{current_platform.device_type}:{{}}".format(i)\n',
                profile="vllm"),
    ]

    def check(self, facts):
        for node in facts.fstrings:
            if skipped(facts, node) or _in_message(facts, node):
                continue
            lit = node if isinstance(node, ast.JoinedStr) else node.left
            yield self._finding(facts, node, lit, isinstance(node, ast.JoinedStr))
        for call in facts.calls:
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr == "format" \
                    and isinstance(f.value, ast.Constant) and isinstance(f.value.value, str) \
                    and f.value.value.startswith("cuda:") and not skipped(facts, call) \
                    and not _in_message(facts, call):
                yield self._finding(facts, call, f.value, False, fmt=True)

    def _finding(self, facts, node, lit, is_fstring, fmt=False):
        s, e = facts.span(lit)
        src = facts.text[s:e]
        prefix, quote = string_prefix_and_quote(src)
        fix = None
        body_start = s + len(prefix)
        if not src[len(prefix):].startswith(quote * 3) and "u" not in prefix.lower() \
                and "b" not in prefix.lower():
            t = device_type_expr(facts, quote)
            body = src[len(prefix) + 1:-1]
            if body.startswith("cuda"):
                if is_fstring:
                    new = src[:len(prefix) + 1] + "{" + t.text + "}" + body[4:] + quote
                else:
                    if fmt:
                        rest = body[4:].replace("{", "{{").replace("}", "}}")
                    elif "{" in body or "}" in body:
                        rest = None
                    else:
                        rest = body[4:]
                    new = None if rest is None else (
                        "f" + prefix + quote + "{" + t.text + "}" + rest + quote)
                if new is not None:
                    fix = make_fix(facts, f"Build the device from `{t.text}`",
                                   [Edit(s, e, new)], t)
        del body_start
        ns, ne = facts.span(node)
        return self.diagnostic(facts, (ns, ne), f"Device string `{facts.text[ns:ne]}` hardcodes "
                               f"the `cuda` prefix", fix)


def _in_message(facts, node) -> bool:
    """Log, print and exception messages mention devices without choosing one."""
    par = facts.get_parent(node)
    if isinstance(par, ast.Call):
        q = facts.source(par.func) if par.func is not None else ""
        last = q.rsplit(".", 1)[-1]
        if last in ("print", "info", "debug", "warning", "warning_once", "error", "exception",
                    "critical", "log", "info_once", "debug_once", "warn") \
                or last.endswith(("Error", "Exception", "Warning")):
            return True
    return False


RULE = DeviceFstring
