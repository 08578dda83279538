"""DL106 cuda-or-cpu-fallback."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix, role_expr
from devlint.profiles.torch_api import best_entry, entries_by_name
from devlint.rules._device import skipped
from devlint.rules.base import Invalid, Rule, Valid

_FALLBACKS = ("cpu", None)


class CudaOrCpuFallback(Rule):
    """
    ## What it does
    Flags the "CUDA if available, else CPU" idiom: `"cuda" if torch.cuda.is_available() else
    "cpu"`, its `torch.device(...)` form, and the same choice made on a platform query
    (`"cuda" if current_platform.is_cuda() else None`); also where the CUDA arm holds "cuda"
    in a list or a call (`["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]`,
    `os.environ.get("DEV", "cuda") if torch.cuda.is_available() else "cpu"`): there the test
    becomes `torch.accelerator.is_available()` and each "cuda" the device type.

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
        # the fallback only says where a checkpoint is deserialized (load-location)
        Valid('import torch\n\n\ndef convert(path, out):\n'
              '    device = "cuda" if torch.cuda.is_available() else "cpu"\n'
              '    ckpt = torch.load(path, map_location=device)\n'
              '    if "state_dict" in ckpt:\n        ckpt = ckpt["state_dict"]\n'
              '    save(convert_keys(ckpt), out)\n'),
        Valid('d = "cuda" if is_cuda_alike() else "xpu"\n'),
        Valid('import torch\nn = 2 if torch.cuda.is_available() else 1\n'),
        Valid('d = "cpu" if args.cpu else "xpu"\n'),
        # several backends listed: a table, not a CUDA-or-CPU choice
        Valid('import torch\nDEVICES = ["cpu", "cuda", "xpu"] if torch.cuda.is_available() else ["cpu"]\n'),
        # one part of a table assembled from several backends
        Valid('import torch\nDEVICES = (["cuda"] if torch.cuda.is_available() else []) + (\n'
              '    ["xpu"] if torch.xpu.is_available() else [])\n'),
        # the other arm is not the CPU
        Valid('import torch\nd = ["cuda"] if torch.cuda.is_available() else ["xpu"]\n'),
    ]
    invalid = [
        # ... but a loaded model that is then run runs on the CPU
        Invalid('import torch\n\n\ndef run(path, x):\n'
                '    device = "cuda" if torch.cuda.is_available() else "cpu"\n'
                '    model = torch.load(path, map_location=device)\n'
                '    return model(x)\n',
                'import torch\n\n\ndef run(path, x):\n'
                '    device = torch.accelerator.current_accelerator().type if '
                'torch.accelerator.is_available() else "cpu"\n'
                '    model = torch.load(path, map_location=device)\n'
                '    return model(x)\n'),
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
        # the CUDA arm holds "cuda" inside a list or a call
        Invalid('import torch\nDEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])\n',
                'import torch\nfrom vllm.platforms import current_platform\n'
                'DEVICES = ["cpu"] + ([current_platform.device_type] if '
                'torch.accelerator.is_available() else [])\n', profile="vllm"),
        Invalid('import os\nimport torch\n'
                'DEVICE = os.environ.get("TEST_DEVICE", "cuda") if torch.cuda.is_available() else "cpu"\n',
                'import os\nimport torch\nfrom vllm.platforms import current_platform\n'
                'DEVICE = os.environ.get("TEST_DEVICE", current_platform.device_type) if '
                'torch.accelerator.is_available() else "cpu"\n', profile="vllm"),
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
            if kind is None:
                found = self._nested(facts, node, cuda_arm, other)
                if found is not None:
                    yield found
                continue
            if fallback is False:
                continue
            if skipped(facts, node):
                continue
            expr = role_expr(facts, "device-object" if kind == "object" else "device-type")
            s, e = facts.span(node)
            fix = make_fix(facts, f"Use `{expr.text}`", [Edit(s, e, expr.text)], expr,
                           safe=fallback == "cpu")
            yield self.diagnostic(facts, node, "Falls back to the CPU on every non-CUDA "
                                  "accelerator", fix)


    def _nested(self, facts, node, cuda_arm, other):
        """`["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]`,
        `os.environ.get("DEV", "cuda") if torch.cuda.is_available() else "cpu"`: the CUDA arm
        holds "cuda" inside a list, tuple or call, the other arm is the CPU (or a list of
        devices without CUDA). The test becomes the accelerator's and each "cuda" the
        profile's device type."""
        if not isinstance(cuda_arm, (ast.List, ast.Tuple, ast.Call)):
            return None
        if not (_fallback(facts, other) == "cpu" or _device_list_without_cuda(other)):
            return None
        literals = [n for n in ast.walk(cuda_arm)
                    if isinstance(n, ast.Constant) and n.value == "cuda"]
        if not literals or any(isinstance(n, ast.Constant) and isinstance(n.value, str)
                               and n.value.split(":")[0] in _OTHER_TYPES
                               for n in ast.walk(cuda_arm)):
            return None
        if _joined_with_other_backends(facts, node):
            return None  # `(["cuda"] if ... else []) + (["xpu"] if ... else [])`: a table
        test = node.test.operand if isinstance(node.test, ast.UnaryOp) else node.test
        if not (isinstance(test, ast.Call)
                and facts.qualname(test.func) == "torch.cuda.is_available"):
            return None
        if skipped(facts, node):
            return None
        t = role_expr(facts, "device-type")
        edits = [Edit(*facts.span(n), t.text) for n in literals]
        fix = None
        entry = best_entry(entries_by_name("DL401").get("torch.cuda.is_available", ()),
                           facts.settings.target_torch_tuple(facts.profile))
        torch_local = facts.torch_name()
        if entry is not None and entry.available_for(
                facts.settings.target_torch_tuple(facts.profile)) and torch_local:
            # a `form` below 2.6 (`any(...)`) stands for the whole call
            edits.append(Edit(*facts.span(test if entry.whole_call else test.func),
                              entry.callee(torch_local)))
            fix = make_fix(facts, f"Use `{entry.callee()}` and `{t.text}`", edits, t)
        return self.diagnostic(facts, node, "Falls back to the CPU on every non-CUDA "
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


_OTHER_TYPES = {"xpu", "npu", "mps", "hpu", "mlu", "musa", "mtia", "xla"}


def _joined_with_other_backends(facts, node) -> bool:
    """The choice is one part of a sum (`a + b`) of which another part names another device
    type or asks another backend (`torch.xpu.is_available()`)."""
    top = node
    par = facts.get_parent(top) or facts.tree_parent(top)
    while isinstance(par, ast.BinOp) and isinstance(par.op, ast.Add):
        top, par = par, facts.get_parent(par) or facts.tree_parent(par)
    if top is node:
        return False
    inside = {id(n) for n in ast.walk(node)}
    for n in ast.walk(top):
        if id(n) in inside:
            continue
        if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                and n.value.split(":")[0] in _OTHER_TYPES:
            return True
        if isinstance(n, ast.Attribute):
            q = facts.qualname(n) or ""
            if any(q.startswith(f"torch.{t}.") for t in _OTHER_TYPES):
                return True
    return False


def _device_list_without_cuda(node) -> bool:
    """`["cpu"]`, `[]`, `("cpu",)`: a display of CPU devices only."""
    return isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and e.value == "cpu" for e in node.elts)


def _fallback(facts, node):
    if isinstance(node, ast.Constant) and node.value in _FALLBACKS:
        return "cpu" if node.value == "cpu" else "none"
    if isinstance(node, ast.Call) and facts.qualname(node.func) == "torch.device" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
            and node.args[0].value == "cpu":
        return "cpu"
    return False


RULE = CudaOrCpuFallback
