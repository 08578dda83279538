"""dead-default, extended: the body's fallback for a None default, and a default a call
forwards from its own caller where that caller's default is dead in turn."""
from __future__ import annotations

import json

import pytest
from _cli import run, write_package

FALLBACK = (
    "import torch\n\n\n"
    "def init_groups(size, backend=None):\n"
    "    backend = backend or \"nccl\"\n"
    "    return torch.distributed.new_group(list(range(size)), backend=backend)\n\n\n"
    "def make(n, device=None):\n"
    "    if device is None:\n"
    "        device = \"cuda\"\n"
    "    return torch.zeros(n, device=device)\n")


def _rows(root, principle="dead-default"):
    r = run("check", "--no-cache", "--output-format", "json", "--show-exempt", "--exit-zero",
            "pkg", cwd=root)
    data = json.loads(r.stdout)
    return (sorted((f["filename"], f["location"]["row"]) for f in data["findings"]),
            sorted((e["filename"], e["location"]["row"]) for e in data["exempt"]
                   if e["principle"] == principle))


def test_a_fallback_for_none_every_call_overrides_is_dead(tmp_path):
    write_package(tmp_path, {"pkg/groups.py": FALLBACK,
                             "pkg/setup.py": "from pkg.groups import init_groups, make\n\n\n"
                                             "def start(world, size, backend=None):\n"
                                             "    backend = backend or world.backend\n"
                                             "    init_groups(size, backend)\n"
                                             "    return make(4, device=world.device)\n"})
    assert _rows(tmp_path) == ([], [("pkg/groups.py", 5), ("pkg/groups.py", 11)])


@pytest.mark.parametrize("caller", [
    "    init_groups(size)\n    return make(4, world.device)\n",  # no backend passed
    "    init_groups(size, None)\n    return make(4, world.device)\n",  # None passed
    # the caller's None default forwarded unchanged: None reaches the fallback
    "    init_groups(size, backend=backend)\n    return make(4, world.device)\n",
])
def test_a_fallback_a_call_may_reach_stays_a_finding(tmp_path, caller):
    write_package(tmp_path, {"pkg/groups.py": FALLBACK,
                             "pkg/setup.py": "from pkg.groups import init_groups, make\n\n\n"
                                             "def start(world, size, backend=None):\n" + caller})
    assert _rows(tmp_path)[0] == [("pkg/groups.py", 5)]


LOADER = (
    "import torch\n\n\n"
    "class Model:\n"
    "    @classmethod\n"
    "    def from_tensors(cls, tensors, device=\"cuda\"):\n"
    "        return cls([t.to(device) for t in tensors])\n\n"
    "    @classmethod\n"
    "    def from_checkpoint(cls, path, device=\"cuda\"):\n"
    "        return cls.from_tensors(torch.load(path), device=device)\n")


def test_a_default_forwarded_from_a_dead_default_is_dead(tmp_path):
    write_package(tmp_path, {"pkg/model.py": LOADER,
                             "pkg/manager.py": "from pkg.model import Model\n\n\n"
                                               "def load(path):\n"
                                               "    return Model.from_checkpoint(path, "
                                               "device=\"cpu\")\n"})
    assert _rows(tmp_path) == ([], [("pkg/model.py", 6), ("pkg/model.py", 10)])


def test_a_default_forwarded_from_a_live_default_stays_a_finding(tmp_path):
    write_package(tmp_path, {"pkg/model.py": LOADER,
                             "pkg/manager.py": "from pkg.model import Model\n\n\n"
                                               "def load(path):\n"
                                               "    return Model.from_checkpoint(path)\n"})
    assert _rows(tmp_path)[0] == [("pkg/model.py", 6), ("pkg/model.py", 10)]
