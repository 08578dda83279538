"""An option whose every reader in the package only asks whether it is the CPU picks no device
(`devlint.evidence.cpu_switch`, applied by `devlint/engine/project/xswitch.py`): its "cuda"
default is a label, through real `devlint check` runs over small packages; the nearest forms
(a read that reaches a device, an option nobody compares with "cpu") stay findings."""
from __future__ import annotations

from _cli import package_findings, run, write_package

PARAMS = """\
from dataclasses import dataclass


@dataclass
class SamplingParams:
    generator_device: str = "cuda"
    seed: int = 0


def make(generator_device="cuda"):
    return SamplingParams(generator_device=generator_device)
"""

STAGE = """\
import torch

from pkg.platform import current_platform


def generators(batch, cfg, seeds):
    generator_device = batch.generator_device
    if generator_device is None:
        generator_device = getattr(cfg, "generator_device", None) or "cpu"
    if generator_device == "cpu":
        device = "cpu"
    else:
        device = current_platform.device_type
    return [torch.Generator(device).manual_seed(s) for s in seeds]


def forward(state, batch):
    if state.generator_device != batch.generator_device:
        state.generator_device = batch.generator_device
    if batch.generator_device not in (None, "cuda", "cpu"):
        raise ValueError(f"bad generator_device {batch.generator_device!r}")
    return {"generator_device": batch.generator_device}
"""


def tree(tmp_path, extra=""):
    write_package(tmp_path, {"pkg/params.py": PARAMS, "pkg/stage.py": STAGE + extra,
                             "pkg/platform.py": "current_platform = None\n"})
    return tmp_path


def test_an_option_only_compared_with_cpu_is_no_device(tmp_path):
    root = tree(tmp_path)
    assert package_findings(root) == []
    r = run("check", "--no-cache", "--show-exempt", "pkg/params.py", cwd=root)
    assert "[cpu-switch]" in r.stdout and "pkg/stage.py:10" in r.stdout


def test_a_read_that_reaches_a_device_keeps_the_findings(tmp_path):
    root = tree(tmp_path, "\n\ndef rng(batch):\n"
                          "    return torch.Generator(device=batch.generator_device)\n")
    assert [row for f, row, _ in package_findings(root) if f == "pkg/params.py"] == [6, 10]


def test_an_option_nobody_compares_with_cpu_keeps_the_findings(tmp_path):
    write_package(tmp_path, {"pkg/params.py": PARAMS})
    assert [code for _, _, code in package_findings(tmp_path)] == ["DL104", "DL103"]
