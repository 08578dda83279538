"""evidence.hip_device, per scope: a function or class named for AMD's stack is the ROCm arm
of a dispatch, where `torch.cuda` is ROCm's and "cuda" the HIP device."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from devlint.evidence.hip_device import hip_named, name_parts


def _check(src: str, path: str = "pkg/m.py"):
    from devlint.api import check_source
    from devlint.settings import Settings

    return [(d.code, d.location[0]) for d in check_source(src, path, Settings())]


def test_name_parts_split_on_underscores_and_case():
    assert name_parts("process_weights_hip_int4") == ["process", "weights", "hip", "int4"]
    assert name_parts("ROCmFlashAttention") == ["rocm", "flash", "attention"]
    assert name_parts("HIPBackend") == ["hip", "backend"]
    assert name_parts("AiterMLABackend") == ["aiter", "mla", "backend"]


@pytest.mark.parametrize("name", ["process_weights_hip_int4", "_rocm_fused_moe", "forward_hip",
                                  "AiterAttnBackend", "ROCmFlashAttention", "_amd_moe_align",
                                  "HIPGraphRunner", "forward_cuda_or_hip"])
def test_vendor_names(name):
    assert hip_named(name)


@pytest.mark.parametrize("name", ["load_chip", "ship_it", "Hipster", "amdahl_speedup",
                                  "is_hip", "_is_rocm_aiter_enabled", "use_aiter_moe",
                                  "should_use_hip_kernel", "check_amd", "forward_non_hip",
                                  "run_without_rocm", "hip_or_xpu_path", "test_hip_kernel",
                                  "TestRocmOps", "forward_cuda", "_run"])
def test_not_vendor_names(name):
    assert not hip_named(name)


SRC = '''import torch


class Method:
    def process_weights_hip_int4(self, layer, device="cuda"):
        def pad(w):
            return torch.zeros(4, device="cuda")
        layer.w = pad(layer.w).to("cuda")
        torch.cuda.empty_cache()

    def process_weights(self, layer):
        layer.w = layer.w.to("cuda")
        torch.cuda.empty_cache()


class ROCmRunner:
    def run(self):
        torch.cuda.synchronize()
'''


def test_the_scope_and_its_nested_functions_and_defaults_are_exempt():
    found = _check(SRC)
    assert sorted(found) == [("DL101", 12), ("DL401", 13)]


def test_show_exempt_names_the_scope(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC)
    env = dict(os.environ)
    env.pop("DEVLINT_OUTPUT_FORMAT", None)
    r = subprocess.run([sys.executable, "-m", "devlint", "check", "--no-cache", "--output-format",
                        "json", "--show-exempt", "pkg"], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    hip = [(e["code"], e["location"]["row"], e["evidence"])
           for e in json.loads(r.stdout)["exempt"] if e["principle"] == "hip-device"]
    assert sorted(hip) == [("DL101", 8, "pkg/m.py:5"), ("DL103", 5, "pkg/m.py:5"),
                           ("DL103", 7, "pkg/m.py:5"), ("DL401", 9, "pkg/m.py:5"),
                           ("DL401", 18, "pkg/m.py:16")]
