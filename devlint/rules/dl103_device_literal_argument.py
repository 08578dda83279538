"""DL103 device-literal-argument.

Size: ~510 lines, most of them the rule's valid and invalid examples (its tests and its docs),
which show each principle's evidence next to its limits.
"""
from __future__ import annotations

import ast
import re

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import bare, make_fix, role_expr
from devlint.analysis.infer import infer_device
from devlint.rules._device import (
    device_for_literal,
    device_string,
    device_strings,
    device_type_expr,
    index_of,
    skipped,
)
from devlint.rules.base import Invalid, Rule, Valid
from devlint.source import newline_of

# keyword arguments that take a device (or a device type)
_DEVICE_KWARG = re.compile(r"^(?:device|device_map|device_type)$|_device$|location$")
_AMP = {"torch.autocast", "torch.amp.autocast", "torch.amp.GradScaler", "torch.amp.custom_fwd",
        "torch.amp.custom_bwd"}


class DeviceLiteralArgument(Rule):
    """
    ## What it does
    Flags CUDA device literals passed as arguments: `device="cuda"` in any call (tensor
    factories, `torch.Generator`, config objects; also `map_location=`, `device_map=`,
    `device_type=` and `*_device=` keywords), `device="cuda"` as a parameter default, an
    argparse option `add_argument("--device", default="cuda")`,
    `torch.device("cuda")`, `torch.device("cuda", i)`, `torch.device("cuda:0")` and
    `with torch.device("cuda"):`.

    ## Why is this bad?
    The tensor, generator or default device only exists on NVIDIA (or ROCm) GPUs; the code fails
    on every other accelerator and on CPU-only machines.

    ## Example
    ```python
    positions = torch.arange(n, device="cuda")
    ```

    Use instead:
    ```python
    positions = torch.arange(n, device=query.device)
    ```

    ## Fix
    The device is inferred from the code around the call (see DL101): a `device` in scope,
    `self.device`, a tensor whose `.device` the function reads, else the profile's device.
    `"cuda:N"` keeps its index. A parameter default is evaluated once, at import: a call
    there would query (and initialise) the accelerator at import time, before the program
    picks a device or forks workers. So a torch-profile default becomes `None`, resolved to
    the profile's device type when the function runs (`if device is None: device = ...`);
    unsafe, because a caller passing `device=None` on purpose now gets the accelerator. A
    one-line function gets no fix. A profile whose device type is a plain attribute
    (vLLM's `current_platform.device_type`) is written into the default directly.

    ## Fix safety
    Unsafe when the device comes from the surrounding code; safe for the profile's device.

    ## Profiles
    - `torch`: `torch.accelerator.current_accelerator(check_available=True) or "cpu"` for torch's
      own functions, the device type string
      `(torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")).type`
      elsewhere (target-torch 2.7+; 2.6 asks `torch.accelerator.is_available()` first, and
      below 2.6 there is no fix: see docs/profiles.md).
    - `vllm`: `current_platform.device_type`.
    """

    code = "DL103"
    name = "device-literal-argument"
    summary = "Hardcoded CUDA device passed as an argument"

    valid = [
        # under a test that holds only on ROCm, "cuda" is the AMD GPU's name (rocm-guard):
        # a flag set from `is_hip()`, one chained from it by `and`, an early exit
        Valid('import torch\nfrom sglang.srt.utils import is_hip\n\n_is_hip = is_hip()\n'
              'if _is_hip:\n    ON_GFX950 = "gfx950" in '
              'torch.cuda.get_device_properties("cuda").gcnArchName\n'),
        Valid('import torch\n\n_use_aiter = get_bool_env_var("USE_AITER") and is_hip()\n\n\n'
              'def scale(n):\n    if _use_aiter:\n        return torch.ones(n, device="cuda")\n'
              '    return None\n'),
        Valid('import torch\n\n\ndef f(n):\n    if not current_platform.is_rocm():\n'
              '        return None\n    return torch.zeros(n, device="cuda")\n'),
        # a test gated on the CUDA toolkit version (cuda-guard, a CUDA build)
        Valid('import pytest\nimport torch\nfrom packaging import version\n'
              'TRITON_CUDA = version.parse(torch.version.cuda) > version.parse("11.4")\n\n\n'
              '@pytest.mark.skipif(not TRITON_CUDA, reason="triton requires cuda > 11.4")\n'
              'def test_rope():\n    x = torch.ones(4, device="cuda")\n', path="tests/test_rope.py"),
        # an arm that calls a CUDA-only library (cuda-only-arm)
        Valid('import torch\nimport smdistributed.modelparallel.torch as smp\n\n\n'
              'def setup(mp):\n    if mp:\n        device = torch.device("cuda", smp.local_rank())\n'
              '        return device\n    return None\n'),
        # a test value stored in a record and compared back (compared-value)
        Valid('from argparse import Namespace\n\n\ndef test_cli_override():\n'
              '    ns = Namespace(model="hf", device="cuda:1")\n    cfg = Config.from_cli(ns)\n'
              '    assert cfg.device == "cuda:1"\n', path="tests/test_cli.py"),
        # the default of an empty abstract method: overrides bring their own (abstract-default)
        Valid('import abc\n\n\nclass Accelerator(abc.ABC):\n    @abc.abstractmethod\n'
              '    def set_rng_state(self, state, device: str = "cuda") -> None:\n'
              '        """Set the RNG state."""\n'),
        # under a test for ONNX Runtime's CUDA-only providers (cuda-backend)
        Valid('import torch\n\n\ndef device(provider, i):\n'
              '    if provider in ("CUDAExecutionProvider", "TensorrtExecutionProvider"):\n'
              '        return torch.device("cuda", i)\n    return torch.device("cpu")\n'),
        # the module states that it requires CUDA (stated-requirement)
        Valid('"""Megatron backend.\n\nRequirements:\n    - PyTorch with CUDA support\n"""\n'
              'import torch\nd = torch.device("cuda")\n', path="backend.py"),
        # a private helper whose every call in the file passes `device` (not-a-device)
        Valid('import torch\n\n\nclass Processor:\n    @staticmethod\n'
              '    def _normalize(device="cuda"):\n        return torch.zeros(3, device=device)\n\n'
              '    def run(self, x):\n        return x - self._normalize(device=x.device)\n'),
        # a ROCm (AITER) module, where torch calls the AMD GPU "cuda" (hip-device)
        Valid('import torch\nimport aiter\n\n\ndef topk_meta(n):\n'
              '    return torch.empty(n, dtype=torch.int32, device="cuda")\n',
              path="pkg/layers/rocm_aiter_moe.py"),
        Valid('import torch\n\n\ndef buf(n):\n    return torch.empty(n, device="cuda")\n',
              path="pkg/models/m3/amd/executor.py"),
        # under a guard that established CUDA (the guard is DL401's finding)
        Valid('import torch\nif torch.cuda.is_available():\n    t = torch.randn(4, device="cuda:0")\n'),
        Valid('import torch\n_IS_CUDA = torch.cuda.is_available()\n\n\ndef f():\n'
              '    if _IS_CUDA:\n        return torch.ones(1, device="cuda")\n'),
        Valid('import torch, pytest\n\n\n@pytest.mark.skipif(not torch.cuda.is_available(), reason="x")\n'
              'def test_x():\n    t = torch.ones(1, device="cuda")\n'),
        Valid('import torch, unittest\n\n\n@unittest.skipIf(not is_sm_at_least_90(), "sm90")\n'
              'class T(unittest.TestCase):\n    def test_x(self):\n        torch.ones(1, device="cuda")\n'),
        Valid('import torch\n\n\ndef _require_cuda():\n    if not torch.cuda.is_available():\n'
              '        raise RuntimeError("CUDA")\n\n\nclass M:\n    def __init__(self):\n'
              '        _require_cuda()\n        self.buf = torch.empty(4, device="cuda")\n'),
        Valid('import torch\nif len(torch.cuda.default_generators) > 0:\n'
              '    g = torch.Generator(device="cuda")\n'),
        Valid('def f(x, device, defer):\n    if defer or device.type != "cuda":\n        return x\n'
              '    else:\n        return x.to(device="cuda")\n'),
        # a platform ladder written with a project's helpers; its final else
        Valid('import torch\nif is_torch_xpu_available():\n    d = torch.device("xpu")\n'
              'elif is_torch_npu_available():\n    d = torch.device("npu")\n'
              'else:\n    d = torch.device("cuda")\n'),
        Valid("import torch\nx = torch.zeros(2, device=q.device)\n"),
        Valid('import torch\nx = torch.zeros(2, device="cpu")\n'),
        Valid('import pytest\nimport torch\nif not current_platform.is_cuda():\n    pytest.skip("CUDA graphs")\ng = torch.Generator(device="cuda")\n'),
        Valid('KERNELS = {"cuda": 1, "xpu": 2}\n'),
        Valid('import torch\nx = x.to("cuda")  # DL101, not DL103\n'),
        Valid('def f(backend="cuda"):\n    pass\n'),
        Valid('p.add_argument("--backend", default="cuda")\n'),
        Valid('x = env_with_choices("KERNEL", "cuda", ["cuda", "triton"])\n'),
        Valid('v = os.getenv("TARGET", "cuda")\n'),
        # the first argument of a mover is the data
        Valid('x = to_device("cuda", dev)\n'),
        # the rest of a block after `assert <platform is CUDA>` or `if not ...: return`
        Valid('import torch\n\n\ndef f():\n    assert current_platform.is_cuda()\n'
              '    return torch.empty(4, device="cuda")\n'),
        Valid('import torch\n\n\ndef f():\n    on_gpu = current_platform.is_cuda()\n'
              '    if on_gpu:\n        return torch.empty(4, device="cuda")\n'),
        Valid('from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    def f(device="cuda"): ...\n'),
        # a function that drives the CUDA runtime directly is CUDA-only by construction
        Valid('import torch\n\n\ndef launch(x):\n    buf = torch.empty(4, device="cuda")\n'
              '    kernel(buf, stream=torch.cuda.current_stream().cuda_stream)\n'),
        Valid('import torch\n\n\nclass FlashInferWorkspace:\n    def __init__(self):\n'
              '        self.buf = torch.empty(4, device="cuda")\n'),
        Valid('try:\n    import cuda.bindings.driver as drv\nexcept ImportError:\n'
              '    from cuda import cuda as drv\nimport torch\nx = torch.empty(1, device="cuda")\n'),
        # a constructor that rejects every device but CUDA by a stated contract
        Valid('class Engine:\n    def __init__(self, device: str = "cuda"):\n'
              '        assert "cuda" in device or device is None, "Engine only supports CUDA"\n'),
        # a test that is always skipped never runs
        Valid('import pytest\nimport torch\n\n\n@pytest.mark.skip(reason="requires CUDA")\n'
              'class TestX:\n    def test_a(self):\n        x = torch.zeros(2, device="cuda")\n'),
        # cuda-kernel-source: the wrapper of a kernel built from CUDA C++ source
        Valid('import torch\nfrom torch.utils.cpp_extension import load\n\n\n'
              'def _ext():\n    return load("rms", sources=["rms.cu"])\n\n\n'
              'def rms(x):\n    out = torch.empty(x.shape, device="cuda")\n'
              '    _ext().run(out, x)\n    return out\n'),
        # entry-gate: a script whose entry point stops unless the GPU is an SM100
        Valid('import torch\n\n\ndef bench():\n    return torch.randn(8, device="cuda")\n\n\n'
              'def main():\n    if not is_sm_at_least_100():\n'
              '        raise RuntimeError("requires SM100")\n    bench()\n\n\n'
              'if __name__ == "__main__":\n    main()\n'),
        # a module skipped unless the GPU is an SM89 NVIDIA or an MI300 AMD one
        Valid('import pytest\nimport torch\nif not (is_sm_at_least_89() or is_MI300()):\n'
              '    pytest.skip("fp8", allow_module_level=True)\n\n\n'
              'def test_a():\n    x = torch.zeros(2, device="cuda")\n'),
        # a skip mark bound to a name, that requires a compute capability
        Valid('import pytest, torch\nrequires_hopper = pytest.mark.skipif(\n'
              '    not is_sm_at_least_90(), reason="FA3")\n\n\n'
              '@requires_hopper\ndef test_a():\n    x = torch.zeros(2, device="cuda")\n'),
        # the same gate, a list of marks applied by a decorator function of the module
        Valid('import pytest, torch\nrequires_sm100 = [\n'
              '    pytest.mark.skipif(not has_triton(), reason="triton"),\n'
              '    pytest.mark.skipif(not is_sm_at_least_100(), reason="SM100")]\n\n\n'
              'def _maybe_sm100(fn):\n    for mark in requires_sm100:\n        fn = mark(fn)\n'
              '    return fn\n\n\n'
              '@_maybe_sm100\ndef test_a():\n    x = torch.zeros(2, device="cuda")\n'),
        # library-gate: the test runs only where a library of GPU kernels only imports
        # (FlashAttention-3, a compiled `*_cuda` extension), or where such a library's own
        # hardware-support check passes (TransformerEngine's `check_fp8_support()`)
        Valid('import pytest, torch\ntry:\n    import flash_attn_3\n    HAVE_FA3 = True\n'
              'except ImportError:\n    HAVE_FA3 = False\n\n\n'
              '@pytest.mark.skipif(not (is_te_min_version("2.10") and HAVE_FA3), reason="FA3")\n'
              'def test_a():\n    x = torch.zeros(2, device="cuda")\n'),
        Valid('import pytest, torch\ntry:\n    import fused_layer_norm_cuda\n    HAS_EXT = True\n'
              'except ImportError:\n    HAS_EXT = False\n\n\n'
              'def test_a():\n    if not HAS_EXT:\n        pytest.skip("ext")\n'
              '    x = torch.zeros(2, device="cuda")\n'),
        Valid('import pytest, torch\ntry:\n'
              '    from transformer_engine.pytorch.fp8 import check_fp8_support\n'
              '    fp8_available, reason = check_fp8_support()\n'
              'except ImportError:\n    fp8_available, reason = False, "no TE"\n\n\n'
              '@pytest.mark.skipif(not fp8_available, reason=reason)\n'
              'def test_a():\n    x = torch.zeros(2, device="cuda")\n'),
        # library-subject: a test whose subject is a library of NVIDIA/AMD GPU kernels: named
        # for it, gated with a reason naming its kernel, importing its own API in its body, or
        # in a module that skips without it and imports it
        Valid('import torch\nfrom transformer_engine.pytorch import GroupedLinear\n\n\n'
              'def test_te_grouped_linear():\n    x = torch.zeros(2, device="cuda")\n'
              '    GroupedLinear(2, 2, 2)(x)\n', path="tests/test_moe.py"),
        Valid('import pytest, torch\nfrom pkg.specs import layer_with_transformer_engine_spec\n'
              'from pkg.utils import is_te_min_version\n\n\n'
              '@pytest.mark.skipif(not is_te_min_version("1.4"), '
              'reason="Fused RoPE requires TE >= 1.4")\n'
              'def test_rope_forward():\n    x = torch.zeros(2, device="cuda")\n',
              path="tests/test_attention.py"),
        Valid('import torch\n\n\ndef test_precision_aware_adam():\n    try:\n'
              '        from transformer_engine.pytorch.optimizers import FusedAdam\n'
              '    except ImportError:\n        return\n    p = torch.zeros(2, device="cuda")\n'
              '    FusedAdam([p])\n', path="tests/test_optimizer.py"),
        Valid('import pytest, torch\nfrom pkg.api import HAVE_GTP\n\nif not HAVE_GTP:\n'
              '    pytest.skip("GTP requires TransformerEngine >= 2.19", allow_module_level=True)\n\n'
              'import transformer_engine.pytorch as te\n\n\n'
              'def _layer_out():\n    x = torch.zeros(2, device="cuda")\n    return te.Linear(2, 2)(x)\n',
              path="tests/test_gtp.py"),
        # ... and, where that module imports the library's package itself, all of it: a worker
        # that builds its layer through a helper is the library's too
        Valid('import pytest, torch\nfrom pkg.api import HAVE_GTP\n\nif not HAVE_GTP:\n'
              '    pytest.skip("GTP requires TransformerEngine >= 2.19", allow_module_level=True)\n\n'
              'import transformer_engine.pytorch as te\nfrom pkg.utils import make_layer\n\n\n'
              'def _worker():\n    x = torch.zeros(2, device="cuda")\n    return make_layer()(x)\n',
              path="tests/test_gtp.py"),
        # stated-gate: a test whose gate (here a platform query) states the CUDA-only thing
        # it exercises
        Valid('import pytest, torch\nfrom pkg.platforms import current_platform\n\n\n'
              '@pytest.mark.skipif(not current_platform.is_cuda(), reason="needs the CUDA RoPE")\n'
              'def test_rope():\n    x = torch.zeros(2, device="cuda")\n',
              path="tests/test_rope.py"),
        # kernel-benchmark: a benchmark of a kernel named for its CUDA implementation
        Valid('import torch\nfrom pkg.kernels import fused_pad_cuda, torch_pad\n\n'
              'device = torch.device("cuda")\n', path="benchmarks/bench_pad.py"),
        # kernel-benchmark: a benchmark that times a kernel's CUDA implementation against Triton
        Valid('import torch\n\n\ndef bench(n, provider):\n'
              '    x = torch.randn(n, device="cuda")\n    if provider == "triton_rmsnorm":\n'
              '        return x\n    elif provider == "cuda_rmsnorm":\n        return x\n',
              path="benchmarks/benchmark_rmsnorm.py"),
        # gated-benchmark: a benchmark that skips its measurements without an SM90 GPU
        Valid('import torch\n\ndevice = torch.device("cuda")\n\n\n'
              'def main():\n    if torch.cuda.get_device_capability() != (9, 0):\n'
              '        print("Skipping: FP8 rowwise needs SM90")\n        return\n',
              path="benchmarks/bench_grouped_mm.py"),
        # fake-tensor: a tensor made under torch's fake tensor mode holds only metadata
        Valid('import torch\nfrom torch._subclasses.fake_tensor import FakeTensorMode\n\n\n'
              'def test_shapes():\n    with FakeTensorMode():\n'
              '        x = torch.empty(4, device="cuda")\n    assert x.shape == (4,)\n',
              path="tests/test_shapes.py"),
        # cuda-value: a private helper called only by tests gated on a compute capability
        Valid('import pytest\nimport torch\n\n\ndef _make():\n'
              '    return torch.ones(2, device="cuda")\n\n\n'
              '@pytest.mark.skipif(torch.cuda.get_device_capability() < (9, 0), reason="SM90")\n'
              'def test_fp8():\n    _make()\n', path="tests/test_fp8.py"),
    ]
    invalid = [
        # cuda-value's limit: a helper of a test whose availability gate is itself a finding
        Invalid('import pytest\nimport torch\n\n\ndef _make():\n'
                '    return torch.ones(2, device="cuda")\n\n\n'
                '@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")\n'
                'def test_a():\n    _make()\n',
                'import pytest\nimport torch\n\n\ndef _make():\n'
                '    return torch.ones(2, device=torch.accelerator.current_accelerator() '
                'if torch.accelerator.is_available() else "cpu")\n\n\n'
                '@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")\n'
                'def test_a():\n    _make()\n', path="tests/test_a.py"),
        # stated-gate's limit: a platform-query gate whose reason names only the platform
        # (upstream fixed the literals under one: vLLM PR #37566)
        Invalid('import pytest, torch\nfrom pkg.platforms import current_platform\n\n\n'
                '@pytest.mark.skipif(not current_platform.is_cuda(), reason="Skip if not cuda")\n'
                'def test_rope():\n    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\nfrom pkg.platforms import current_platform\n\n\n'
                '@pytest.mark.skipif(not current_platform.is_cuda(), reason="Skip if not cuda")\n'
                'def test_rope():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() '
                'if torch.accelerator.is_available() else "cpu")\n',
                path="tests/test_rope.py"),
        # fake-tensor's limit: a mode chosen by a condition may be no fake mode at all
        Invalid('import torch\nfrom contextlib import nullcontext\n'
                'from torch._subclasses.fake_tensor import FakeTensorMode\n\n\n'
                'def check_shapes(fake):\n    with FakeTensorMode() if fake else nullcontext():\n'
                '        x = torch.empty(4, device="cuda")\n    return x.shape\n',
                'import torch\nfrom contextlib import nullcontext\n'
                'from torch._subclasses.fake_tensor import FakeTensorMode\n\n\n'
                'def check_shapes(fake):\n    with FakeTensorMode() if fake else nullcontext():\n'
                '        x = torch.empty(4, device=torch.accelerator.current_accelerator() '
                'if torch.accelerator.is_available() else "cpu")\n    return x.shape\n'),
        # library-subject's limits: a gate whose reason names the library but none of its
        # kernels (a generic feature that needs its version), the library's name in a test
        # of a module that does not refer to it (its initials in an imported name are no
        # reference), a skip of one parametrised case, the generic test beside the library's ones,
        # an import in the test that only asks whether the library is there, a
        # function of a module that skips without the library but uses none of its API
        Invalid('import pytest, torch\nfrom pkg.api import HAVE_GTP\n\nif not HAVE_GTP:\n'
                '    pytest.skip("GTP requires TransformerEngine >= 2.19", allow_module_level=True)\n\n'
                'from transformer_engine.pytorch import fp8_autocast\n\n\n'
                'def test_expert_bias():\n    base = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\nfrom pkg.api import HAVE_GTP\n\nif not HAVE_GTP:\n'
                '    pytest.skip("GTP requires TransformerEngine >= 2.19", allow_module_level=True)\n\n'
                'from transformer_engine.pytorch import fp8_autocast\n\n\n'
                'def test_expert_bias():\n    base = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n', path="tests/test_gtp.py"),
        Invalid('import pytest, torch\nfrom pkg.specs import layer_with_transformer_engine_spec\n'
                'from pkg.utils import is_te_min_version\n\n\n'
                '@pytest.mark.skipif(not is_te_min_version("2.9"), '
                'reason="QK clipping requires TE >= 2.9")\n'
                'class TestClipQK:\n    def test_a(self):\n        x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\nfrom pkg.specs import layer_with_transformer_engine_spec\n'
                'from pkg.utils import is_te_min_version\n\n\n'
                '@pytest.mark.skipif(not is_te_min_version("2.9"), '
                'reason="QK clipping requires TE >= 2.9")\n'
                'class TestClipQK:\n    def test_a(self):\n        x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n',
                path="tests/test_attention.py"),
        # ... a module that imports the library's package without a module-wide skip on it
        # merely builds with the library: its generic tests stay reported
        Invalid('import torch\nimport transformer_engine.pytorch as te\n\n\n'
                'def test_optimizer():\n    x = torch.zeros(2, device="cuda")\n',
                'import torch\nimport transformer_engine.pytorch as te\n\n\n'
                'def test_optimizer():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n',
                path="tests/test_optimizer.py"),
        Invalid('import torch\n\n\ndef test_te_linear():\n    x = torch.zeros(2, device="cuda")\n',
                'import torch\n\n\ndef test_te_linear():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n',
                path="tests/test_linear.py"),
        Invalid('import torch\nfrom pkg.attention import fa4_block_sizes\n\n\n'
                'def test_fa4_blocks():\n    x = torch.zeros(2, device="cuda")\n',
                'import torch\nfrom pkg.attention import fa4_block_sizes\n\n\n'
                'def test_fa4_blocks():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n', path="tests/test_attn.py"),
        Invalid('import torch\nfrom pkg.extensions.transformer_engine import TELinear\n\n\n'
                'def test_te_linear():\n    x = torch.zeros(2, device="cuda")\n\n\n'
                'def test_linear():\n    x = torch.zeros(2, device="cuda")\n',
                'import torch\nfrom pkg.extensions.transformer_engine import TELinear\n\n\n'
                'def test_te_linear():\n    x = torch.zeros(2, device="cuda")\n\n\n'
                'def test_linear():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n', path="tests/test_linear.py"),
        Invalid('import pytest, torch\nfrom pkg.extensions.transformer_engine import HAVE_TE_ADAM\n\n\n'
                'def test_loss(opt):\n    if opt == "fused_adam" and not HAVE_TE_ADAM:\n'
                '        pytest.skip("TE FusedAdam is not available")\n'
                '    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\nfrom pkg.extensions.transformer_engine import HAVE_TE_ADAM\n\n\n'
                'def test_loss(opt):\n    if opt == "fused_adam" and not HAVE_TE_ADAM:\n'
                '        pytest.skip("TE FusedAdam is not available")\n'
                '    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n', path="tests/test_optim.py"),
        Invalid('import pytest, torch\n\n\ndef test_swap():\n    try:\n        import transformer_engine\n'
                '    except ImportError:\n        pytest.skip("Transformer Engine not available")\n'
                '    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\n\n\ndef test_swap():\n    try:\n        import transformer_engine\n'
                '    except ImportError:\n        pytest.skip("Transformer Engine not available")\n'
                '    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n', path="tests/test_swap.py"),
        # library-gate's limits: TransformerEngine's import alone (its ports run elsewhere),
        # a flag also set true without the library, a library that runs anywhere, a gate one
        # of whose alternatives needs no such library
        Invalid('import pytest, torch\ntry:\n    import transformer_engine\n    HAVE_TE = True\n'
                'except ImportError:\n    HAVE_TE = False\n\n\n'
                '@pytest.mark.skipif(not HAVE_TE, reason="TE")\n'
                'def test_a():\n    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\ntry:\n    import transformer_engine\n    HAVE_TE = True\n'
                'except ImportError:\n    HAVE_TE = False\n\n\n'
                '@pytest.mark.skipif(not HAVE_TE, reason="TE")\n'
                'def test_a():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else \"cpu\")\n'),
        Invalid('import pytest, torch\ntry:\n    import flash_attn_3\n    HAVE_FA3 = True\n'
                'except ImportError:\n    HAVE_FA3 = False\nif FORCE:\n    HAVE_FA3 = True\n\n\n'
                '@pytest.mark.skipif(not HAVE_FA3, reason="FA3")\n'
                'def test_a():\n    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\ntry:\n    import flash_attn_3\n    HAVE_FA3 = True\n'
                'except ImportError:\n    HAVE_FA3 = False\nif FORCE:\n    HAVE_FA3 = True\n\n\n'
                '@pytest.mark.skipif(not HAVE_FA3, reason="FA3")\n'
                'def test_a():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else \"cpu\")\n'),
        Invalid('import pytest, torch\ntry:\n    import scipy\n    HAVE_SCIPY = True\n'
                'except ImportError:\n    HAVE_SCIPY = False\n\n\n'
                '@pytest.mark.skipif(not HAVE_SCIPY, reason="scipy")\n'
                'def test_a():\n    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\ntry:\n    import scipy\n    HAVE_SCIPY = True\n'
                'except ImportError:\n    HAVE_SCIPY = False\n\n\n'
                '@pytest.mark.skipif(not HAVE_SCIPY, reason="scipy")\n'
                'def test_a():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else \"cpu\")\n'),
        Invalid('import pytest, torch\ntry:\n    import flash_attn_3\n    HAVE_FA3 = True\n'
                'except ImportError:\n    HAVE_FA3 = False\n\n\n'
                '@pytest.mark.skipif(not HAVE_FA3 and not HAVE_SDPA, reason="attn")\n'
                'def test_a():\n    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\ntry:\n    import flash_attn_3\n    HAVE_FA3 = True\n'
                'except ImportError:\n    HAVE_FA3 = False\n\n\n'
                '@pytest.mark.skipif(not HAVE_FA3 and not HAVE_SDPA, reason="attn")\n'
                'def test_a():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else \"cpu\")\n'),
        # a benchmark of a Triton kernel (Triton runs on other accelerators too)
        Invalid('import torch\nfrom pkg.kernels import triton_pad\n\n'
                'device = torch.device("cuda")\n',
                'import torch\nfrom pkg.kernels import triton_pad\n\n'
                'device = torch.accelerator.current_accelerator() if '
                'torch.accelerator.is_available() else torch.device("cpu")\n',
                path="benchmarks/bench_pad.py"),
        # a benchmark that skips pre-Ampere GPUs (bf16) runs on other accelerators
        Invalid('import torch\n\ndevice = torch.device("cuda")\n\n\n'
                'def main():\n    if torch.cuda.get_device_capability()[0] < 8:\n'
                '        return\n',
                'import torch\n\ndevice = torch.accelerator.current_accelerator() if '
                'torch.accelerator.is_available() else torch.device("cpu")\n\n\n'
                'def main():\n    if torch.cuda.get_device_capability()[0] < 8:\n'
                '        return\n',
                path="benchmarks/bench_grouped_mm.py"),
        # a decorator function whose marks require no GPU (a torch version) gates nothing
        Invalid('import pytest, torch\n'
                'requires_new = [pytest.mark.skipif(not torch_version_at_least("2.10"), '
                'reason="2.10")]\n\n\ndef _maybe_new(fn):\n    for mark in requires_new:\n'
                '        fn = mark(fn)\n    return fn\n\n\n'
                '@_maybe_new\ndef test_a():\n    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\n'
                'requires_new = [pytest.mark.skipif(not torch_version_at_least("2.10"), '
                'reason="2.10")]\n\n\ndef _maybe_new(fn):\n    for mark in requires_new:\n'
                '        fn = mark(fn)\n    return fn\n\n\n'
                '@_maybe_new\ndef test_a():\n    x = torch.zeros(2, device=torch.accelerator.'
                'current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        # a public library function: its users may rely on the default
        Invalid('import torch\n\n\ndef normalize(device="cuda"):\n'
                '    return torch.zeros(3, device=device)\n\n\nm = normalize(device="cpu")\n',
                'import torch\n\n\ndef normalize(device=None):\n    if device is None:\n'
                '        device = torch.accelerator.current_accelerator().type if '
                'torch.accelerator.is_available() else "cpu"\n'
                '    return torch.zeros(3, device=device)\n\n\nm = normalize(device="cpu")\n'),
        # a private helper's call that forwards its caller's own default keeps it live
        Invalid('import torch\n\n\ndef _normalize(device="cuda"):\n'
                '    return torch.zeros(3, device=device)\n\n\n'
                'def run(x, device=None):\n    return _normalize(device=device)\n\n\n'
                'def run2(x, device="cpu"):\n    return _normalize(device=device)\n',
                'import torch\n\n\ndef _normalize(device=None):\n    if device is None:\n'
                '        device = torch.accelerator.current_accelerator().type if '
                'torch.accelerator.is_available() else "cpu"\n'
                '    return torch.zeros(3, device=device)\n\n\n'
                'def run(x, device=None):\n    return _normalize(device=device)\n\n\n'
                'def run2(x, device="cpu"):\n    return _normalize(device=device)\n'),
        # TransformerEngine's torch.cuda API is right on its ports, a "cuda" literal is not
        Invalid('import torch\nimport transformer_engine.pytorch as te\n\n\ndef buf(n):\n'
                '    return torch.empty(n, device="cuda")\n',
                'import torch\nimport transformer_engine.pytorch as te\n\n\ndef buf(n):\n'
                '    return torch.empty(n, device=torch.accelerator.current_accelerator() if '
                'torch.accelerator.is_available() else "cpu")\n',
                path="pkg/te_layers.py"),
        # a module-level name a library module never reads may be read by its importers
        Invalid('import torch\nDEVICE = torch.device("cuda")\n',
                'import torch\nDEVICE = torch.accelerator.current_accelerator() if '
                'torch.accelerator.is_available() else torch.device("cpu")\n'),
        # the value reaches a model, not only a record
        Invalid('def test_load():\n    m = load(device="cuda:1")\n    assert m.device == "cuda:1"\n',
                'import torch\ndef test_load():\n    m = load(device=torch.device(torch.accelerator.current_accelerator()'
                '.type if torch.accelerator.is_available() else "cpu", 1))\n'
                '    assert m.device == "cuda:1"\n', path="tests/test_load.py"),
        # a concrete method's default is used
        Invalid('import torch\n\n\nclass Base:\n    def rng(self, device="cuda"):\n'
                '        return torch.Generator(device=device)\n',
                'import torch\n\n\nclass Base:\n    def rng(self, device=None):\n'
                '        if device is None:\n'
                '            device = torch.accelerator.current_accelerator().type if '
                'torch.accelerator.is_available() else "cpu"\n'
                '        return torch.Generator(device=device)\n'),
        # a provider list that also names ROCm's is no CUDA test
        Invalid('import torch\n\n\ndef device(provider, i):\n'
                '    if provider in ("CUDAExecutionProvider", "ROCMExecutionProvider"):\n'
                '        return torch.device("cuda", i)\n    return torch.device("cpu")\n',
                'import torch\n\n\ndef device(provider, i):\n'
                '    if provider in ("CUDAExecutionProvider", "ROCMExecutionProvider"):\n'
                '        return torch.device(torch.accelerator.current_accelerator().type if '
                'torch.accelerator.is_available() else "cpu", i)\n    return torch.device("cpu")\n'),
        # a docstring that mentions CUDA states no requirement
        Invalid('"""CUDA-only primitives, so on ROCm we use this."""\nimport torch\n'
                'd = torch.device("cuda")\n',
                '"""CUDA-only primitives, so on ROCm we use this."""\nimport torch\n'
                'd = torch.accelerator.current_accelerator() if torch.accelerator.is_available() '
                'else torch.device("cpu")\n'),
        # the branch of a negated ROCm test runs everywhere else; an `or` with another
        # condition holds off ROCm too (rocm-guard's limits)
        Invalid('import torch\n\n\ndef f(n):\n    if not is_hip():\n'
                '        return torch.zeros(n, device="cuda")\n    return None\n',
                'import torch\n\n\ndef f(n):\n    if not is_hip():\n'
                '        return torch.zeros(n, device=torch.accelerator.current_accelerator() if '
                'torch.accelerator.is_available() else "cpu")\n    return None\n'),
        Invalid('import torch\n\n\ndef f(n, use_triton):\n    if is_hip() or use_triton:\n'
                '        return torch.zeros(n, device="cuda")\n    return None\n',
                'import torch\n\n\ndef f(n, use_triton):\n    if is_hip() or use_triton:\n'
                '        return torch.zeros(n, device=torch.accelerator.current_accelerator() if '
                'torch.accelerator.is_available() else "cpu")\n    return None\n'),
        # a test for CUDA *or ROCm* exempts the torch.cuda API, not a device literal
        Invalid('import torch\nif current_platform.is_cuda_alike():\n'
                '    t = torch.zeros(2, device="cuda")\n',
                'import torch\nfrom vllm.platforms import current_platform\n'
                'if current_platform.is_cuda_alike():\n'
                '    t = torch.zeros(2, device=current_platform.device_type)\n', profile="vllm"),
        Invalid('import torch\n\n\ndef f(n, device="cuda"):\n    """Zeros."""\n'
                '    return torch.zeros(n, device=device)\n',
                'import torch\n\n\ndef f(n, device=None):\n    """Zeros."""\n'
                '    if device is None:\n'
                '        device = torch.accelerator.current_accelerator().type if '
                'torch.accelerator.is_available() else "cpu"\n'
                '    return torch.zeros(n, device=device)\n'),
        Invalid('def f(device="cuda"): return device\n', None),
        # a `.cu` name in a message is no build; a generic function beside a kernel builder,
        # and a wrapper that calls it under an `if`, are not the kernel's
        Invalid('import torch\n\n\ndef f(x):\n    log("see rms.cu")\n'
                '    return torch.zeros(2, device="cuda")\n', 'import torch\n'
                '\n'
                '\n'
                'def f(x):\n'
                '    log("see rms.cu")\n'
                '    return torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        Invalid('import torch\nfrom torch.utils.cpp_extension import load\n\n\n'
                'def _ext():\n    return load("rms", sources=["rms.cu"])\n\n\n'
                'def rms(x, fast):\n    if fast:\n        return _ext().run(x)\n'
                '    return torch.zeros(2, device="cuda")\n', 'import torch\n'
                'from torch.utils.cpp_extension import load\n'
                '\n'
                '\n'
                'def _ext():\n'
                '    return load("rms", sources=["rms.cu"])\n'
                '\n'
                '\n'
                'def rms(x, fast):\n'
                '    if fast:\n'
                '        return _ext().run(x)\n'
                '    return torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        # a skip gate on a flag is no gate that establishes CUDA: upstream fixed the devices
        # under one (torchao test_qat.py)
        Invalid('import torch, unittest\n_CUDA = torch.cuda.is_available()\n\n\n'
                '@unittest.skipIf(not _CUDA, "cuda")\ndef test_a():\n'
                '    x = torch.zeros(2, device="cuda")\n',
                'import torch, unittest\n_CUDA = torch.cuda.is_available()\n\n\n'
                '@unittest.skipIf(not _CUDA, "cuda")\ndef test_a():\n'
                '    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        # a bound mark that merely asks about the platform exempts nothing under it
        Invalid('import pytest, torch\nneeds_cuda_platform = pytest.mark.skipif(\n'
                '    not current_platform.is_cuda(), reason="x")\n\n\n'
                '@needs_cuda_platform\ndef test_a():\n    x = torch.zeros(2, device="cuda")\n',
                'import pytest, torch\nneeds_cuda_platform = pytest.mark.skipif(\n'
                '    not current_platform.is_cuda(), reason="x")\n\n\n'
                '@needs_cuda_platform\ndef test_a():\n    x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        # entry-gate: a gate on availability alone asks "is there a GPU?"; a library has no
        # entry point
        Invalid('import torch\n\n\ndef bench():\n    return torch.randn(8, device="cuda")\n\n\n'
                'def main():\n    if not torch.cuda.is_available():\n        return\n    bench()\n\n\n'
                'if __name__ == "__main__":\n    main()\n', 'import torch\n'
                '\n'
                '\n'
                'def bench():\n'
                '    return torch.randn(8, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'
                '\n'
                '\n'
                'def main():\n'
                '    if not torch.cuda.is_available():\n'
                '        return\n'
                '    bench()\n'
                '\n'
                '\n'
                'if __name__ == "__main__":\n'
                '    main()\n'),
        Invalid('import torch\n\n\ndef bench():\n    return torch.randn(8, device="cuda")\n\n\n'
                'def main():\n    if not is_sm_at_least_100():\n'
                '        raise RuntimeError("requires SM100")\n    bench()\n', 'import torch\n'
                '\n'
                '\n'
                'def bench():\n'
                '    return torch.randn(8, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'
                '\n'
                '\n'
                'def main():\n'
                '    if not is_sm_at_least_100():\n'
                '        raise RuntimeError("requires SM100")\n'
                '    bench()\n'),
        # not evidence of CUDA: excluding the CPU, or excluding some platforms
        Invalid('import torch\n\n\ndef f(device):\n    if device == "cpu":\n        return\n'
                '    torch.ones(1, device="cuda")\n',
                'import torch\n\n\ndef f(device):\n    if device == "cpu":\n        return\n'
                '    torch.ones(1, device=device)\n'),
        Invalid('import torch\nif not is_xpu() and not is_rocm():\n    t = torch.ones(1, device="cuda")\n',
                'import torch\nif not is_xpu() and not is_rocm():\n    t = torch.ones(1, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        Invalid('import torch\nx = torch.zeros(2, device="cuda")\n',
                'import torch\n'
                'x = torch.zeros(2, device=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        Invalid('import torch\n\n\ndef f(q, n):\n    d = q.device\n    return torch.arange(n, device="cuda")\n',
                'import torch\n\n\ndef f(q, n):\n    d = q.device\n    return torch.arange(n, device=q.device)\n'),
        Invalid('import torch\n\n\nclass A:\n    def __init__(self, device):\n        self.device = device\n\n'
                '    def buf(self):\n        return torch.empty(4, device="cuda")\n',
                'import torch\n\n\nclass A:\n    def __init__(self, device):\n        self.device = device\n\n'
                '    def buf(self):\n        return torch.empty(4, device=self.device)\n'),
        Invalid('def rope(dim, device="cuda"):\n    pass\n',
                'from vllm.platforms import current_platform\n'
                'def rope(dim, device=current_platform.device_type):\n    pass\n', profile="vllm"),
        Invalid('import torch\nwith torch.device("cuda"):\n    pass\n',
                'import torch\n'
                'with (torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")):\n'
                '    pass\n'),
        Invalid('import torch\n\n\ndef f(m):\n    return g(m, torch.device("cuda"))\n',
                'import torch\n'
                '\n'
                '\n'
                'def f(m):\n'
                '    return g(m, torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu"))\n'),
        Invalid('import torch\nd = torch.device("cuda", 1)\n',
                'import torch\n'
                'd = torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", 1)\n'),
        Invalid('import torch\nx = torch.randn(4, 5, device="cuda:0")\n',
                'import torch\nfrom vllm.platforms import current_platform\n'
                'x = torch.randn(4, 5, device=f"{current_platform.device_type}:0")\n',
                profile="vllm"),
        Invalid('import torch\nsd = torch.load(path, map_location="cuda")\n',
                'import torch\n'
                'sd = torch.load(path, map_location=torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu"))\n'),
        Invalid('p.add_argument("--device", type=str, default="cuda")\n',
                'import torch\n'
                'p.add_argument("--device", type=str, default=torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")\n'),
        Invalid('import torch\ntorch.set_default_device("cuda")\n',
                'import torch\n'
                'torch.set_default_device(torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu")\n'),
        Invalid('def build(dim, device="cpu"):\n    pass\n\n\nH = build(64, "cuda")\n',
                'import torch\n'
                'def build(dim, device="cpu"):\n'
                '    pass\n'
                '\n'
                '\n'
                'H = build(64, torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")\n'),
        Invalid('import pytest\n\n\n@pytest.mark.parametrize("device", ["cuda", "cpu"])\ndef test_x(device):\n    pass\n',
                'import pytest\nfrom vllm.platforms import current_platform\n\n\n@pytest.mark.parametrize("device", [current_platform.device_type, "cpu"])\ndef test_x(device):\n    pass\n',
                profile="vllm"),
        # a mover: the data first, the device next
        Invalid('def step(data, device):\n    return to_device(data, "cuda", non_blocking=True)\n',
                'def step(data, device):\n    return to_device(data, device, non_blocking=True)\n'),
        Invalid('q = QuantState.from_dict(s, device="cuda")\n',
                'import torch\n'
                'q = QuantState.from_dict(s, device=torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")\n'),
        # limits: a check with no stated CUDA contract; a conditional skip runs somewhere
        Invalid('import torch\n\n\ndef run(x, device="cuda"):\n    assert "cuda" in device\n'
                '    return torch.zeros(2, device=device)\n',
                'import torch\n\n\ndef run(x, device=None):\n    if device is None:\n'
                '        device = torch.accelerator.current_accelerator().type '
                'if torch.accelerator.is_available() else "cpu"\n    assert "cuda" in device\n'
                '    return torch.zeros(2, device=device)\n'),
        Invalid('import torch\n\n\n@pytest.mark.skipif(True, reason="slow")\ndef test_a():\n'
                '    x = torch.zeros(2, device="cuda")\n',
                'import torch\n\n\n@pytest.mark.skipif(True, reason="slow")\ndef test_a():\n'
                '    x = torch.zeros(2, device=torch.accelerator.current_accelerator() '
                'if torch.accelerator.is_available() else "cpu")\n'),
    ]

    def check(self, facts):
        for node in device_strings(facts):
            par = facts.get_parent(node)
            if isinstance(par, ast.keyword) and par.arg and _DEVICE_KWARG.search(par.arg):
                call = facts.get_parent(par)
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                        and call.func.attr == "to":
                    continue  # DL101
                if par.arg == "device_type" and isinstance(call, ast.Call) \
                        and facts.qualname(call.func) in _AMP:
                    continue  # DL403
                if skipped(facts, node):
                    continue
                torch_callee = isinstance(call, ast.Call) and _torch_callee(facts, call)
                if par.arg == "device_type":
                    expr = role_expr(facts, "device-type")
                elif par.arg == "map_location":
                    # `None` would restore tensors to the device they were saved from
                    expr = device_for_literal(facts, node, "device-object")
                else:
                    expr = device_for_literal(facts, node, "device",
                                              None if torch_callee else "device-type")
                yield self._replace(facts, node, expr, f"`{par.arg}={facts.source(node)}`")
            elif isinstance(par, ast.Call) and node in par.args and not _is_to(par):
                if not _positional_device(facts, par, par.args.index(node)) \
                        or skipped(facts, node):
                    continue
                expr = device_for_literal(facts, node, "device",
                                          None if _torch_callee(facts, par) else "device-type")
                yield self._replace(facts, node, expr, f"a device argument of "
                                    f"`{facts.source(par.func)}`")
            elif _parametrized_device(facts, node):
                if skipped(facts, node):
                    continue
                expr = device_string(facts, node.value)
                yield self._replace(facts, node, expr, "a device test parameter")
            elif isinstance(par, ast.keyword) and par.arg == "default" \
                    and _is_device_option(facts.get_parent(par)):
                if skipped(facts, node):
                    continue
                expr = device_string(facts, node.value)
                yield self._replace(facts, node, expr, "the default of a device option")
            elif isinstance(par, (ast.FunctionDef, ast.AsyncFunctionDef, ast.arguments)):
                pname = _param_of_default(par if isinstance(par, ast.arguments) else par.args,
                                          node)
                if pname is None or "device" not in pname.lower() or skipped(facts, node):
                    continue
                expr = device_string(facts, node.value)
                what = f"parameter default `{pname}={facts.source(node)}`"
                func = par if not isinstance(par, ast.arguments) else facts.get_parent(par)
                if expr is not None and "(" in expr.text:
                    yield self._default_to_none(facts, node, expr, what, func, pname)
                else:
                    yield self._replace(facts, node, expr, what)
        for call in facts.calls:
            if facts.qualname(call.func) != "torch.device" or not call.args:
                continue
            arg = call.args[0]
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                    and arg.value.startswith("cuda")) or skipped(facts, call):
                continue
            par = facts.get_parent(call)
            if isinstance(par, ast.Call) and isinstance(par.func, ast.Attribute) \
                    and par.func.attr == "to" and par.args and par.args[0] is call:
                continue  # DL101
            if isinstance(par, ast.IfExp) and par.test is not call:
                continue  # an arm of a CUDA-or-CPU choice: DL106
            idx = index_of(arg.value)
            if arg.value == "cuda" and len(call.args) == 1 and not call.keywords:
                expr = infer_device(facts, call, "device-object")
                yield self._replace(facts, call, expr, f"`{facts.source(call)}`")
            elif idx is not None or len(call.args) == 2:
                t = device_type_expr(facts)
                text = t.text if idx is None else f"{t.text}, {idx}"
                s, e = facts.span(arg)
                fix = make_fix(facts, f"Use the profile's device type `{t.text}`",
                               [Edit(s, e, text)], t)
                yield self.diagnostic(facts, call, f"Hardcoded CUDA device `{facts.source(call)}`",
                                      fix)

    def _default_to_none(self, facts, node, expr, what, func, pname):
        """A default is evaluated once, when the module is imported: a call there would ask
        for (and initialise) the accelerator at import time, before the program picks a
        device or forks workers, and keep that answer. The fix defaults to None and resolves
        the device in the body, when the function runs; unsafe, because a caller passing
        `device=None` on purpose now gets the accelerator."""
        s, e = facts.span(node)
        fix = None
        body = getattr(func, "body", None)
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            anchor = body[1] if _is_docstring(first) and len(body) > 1 else first
            if _is_docstring(first) and len(body) == 1:
                anchor = None
            if anchor is not None:
                at = facts.locator.line_start(anchor.lineno)
                indent = facts.text[at:at + anchor.col_offset]
                if not indent.strip():
                    nl = newline_of(facts.text)
                    unit = "\t" if "\t" in indent else "    "
                    body_text = (f"{indent}if {pname} is None:{nl}"
                                 f"{indent}{unit}{pname} = {bare(expr.text)}{nl}")
                    fix = make_fix(facts, f"Default to None and use `{bare(expr.text)}` when "
                                   "the function runs (a default is evaluated at import)",
                                   [Edit(s, e, "None"), Edit(at, at, body_text)], expr,
                                   safe=False)
        return self.diagnostic(facts, (s, e), f"Hardcoded CUDA device in {what}", fix)

    def _replace(self, facts, node, expr, what):
        s, e = facts.span(node)
        fix = None
        if expr is not None:
            fix = make_fix(facts, f"Use `{expr.text}` ({expr.evidence})", [Edit(s, e, expr.text)],
                           expr)
        return self.diagnostic(facts, (s, e), f"Hardcoded CUDA device in {what}", fix)


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


def _is_to(call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "device")


def _positional_device(facts, call, index: int) -> bool:
    """A positional argument is a device when the callee says so: its name holds "device"
    (`DeviceConfig("cuda")`, `torch.set_default_device("cuda")`; a mover named `*to_device`
    takes the data first, the device next: `to_device(batch, "cuda")`), or the file defines it with
    a device parameter at that position (`def _build(dim, device)`)."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    if name.lower().endswith("to_device"):
        # `to_device(batch, "cuda")`, `move_to_device(x, "cuda")`, `send_to_device(...)`: a
        # mover takes the data first and the device next
        return index == 1
    if "device" in name.lower() and name != "device":
        return index == 0 or "default" in name.lower() or name[0].isupper()
    params = _local_signature(facts, call)
    return params is not None and index < len(params) and "device" in params[index].lower()


def _local_signature(facts, call):
    """Positional parameter names of a function or method the file defines (without self)."""
    f = call.func
    if isinstance(f, ast.Name):
        name, method = f.id, False
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
            and f.value.id in ("self", "cls"):
        name, method = f.attr, True
    else:
        return None
    defs = facts.memo("defs", lambda: _function_defs(facts.tree))
    d = defs.get(name)
    if d is None:
        return None
    args = [a.arg for a in (*d.args.posonlyargs, *d.args.args)]
    if method and args and args[0] in ("self", "cls"):
        args = args[1:]
    return args


def _function_defs(tree) -> dict:
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(n.name, n)
    return out


def _parametrized_device(facts, node) -> bool:
    """`@pytest.mark.parametrize("device", ["cuda", "cpu"])`: a device the test will use."""
    cur = facts.get_parent(node)
    while isinstance(cur, (ast.List, ast.Tuple, ast.Dict)):
        cur = facts.get_parent(cur)
    if not (isinstance(cur, ast.Call) and isinstance(cur.func, ast.Attribute)
            and cur.func.attr == "parametrize" and len(cur.args) >= 2):
        return False
    names = cur.args[0]
    return isinstance(names, ast.Constant) and isinstance(names.value, str) and bool(
        re.search(r"device|location", names.value)) and node is not names


def _is_device_option(call) -> bool:
    """`parser.add_argument("--device", ..., default=...)`."""
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
        and call.func.attr == "add_argument" and any(
            isinstance(a, ast.Constant) and isinstance(a.value, str) and "device" in a.value
            for a in call.args)


def _torch_callee(facts, call) -> bool:
    q = facts.qualname(call.func) or ""
    return q == "torch" or q.startswith("torch.")


def _param_of_default(args: ast.arguments, node) -> str | None:
    positional = [*args.posonlyargs, *args.args]
    for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if d is node:
            return a.arg
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        if d is node:
            return a.arg
    return None


RULE = DeviceLiteralArgument
