"""DL401 torch-cuda-api."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix
from devlint.profiles.torch_api import best_entry, entries_by_name
from devlint.rules._api_table import table_findings, target_of
from devlint.analysis.infer import infer_device
from devlint.rules._device import skipped
from devlint.rules.base import Invalid, Rule, Valid


class TorchCudaApi(Rule):
    """
    ## What it does
    Flags `torch.cuda` functions that have a device-generic `torch.accelerator` equivalent:
    `synchronize`, `device_count`, `is_available`, `current_device`, `set_device`,
    `empty_cache`, the `memory_*` statistics, `current_stream`, `set_stream`,
    `torch.cuda.device(i)`, the RNG state; the legacy typed constructors
    (`torch.cuda.FloatTensor([x])`); through any import alias (`import torch as th`,
    `from torch import cuda`, `from torch.cuda import synchronize`).

    ## Why is this bad?
    `torch.cuda.*` talks to the CUDA runtime only: on XPU, NPU or MPS it raises or silently does
    nothing (`device_count()` is 0), so synchronisation, memory accounting and device selection
    break without an error where they matter.

    ## Example
    ```python
    torch.cuda.synchronize()
    ```

    Use instead:
    ```python
    torch.accelerator.synchronize()
    ```

    ## Fix
    The replacement comes from the table in `devlint/data/torch_api.toml`, each entry with the
    first torch release that has it; `target-torch` (default 2.6) decides whether the fix is
    offered. Where `torch.accelerator` lacks the API at the target, the table may name the
    device module's function instead, `torch.get_device_module().X` (torch >= 2.4: the current
    accelerator's module, `torch.cuda` on CUDA): RNG state (`get_rng_state`, `set_rng_state`,
    `initial_seed`), `reset_peak_memory_stats`, `mem_get_info`, `empty_cache`; the CPU module
    has none of them, so where the original runs without CUDA (`empty_cache`, `set_rng_state`
    are no-ops) or has nothing to do there (resetting counters) the fix asks for an accelerator
    first, as below. `torch.cuda.is_available()` as the test of `a if ... else b` is not flagged here
    (DL106 rewrites the whole choice). A test's `mock.patch("torch.cuda.empty_cache", ...)` /
    `monkeypatch.setattr("torch.cuda.empty_cache", ...)` names the API as a string: once the
    code under test calls `torch.accelerator.empty_cache`, the patch no longer intercepts it,
    so the string follows the same table.

    Where the original runs without an accelerator (`torch.cuda.empty_cache()` is a no-op, the
    memory counters read 0) or has nothing to do there (`synchronize`, resetting counters) while
    the replacement raises, the fix asks `torch.accelerator.is_available()` first: a statement
    becomes an `if` block, an expression `(<call> if torch.accelerator.is_available() else
    <value>)` (the table's `cpu_value`).

    ## Fix safety
    Safe where the replacement takes the same arguments with the same meaning on CUDA; unsafe
    where arguments differ (the table says which).

    ## Profiles
    Both `torch` and `vllm` use `torch.accelerator` (vLLM RFC #30679).
    """

    code = "DL401"
    name = "torch-cuda-api"
    summary = "`torch.cuda` API with a device-generic `torch.accelerator` equivalent"

    valid = [
        Valid("import torch\ntorch.accelerator.synchronize()\n"),
        Valid("class A:\n    def f(self):\n        self.cuda.synchronize()\n"),
        Valid("import torch\nok = 1 if torch.cuda.is_available() else 0\n"),
        Valid("import torch\ntorch.cuda.synchronize = lambda: None\n"),
        # the module replaced the API with its own: its calls mean the replacement
        Valid("import torch\nprev = torch.cuda.set_stream\n\n\ndef patched(s):\n    prev(s)\n\n\n"
              "torch.cuda.set_stream = patched\n\n\ndef use(s):\n    torch.cuda.set_stream(s)\n"),
        Valid("cuda = make()\ncuda.synchronize()\n"),
        Valid("import torch\nprint(f'CUDA available: {torch.cuda.is_available()}')\n"),
        Valid("import torch\nlogger.info('devices: %d', torch.cuda.device_count())\n"),
        # a string naming the API outside a patch is just text
        Valid('msg = "torch.cuda.empty_cache is slow"\nname = "torch.cuda.synchronize"\n'),
        # no generic form: the patch stays
        Valid('from unittest.mock import patch\npatch("torch.cuda.get_device_name", f)\n'),
        # `torch` bound here (not by the star import): not torch's
        Valid("from .common import *\ntorch = Runtime()\ntorch.cuda.synchronize()\n"),
        # a type test, not a construction
        Valid("import torch\nok = isinstance(x, torch.cuda.FloatTensor)\n"),
        Valid("import torch\nt = torch.tensor([0.5], dtype=torch.float32, device=device)\n"),
        # already the device module's function
        Valid("import torch\ns = torch.get_device_module().get_rng_state()\n"),
        Valid("import torch\nif torch.accelerator.is_available():\n"
              "    torch.get_device_module().empty_cache()\n"),
        # a patch of an API whose generic form is a device module's function stays
        Valid('from unittest.mock import patch\npatch("torch.cuda.get_rng_state", f)\n'),
    ]
    invalid = [
        Invalid("import torch\ntorch.cuda.synchronize()\n",
                'import torch\n'
                'if torch.accelerator.is_available():\n'
                '    torch.accelerator.synchronize()\n'),
        Invalid("import torch as th\nth.cuda.synchronize()\n",
                'import torch as th\n'
                'if th.accelerator.is_available():\n'
                '    th.accelerator.synchronize()\n'),
        Invalid("from torch import cuda\ncuda.synchronize()\n",
                'from torch import cuda\n'
                'import torch\n'
                'if torch.accelerator.is_available():\n'
                '    torch.accelerator.synchronize()\n'),
        Invalid("from torch.cuda import synchronize\nsynchronize()\n",
                'from torch.cuda import synchronize\n'
                'import torch\n'
                'if torch.accelerator.is_available():\n'
                '    torch.accelerator.synchronize()\n'),
        Invalid("import torch\nlaunch(gpus_per_node=torch.cuda.device_count)\n",
                "import torch\nlaunch(gpus_per_node=torch.accelerator.device_count)\n"),
        Invalid("import torch\nn = torch.cuda.device_count()\n",
                "import torch\nn = torch.accelerator.device_count()\n"),
        # torch.accelerator lacks the API at the target: the device module's function
        Invalid("import torch\ns = torch.cuda.get_rng_state()\n",
                "import torch\ns = torch.get_device_module().get_rng_state()\n"),
        # a no-op without CUDA stays one, and a reset that has nothing to do there runs: the
        # call runs only where an accelerator is available
        Invalid("import torch\n\n\ndef f():\n    torch.cuda.reset_peak_memory_stats()\n",
                "import torch\n\n\ndef f():\n    if torch.accelerator.is_available():\n"
                "        torch.get_device_module().reset_peak_memory_stats()\n"),
        Invalid("import torch\n\n\ndef f():\n    torch.cuda.empty_cache()  # free\n",
                "import torch\n\n\ndef f():\n    if torch.accelerator.is_available():\n"
                "        torch.get_device_module().empty_cache()  # free\n"),
        Invalid("import torch\n\n\ndef f(s):\n    torch.cuda.set_rng_state(s)\n",
                "import torch\n\n\ndef f(s):\n    if torch.accelerator.is_available():\n"
                "        torch.get_device_module().set_rng_state(s)\n"),
        # ... or already does, through the availability test DL401 rewrites too
        Invalid("import torch\nif torch.cuda.is_available():\n    torch.cuda.empty_cache()\n",
                "import torch\nif torch.accelerator.is_available():\n"
                "    torch.get_device_module().empty_cache()\n", count=2),
        # `torch` used but never bound: it comes from the star import
        Invalid("from .llama import *\n\n\ndef f():\n    torch.cuda.synchronize()\n",
                "from .llama import *\n\n\ndef f():\n    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"),
        # legacy typed constructors
        Invalid("import torch\n\n\ndef norm(total, device):\n"
                "    return torch.cuda.FloatTensor([float(total)])\n",
                "import torch\n\n\ndef norm(total, device):\n"
                "    return torch.tensor([float(total)], dtype=torch.float32, device=device)\n"),
        Invalid("import torch\n\n\ndef buf(device):\n    return torch.cuda.IntTensor(2, 3)\n",
                "import torch\n\n\ndef buf(device):\n"
                "    return torch.empty((2, 3), dtype=torch.int32, device=device)\n"),
        Invalid("import torch\nt = torch.cuda.LongTensor(values)\n", None),
        # not a statement on its own lines: the call becomes a conditional expression
        Invalid("import torch\nif x: torch.cuda.empty_cache()\n",
                "import torch\nif x: (torch.get_device_module().empty_cache() "
                "if torch.accelerator.is_available() else None)\n"),
        Invalid('from unittest.mock import patch\n\nwith patch("torch.cuda.synchronize", f):\n'
                '    run()\n',
                'from unittest.mock import patch\n\nwith patch("torch.accelerator.synchronize", f):\n'
                '    run()\n'),
    ]

    def check(self, facts):
        yield from table_findings(self, facts)
        yield from self._patched_names(facts)
        yield from self._legacy_tensor_types(facts)

    def _legacy_tensor_types(self, facts):
        """`torch.cuda.FloatTensor([x])`: the legacy typed constructors pin the device in the
        type's name. A single list or tuple display becomes `torch.tensor(data, dtype=...,
        device=...)`, integer sizes `torch.empty(sizes, dtype=..., device=...)`; any other
        argument (a variable may be data, a size or a storage) is flagged without a fix."""
        if facts.cuda_alike:
            return
        for node, qual in facts.torch_refs:
            dtype = _LEGACY_TYPES.get(qual)
            if dtype is None:
                continue
            call = facts.get_parent(node)
            if not (isinstance(call, ast.Call) and call.func is node):
                continue  # `isinstance(x, torch.cuda.FloatTensor)`, a type test
            if skipped(facts, node, api=True):
                continue
            s, e = facts.span(node)
            old = facts.text[s:e]
            fix = None
            torch_local = facts.torch_name()
            if torch_local is not None and not call.keywords:
                factory = None
                if len(call.args) == 1 and isinstance(call.args[0], (ast.List, ast.Tuple)):
                    factory = "tensor"
                elif call.args and all(isinstance(a, ast.Constant) and type(a.value) is int
                                       for a in call.args):
                    factory = "empty"
                if factory is not None:
                    dev = infer_device(facts, call, "device")
                    if dev is not None:
                        args = ", ".join(facts.source(a) for a in call.args)
                        if factory == "empty" and len(call.args) > 1:
                            args = f"({args})"
                        text = (f"{torch_local}.{factory}({args}, dtype={torch_local}.{dtype}, "
                                f"device={dev.text})")
                        cs, ce = facts.span(call)
                        fix = make_fix(facts, f"Use `{torch_local}.{factory}(..., dtype="
                                       f"{torch_local}.{dtype}, device=...)`",
                                       [Edit(cs, ce, text)], dev, safe=False)
            yield self.diagnostic(facts, (s, e), f"`{old}` builds a CUDA tensor; use "
                                  f"`torch.tensor`/`torch.empty` with `dtype=torch.{dtype}` and a "
                                  f"device", fix)

    def _patched_names(self, facts):
        """`patch("torch.cuda.empty_cache", ...)`: the dotted name of an API the table maps."""
        if not facts.api_strings or facts.cuda_alike:
            return
        table = entries_by_name(self.code)
        target = target_of(facts)
        for node in facts.api_strings:
            call = facts.get_parent(node)
            if not (isinstance(call, ast.Call) and call.args and call.args[0] is node):
                continue
            f = call.func
            callee = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if callee not in _PATCHERS or skipped(facts, node, api=True, guards=False):
                continue
            entry = best_entry(table.get(node.value, ()), target)
            if entry is None or not entry.available_for(target) or entry.kind != "call" \
                    or entry.member:
                continue  # a patch names a function; `get_device_module().X` is none
            s, e = facts.span(node)
            quote = facts.text[s]
            text = f"{quote}{entry.replacement}{quote}"
            fix = make_fix(facts, f"Patch `{entry.replacement}`", [Edit(s, e, text)], (),
                           safe=False)
            yield self.diagnostic(facts, node, f"patches `{node.value}`, which the code under "
                                  f"test should call as `{entry.replacement}`", fix)


_PATCHERS = {"patch", "setattr"}

# the legacy CUDA tensor types and their dtypes (torch/cuda/__init__.py defines them as
# `_LegacyStorage`-backed classes; docs: "Tensor type" table of torch.Tensor)
_LEGACY_TYPES = {f"torch.cuda.{name}Tensor": dtype for name, dtype in (
    ("Float", "float32"), ("Double", "float64"), ("Half", "float16"), ("BFloat16", "bfloat16"),
    ("Byte", "uint8"), ("Char", "int8"), ("Short", "int16"), ("Int", "int32"),
    ("Long", "int64"), ("Bool", "bool"))}


RULE = TorchCudaApi
