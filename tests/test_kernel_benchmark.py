"""kernel-benchmark (issue #18): a benchmark module that imports, unconditionally at its top, a
kernel named for a CUDA-only stack or for its CUDA implementation is CUDA's own; a test
module, an optional import, a device helper named `cuda`, a Triton kernel, a platform query
and a benchmark that also imports another platform's backend are not."""
import ast

import devlint
from devlint.evidence.kernel_benchmark import is_benchmark_path, module_reason

BODY = ("import torch\n{imports}\n\ndevice = torch.device('cuda')\n\n\n"
        "def main():\n    x = torch.randn(8, device=device)\n    torch.cuda.synchronize()\n")


def codes(imports, path="benchmarks/moe/bench_pad.py"):
    return sorted(d.code for d in devlint.check_source(BODY.format(imports=imports), path=path))


def test_a_benchmark_of_a_kernel_named_for_its_cuda_implementation():
    assert codes("from pkg.kernels import fused_pad_cuda, torch_pad") == []
    assert codes("from pkg.kernels import mxfp8_quantize_cuda_3d") == []
    assert codes("from pkg.kernels import _mxfp8_cuda_kernels_available") == []


def test_a_benchmark_of_a_kernel_named_for_a_cuda_only_stack():
    assert codes("from pkg.nvfp4.hadamard_cutedsl_utils import kernels_available") == []
    assert codes("from pkg.kernels.deepgemm_grouped import run") == []
    # AMD's kernel DSL: torch's device type on ROCm is "cuda" too
    assert codes("from pkg.kernels.flydsl_quantize import quantize") == []


def test_what_names_no_cuda_only_kernel_keeps_the_findings():
    for imports in ("from pkg.kernels import triton_pad, torch_pad",
                    "from benchmarks.utils import benchmark_cuda_function_in_microseconds",
                    "from pkg.utils import move_to_cuda, cuda_device_count",
                    "from pkg.random import model_parallel_cuda_manual_seed",
                    "from pkg.utils import is_ROCM",
                    "from pkg.formats.nvfp4_tensor import NVFP4Tensor",
                    "from pkg.graphs import full_cuda_graph",
                    # a dispatch between a Triton kernel and DeepGEMM (dev corpus 064)
                    "from pkg.moe.triton_deep_gemm_moe import TritonOrDeepGemmExperts"):
        assert codes(imports) == ["DL103", "DL401"], imports


def test_an_optional_import_a_test_module_and_another_platform_keep_the_findings():
    assert codes("try:\n    from pkg.kernels import fused_pad_cuda\nexcept ImportError:\n"
                 "    fused_pad_cuda = None") == ["DL103", "DL401"]
    assert codes("from pkg.kernels import fused_pad_cuda",
                 path="tests/test_pad.py") == ["DL103", "DL401"]
    # a benchmark of copy services that also times the CPU's (gloo) compares platforms
    assert codes("from pkg.copy.nvshmem_copy import NVSHMEMCopy\n"
                 "from pkg.copy.gloo_copy import GlooCopy") == ["DL103", "DL401"]


def test_a_library_module_importing_such_a_kernel_is_no_benchmark():
    assert codes("from pkg.kernels import fused_pad_cuda",
                 path="pkg/moe/pad.py") == ["DL103", "DL401"]


def test_what_a_benchmark_path_is():
    assert is_benchmark_path("benchmarks/moe/run.py")
    assert is_benchmark_path("pkg/kernels/bench_pad.py")
    assert is_benchmark_path("pkg/perf/pad_benchmark.py")
    assert is_benchmark_path("pkg/float8/float8_roofline.py")
    assert not is_benchmark_path("/home/u/benchmarks/a/b/c/d/e/pkg/moe/pad.py")
    assert not is_benchmark_path("benchmarks/tests/test_pad.py")
    assert not is_benchmark_path("pkg/moe/pad.py")


def test_the_reason_names_the_principle_and_the_import():
    text = BODY.format(imports="import os\nfrom pkg.kernels import torch_pad, fused_pad_cuda")
    why = module_reason(ast.parse(text), "benchmarks/bench_pad.py")
    assert why.principle == "kernel-benchmark" and why.line == 3
    assert "fused_pad_cuda" in why.text


PROVIDERS = ("import torch\nimport triton\n\nconfigs = [triton.testing.Benchmark(x_names=['n'], "
             "x_vals=[1], line_arg='provider', line_vals={vals}, line_names={vals}, "
             "ylabel='ms', plot_name='p', args={{}})]\n\n\n"
             "def bench(n, provider):\n    x = torch.randn(n, device='cuda')\n"
             "    if provider == {first!r}:\n        return x\n")


def provider_codes(vals, path="examples/benchmark_ops/benchmark_rmsnorm.py"):
    text = PROVIDERS.format(vals=vals, first=vals[0])
    return sorted(d.code for d in devlint.check_source(text, path=path))


def test_a_benchmark_that_compares_a_cuda_implementation_with_others():
    assert provider_codes(["triton_rms_layernorm", "cuda_rms_layernorm"]) == []
    assert provider_codes(["torch_copy_func", "triton_copy_func", "cuda_copy_func"]) == []
    assert provider_codes(["triton_func", "colossal_cuda_func", "vllm_cuda_func"]) == []


def test_providers_that_name_no_cuda_implementation_keep_the_findings():
    # implementations that run elsewhere too (Triton, torch)
    assert provider_codes(["torch_func", "triton_func"]) == ["DL103"]
    # every provider on CUDA: the benchmark compares nothing but CUDA code paths by name
    assert provider_codes(["cuda_a", "cuda_b"]) == ["DL103"]
    # CUDA graphs and devices are no implementation of a kernel
    assert provider_codes(["eager", "cuda_graph"]) == ["DL103"]
    assert provider_codes(["cuda", "xpu"]) == ["DL103"]
    # a library or test module is no benchmark
    assert provider_codes(["triton_rms", "cuda_rms"], path="pkg/ops/rms.py") == ["DL103"]
    assert provider_codes(["triton_rms", "cuda_rms"], path="tests/test_rms.py") == ["DL103"]
