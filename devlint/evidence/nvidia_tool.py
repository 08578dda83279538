"""Principle: a tool built on `nvidia-smi` is NVIDIA's own.

```python
def _gpu_pids(gpus):
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid", "-i", gpus], ...)

def _target_gpus():
    return os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
```
`nvidia-smi` reports NVIDIA GPUs only: a CI cleanup script, a GPU-memory probe or a launcher
that reads and kills processes through it works on no other accelerator, and the
`CUDA_VISIBLE_DEVICES` it reads or sets, the `torch.cuda` queries beside it, name the GPUs
`nvidia-smi` numbers. Evidence (a `Reason("nvidia-tool", ...)`, file:line of the call that
runs it): a function that runs `nvidia-smi` (the program as a call's argument: `"nvidia-smi"`
in an argument list, or a command string starting with it); a whole module when its top-level
code runs it, or two or more of its top-level functions and classes do.
The same holds for a shell function that runs `nvidia-smi` (`set_n_least_used_CUDA_VISIBLE_DEVICES()
{ ... $(nvidia-smi --query-gpu=memory.used ...) ...; export CUDA_VISIBLE_DEVICES=...; echo
...; }`): the GPUs it picks, exports and prints are the ones `nvidia-smi` numbered (DL302;
`devlint.shell.visibility` applies it with `shell_function_tool`).
Limits: a mention in a docstring, comment or message is no run (only call arguments count);
code that also runs another vendor's tool (`rocm-smi`, `amd-smi`, `xpu-smi`, `npu-smi`,
`hl-smi`) or asks which platform it runs on (`is_rocm()`, `torch.xpu`) serves several
platforms and stays checked; one helper in a generic module exempts only that helper.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason

_P = "nvidia-tool"
_SMI = re.compile(r"^\s*nvidia-smi(\s|$)")
_OTHER_TOOL = re.compile(r"(?i)\b(rocm-smi|amd-smi|xpu-smi|npu-smi|hl-smi|xpumcli|ixsmi|mx-smi"
                         r"|mthreads-gmi|cnmon)\b")
_OTHER = re.compile(r"(?i)^(xpu|npu|hpu|mps|musa|mlu)$")
_PLATFORM_QUERY = re.compile(r"^(is_cuda_alike|is_rocm|is_hip|is_xpu|is_npu|is_hpu|is_mps"
                             r"|is_musa)$")
_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def mentions(text: str) -> bool:
    return "nvidia-smi" in text


def _smi_call(node) -> ast.Call | None:
    if not isinstance(node, ast.Call):
        return None
    for arg in (*node.args, *(k.value for k in node.keywords)):
        first = arg
        if isinstance(arg, (ast.List, ast.Tuple)) and arg.elts:
            first = arg.elts[0]
        if isinstance(first, ast.JoinedStr) and first.values:
            first = first.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str) \
                and _SMI.match(first.value):
            return node
    return None


def _first_run(nodes) -> ast.Call | None:
    for n in nodes:
        for m in ast.walk(n):
            call = _smi_call(m)
            if call is not None:
                return call
    return None


def _shared(node) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _OTHER_TOOL.search(n.value):
            return True
        if isinstance(n, ast.Attribute) and _OTHER.match(n.attr):
            return True
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if _PLATFORM_QUERY.match(name):
                return True
    return False


def module_reason(tree: ast.Module, text: str, path: str | None) -> Reason | None:
    """The module's top-level code runs `nvidia-smi`, or two of its units do."""
    if not mentions(text):
        return None
    units = []
    for st in tree.body:
        call = _first_run([st])
        if call is None:
            continue
        if not isinstance(st, _UNITS):
            units = [call, call]
            break
        units.append(call)
    if len(units) < 2 or _shared(tree):
        return None
    return Reason(_P, "it is a tool built on `nvidia-smi` (NVIDIA GPUs only)", path,
                  units[0].lineno)


def scope_reason(scope, text: str, path: str | None) -> Reason | None:
    """The function runs `nvidia-smi` itself."""
    if not mentions(text) or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    call = _first_run(scope.body)
    if call is None or _shared(scope):
        return None
    return Reason(_P, f"`{scope.name}` runs `nvidia-smi` (NVIDIA GPUs only)", path, call.lineno)


def shell_function_tool(commands) -> bool:
    """A shell function whose commands (their names, in order) run `nvidia-smi` and no other
    vendor's tool: NVIDIA's own helper."""
    names = [c.rsplit("/", 1)[-1] for c in commands if c]
    return "nvidia-smi" in names and not any(_OTHER_TOOL.fullmatch(c) for c in names)
