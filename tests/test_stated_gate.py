"""stated-gate: a test whose skip gate states a CUDA-specific subject is CUDA's on purpose."""
from __future__ import annotations

import pytest

from devlint.api import check_source
from devlint.evidence.stated_gate import stated_subject


@pytest.mark.parametrize("text", [
    "needs the CUDA RoPE", "CUDA graphs", "requires CUDA graphs", "requires CUDA graph capture",
    "requires CUDA transfers", "requires CUDA decode stream", "CUDA video transfer",
    "requires NVIDIA CUDA fusion", "fused VAE kernels need CUDA", "CUDA event test",
    "hybrid_window_attn_h3 kernels need NVIDIA CUDA", "UIntxWeightOnlyConfig requires CUDA",
    "requires CUDA for scaled_fp8_quant", "the fused kernel is CUDA-only",
    "requires NVIDIA GPU", "needs cuDNN", "requires CUDAGraph", "lpmm 4-bit Adam only works for CUDA",
    "PrimsTS ships with flashinfer (CUDA-only)", "needs an SM90 or SM100 device with the CuTe package",
    "requires a Blackwell GPU",
])
def test_a_cuda_specific_subject_is_stated(text):
    assert stated_subject(text) is not None


@pytest.mark.parametrize("text", [
    # the platform itself
    "requires CUDA", "CUDA not available", "Skip if not cuda", "needs GPU", "CUDA is required",
    "2 GPUs", "requires two CUDA GPUs", "needs a CUDA device for the Triton kernel",
    "requires FP8-capable CUDA GPU", "needs the CUDA parallel runtime",
    "skipping when cuda is not available", "Need CUDA available",
    # attention runs on every accelerator
    "needs CUDA attention", "CUDA FlexAttention", "TransformerEngine attention requires CUDA",
    # the test itself, a check, the toolkit
    "This test requires CUDA", "Test requires CUDA", "offloading tests require CUDA",
    "CUDA is required for offload check.", "CUDA is required for offloading tests.",
    "CUDA-only test", "triton requires cuda version to be higher than 11.4",
    "CPU offload is only available with CUDA and `accelerate v0.14.0` or higher",
    "needs CUDA for current_device", "CUDA required for SSD ops",
    # a generic feature as the subject: precision, distributed training, compilation, the
    # test's model (each runs on every accelerator)
    "fp16 requires CUDA", "bf16 needs CUDA", "Mixed precision requires CUDA",
    "Distributed training requires CUDA", "torch.compile requires CUDA",
    "This model requires CUDA", "requires CUDA for fp16_training",
    # another platform named too
    "float16 requires CUDA or XPU", "CUDA graphs (or XPU graphs)", "needs CUDA or ROCm kernels",
])
def test_a_generic_reason_states_nothing(text):
    assert stated_subject(text) is None


def _codes(src, path="tests/test_x.py"):
    return [(d.code, d.location[0]) for d in check_source(src, path=path, profile="torch")]


def test_a_stated_platform_gate_exempts_its_test_body():
    src = ('import pytest, torch\nfrom vllm.platforms import current_platform\n\n\n'
           '@pytest.mark.skipif(not current_platform.is_cuda(), reason="needs the CUDA RoPE")\n'
           'def test_rope():\n    x = torch.ones(2, device="cuda")\n    y = x.cuda()\n')
    assert _codes(src) == []
    # the generic reason of vLLM's corpus cases (PR #37566): the literals stay findings
    generic = src.replace("needs the CUDA RoPE", "Skip if not cuda")
    assert [c for c, _ in _codes(generic)] == ["DL103", "DL102"]


def test_a_stated_availability_gate_is_no_dl203_finding():
    src = ('import torch, unittest\n\n\n'
           '@unittest.skipUnless(torch.cuda.is_available(), "CUDA graphs")\n'
           'class T(unittest.TestCase):\n    def test_a(self):\n'
           '        s = torch.cuda.Stream()\n        x = torch.ones(2, device="cuda")\n')
    assert _codes(src) == []
    assert [c for c, _ in _codes(src.replace("CUDA graphs", "requires CUDA"))] == ["DL203"]


