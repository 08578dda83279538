"""DL202 is-cuda-branch.

Size: ~620 lines, most of them the rule's valid and invalid examples (its tests and its docs),
beside the test's reasons not to report and its fix (a tensor's own device through the body).
"""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import Expr, make_fix, role_expr
from devlint.analysis.infer import rebinds
from devlint.evidence.cuda_backend import (
    backend_reason, derived_device_reason, joined_backend_test,
)
from devlint.evidence.fast_path import (
    fast_path_reason, launches_portable_kernel, moved_to_target_reason, names_triton,
    negated_fast_path_reason,
)
from devlint.evidence.host_copy import host_copy_reason
from devlint.evidence.stream_order import stream_order_reason
from devlint.rules._api_table import _redundant_seed, guard_body_edits, target_of
from devlint.rules._device import (
    cuda_tests, guards_cuda_only, note_exempt, platform_object, skipped,
)
from devlint.rules.base import IN_FILE, IN_PACKAGE, ROCM, Invalid, Rule, Valid


class IsCudaBranch(Rule):
    """
    ## What it does
    Flags `if t.is_cuda:` and `if t.device.type == "cuda":` when the branch chooses behaviour
    that is not CUDA-specific: the body moves tensors, builds masks, picks a code path that
    works on any accelerator; in a conditional expression (`torch.autocast("cuda") if
    device.type == "cuda" else nullcontext()`) where the CUDA arm names "cuda" while the tested
    device is at hand (the arm then uses it). Also the negated test, `if not t.is_cuda:`, whose body is the
    CPU path (unless the CUDA branch holds CUDA-only code or the body only rejects the input).

    ## Why is this bad?
    On XPU, NPU or MPS the test is false and the code takes the CPU path, silently: tensors stay
    on the CPU or the slow fallback runs. A branch that guards CUDA-only code (CUDA graphs,
    NVTX, a CUDA kernel, `torch.cuda` calls without a generic form) is fine and not flagged.

    ## Example
    ```python
    if xs_pad.is_cuda:
        mask = mask.cuda()
    ```

    Use instead:
    ```python
    if xs_pad.device.type != "cpu":
        mask = mask.to(xs_pad.device)
    ```

    ## Fix
    The test becomes the profile's accelerator-tensor test (every accelerator, still not the
    CPU); a device-type string test (`device_type == "cuda"`) becomes `device_type != "cpu"`.

    ## Fix safety
    Unsafe: on non-CUDA accelerators the other branch used to run; the fix changes which
    branch runs there (that is its purpose, but needs a human look).

    ## Profiles
    - `torch`: `t.device.type != "cpu"`.
    - `vllm`: `t.is_cuda or t.is_xpu`.
    """

    code = "DL202"
    exempt_by = tuple(dict.fromkeys(IN_FILE + IN_PACKAGE + ("redundant-seed", "stream-order")
                                    + ROCM))
    name = "is-cuda-branch"
    summary = "Branch on `is_cuda` chooses device-generic behaviour"

    valid = [
        # the whole test holds only on ROCm, where an AMD GPU tensor is a "cuda" one
        # (rocm-guard): `is_cuda` tells a device tensor from a host one
        Valid('from sglang.srt.utils import is_hip\n\n_is_hip = is_hip()\n\n\ndef f(x):\n'
              '    if _is_hip and x.is_cuda:\n        return kernel(x)\n'
              '    return ref(x.cpu())\n'),
        # it guards only a seed `torch.manual_seed` already set on every device (redundant-seed)
        Valid('import torch\n\n\ndef seed_all(seed, device):\n    torch.manual_seed(seed)\n'
              '    if device.type == "cuda":\n        torch.cuda.manual_seed(seed)\n'),
        # both arms copy to the host, the CUDA one asynchronously (host-copy)
        Valid('import torch\n\n\ndef snapshot(t):\n    if t.device.type == "cuda":\n'
              '        host = torch.empty_like(t, device="cpu", pin_memory=True)\n'
              '        host.copy_(t, non_blocking=True)\n    else:\n'
              '        host = t.to("cpu", copy=True)\n    return host\n'),
        # the device can only be the CUDA provider's or the CPU (cuda-backend)
        Valid('import torch\n\n\nclass Runner:\n    @property\n    def device(self):\n'
              '        p = self.session.get_providers()[0]\n'
              '        if p in ("CUDAExecutionProvider", "TensorrtExecutionProvider"):\n'
              '            return torch.device("cuda", 0)\n        return torch.device("cpu")\n\n'
              '    def run(self, x):\n        device = self.device\n'
              '        on_gpu = device.type == "cuda"\n        if on_gpu:\n'
              '            x = x.to(device)\n        return x\n'),
        # the device test is joined to a test for ONNX Runtime's CUDA provider (cuda-backend)
        Valid('def providers(device, available):\n'
              '    if device.type == "cuda" and "CUDAExecutionProvider" in available:\n'
              '        return ["CUDAExecutionProvider"]\n    return ["CPUExecutionProvider"]\n'),
        Valid("if t.is_cuda:\n    torch.cuda.nvtx.range_push('x')\n"),
        Valid("if x.is_cuda:\n    out = ops.cuda_kernel(x)\nelse:\n    out = ref(x)\n"),
        Valid("if t.is_cuda or t.is_xpu:\n    m = m.to(t.device)\n"),
        # a CUDA fast path whose alternative computes the same on the tensor's own device
        Valid("def f(q, k):\n    if q.is_cuda and HAS_TILELANG:\n        return fast(q, k)\n"
              "    return reference(q, k)\n"),
        Valid("def f(h, w):\n    if h.is_cuda and h.dtype == w.dtype:\n"
              "        out = torch.mm(h, w.t(), out_dtype=torch.float32)\n    else:\n"
              "        out = F.linear(h.float(), w.float())\n    return out\n"),
        # the CUDA arm leaves the work to a later kernel; the other does it in place
        Valid('def pad(m, n, bucket):\n    if bucket and m.device.type == "cuda":\n'
              '        tiles = cdiv(bucket - n, 256)\n    else:\n        m[n:].fill_(-1)\n'),
        # an allocator ladder: each arm allocates on the tested device, with a label
        Valid('def alloc(device, n, pool):\n    if device.type == "cuda" and pool:\n'
              '        with torch.cuda.use_mem_pool(pool):\n'
              '            buf = torch.empty(n, device=device)\n        how = "pool"\n'
              '    elif device.type == "cuda":\n        buf = torch.empty(n, device=device)\n'
              '        how = "cudaMalloc"\n    else:\n        buf = torch.empty(n, device=device)\n'
              '        how = "default"\n    return buf\n'),
        Valid('if x.device.type == "cuda":\n    g = torch.cuda.CUDAGraph()\n'),
        Valid('if current_platform.is_cuda() and h.is_cuda:\n    out = mm(h)\n'),
        Valid('if d.type == "cuda":\n    n = 1\nelse:\n    raise ValueError(d)\n'),
        # the branch updates a per-device account the function keeps for CUDA
        Valid('def mem(t, n):\n    cuda_use, cpu_use = 0, 0\n    if t.device.type == "cuda":\n'
              '        cuda_use += n\n    elif t.device.type == "cpu":\n        cpu_use += n\n'
              '    return cuda_use, cpu_use\n'),
        # a ladder written with early exits: XPU returned first
        Valid('def f(cfg, eager):\n    if cfg.device_type == "xpu":\n        return\n'
              '    if cfg.device_type == "cuda" and eager:\n        cfg.async_out = False\n'),
        Valid('if x.is_cuda:\n    from pkg.nvidia.ops import fused\n    f = fused\n'),
        Valid('if d.type == "cuda" and not current_platform.is_cuda():\n    raise ValueError(d)\n'),
        # the assigned test in a CUDA-only function
        Valid('def setup_nccl(cfg, n):\n    is_gpu = cfg.device_type == "cuda"\n'
              '    if is_gpu and n > 8:\n        enable_chunking()\n'),
        # conditional expressions: CUDA-only arm, a ladder, no literal in the arm
        Valid('import torch\ns = torch.cuda.current_stream().cuda_stream if device.type == "cuda" else 0\n'),
        Valid('d = "cuda" if device.type == "cuda" else "xpu"\n'),
        Valid('n = 8 if device.type == "cuda" else 1\n'),
        # the CUDA branch of a negated test holds CUDA-only code; a rejection
        Valid('def f(w):\n    if not w.is_cuda:\n        w = slow(w)\n    else:\n'
              '        w = fused_cuda_kernel(w)\n'),
        Valid('def f(w):\n    if not w.is_cuda:\n        raise ValueError("needs CUDA")\n'),
        # an early exit for non-CUDA input: what follows is CUDA's
        Valid('def supports(q):\n    if not q.is_cuda:\n        return True\n    return fused_ok(q)\n'),
        # a ROCm function: `is_cuda` is the platform's own test there
        Valid('def rocm_gemm(x, w):\n    if not x.is_cuda:\n        return x @ w\n'
              '    return custom_op(x, w)\n'),
        # the assigned test only guards CUDA-only code
        Valid('def f(cfg):\n    on_gpu = cfg.device_type == "cuda"\n    if on_gpu:\n'
              '        torch.cuda.nvtx.range_push("x")\n'),
        # the arm taken off CUDA is the generic path; the CUDA side after it loads its
        # kernel only there, and the file launches no portable (Triton) kernel (fast-path)
        Valid("def rope(q, cache):\n    if not q.is_cuda:\n        return ref_rope(q, cache)\n"
              "    from kernels_ext import rotary\n    rotary(q, cache)\n    return q\n"),
        # the platform object's query (a property), not a tensor's test
        Valid('def pick(cfg):\n    if get_platform().is_cuda and get_platform().device_sm >= 80:\n'
              '        cfg.backend = "fa3"\n    else:\n        cfg.backend = "triton"\n'),
        # the generic side written with CUDA's own runtime API: the arm taken off CUDA is
        # the generic path (fast-path)
        Valid("import torch\n\n\ndef to_host(v, proc):\n    if not v.is_cuda:\n"
              "        return proc.postprocess(v)\n    s = torch.cuda.current_stream(v.device)\n"
              "    out = chunked_copy(v, s)\n    s.synchronize()\n    return out\n"),
        # both arms hand the code after them the same result (`out`), whatever temporaries
        # each keeps; the CUDA arm loads its kernel there (fast-path)
        Valid("def attn(self, q, k, v):\n    if q.is_cuda and fused_ok(q):\n"
              "        from pkg.ops import fused_qk_norm_rope\n        pos = positions(q)\n"
              "        fused_qk_norm_rope(q, k, pos)\n        out = self.attn(q, k, v)\n"
              "    else:\n        q, k = self.norm_q(q), self.norm_k(k)\n"
              "        out = self.attn(q, k, v)\n    return self.proj(out)\n"),
        # the generic code after a returning CUDA arm returns what it computed
        Valid("def combine(self, x, h):\n    if x.is_cuda and self.jit_ok:\n"
              "        from pkg.ops import fused_combine\n        return fused_combine(x, h)\n"
              "    out = self._combine(x, h).to(self.dtype)\n    return out\n"),
        # the CUDA arm tries a fast path and falls through to the generic code (fast-path)
        Valid("def a2a(x, pg):\n    if x.is_cuda and not compiling():\n"
              "        from pkg.ipc import exchange, ready\n        if ready(pg):\n"
              "            got = exchange(x)\n            if got is not None:\n"
              "                return got.view(x.shape)\n    out = torch.empty_like(x)\n"
              "    all_to_all(out, x, group=pg)\n    return out.reshape(x.shape)\n"),
        Valid("def copy_all(dsts, srcs):\n    if dsts and dsts[0].is_cuda:\n"
              "        from pkg.ops.small_copy import try_small_copy\n"
              "        if try_small_copy(dsts, srcs):\n            return\n"
              "    torch._foreach_copy_(dsts, srcs)\n"),
        # the arm imports from a CUDA-only module (CuTe DSL kernels, by its name)
        Valid("def mm(x, w, out):\n    if use_cutedsl() and x.is_cuda:\n"
              "        from pkg.gemm.cutedsl_gemm import gemm_out\n"
              "        return gemm_out(x, w, out)\n    torch.mm(x, w.t(), out=out)\n"
              "    return out\n"),
        # the branch only orders CUDA streams for CUDA's asynchronous work (stream-order)
        Valid("import torch\n\n\ndef send(t, dst, handles):\n    h = isend(t, dst)\n"
              "    if t.is_cuda:\n        t.record_stream(torch.cuda.current_stream(t.device))\n"
              "    handles.append((h, t))\n"),
        Valid("import torch\n\n\ndef snap(t, streams):\n    if t.device.type == \"cuda\":\n"
              "        streams[t.device] = torch.cuda.current_stream(t.device)\n"),
        Valid("import torch\n\n\ndef ready(self, t):\n    ev = None\n    if t.is_cuda:\n"
              "        s = torch.cuda.current_stream(t.device)\n        self._ev.record(s)\n"
              "        ev = self._ev\n    return ev\n"),
        Valid("import torch\n\n\nclass Marker:\n    def mark(self, t):\n"
              "        if t.is_cuda:\n            ev = torch.cuda.Event()\n"
              "            ev.record()\n            self.ev = ev\n"),
        Valid("import torch\n\n\nclass Est:\n    def __init__(self, device):\n"
              "        self.delayed = None\n        if device.type == \"cuda\":\n"
              "            self.delayed = Handler(stream=torch.cuda.Stream(device=device))\n"),
        # print-only: the test only chooses a message
        Valid('def f(image):\n    if image.is_cuda:\n        logger.warning_once("moving to the CPU")\n'
              '    return image.cpu()\n'),
        # off CUDA the tensor moves to the device the code was given (a no-op where it is
        # there): the test skips a move, it picks no device (fast-path)
        Valid("class Pool:\n    def load(self, idx, stream):\n        if not idx.is_cuda:\n"
              "            idx = idx.to(self.device, non_blocking=True)\n"
              "        return self.copy(idx, stream)\n"),
    ]
    invalid = [
        # `is_cuda_alike()` holds on CUDA too: the tensor test still chooses the CPU path
        Invalid('def f(x):\n    if is_cuda_alike() and x.is_cuda:\n        return kernel(x)\n'
                '    return ref(x.cpu())\n',
                'def f(x):\n    if is_cuda_alike() and x.device.type != "cpu":\n'
                '        return kernel(x)\n    return ref(x.cpu())\n'),
        # the CUDA arm computes on the device, the other falls back to the CPU
        Invalid('import torch\n\n\ndef norm(t):\n    if t.device.type == "cuda":\n'
                '        out = fused_norm(t)\n    else:\n        out = ref_norm(t.cpu())\n'
                '    return out\n',
                'import torch\n\n\ndef norm(t):\n    if t.device.type != "cpu":\n'
                '        out = fused_norm(t)\n    else:\n        out = ref_norm(t.cpu())\n'
                '    return out\n'),
        # the alternative moves to the CPU: no generic path
        Invalid("def f(x):\n    if x.is_cuda:\n        return kernel(x)\n    return ref(x.cpu())\n",
                "def f(x):\n    if x.device.type != \"cpu\":\n        return kernel(x)\n    return ref(x.cpu())\n"),
        Invalid('def f(cfg, n):\n    is_gpu = cfg.device_type == "cuda"\n    if is_gpu and n > 8:\n'
                '        enable_chunking()\n',
                'def f(cfg, n):\n    is_gpu = cfg.device_type != "cpu"\n    if is_gpu and n > 8:\n'
                '        enable_chunking()\n'),
        Invalid("def f(xs_pad, mask):\n    if xs_pad.is_cuda:\n        mask = mask.to(xs_pad.device)\n",
                'def f(xs_pad, mask):\n    if xs_pad.device.type != "cpu":\n        mask = mask.to(xs_pad.device)\n'),
        # the body stands under the tensor's test (cuda-guard): the fix moves it to the
        # tensor's device with the test
        Invalid("def f(xs_pad, mask):\n    if xs_pad.is_cuda:\n        mask = mask.cuda()\n"
                "        xs_pad = xs_pad.cuda()\n",
                'def f(xs_pad, mask):\n    if xs_pad.device.type != "cpu":\n'
                "        mask = mask.to(device=xs_pad.device)\n"
                "        xs_pad = xs_pad.to(device=xs_pad.device)\n"),
        Invalid('def f(x, y):\n    if x.is_cuda:\n        y = y.to("cuda", non_blocking=True)\n',
                'def f(x, y):\n    if x.is_cuda or x.is_xpu:\n'
                '        y = y.to(x.device, non_blocking=True)\n', profile="vllm"),
        # the body rebinds the tensor elsewhere: `x.device` would change under it, no fix
        Invalid('def f(x, y):\n    if x.is_cuda:\n        x = x.cpu()\n        y = y.to("cuda")\n'),
        # ... also through an attribute or an item (`self.x`, `d["x"]`), or one of their bases
        Invalid('def f(self, y):\n    if self.x.is_cuda:\n        self.x = self.x.cpu()\n'
                '        y = y.to("cuda")\n'),
        Invalid('def f(d, y):\n    if d["x"].is_cuda:\n        d["x"] = d["x"].cpu()\n'
                '        y = y.to("cuda")\n'),
        Invalid("import torch\n\n\ndef f(self, device_type):\n    if device_type == 'cuda':\n"
                "        self.stream = torch.Stream()\n",
                "import torch\n\n\ndef f(self, device_type):\n    if device_type != 'cpu':\n"
                "        self.stream = torch.Stream()\n"),
        Invalid('def f(cfg, eager):\n    if cfg.device_type == "cuda" and eager:\n        warn_slow()\n',
                'def f(cfg, eager):\n    if cfg.device_type != "cpu" and eager:\n        warn_slow()\n'),
        # an allow-list naming CUDA beside XPU lets both on together: no ladder after it
        Invalid('def f(cfg, eager):\n    if cfg.device_type not in ("cuda", "xpu"):\n        return\n'
                '    if cfg.device_type == "cuda" and eager:\n        cfg.async_out = False\n',
                'def f(cfg, eager):\n    if cfg.device_type not in ("cuda", "xpu"):\n        return\n'
                '    if cfg.device_type != "cpu" and eager:\n        cfg.async_out = False\n'),
        # a conditional expression: the arm names "cuda" where the tested device is at hand
        Invalid('import contextlib\nimport torch\n\n\ndef f(device, dtype):\n'
                '    ctx = torch.autocast("cuda", dtype=dtype) if device.type == "cuda" '
                'else contextlib.nullcontext()\n',
                'import contextlib\nimport torch\n\n\ndef f(device, dtype):\n'
                '    ctx = torch.autocast(device.type, dtype=dtype) if device.type != "cpu" '
                'else contextlib.nullcontext()\n'),
        # the negated test: off CUDA means the CPU path
        # a Triton kernel after the arm taken off CUDA would run on other accelerators too
        Invalid("def f(q):\n    if not q.is_cuda:\n        return reference(q)\n"
                "    return triton_kernel(q)\n",
                'def f(q):\n    if q.device.type == "cpu":\n        return reference(q)\n'
                "    return triton_kernel(q)\n"),
        # the file launches Triton kernels: the CUDA side may be a portable one
        Invalid("import triton\n\n\ndef f(q):\n    if not q.is_cuda:\n        return reference(q)\n"
                "    from pkg.ops import fused\n    return fused(q)\n",
                'import triton\n\n\ndef f(q):\n    if q.device.type == "cpu":\n'
                "        return reference(q)\n    from pkg.ops import fused\n"
                "    return fused(q)\n"),
        # the arm's name is read after it; an arm that works before falling through; a
        # Triton launch in the arm
        Invalid("def f(x):\n    if x.is_cuda:\n        from pkg.ops import fast\n"
                "        out = fast(x)\n        if out is not None:\n"
                "            return out.view(-1)\n    return ref(x, out)\n",
                'def f(x):\n    if x.device.type != "cpu":\n        from pkg.ops import fast\n'
                "        out = fast(x)\n        if out is not None:\n"
                "            return out.view(-1)\n    return ref(x, out)\n"),
        Invalid("def f(x, y):\n    if x.is_cuda:\n        from pkg.ops import prefetch\n"
                "        prefetch(y)\n        if y.ready():\n            return fast(x, y)\n"
                "    return ref(x, y)\n",
                'def f(x, y):\n    if x.device.type != "cpu":\n'
                "        from pkg.ops import prefetch\n        prefetch(y)\n"
                "        if y.ready():\n            return fast(x, y)\n    return ref(x, y)\n"),
        Invalid("def f(x):\n    if x.is_cuda:\n        from pkg.ops import kernel\n"
                "        if x.ndim == 2:\n            return kernel[(x.shape[0],)](x)\n"
                "    return ref(x)\n",
                'def f(x):\n    if x.device.type != "cpu":\n        from pkg.ops import kernel\n'
                "        if x.ndim == 2:\n            return kernel[(x.shape[0],)](x)\n"
                "    return ref(x)\n"),
        # the arms hand on different results (`out` is only the CUDA arm's), and a Triton
        # module's arm keeps a portable kernel from other accelerators
        Invalid("def f(q):\n    if q.is_cuda:\n        from pkg.ops import fused\n"
                "        out = fused(q)\n    else:\n        ref = reference(q)\n"
                "    return finish(out)\n",
                'def f(q):\n    if q.device.type != "cpu":\n        from pkg.ops import fused\n'
                "        out = fused(q)\n    else:\n        ref = reference(q)\n"
                "    return finish(out)\n"),
        Invalid("import triton\n\n\ndef f(q):\n    if q.is_cuda:\n        from pkg.ops import fused\n"
                "        pos = positions(q)\n        out = fused(q, pos)\n    else:\n"
                "        out = reference(q)\n    return finish(out)\n",
                'import triton\n\n\ndef f(q):\n    if q.device.type != "cpu":\n'
                "        from pkg.ops import fused\n        pos = positions(q)\n"
                "        out = fused(q, pos)\n    else:\n"
                "        out = reference(q)\n    return finish(out)\n"),
        # the generic stream API: the author meant every accelerator (another one races)
        Invalid("import torch\n\n\ndef push(t):\n    if t.device.type == \"cuda\":\n"
                "        ev = torch.Event()\n        ev.record(torch.accelerator.current_stream())\n",
                "import torch\n\n\ndef push(t):\n    if t.device.type != \"cpu\":\n"
                "        ev = torch.Event()\n        ev.record(torch.accelerator.current_stream())\n"),
        # stream bookkeeping beside other work: a synchronize every device needs
        Invalid("import torch\n\n\ndef f(t):\n    if t.is_cuda:\n"
                "        t.record_stream(torch.cuda.current_stream())\n"
                "        torch.cuda.synchronize()\n",
                "import torch\n\n\ndef f(t):\n    if t.device.type != \"cpu\":\n"
                "        t.record_stream(torch.accelerator.current_stream())\n"
                "        torch.accelerator.synchronize()\n"),
        # a module named for CUDA graphs is no CUDA-only module (they have generic forms)
        Invalid("def f(x, model):\n    if x.is_cuda:\n"
                "        from pkg.cuda_graph_runner import warmup\n        warmup(model)\n"
                "    return model(x)\n",
                'def f(x, model):\n    if x.device.type != "cpu":\n'
                "        from pkg.cuda_graph_runner import warmup\n        warmup(model)\n"
                "    return model(x)\n"),
        # a `record` that is no event's on a CUDA stream (a metric, a timer) orders nothing
        Invalid("def f(t, stats):\n    if t.is_cuda:\n        stats.record(t)\n    return t\n",
                'def f(t, stats):\n    if t.device.type != "cpu":\n        stats.record(t)\n'
                "    return t\n"),
        # a side stream whose alternative is not stated (no None before it)
        Invalid("import torch\n\n\nclass Est:\n    def __init__(self, device):\n"
                "        if device.type == \"cuda\":\n"
                "            self.delayed = Handler(stream=torch.cuda.Stream(device=device))\n"),
        # a move off CUDA to a device literal picks that device (not the code's own)
        Invalid('def f(idx):\n    if not idx.is_cuda:\n        idx = idx.to("cpu")\n'
                "    return idx\n",
                'def f(idx):\n    if idx.device.type == "cpu":\n        idx = idx.to("cpu")\n'
                "    return idx\n"),
        # the arm taken off CUDA goes to the CPU: no generic path
        Invalid("def f(q):\n    if not q.is_cuda:\n        return ref(q.cpu())\n"
                "    return kernel(q)\n",
                'def f(q):\n    if q.device.type == "cpu":\n        return ref(q.cpu())\n'
                "    return kernel(q)\n"),
        # the CUDA arm moves a tensor the in-place arm leaves where it is
        Invalid("def f(m, x, n):\n    if x.is_cuda:\n        m = m.cuda()\n    else:\n"
                "        x[n:].fill_(0)\n",
                'def f(m, x, n):\n    if x.device.type != "cpu":\n'
                "        m = m.to(device=x.device)\n    else:\n        x[n:].fill_(0)\n"),
        # the alternative allocates on the CPU, not on the tested device (also under a
        # tensor's own test)
        Invalid('def f(x, n):\n    if x.is_cuda:\n        y = torch.empty(n, device=x.device)\n'
                '    else:\n        y = torch.empty(n)\n    return y\n',
                'def f(x, n):\n    if x.device.type != "cpu":\n'
                '        y = torch.empty(n, device=x.device)\n'
                '    else:\n        y = torch.empty(n)\n    return y\n'),
        Invalid('def alloc(device, n):\n    if device.type == "cuda":\n'
                '        buf = torch.empty(n, device=device)\n        how = "cuda"\n'
                '    else:\n        buf = torch.empty(n)\n        how = "host"\n    return buf\n'),
        Invalid('def f(w):\n    on_cpu = False\n    if not w.is_cuda:\n        on_cpu = True\n',
                'def f(w):\n    on_cpu = False\n    if w.device.type == "cpu":\n        on_cpu = True\n'),
        Invalid('def f(w):\n    if not w.is_cuda:\n        w = w.contiguous()\n',
                'def f(w):\n    if not (w.is_cuda or w.is_xpu):\n        w = w.contiguous()\n',
                profile="vllm"),
        Invalid('def f(x, y):\n    if x.device.type == "cuda":\n        y = y.pin_memory()\n',
                'def f(x, y):\n    if x.is_cuda or x.is_xpu:\n        y = y.pin_memory()\n',
                profile="vllm"),
    ]

    def _assigned_tests(self, facts):
        for node in facts.strings:
            if node.value != "cuda":
                continue
            compare = facts.get_parent(node)
            if not isinstance(compare, ast.Compare) or skipped(facts, node, api=True):
                continue
            ifs = _assigned_test_uses(facts, node, compare)
            if not ifs or any(guards_cuda_only(facts, st.body) or _asks_platform(facts, st.test)
                              for st in ifs):
                continue
            w = facts.where_of(node)
            derived = derived_device_reason(compare, w.function, w.klass, facts.path)
            if derived is not None:  # `self.device` is CUDA only through a CUDA-only backend
                note_exempt(facts, compare, derived)
                continue
            expr = _not_cpu_test(facts, compare)
            if expr is None:
                continue
            s, e = facts.span(compare)
            fix = make_fix(facts, f"Test for any accelerator: `{expr.text}`", [Edit(s, e, expr.text)],
                           expr, safe=False)
            yield self.diagnostic(facts, compare, f"`{facts.source(compare)}` picks the CPU path "
                                  "on every non-CUDA accelerator (it chooses a branch below)", fix)

    def _conditional_expressions(self, facts):
        """`torch.autocast("cuda") if device.type == "cuda" else nullcontext()`: the CUDA arm
        names "cuda" where the tested device is at hand. The arm uses the tested expression
        instead and the test accepts every accelerator (`device.type != "cpu"`). Not where the
        arm holds CUDA-only code or another device type is named."""
        for node in facts.ifexps:
            test = node.test
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                    and isinstance(test.ops[0], ast.Eq)
                    and isinstance(test.comparators[0], ast.Constant)
                    and test.comparators[0].value == "cuda"):
                continue
            subject = test.left
            if not _names_device(subject):
                continue
            literals = [n for n in ast.walk(node.body)
                        if isinstance(n, ast.Constant) and n.value == "cuda"]
            if not literals or skipped(facts, node, api=True):
                continue
            arm = ast.Expr(node.body)
            if guards_cuda_only(facts, [arm]) or any(
                    isinstance(n, ast.Constant) and isinstance(n.value, str)
                    and n.value.split(":")[0] in _OTHER_DEVICE_TYPES
                    for n in ast.walk(node)):
                continue
            src = facts.source(subject)
            edits = [Edit(*facts.span(n), src) for n in literals]
            cs, ce = facts.span(test.comparators[0])
            q = facts.text[cs] if facts.text[cs] in "'\"" else '"'
            edits.append(Edit(facts.span(subject)[1], ce, f" != {q}cpu{q}"))
            fix = make_fix(facts, f"Use `{src}` and test for any accelerator", edits, (),
                           safe=False)
            yield self.diagnostic(facts, test, f"`{facts.source(test)}` picks the fallback on "
                                  "every non-CUDA accelerator", fix)

    def check(self, facts):
        if facts.cuda_alike:
            return
        yield from self._conditional_expressions(facts)
        yield from self._assigned_tests(facts)
        for stmt in facts.ifs:
            if skipped(facts, stmt, api=True):
                continue
            negated = self._negated(facts, stmt)
            if negated is not None:
                yield negated
                continue
            # an operand after one that establishes CUDA (`_is_cuda and x.is_cuda`) is CUDA's
            tests = [(t, n) for t, n in cuda_tests(stmt.test) if not skipped(facts, t, api=True)]
            if not tests or guards_cuda_only(facts, stmt.body) or _asks_platform(facts, stmt.test):
                continue
            backend = joined_backend_test(stmt.test)
            if backend is not None:  # `device.type == "cuda" and "CUDAExecutionProvider" in ...`
                note_exempt(facts, tests[0][0], backend_reason(backend, facts.path))
                continue
            if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.Raise):
                continue  # `if cuda: ... else: raise`: an assertion in disguise, not a choice
            fast = _fast_path(facts, stmt, device=all(t is None for _, t in tests),
                              portable=lambda block: _portable(facts, block))
            if fast:
                note_exempt(facts, tests[0][0], fast)
                continue  # a CUDA fast path beside a generic one
            seeds = [_redundant_seed(facts, st.value) if isinstance(st, ast.Expr) else None
                     for st in stmt.body]
            if not stmt.orelse and seeds and all(seeds):
                note_exempt(facts, tests[0][0], seeds[0])
                continue  # it guards only seeds `torch.manual_seed` already set everywhere
            order = stream_order_reason(stmt, facts.qualname, facts.path,
                                        _before(facts, stmt))
            if order is not None:  # it only orders CUDA streams for CUDA's asynchronous work
                note_exempt(facts, tests[0][0], order)
                continue
            host = host_copy_reason(stmt, facts.path)
            if host is not None:  # both arms copy to the host, the CUDA one asynchronously
                note_exempt(facts, tests[0][0], host)
                continue
            for test, tensor in tests:
                fix = None
                expr = None if tensor is None else role_expr(
                    facts, "accelerator-tensor-test", facts.source(tensor))
                if expr is None:
                    expr = _not_cpu_test(facts, test)
                # the body is not a finding of its own (it stands under this guard: a
                # tensor's own test establishes CUDA too): the fix rewrites its `torch.cuda`
                # calls and, under a tensor's test, its device values to the tensor's device,
                # or there is none
                body = guard_body_edits(facts, stmt.body, target_of(facts),
                                        device=_tensor_device(facts, tensor, stmt.body))
                if expr is not None and body is not None:
                    text = expr.text if test is stmt.test or " or " not in expr.text \
                        else f"({expr.text})"
                    s, e = facts.span(test)
                    fix = make_fix(facts, f"Test for any accelerator: `{text}`",
                                   [Edit(s, e, text), *body], expr, safe=False)
                yield self.diagnostic(facts, test, f"`{facts.source(test)}` picks the CPU path on "
                                      "every non-CUDA accelerator", fix)

    def _negated(self, facts, stmt):
        """`if not t.is_cuda: weight_on_cpu = True`: the branch taken off CUDA is the CPU
        path, which every other accelerator takes too. The test becomes `t.device.type ==
        "cpu"` (the profile's accelerator test, negated). Not where the else-branch (the CUDA
        one) holds CUDA-only code, nor where the body only rejects the input."""
        test = stmt.test
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
                and isinstance(test.operand, ast.Attribute) and test.operand.attr == "is_cuda"):
            return None
        if (stmt.orelse and guards_cuda_only(facts, stmt.orelse)) or _only_declines(stmt.body):
            return None
        if _cuda_alike_scope(facts, stmt):
            return None  # on ROCm `is_cuda` is the platform's own test
        moved = moved_to_target_reason(stmt, facts.path)
        if moved is not None:  # `if not t.is_cuda: t = t.to(self.device)`
            note_exempt(facts, test, moved)
            return None
        if not stmt.orelse:  # the arm taken off CUDA is the generic path, CUDA's after it
            fast = _fast_path(facts, stmt, reason=negated_fast_path_reason,
                              portable=_portable(facts, _after(facts, stmt)))
            if fast is not None:
                note_exempt(facts, test, fast)
                return None
        tensor = facts.source(test.operand.value)
        expr = role_expr(facts, "accelerator-tensor-test", tensor)
        fix = None
        if expr is not None:
            text = expr.text
            if text == f'{tensor}.device.type != "cpu"':
                text = f'{tensor}.device.type == "cpu"'
            else:
                text = f"not ({text})"
            s, e = facts.span(test)
            fix = make_fix(facts, f"Test for the CPU: `{text}`", [Edit(s, e, text)], expr,
                           safe=False)
        return self.diagnostic(facts, test, f"`{facts.source(test)}` sends every non-CUDA "
                               "accelerator down the CPU path", fix)


