"""evidence.version_fallback: the CUDA fallback of `hasattr(torch, "<generic API>")` is dead
code where the project's declared torch floor has that API."""
from __future__ import annotations

import os

SRC = ('import torch\n\n\ndef device():\n    return (torch.accelerator.current_accelerator()\n'
       '            if hasattr(torch, "accelerator") else torch.cuda.current_device())\n')


def _codes(tmp_path, requirement):
    from devlint.api import check_source
    from devlint.config import with_project_floor
    from devlint.settings import Settings

    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "p"\ndependencies = ["{requirement}"]\n')
    path = os.path.join(str(tmp_path), "pkg", "m.py")
    settings = with_project_floor(Settings(), path)
    return [d.code for d in check_source(SRC, path, settings)]


def test_a_declared_floor_with_the_api_makes_the_fallback_dead(tmp_path):
    assert _codes(tmp_path, "torch>=2.6") == []


def test_an_older_floor_keeps_the_fallback_live(tmp_path):
    assert _codes(tmp_path, "torch>=2.4") == ["DL401"]


def test_a_version_flag_or_another_module_is_no_evidence():
    from devlint.api import check_source

    flag = SRC.replace('hasattr(torch, "accelerator")', "_TORCH_GE_2_6")
    assert [d.code for d in check_source(flag, "m.py", target_torch="2.8")] == ["DL401"]
    other = SRC.replace('hasattr(torch, "accelerator")', 'hasattr(np, "accelerator")')
    assert [d.code for d in check_source(other, "m.py", target_torch="2.8")] == ["DL401"]
    # the generic arm itself is not what the test exempts
    assert [d.code for d in check_source(SRC, "m.py", target_torch="2.8")] == []