def test_a_named_mark_and_a_pytestmark_cover_their_tests():
    named = ('import pytest, torch\nfrom pkg.platforms import current_platform\n\n'
             'requires_cuda = pytest.mark.skipif(\n'
             '    not current_platform.is_cuda(), reason="fused VAE kernels need CUDA"\n)\n\n\n'
             '@requires_cuda\ndef test_a():\n    x = torch.ones(2).cuda()\n\n\n'
             'def test_b():\n    x = torch.ones(2).cuda()\n')
    assert _codes(named) == [("DL102", 15)]  # test_b carries no gate
    module = ('import pytest, torch\n\npytestmark = pytest.mark.skipif(\n'
              '    not torch.cuda.is_available(), reason="requires CUDA transfers"\n)\n\n\n'
              'def test_a():\n    x = torch.ones(2, device="cuda")\n\n\n'
              'class TestB:\n    def test_b(self):\n        y = torch.ones(2).cuda()\n')
    assert _codes(module) == []
    generic = module.replace("requires CUDA transfers", "requires CUDA")
    assert [c for c, _ in _codes(generic)] == ["DL203"]  # its bodies are under a finding gate


def test_the_gate_must_ask_about_cuda():
    # a flag gate whose reason mentions CUDA kernels establishes nothing
    src = ('import pytest, torch\n\n\n@pytest.mark.skipif(not HAS_EXT, reason="needs CUDA kernels")\n'
           'def test_a():\n    x = torch.ones(2, device="cuda")\n')
    assert [c for c, _ in _codes(src)] == ["DL103"]


def test_show_exempt_names_the_principle():
    from devlint.api import check_source as check

    src = ('import pytest, torch\n\n\n'
           '@pytest.mark.skipif(not torch.cuda.is_available(), reason="requires CUDA graphs")\n'
           'def test_a():\n    g = torch.cuda.CUDAGraph()\n')
    assert check(src, path="tests/test_x.py", profile="torch") == []
    from devlint.evidence import PRINCIPLES, principle_summary

    assert PRINCIPLES["stated-gate"] == "devlint.evidence.stated_gate"
    assert "skip gate states a CUDA-specific subject" in principle_summary("stated-gate")


def test_a_gate_that_skips_only_an_older_cuda_gpu_establishes_nothing():
    # it runs on every other accelerator: the class is no CUDA test
    src = ('import torch, unittest\n\n\n'
           '@unittest.skipIf(not torch.accelerator.is_available(), "needs an accelerator")\n'
           '@unittest.skipIf(torch.cuda.is_available() and not is_sm_at_least_89(), "Need sm89+")\n'
           'class T(unittest.TestCase):\n    def test_a(self):\n'
           '        x = torch.ones(2, device="cuda")\n')
    assert [c for c, _ in _codes(src)] == ["DL103"]


@pytest.mark.parametrize("cond, skip, expected", [
    ("not torch.cuda.is_available()", True, True),
    ("not current_platform.is_cuda() or not HAVE_TRITON", True, True),
    ("torch.cuda.device_count() < 2", True, True),
    ("torch_device != 'cuda'", True, True),
    ("torch.version.cuda is None", True, True),
    ("torch.cuda.is_available() and current_platform.is_cuda()", False, True),
    ("torch.cuda.is_available() and not is_sm_at_least_89()", True, False),
    ("torch.cuda.is_available()", True, False),
    ("not HAS_EXT", True, False),
    ("torch.cuda.is_available() or torch.xpu.is_available()", False, False),
])
def test_requires_cuda_reads_the_polarity(cond, skip, expected):
    import ast

    from devlint.evidence.stated_gate import requires_cuda

    assert requires_cuda(ast.parse(cond, mode="eval").body, skip) is expected


def test_a_generic_feature_gate_stays_a_finding():
    src = ('import pytest, torch\n\n\n'
           '@pytest.mark.skipif(not torch.cuda.is_available(), reason="fp16 requires CUDA")\n'
           'def test_half():\n    x = torch.randn(4, device="cuda").half()\n')
    assert [c for c, _ in _codes(src)] == ["DL203"]