def _tensor_device(facts, tensor, body):
    """(`t.device`, `t.device.type`): where the rewritten test (`t.device.type != "cpu"`)
    runs `body`, the device its values take. None without a tensor, or where the body rebinds
    the tensor or one of its bases (`t = t.cpu()`, `self.x = self.x.cpu()`, `self = ...`:
    `t.device` would change under it) other than moving it to its own device (`t = t.cuda()`,
    rewritten to `t.to(device=t.device)`)."""
    if tensor is None or rebinds(facts, tensor, body):
        return None
    src = facts.source(tensor)
    return f"{src}.device", f"{src}.device.type"


_OTHER_DEVICE_TYPES = {"xpu", "npu", "mps", "hpu", "mlu", "musa", "mtia", "xla"}


def _only_declines(body) -> bool:
    """`raise ...`, `return`, `return False`, `continue`: the branch only declines non-CUDA
    input, so the code after it is CUDA's (a guard that establishes CUDA)."""
    if len(body) != 1:
        return False
    st = body[0]
    if isinstance(st, (ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(st, ast.Return) and (st.value is None or isinstance(st.value, ast.Constant))


def _cuda_alike_scope(facts, node) -> bool:
    """Inside a function or class named for a CUDA-alike platform (`rocm_unquantized_gemm`:
    the cuda_alike stems of devlint/data/cuda_only.toml), where PyTorch's ROCm build is the
    "cuda" device type."""
    from devlint.evidence.vocabulary import _cuda_only_defaults

    stem_re = _cuda_only_defaults()[1][1]
    w = facts.where_of(node)
    return w is not None and any(
        scope is not None and stem_re.search(scope.name.lower())
        for scope in (w.function, w.klass))


def _names_device(expr) -> bool:
    """`device.type`, `x.device.type`, `device_type`, `self.device_type`: a device (type) by
    the word `device` in its name."""
    if isinstance(expr, ast.Attribute) and expr.attr == "type":
        expr = expr.value
    name = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
    return "device" in name.lower()


def _fast_path(facts, stmt, reason=fast_path_reason, **kw):
    """The `devlint.evidence.fast_path` reason of a tensor's CUDA branch, if any."""
    return reason(stmt, _after(facts, stmt), facts.path, **kw)


def _after(facts, stmt) -> list:
    """The statements after `stmt` in its block; for an `elif` arm without an `else`, those
    after the whole chain."""
    arm = stmt
    par = facts.tree_parent(stmt)
    while not arm.orelse and isinstance(par, ast.If) and len(par.orelse) == 1 \
            and par.orelse[0] is stmt:
        stmt, par = par, facts.tree_parent(par)  # an `elif` arm: what follows the chain
    for field in ("body", "orelse", "finalbody"):
        block = getattr(par, field, None)
        if isinstance(block, list) and any(st is stmt for st in block):
            return block[block.index(stmt) + 1:]
    return []


def _before(facts, stmt):
    """The statement before `stmt` in its block, or None."""
    par = facts.tree_parent(stmt)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(par, field, None)
        if isinstance(block, list):
            for i, st in enumerate(block):
                if st is stmt:
                    return block[i - 1] if i else None
    return None


def _portable(facts, block) -> bool:
    """`launches_portable_kernel`, the module's own answer memoized per file."""
    return launches_portable_kernel(facts.tree, block, facts.memo(
        "names-triton", lambda: names_triton(facts.tree)))


def _assigned_test_uses(facts, literal, compare):
    """`is_gpu = cfg.device_type == "cuda"` whose name later chooses an `if` branch in the
    same function: the `if` statements (none when the name is rebound or used otherwise)."""
    w = facts.where_of(literal)
    stmt = w.statement if w is not None else None
    if not (isinstance(stmt, ast.Assign) and stmt.value is compare and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return []
    scope = w.function
    if scope is None:
        return []
    name = stmt.targets[0].id
    ifs = []
    for n in ast.walk(scope):
        if isinstance(n, ast.If):
            conj = n.test.values if isinstance(n.test, ast.BoolOp) and isinstance(
                n.test.op, ast.And) else [n.test]
            if any(isinstance(c, ast.Name) and c.id == name for c in conj):
                ifs.append(n)
        elif isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) \
                and n is not stmt.targets[0]:
            return []
    return ifs


def _not_cpu_test(facts, test):
    """`device_type == "cuda"` (a device-type string, no tensor to ask) becomes
    `device_type != "cpu"`: every accelerator, still not the CPU."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and right.value == "cuda") \
            or isinstance(left, ast.Constant):
        return None
    s, _ = facts.span(right)
    q = facts.text[s] if facts.text[s] in "'\"" else '"'
    return Expr(f"{facts.source(left)} != {q}cpu{q}", (), "", False)


def _asks_platform(facts, test) -> bool:
    """The same condition also asks the platform (`current_platform.is_cuda()`,
    `torch.cuda.is_available()`): the branch is CUDA-specific on purpose. A negated query
    (`not current_platform.is_rocm()`) only excludes a platform."""
    negated = {id(n.operand) for n in ast.walk(test)
               if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)}
    for n in ast.walk(test):
        if id(n) in negated:
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr.startswith("is_") and not n.args:
            owner = facts.qualname(n.func.value) or facts.source(n.func.value)
            if owner.endswith(("current_platform", "torch.cuda")):
                return True
        if isinstance(n, ast.Attribute) and n.attr == "is_cuda" and platform_object(n.value):
            return True  # `get_platform().is_cuda`: the platform's property, not a tensor's
    return False


RULE = IsCudaBranch
