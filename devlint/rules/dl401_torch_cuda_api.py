"""DL401 torch-cuda-api."""
from __future__ import annotations

from devlint.rules._api_table import table_findings
from devlint.rules.base import Invalid, Rule, Valid


class TorchCudaApi(Rule):
    """
    ## What it does
    Flags `torch.cuda` functions that have a device-generic `torch.accelerator` equivalent:
    `synchronize`, `device_count`, `is_available`, `current_device`, `set_device`,
    `empty_cache`, the `memory_*` statistics, `current_stream`, `set_stream`,
    `torch.cuda.device(i)`; through any import alias (`import torch as th`,
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
    offered. `torch.cuda.is_available()` as the test of `a if ... else b` is not flagged here
    (DL106 rewrites the whole choice).

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
        Valid("cuda = make()\ncuda.synchronize()\n"),
        Valid("import torch\nprint(f'CUDA available: {torch.cuda.is_available()}')\n"),
        Valid("import torch\nlogger.info('devices: %d', torch.cuda.device_count())\n"),
    ]
    invalid = [
        Invalid("import torch\ntorch.cuda.synchronize()\n",
                "import torch\ntorch.accelerator.synchronize()\n"),
        Invalid("import torch as th\nth.cuda.synchronize()\n",
                "import torch as th\nth.accelerator.synchronize()\n"),
        Invalid("from torch import cuda\ncuda.synchronize()\n",
                "from torch import cuda\nimport torch\ntorch.accelerator.synchronize()\n"),
        Invalid("from torch.cuda import synchronize\nsynchronize()\n",
                "from torch.cuda import synchronize\nimport torch\ntorch.accelerator.synchronize()\n"),
        Invalid("import torch\nlaunch(gpus_per_node=torch.cuda.device_count)\n",
                "import torch\nlaunch(gpus_per_node=torch.accelerator.device_count)\n"),
        Invalid("import torch\nn = torch.cuda.device_count()\n",
                "import torch\nn = torch.accelerator.device_count()\n"),
    ]

    def check(self, facts):
        yield from table_findings(self, facts)


RULE = TorchCudaApi
