"""DL404's seed groups (issue 13): several CUDA seeds of one value in a run of seed calls
become one device-module seed, whichever finding's fix is applied (an editor applies one), and
a seed after a draw is a reseed that stays."""
from __future__ import annotations

import pytest

from devlint.api import check_source, fix_source

HELPER = ("import random\nimport torch\n\n\ndef seed_all(s):\n    random.seed(s)\n"
          "    torch.cuda.manual_seed(s)\n    torch.cuda.manual_seed_all(s)\n")
ALL_FORM = ('getattr(torch.get_device_module(), "manual_seed_all", '
            'torch.get_device_module().manual_seed)(s)')


def _apply(text, fix):
    for e in sorted(fix.edits, key=lambda e: e.start, reverse=True):
        text = text[:e.start] + e.content + text[e.end:]
    return text


def test_the_group_is_one_seed_of_every_device_whichever_fix_is_applied():
    fixed, remaining, failures = fix_source(HELPER, "m.py", profile="torch")
    assert not remaining and not failures
    assert fixed.count("manual_seed") == 2 and ALL_FORM in fixed  # safe: plain --fix
    assert "torch.manual_seed" not in fixed  # the CPU generator is not reseeded
    diags = check_source(HELPER, "m.py", profile="torch")
    assert [d.code for d in diags] == ["DL404", "DL404"]
    for d in diags:
        assert _apply(HELPER, d.fix) == fixed, d.fix.message


@pytest.mark.parametrize("between", ["x = torch.rand(2)\n", "s = s + 1\n"])
def test_a_seed_after_other_code_stays(between):
    src = f"import torch\ns = 0\ntorch.cuda.manual_seed(s)\n{between}torch.cuda.manual_seed(s)\n"
    fixed, remaining, _ = fix_source(src, "m.py", profile="torch")
    assert not remaining
    assert fixed.count("torch.get_device_module().manual_seed(s)") == 2


def test_same_value_seeds_of_the_current_device_only_stay_current_device_seeds():
    src = "import torch\ntorch.cuda.manual_seed(3)\ntorch.cuda.manual_seed(3)\n"
    fixed, remaining, _ = fix_source(src, "m.py", profile="torch")
    assert not remaining
    assert fixed == ("import torch\nif torch.accelerator.is_available():\n"
                     "    torch.get_device_module().manual_seed(3)\n")
