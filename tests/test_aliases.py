"""Names resolve through imports and aliases for every rule that names torch APIs; a name that
is not torch's is never flagged."""
from __future__ import annotations

import pytest

from devlint.api import check_source

# (rule, body using the torch name `T` for the torch module, `C` for torch.cuda)
CASES = [
    ("DL401", "C.synchronize()\n"),
    ("DL401", "n = C.device_count()\n"),
    ("DL402", "e = C.Event()\n"),
    ("DL402", "s = C.Stream()\n"),
    ("DL403", "s = C.amp.GradScaler()\n"),
    ("DL404", "C.manual_seed_all(0)\n"),
    ("DL103", 'd = T.device("cuda")\n'),
    ("DL106", 'd = "cuda" if C.is_available() else "cpu"\n'),
]

IMPORTS = {
    "import torch": ("torch", "torch.cuda"),
    "import torch as th": ("th", "th.cuda"),
    "import torch.cuda\nimport torch": ("torch", "torch.cuda"),
    "from torch import cuda": (None, "cuda"),
    "from torch import cuda as tc": (None, "tc"),
    "import torch.cuda as tcu": (None, "tcu"),
}


def _alias_cases():
    for i, (rule, body) in enumerate(CASES):
        for imports, (torch_name, _) in IMPORTS.items():
            if "T." in body and torch_name is None:
                continue  # the body needs the torch module itself
            yield pytest.param(rule, body, imports, id=f"{rule}-{i}-{imports}")


@pytest.mark.parametrize("rule,body,imports", list(_alias_cases()))
def test_rule_sees_through_aliases(rule, body, imports):
    torch_name, cuda_name = IMPORTS[imports]
    src = imports + "\n" + body.replace("T.", f"{torch_name}.").replace("C.", f"{cuda_name}.")
    codes = [d.code for d in check_source(src, "m.py")]
    assert rule in codes, (src, codes)


@pytest.mark.parametrize("src,rule", [
    ("from torch.cuda import synchronize\nsynchronize()\n", "DL401"),
    ("from torch.cuda import synchronize as sync\nsync()\n", "DL401"),
    ("from torch.cuda import Event\ne = Event()\n", "DL402"),
    ("from torch.cuda import amp\nwith amp.autocast():\n    pass\n", "DL403"),
    ("from torch.cuda.amp import GradScaler\ns = GradScaler()\n", "DL403"),
    ("from torch.cuda import manual_seed\nmanual_seed(0)\n", "DL404"),
    ("import pytest\nfrom torch.cuda import is_available\n"
     "@pytest.mark.skipif(not is_available(), reason='gpu')\ndef test_x():\n    pass\n", "DL203"),
])
def test_from_imports(src, rule):
    assert rule in [d.code for d in check_source(src, "m.py")]


@pytest.mark.parametrize("src", [
    "class Dev:\n    def f(self):\n        self.cuda.synchronize()\n",
    "cuda = Backend()\ncuda.synchronize()\ncuda.Event()\n",
    "def f(cuda):\n    return cuda.device_count()\n",
    "import numba.cuda as cuda\ncuda.synchronize()\n",
    "from numba import cuda\ncuda.synchronize()\n",
])
def test_names_that_are_not_torch_are_not_flagged(src):
    assert check_source(src, "m.py") == []
