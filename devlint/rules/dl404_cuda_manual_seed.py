"""DL404 cuda-manual-seed."""
from __future__ import annotations

from devlint.rules._api_table import table_findings
from devlint.rules.base import Invalid, Rule, Valid


class CudaManualSeed(Rule):
    """
    ## What it does
    Flags `torch.cuda.manual_seed(seed)` and `torch.cuda.manual_seed_all(seed)`.

    ## Why is this bad?
    They seed CUDA generators only: on XPU, NPU or MPS the run is silently unseeded and results
    stop being reproducible.

    ## Example
    ```python
    torch.cuda.manual_seed_all(seed)
    ```

    Use instead:
    ```python
    torch.manual_seed(seed)
    ```

    ## Fix
    `torch.manual_seed(seed)` seeds the CPU generator and every device's.

    ## Fix safety
    Unsafe: the replacement also reseeds the CPU generator, which changes the CPU random stream
    when the code seeds the CPU differently (or not at all) on purpose.

    ## Profiles
    Both profiles use `torch.manual_seed`.
    """

    code = "DL404"
    name = "cuda-manual-seed"
    summary = "`torch.cuda.manual_seed` seeds CUDA generators only"

    valid = [
        Valid("import torch\ntorch.manual_seed(0)\n"),
        Valid("import random\nrandom.seed(0)\n"),
    ]
    invalid = [
        Invalid("import torch\ntorch.cuda.manual_seed_all(0)\n",
                "import torch\ntorch.manual_seed(0)\n"),
        Invalid("import torch as th\nth.cuda.manual_seed(1)\n",
                "import torch as th\nth.manual_seed(1)\n"),
    ]

    def check(self, facts):
        yield from table_findings(self, facts)


RULE = CudaManualSeed
