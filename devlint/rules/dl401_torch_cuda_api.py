"""DL401 torch-cuda-api.

Size: ~560 lines, most of them the rule's valid and invalid examples (its tests and its docs),
which show each principle's evidence next to its limits.
"""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix
from devlint.rules._api_table import table_findings
from devlint.analysis.infer import infer_device
from devlint.rules._device import skipped
from devlint.rules.base import TABLE_API, Invalid, Rule, Valid


class TorchCudaApi(Rule):
    """
    ## What it does
    Flags `torch.cuda` functions that have a device-generic `torch.accelerator` equivalent:
    `synchronize`, `device_count`, `is_available`, `current_device`, `set_device`,
    `empty_cache`, the `memory_*` statistics, `current_stream`, `set_stream`,
    `torch.cuda.device(i)`, the RNG state; the legacy typed constructors
    (`torch.cuda.FloatTensor([x])`); through any import alias (`import torch as th`,
    `from torch import cuda`, `from torch.cuda import synchronize`).

    ## Why is this bad?
    `torch.cuda.*` talks to the CUDA runtime only: on XPU, NPU or MPS it raises or silently does
    nothing (`device_count()` is 0), so synchronisation, memory accounting and device selection
    break without an error where they matter.

    ## Example
    ```python
    torch.cuda.synchronize()
    ```

    Use instead:
    ```python
    torch.accelerator.synchronize()
    ```

    ## Fix
    The replacement comes from the table in `devlint/data/torch_api.toml`, each entry with the
    first torch release that has it; `target-torch` (default 2.6) decides whether the fix is
    offered. Where `torch.accelerator` lacks the API at the target, the table may name the
    device module's function instead, `torch.get_device_module().X` (torch >= 2.4: the current
    accelerator's module, `torch.cuda` on CUDA): RNG state (`get_rng_state`, `set_rng_state`,
    `initial_seed`), `reset_peak_memory_stats`, `mem_get_info`, `empty_cache`; the CPU module
    has none of them, so where the original runs without CUDA (`empty_cache`, `set_rng_state`
    are no-ops) or has nothing to do there (resetting counters) the fix asks for an accelerator
    first, as below. Below 2.6 (no `torch.accelerator`), `is_available()` and `device_count()`
    ask each device module with `getattr` defaults (`any(...)`, `sum(...)`: right on every
    release), and from 2.2 `synchronize`, `current_device` and `set_device` go through the
    device ladder's module, `getattr(torch, <ladder>)` (`torch.cuda` on CUDA, `torch.cpu`
    without an accelerator; docs/profiles.md). `torch.cuda.is_available()` as the test of `a if ... else b` is not flagged here
    (DL106 rewrites the whole choice). A test's `mock.patch("torch.cuda.empty_cache", ...)` /
    `monkeypatch.setattr("torch.cuda.empty_cache", ...)` names the API it replaces: a target,
    not a use (`devlint.evidence.mock_target`); the finding is the call in the code under test,
    and the patch changes with it.

    Where the original runs without an accelerator (`torch.cuda.empty_cache()` is a no-op, the
    memory counters read 0) or has nothing to do there (`synchronize`, resetting counters) while
    the replacement raises, the fix asks `torch.accelerator.is_available()` first: a statement
    becomes an `if` block, an expression `(<call> if torch.accelerator.is_available() else
    <value>)` (the table's `cpu_value`).

    Not flagged: calls under a guard that established CUDA (`if torch.cuda.is_available():`,
    `if device.type == "cuda":`, a skip gate, an assert), the arms and tests of a platform
    ladder that also names another accelerator (`elif torch.xpu.is_available():`,
    `is_torch_npu_available()`, `hasattr(torch, "npu")`, the final else), a query in a test
    that also names another accelerator or a compute capability, a CUDA seed next to
    `torch.manual_seed` of the same value. The guard itself is the finding.

    ## Fix safety
    Safe where the replacement takes the same arguments with the same meaning on CUDA; unsafe
    where arguments differ (the table says which). The fix of a guard
    (`if torch.cuda.is_available(): torch.cuda.synchronize()`) rewrites the test and the calls
    it guards together and is unsafe: it changes which branch runs; where the guarded code
    holds a CUDA use without an available replacement or a device literal, none is offered.

    ## Profiles
    Both `torch` and `vllm` use `torch.accelerator` (vLLM RFC #30679).
    """

    code = "DL401"
    name = "torch-cuda-api"
    summary = "`torch.cuda` API with a device-generic `torch.accelerator` equivalent"
    exempt_by = TABLE_API

    valid = [
        Valid("import torch\nc = torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()\n"),
        # ^ a CUDA-graph capture query (cuda-graph-capture); v a tensor's own test (cuda-guard)
        Valid("import torch\n\n\ndef f(s, x):\n    two = s is not None and x.is_cuda\n"
              "    if two:\n        s.wait_stream(torch.cuda.current_stream())\n"),
        # a method named for AMD's stack is the ROCm arm of a dispatch: torch.cuda is ROCm's
        # device module there (hip-device)
        Valid("import torch\n\n\nclass Fp8Method:\n    def process_weights_hip_int4(self, layer):\n"
              "        layer.w = shuffle(layer.w)\n        torch.cuda.empty_cache()\n"),
        # a private method called only through `self` after an early exit that leaves only
        # CUDA (self-called-on-cuda)
        Valid("import torch\n\n\nclass Worker:\n    def _peak(self):\n"
              "        torch.cuda.reset_peak_memory_stats()\n\n"
              "    def prewarm(self):\n        if not current_platform.is_cuda():\n"
              "            return None\n        return self._peak()\n"),
        # a method that uses a stream made only on CUDA (else None, handed down through the
        # constructor) on every path runs only on CUDA (uses-cuda-value)
        Valid("import torch\n\n\nclass MoE:\n    def __init__(self, alt_stream=None):\n"
              "        self.alt_stream = alt_stream\n\n"
              "    def forward_dual(self, x):\n        current = torch.cuda.current_stream()\n"
              "        self.alt_stream.wait_stream(current)\n        return x\n\n\n"
              "class Model:\n    def __init__(self):\n"
              "        s = make_stream() if current_platform.is_cuda() else None\n"
              "        self.moe = MoE(alt_stream=s)\n"),
        # after a loop that returns unless each element is on CUDA (cuda-guard)
        Valid("import torch\n\n\ndef free(videos):\n    for v in videos:\n"
              "        if v.device.type != 'cuda':\n            return None\n"
              "    return torch.cuda.mem_get_info(videos[0].device)\n"),
        # the fallback for a torch without torch.accelerator, dead where the project's torch
        # (here the vllm profile's pinned one) always has it (version-fallback)
        Valid('import torch\n\n\ndef device():\n    return (torch.accelerator.current_accelerator()\n'
              '            if hasattr(torch, "accelerator") else torch.cuda.current_device())\n',
              profile="vllm"),
        # a ladder of early exits that asks for the other accelerators through getattr and
        # torch's build (platform-ladder, several-platforms)
        Valid("import torch\n\n\ndef detect():\n    npu = getattr(torch, 'npu', None)\n"
              "    if npu is not None and npu.is_available():\n        return 'npu'\n"
              "    if getattr(torch.version, 'musa', None) is not None and torch.cuda.is_available():\n"
              "        return 'musa'\n    if torch.cuda.is_available():\n        return 'cuda'\n"
              "    return 'cpu'\n"),
        # a value assigned in a script and never read (dead-value)
        Valid("import torch\n\nif __name__ == '__main__':\n"
              "    device = 'cuda' if torch.cuda.is_available() else 'cpu'\n    main()\n"),
        # a function whose docstring says it wraps a CUDA-only stack (stated-requirement)
        Valid('import torch\n\n\ndef _sparse_op(q):\n'
              '    """Opaque wrapper around the CuTe-DSL block-sparse kernel."""\n'
              '    with torch.cuda.device(q.device):\n        return kernel(q)\n'),
        # CUDA and another accelerator handled side by side (sibling-platforms)
        Valid("import torch\nif torch.cuda.is_available():\n    torch.cuda.empty_cache()\n"
              "if torch.xpu.is_available():\n    torch.xpu.empty_cache()\n"),
        Valid("import torch\n\n\ndef f(cfg):\n    cuda_ok = torch.cuda.is_available()\n"
              "    fa = cfg.fa and cuda_ok\n    xpu_ok = is_torch_xpu_available()\n"
              "    return fa or xpu_ok\n"),
        # a test for ONNX Runtime's CUDA-only provider (cuda-backend)
        Valid("import torch\n\n\ndef gpu(available):\n"
              "    return torch.cuda.is_available() and 'CUDAExecutionProvider' in available\n"),
        Valid("import torch\ntorch.accelerator.synchronize()\n"),
        # an operand beside the negation of a ROCm query in an `or` decides only on ROCm,
        # and the rest of the function runs only there (rocm-guard)
        Valid('import torch\n\n\ndef arch():\n'
              '    if not is_hip_runtime() or not torch.cuda.is_available():\n'
              '        return None\n    return torch.cuda.get_device_properties(0).gcnArchName\n'),
        # under a test for CUDA or ROCm, torch.cuda is that platform's API (cuda-alike-guard)
        Valid("import torch\n\n\ndef sync():\n    if current_platform.is_cuda_alike():\n"
              "        torch.cuda.synchronize()\n"),
        Valid("import torch\n\n\ndef sync():\n    if not current_platform.is_rocm():\n"
              "        return\n    torch.cuda.synchronize()\n"),
        # the same test spelt out: every operand of the `or` asks for CUDA or ROCm
        Valid("import torch\n\n\ndef sync():\n"
              "    if current_platform.is_rocm() or current_platform.is_cuda():\n"
              "        torch.cuda.synchronize()\n    else:\n        current_platform.synchronize()\n"),
        # under a CUDA guard (the torch profile): the guard's business, not the body's
        Valid("import torch\nif current_platform.is_cuda():\n    torch.cuda.empty_cache()\n"),
        Valid("class A:\n    def f(self):\n        self.cuda.synchronize()\n"),
        Valid("import torch\nok = 1 if torch.cuda.is_available() else 0\n"),
        Valid("import torch\ntorch.cuda.synchronize = lambda: None\n"),
        # the module replaced the API with its own: its calls mean the replacement
        Valid("import torch\nprev = torch.cuda.set_stream\n\n\ndef patched(s):\n    prev(s)\n\n\n"
              "torch.cuda.set_stream = patched\n\n\ndef use(s):\n    torch.cuda.set_stream(s)\n"),
        Valid("cuda = make()\ncuda.synchronize()\n"),
        Valid("import torch\nprint(f'CUDA available: {torch.cuda.is_available()}')\n"),
        Valid("import torch\nlogger.info('devices: %d', torch.cuda.device_count())\n"),
        # a string naming the API outside a patch is just text
        Valid('msg = "torch.cuda.empty_cache is slow"\nname = "torch.cuda.synchronize"\n'),
        # no generic form: the patch stays
        Valid('from unittest.mock import patch\npatch("torch.cuda.get_device_name", f)\n'),
        Valid('from unittest.mock import patch\n\nwith patch("torch.cuda.synchronize", f):\n'
              '    run()\n'),
        Valid('import torch\n\n\ndef test_x(monkeypatch):\n'
              '    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)\n'),
        # `torch` bound here (not by the star import): not torch's
        Valid("from .common import *\ntorch = Runtime()\ntorch.cuda.synchronize()\n"),
        # a type test, not a construction
        Valid("import torch\nok = isinstance(x, torch.cuda.FloatTensor)\n"),
        Valid("import torch\nt = torch.tensor([0.5], dtype=torch.float32, device=device)\n"),
        # already the device module's function
        Valid("import torch\ns = torch.get_device_module().get_rng_state()\n"),
        Valid("import torch\nif torch.accelerator.is_available():\n"
              "    torch.get_device_module().empty_cache()\n"),
        # a patch of an API whose generic form is a device module's function stays
        Valid('from unittest.mock import patch\npatch("torch.cuda.get_rng_state", f)\n'),
        # platform ladders: torch's device modules, a project's availability helpers, the
        # final else after other platforms, an `is_*_available()` named after one
        Valid("import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n"
              "elif torch.xpu.is_available():\n    torch.xpu.synchronize()\n"),
        Valid("import torch\nif is_torch_xpu_available():\n    n = torch.xpu.memory_reserved(d)\n"
              "elif torch.cuda.is_available():\n    n = torch.cuda.memory_reserved(d)\nelse:\n"
              "    n = 0\n"),
        Valid("import torch\nif hasattr(torch, 'npu') and torch.npu.is_available():\n    pass\n"
              "elif is_torch_mlu_available():\n    pass\nelse:\n    torch.cuda.set_device(0)\n"),
        Valid("import torch\n\n\ndef f(device):\n    if device.type == 'xpu':\n        return 0\n"
              "    elif device.type == 'cuda':\n        return torch.cuda.memory_allocated(device)\n"),
        # under a guard that established CUDA
        Valid("import torch\n\n\ndef f(device):\n    if device.type == 'cuda':\n"
              "        torch.cuda.set_device(device)\n"),
        # several platforms in one test, a capability gate
        Valid("import torch\nok = torch.cuda.is_available() or torch.backends.mps.is_available()\n"),
        Valid("import torch\nif not torch.cuda.is_available() and not is_torch_xpu_available():\n"
              "    raise RuntimeError('no accelerator')\n"),
        Valid("import torch\nfp8 = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)\n"),
        # a ladder written with early exits: the other accelerators returned first
        Valid("import torch\n\n\ndef tf32():\n    if is_torch_musa_available():\n        return True\n"
              "    if not torch.cuda.is_available():\n        return False\n"
              "    return torch.cuda.get_device_properties(0).major >= 8\n"),
        # a guard of CUDA housekeeping alone (nothing to collect elsewhere)
        Valid("import torch\nif torch.cuda.is_available():\n    torch.cuda.ipc_collect()\n"),
        # a guard that only guards a redundant seed
        Valid("import torch\ntorch.manual_seed(0)\nif torch.cuda.is_available():\n"
              "    torch.cuda.manual_seed_all(0)\n"),
        # print-only: the test only chooses a message
        Valid('import torch\nif len(m) > 1 and torch.cuda.device_count() > 1:\n'
              '    logger.warning("the model is spread over several GPUs")\n'),
        # a flag chain (`_use_aiter = env and _is_hip`, then a local `and` of it) establishes
        # ROCm (cuda-alike-guard)
        Valid("import torch\n_is_hip = is_hip()\n"
              '_use_aiter = get_bool_env_var("USE_AITER") and _is_hip\n\n\ndef shuffle(layer):\n'
              "    use_fused = _use_aiter and layer.supported\n    if use_fused:\n"
              "        torch.cuda.empty_cache()\n"),
        # print-only: an opt-in memory report under a switch (its values only printed)
        Valid("import torch\n\n\ndef run(model, x, print_mem=False):\n    if print_mem:\n"
              "        torch.cuda.reset_peak_memory_stats()\n"
              "        base = torch.cuda.memory_allocated()\n    y = model(x)\n"
              "    if print_mem:\n        peak = torch.cuda.max_memory_allocated() - base\n"
              '        print(f"peak {peak / 2**20:.1f} MB")\n    return y\n'),
        # print-only: the guard only adds a statistic to a dict handed to a logger
        Valid("import torch\n\n\ndef log_step(accelerator, loss, step):\n"
              '    logs = {"loss": loss}\n    if torch.cuda.is_available():\n'
              '        logs.update({"mem": torch.cuda.memory_allocated() / 2**20})\n'
              "    accelerator.log(logs, step=step)\n"),
        # print-only: an early exit of a function whose rest only logs (once)
        Valid("import torch\n\n\nclass Runner:\n    def _log_once(self, bs):\n"
              "        if bs in self._logged or not torch.cuda.is_available():\n"
              "            return\n        self._logged.add(bs)\n"
              '        logger.info("captured batch size %d", bs)\n'),
        # a module named for cuDNN wraps NVIDIA's kernels (cuda-only-module, its name)
        Valid("import torch\n\n\ndef run(x):\n    torch.cuda.synchronize()\n    return x\n",
              path="attn_cudnn_kernels.py"),
        # a flag or detector named after the build it detects asks which build torch is
        Valid("import torch\nIS_ROCM = torch.cuda.is_available() and torch.version.hip is not None\n"),
        Valid("import torch\n\n\ndef is_rocm():\n"
              "    return torch.cuda.is_available() and torch.version.hip is not None\n"),
        # cuda-kernel-source: a module of kernels built from CUDA C++ source
        Valid("import torch\nfrom torch.utils.cpp_extension import load_inline\n\n\n"
              "def a(x):\n    m = load_inline('a', cpp_sources='', cuda_sources=SRC_A)\n"
              "    torch.cuda.synchronize()\n    return m.a(x)\n\n\n"
              "def b(x):\n    m = load_inline('b', cpp_sources='', cuda_sources=SRC_B)\n"
              "    return m.b(x)\n"),
        # capability-gate: the capability test is a parenthesised operand of the same `and`
        Valid("import torch\nOK = (has_triton() and torch.cuda.is_available()\n"
              "      and (is_sm_at_least_100() and cuda_at_least(12, 8)) or is_MI350())\n"),
    ]
    invalid = [
        # an `or` with an operand that is no CUDA or ROCm query holds elsewhere too
        Invalid("import torch\n\n\ndef sync(eager):\n"
                "    if current_platform.is_rocm() or eager:\n        torch.cuda.synchronize()\n",
                "import torch\n\n\ndef sync(eager):\n"
                "    if current_platform.is_rocm() or eager:\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.accelerator.synchronize()\n"),
        # ... not where an element may skip the test (a `continue` before it)
        Invalid("import torch\n\n\ndef free(videos):\n    for v in videos:\n"
                "        if v.dim() == 3:\n            continue\n"
                "        if v.device.type != 'cuda':\n            return None\n"
                "    return torch.cuda.mem_get_info(videos[0].device)\n",
                "import torch\n\n\ndef free(videos):\n    for v in videos:\n"
                "        if v.dim() == 3:\n            continue\n"
                "        if v.device.type != 'cuda':\n            return None\n"
                "    return torch.get_device_module().mem_get_info(videos[0].device)\n"),
        # the use of the CUDA-only value is not on every path: under an `if`, or after a
        # return (uses-cuda-value's limits)
        Invalid("import torch\n\n\nclass MoE:\n    def __init__(self):\n"
                "        self.s = make_stream() if current_platform.is_cuda() else None\n\n"
                "    def forward(self, x):\n        current = torch.cuda.current_stream()\n"
                "        if x.numel():\n            self.s.wait_stream(current)\n",
                "import torch\n\n\nclass MoE:\n    def __init__(self):\n"
                "        self.s = make_stream() if current_platform.is_cuda() else None\n\n"
                "    def forward(self, x):\n        current = torch.accelerator.current_stream()\n"
                "        if x.numel():\n            self.s.wait_stream(current)\n"),
        Invalid("import torch\n\n\nclass MoE:\n    def __init__(self):\n"
                "        self.s = make_stream() if current_platform.is_cuda() else None\n\n"
                "    def forward(self, x):\n        current = torch.cuda.current_stream()\n"
                "        if x is None:\n            return current\n"
                "        self.s.wait_stream(current)\n",
                "import torch\n\n\nclass MoE:\n    def __init__(self):\n"
                "        self.s = make_stream() if current_platform.is_cuda() else None\n\n"
                "    def forward(self, x):\n        current = torch.accelerator.current_stream()\n"
                "        if x is None:\n            return current\n"
                "        self.s.wait_stream(current)\n"),
        # ... nor an attribute some store fills without a CUDA test
        Invalid("import torch\n\n\nclass MoE:\n    def __init__(self, s=None):\n"
                "        self.s = s\n\n"
                "    def forward(self, x):\n        current = torch.cuda.current_stream()\n"
                "        self.s.wait_stream(current)\n\n\nm = MoE(make_stream())\n",
                "import torch\n\n\nclass MoE:\n    def __init__(self, s=None):\n"
                "        self.s = s\n\n"
                "    def forward(self, x):\n        current = torch.accelerator.current_stream()\n"
                "        self.s.wait_stream(current)\n\n\nm = MoE(make_stream())\n"),
        # a private method also called without a CUDA test (self-called-on-cuda's limit)
        Invalid("import torch\n\n\nclass Worker:\n    def _peak(self):\n"
                "        torch.cuda.synchronize()\n\n"
                "    def prewarm(self):\n        if current_platform.is_cuda():\n"
                "            self._peak()\n        self._peak()\n",
                "import torch\n\n\nclass Worker:\n    def _peak(self):\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.accelerator.synchronize()\n\n"
                "    def prewarm(self):\n        if current_platform.is_cuda():\n"
                "            self._peak()\n        self._peak()\n"),
        # ... not a negated one: `not (a and b)` is no conjunction with the CUDA test
        Invalid("import torch\nOK = torch.cuda.is_available() and not (is_sm_at_least_100() "
                "and slow())\n",
                "import torch\nOK = torch.accelerator.is_available() and not (is_sm_at_least_100() "
                "and slow())\n"),
        # a name that merely contains "hip" (chip), or a predicate on the ROCm path (is_hip_*),
        # runs on every platform
        Invalid("import torch\n\n\ndef load_chip(x):\n    torch.cuda.empty_cache()\n",
                "import torch\n\n\ndef load_chip(x):\n    if torch.accelerator.is_available():\n"
                "        torch.get_device_module().empty_cache()\n"),
        Invalid("import torch\n\n\ndef is_hip_ready():\n    return torch.cuda.is_available()\n",
                "import torch\n\n\ndef is_hip_ready():\n    return torch.accelerator.is_available()\n"),
        # ... without a declared torch floor the fallback may run on an old torch
        Invalid('import torch\n\n\ndef device():\n    return (torch.accelerator.current_accelerator()\n'
                '            if hasattr(torch, "accelerator") else torch.cuda.current_device())\n',
                'import torch\n\n\ndef device():\n    return (torch.accelerator.current_accelerator()\n'
                '            if hasattr(torch, "accelerator") else '
                'torch.accelerator.current_device_index())\n'),
        # the other accelerator's statement stands too far away to pair with the CUDA one
        Invalid("import torch\nif torch.cuda.is_available():\n    torch.cuda.empty_cache()\n"
                "x = 1\ny = 2\nif torch.xpu.is_available():\n    torch.xpu.empty_cache()\n",
                "import torch\nif torch.accelerator.is_available():\n"
                "    torch.get_device_module().empty_cache()\n"
                "x = 1\ny = 2\nif torch.xpu.is_available():\n    torch.xpu.empty_cache()\n"),
        # the vllm profile: vLLM's own pre-commit rule forbids the call even under a CUDA guard
        # (evidence/project_policy.py, devlint/data/project_policy.toml)
        Invalid("import torch\nif current_platform.is_cuda():\n    torch.cuda.empty_cache()\n",
                "import torch\nif current_platform.is_cuda():\n    torch.accelerator.empty_cache()\n",
                profile="vllm"),
        # beside a ROCm test in an `or`, the operand decides everywhere else
        Invalid('import torch\n\n\ndef config():\n'
                '    if _is_hip or not torch.cuda.is_available():\n        return None\n'
                '    return load()\n',
                'import torch\n\n\ndef config():\n'
                '    if _is_hip or not torch.accelerator.is_available():\n        return None\n'
                '    return load()\n'),
        # ruling some platforms out is no test for a CUDA-alike platform
        Invalid("import torch\nif not current_platform.is_xpu():\n    torch.cuda.synchronize()\n",
                "import torch\nif not current_platform.is_xpu():\n"
                "    if torch.accelerator.is_available():\n        torch.accelerator.synchronize()\n"),
        # the guard is the finding (not its body); its fix rewrites both, unsafely
        Invalid("import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n",
                "import torch\nif torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"),
        # an indexed device follows as the same index on the accelerator found
        Invalid('import torch\nif torch.cuda.is_available():\n    t = torch.randn(4, device="cuda:0")\n',
                'import torch\nif torch.accelerator.is_available():\n'
                '    t = torch.randn(4, device=f"{torch.accelerator.current_accelerator().type}:0")\n'),
        # a name the guarded code binds itself is only a label, not CUDA-only code
        Invalid('import torch\nif torch.cuda.is_available():\n'
                '    cuda_tensor = torch.randn(4, device="cuda")\n    check(cuda_tensor)\n',
                'import torch\nif torch.accelerator.is_available():\n'
                '    cuda_tensor = torch.randn(4, device=torch.accelerator.current_accelerator())\n'
                '    check(cuda_tensor)\n'),
        # an assertion about the placement follows it; a comparison choosing a branch does not
        Invalid('import torch\nif torch.cuda.is_available():\n    t = torch.ones(2).cuda()\n'
                '    assert t.device.type == "cuda"\n',
                'import torch\nif torch.accelerator.is_available():\n'
                '    t = torch.ones(2).to(device=torch.accelerator.current_accelerator())\n'
                '    assert t.device.type == torch.accelerator.current_accelerator().type\n'),
        Invalid('import torch\nif torch.cuda.is_available():\n    t = torch.ones(2).cuda()\n'
                '    if t.device.type == "cuda":\n        kernel(t)\n', None),
        # a device string built by concatenation has no form: no fix
        Invalid('import torch\nif torch.cuda.is_available():\n'
                '    t = torch.randn(4, device="cuda:" + str(rank))\n', None),
        # a flag named after what it decides picks a behaviour, not a build
        Invalid("import torch\nuse_pin = torch.cuda.is_available() and not torch.version.hip\n",
                'import torch\n'
                'use_pin = torch.accelerator.is_available() and not torch.version.hip\n'),
        # the body's device values follow the guard: it runs only with an accelerator
        Invalid('import torch\ndevice = "cpu"\nif torch.cuda.is_available():\n    device = "cuda"\n'
                '    model = model.cuda()\n    x = x.to("cuda")\n',
                'import torch\ndevice = "cpu"\nif torch.accelerator.is_available():\n'
                '    device = torch.accelerator.current_accelerator().type\n'
                '    model = model.to(device=torch.accelerator.current_accelerator())\n'
                '    x = x.to(torch.accelerator.current_accelerator())\n'),
        Invalid('import torch\n\n\ndef f(x):\n    if not torch.cuda.is_available():\n        return x\n'
                '    return x.cuda(non_blocking=True)\n',
                'import torch\n\n\ndef f(x):\n    if not torch.accelerator.is_available():\n'
                '        return x\n    return x.to(device=torch.accelerator.current_accelerator(), '
                'non_blocking=True)\n'),
        Invalid('import torch\nif torch.cuda.is_available():\n    i = torch.cuda.current_device()\n'
                '    sd = torch.load(f, map_location=lambda s, loc: s.cuda(i))\n',
                'import torch\nif torch.accelerator.is_available():\n'
                '    i = torch.accelerator.current_device_index()\n'
                '    sd = torch.load(f, map_location=lambda s, loc: s.to(device=torch.device('
                'torch.accelerator.current_accelerator().type, i)))\n'),
        # housekeeping beside a step with a generic form: the guard is the finding (no fix:
        # `ipc_collect` has no generic form)
        Invalid("import torch\nif torch.cuda.is_available():\n    torch.cuda.empty_cache()\n"
                "    torch.cuda.ipc_collect()\n", None),
        # ... not where the body compares it, or where the body may run without one
        Invalid('import torch\nif torch.cuda.is_available():\n    ok = backend == "cuda"\n', None),
        Invalid('import torch\nif torch.cuda.device_count() < 2:\n    x = x.to("cuda")\n', None),
        # after one other platform alone, the else is every remaining platform's
        Invalid("import torch\nif current_platform.is_tpu():\n    pass\nelse:\n"
                "    torch.cuda.set_device(0)\n",
                "import torch\nif current_platform.is_tpu():\n    pass\nelse:\n"
                "    torch.accelerator.set_device_index(0)\n"),
        # the guard of a conditional expression
        Invalid('import torch\nd = torch.cuda.current_device() if torch.cuda.is_available() else "cpu"\n',
                'import torch\nd = torch.accelerator.current_device_index() if torch.accelerator.is_available() else "cpu"\n'),
        # excluding the CPU, or only the CPU besides CUDA, is no ladder
        Invalid('import torch\nif torch.cuda.is_available():\n    d = "cuda"\nelif d == "cpu":\n'
                '    pass\n', None),
        Invalid("import torch\ntorch.cuda.synchronize()\n",
                'import torch\n'
                'if torch.accelerator.is_available():\n'
                '    torch.accelerator.synchronize()\n'),
        Invalid("import torch as th\nth.cuda.synchronize()\n",
                'import torch as th\n'
                'if th.accelerator.is_available():\n'
                '    th.accelerator.synchronize()\n'),
        Invalid("from torch import cuda\ncuda.synchronize()\n",
                'from torch import cuda\n'
                'import torch\n'
                'if torch.accelerator.is_available():\n'
                '    torch.accelerator.synchronize()\n'),
        Invalid("from torch.cuda import synchronize\nsynchronize()\n",
                'from torch.cuda import synchronize\n'
                'import torch\n'
                'if torch.accelerator.is_available():\n'
                '    torch.accelerator.synchronize()\n'),
        Invalid("import torch\nlaunch(gpus_per_node=torch.cuda.device_count)\n",
                "import torch\nlaunch(gpus_per_node=torch.accelerator.device_count)\n"),
        Invalid("import torch\nn = torch.cuda.device_count()\n",
                "import torch\nn = torch.accelerator.device_count()\n"),
        # torch.accelerator lacks the API at the target: the device module's function
        Invalid("import torch\ns = torch.cuda.get_rng_state()\n",
                "import torch\ns = torch.get_device_module().get_rng_state()\n"),
        # a no-op without CUDA stays one, and a reset that has nothing to do there runs: the
        # call runs only where an accelerator is available
        Invalid("import torch\n\n\ndef f():\n    torch.cuda.reset_peak_memory_stats()\n",
                "import torch\n\n\ndef f():\n    if torch.accelerator.is_available():\n"
                "        torch.get_device_module().reset_peak_memory_stats()\n"),
        Invalid("import torch\n\n\ndef f():\n    torch.cuda.empty_cache()  # free\n",
                "import torch\n\n\ndef f():\n    if torch.accelerator.is_available():\n"
                "        torch.get_device_module().empty_cache()  # free\n"),
        Invalid("import torch\n\n\ndef f(s):\n    torch.cuda.set_rng_state(s)\n",
                "import torch\n\n\ndef f(s):\n    if torch.accelerator.is_available():\n"
                "        torch.get_device_module().set_rng_state(s)\n"),
        # ... or already does: the guard is the finding, its fix rewrites the body too
        Invalid("import torch\nif torch.cuda.is_available():\n    torch.cuda.empty_cache()\n",
                "import torch\nif torch.accelerator.is_available():\n"
                "    torch.get_device_module().empty_cache()\n"),
        # `torch` used but never bound: it comes from the star import
        Invalid("from .llama import *\n\n\ndef f():\n    torch.cuda.synchronize()\n",
                "from .llama import *\n\n\ndef f():\n    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"),
        # legacy typed constructors
        Invalid("import torch\n\n\ndef norm(total, device):\n"
                "    return torch.cuda.FloatTensor([float(total)])\n",
                "import torch\n\n\ndef norm(total, device):\n"
                "    return torch.tensor([float(total)], dtype=torch.float32, device=device)\n"),
        Invalid("import torch\n\n\ndef buf(device):\n    return torch.cuda.IntTensor(2, 3)\n",
                "import torch\n\n\ndef buf(device):\n"
                "    return torch.empty((2, 3), dtype=torch.int32, device=device)\n"),
        Invalid("import torch\nt = torch.cuda.LongTensor(values)\n", None),
        # not a statement on its own lines: the call becomes a conditional expression
        Invalid("import torch\nif x: torch.cuda.empty_cache()\n",
                "import torch\nif x: (torch.get_device_module().empty_cache() "
                "if torch.accelerator.is_available() else None)\n"),
        # a patch target names what the test replaces (`mock-target`); the replacement runs
        Invalid('import torch\nfrom unittest.mock import patch\n\nwith patch('
                '"torch.cuda.synchronize", torch.cuda.empty_cache):\n    run()\n', None),
        # limits of the flag chain: `or` establishes nothing
        Invalid("import torch\n_is_hip = is_hip()\n"
                '_use_aiter = get_bool_env_var("USE_AITER") or _is_hip\n\n\ndef shuffle(layer):\n'
                "    if _use_aiter:\n        torch.cuda.empty_cache()\n",
                "import torch\n_is_hip = is_hip()\n"
                '_use_aiter = get_bool_env_var("USE_AITER") or _is_hip\n\n\ndef shuffle(layer):\n'
                "    if _use_aiter:\n        if torch.accelerator.is_available():\n"
                "            torch.get_device_module().empty_cache()\n"),
        # a flag reassigned elsewhere with another value establishes nothing
        Invalid("import torch\n_is_hip = is_hip()\n"
                '_use_aiter = get_bool_env_var("USE_AITER") and _is_hip\n\n\ndef configure(cfg):\n'
                "    global _use_aiter\n    _use_aiter = cfg.use_aiter\n\n\ndef shuffle(layer):\n"
                "    if _use_aiter:\n        torch.cuda.empty_cache()\n",
                "import torch\n_is_hip = is_hip()\n"
                '_use_aiter = get_bool_env_var("USE_AITER") and _is_hip\n\n\ndef configure(cfg):\n'
                "    global _use_aiter\n    _use_aiter = cfg.use_aiter\n\n\ndef shuffle(layer):\n"
                "    if _use_aiter:\n        if torch.accelerator.is_available():\n"
                "            torch.get_device_module().empty_cache()\n"),
        # limits of print-only: a statistic whose value decides (an assert)
        Invalid("import torch\n\n\ndef run(model, x, check_mem=False):\n    if check_mem:\n"
                "        peak = torch.cuda.max_memory_allocated()\n        assert peak < 2**30\n"
                "    return model(x)\n",
                "import torch\n\n\ndef run(model, x, check_mem=False):\n    if check_mem:\n"
                "        peak = torch.get_device_module().max_memory_allocated()"
                " if torch.accelerator.is_available() else 0\n"
                "        assert peak < 2**30\n    return model(x)\n"),
        # a comparison is no switch: the branch runs in every normal run
        Invalid("import torch\n\n\ndef report(rank):\n    if rank == 0:\n"
                '        torch.cuda.reset_peak_memory_stats()\n        print("reset")\n',
                "import torch\n\n\ndef report(rank):\n    if rank == 0:\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.get_device_module().reset_peak_memory_stats()\n"
                '        print("reset")\n'),
        # the dict of statistics is returned, not handed to a logger
        Invalid('import torch\n\n\ndef stats(loss):\n    logs = {"loss": loss}\n'
                "    if torch.cuda.is_available():\n"
                '        logs.update({"mem": torch.cuda.memory_allocated()})\n    return logs\n',
                'import torch\n\n\ndef stats(loss):\n    logs = {"loss": loss}\n'
                "    if torch.accelerator.is_available():\n"
                '        logs.update({"mem": torch.get_device_module().memory_allocated()})\n'
                "    return logs\n"),
        # a reset alone reports nothing (under a guard, or a switch)
        Invalid('import torch\n\n\ndef f(print_mem):\n    if torch.cuda.is_available():\n'
                '        torch.cuda.reset_peak_memory_stats()\n    if print_mem:\n'
                '        torch.cuda.reset_peak_memory_stats()\n',
                'import torch\n\n\ndef f(print_mem):\n    if torch.accelerator.is_available():\n'
                '        torch.get_device_module().reset_peak_memory_stats()\n    if print_mem:\n'
                '        if torch.accelerator.is_available():\n'
                '            torch.get_device_module().reset_peak_memory_stats()\n',
                count=2),
        # limits: a test whose other branch does work chooses behaviour; a function named after
        # CUDA graphs (capturing one or not: the synchronisations around a capture have generic
        # forms, vLLM #37566)
        Invalid('import torch\n\n\ndef f(m):\n    if torch.cuda.device_count() > 1:\n'
                '        logger.warning("spread over GPUs")\n    else:\n        m.compile()\n',
                'import torch\n\n\ndef f(m):\n    if torch.accelerator.device_count() > 1:\n'
                '        logger.warning("spread over GPUs")\n    else:\n        m.compile()\n'),
        Invalid('import torch\n\n\ndef cuda_graph_mode(x):\n    torch.cuda.synchronize()\n'
                '    return x\n',
                'import torch\n\n\ndef cuda_graph_mode(x):\n    if torch.accelerator.is_available():\n'
                '        torch.accelerator.synchronize()\n    return x\n'),
    ]

    def check(self, facts):
        yield from table_findings(self, facts)
        yield from self._legacy_tensor_types(facts)

    def _legacy_tensor_types(self, facts):
        """`torch.cuda.FloatTensor([x])`: the legacy typed constructors pin the device in the
        type's name. A single list or tuple display becomes `torch.tensor(data, dtype=...,
        device=...)`, integer sizes `torch.empty(sizes, dtype=..., device=...)`; any other
        argument (a variable may be data, a size or a storage) is flagged without a fix."""
        if facts.cuda_alike:
            return
        for node, qual in facts.torch_refs:
            dtype = _LEGACY_TYPES.get(qual)
            if dtype is None:
                continue
            call = facts.get_parent(node)
            if not (isinstance(call, ast.Call) and call.func is node):
                continue  # `isinstance(x, torch.cuda.FloatTensor)`, a type test
            if skipped(facts, node, api=True):
                continue
            s, e = facts.span(node)
            old = facts.text[s:e]
            fix = None
            torch_local = facts.torch_name()
            if torch_local is not None and not call.keywords:
                factory = None
                if len(call.args) == 1 and isinstance(call.args[0], (ast.List, ast.Tuple)):
                    factory = "tensor"
                elif call.args and all(isinstance(a, ast.Constant) and type(a.value) is int
                                       for a in call.args):
                    factory = "empty"
                if factory is not None:
                    dev = infer_device(facts, call, "device")
                    if dev is not None:
                        args = ", ".join(facts.source(a) for a in call.args)
                        if factory == "empty" and len(call.args) > 1:
                            args = f"({args})"
                        text = (f"{torch_local}.{factory}({args}, dtype={torch_local}.{dtype}, "
                                f"device={dev.text})")
                        cs, ce = facts.span(call)
                        fix = make_fix(facts, f"Use `{torch_local}.{factory}(..., dtype="
                                       f"{torch_local}.{dtype}, device=...)`",
                                       [Edit(cs, ce, text)], dev, safe=False)
            yield self.diagnostic(facts, (s, e), f"`{old}` builds a CUDA tensor; use "
                                  f"`torch.tensor`/`torch.empty` with `dtype=torch.{dtype}` and a "
                                  f"device", fix)


# the legacy CUDA tensor types and their dtypes (torch/cuda/__init__.py defines them as
# `_LegacyStorage`-backed classes; docs: "Tensor type" table of torch.Tensor)
_LEGACY_TYPES = {f"torch.cuda.{name}Tensor": dtype for name, dtype in (
    ("Float", "float32"), ("Double", "float64"), ("Half", "float16"), ("BFloat16", "bfloat16"),
    ("Byte", "uint8"), ("Char", "int8"), ("Short", "int16"), ("Int", "int32"),
    ("Long", "int64"), ("Bool", "bool"))}


RULE = TorchCudaApi
