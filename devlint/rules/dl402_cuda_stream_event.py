"""DL402 cuda-stream-event."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix
from devlint.rules._api_table import project_form, table_findings
from devlint.profiles.torch_api import entries_by_name
from devlint.rules._device import skipped
from devlint.rules.base import STREAMS, Invalid, Rule, Valid

_DEVICE_MODULE_SINCE = (2, 4)  # torch.get_device_module (docs 2.4)
_STREAM_CONTEXT_SINCE = (2, 7)  # `with stream:` on a torch.Stream (devlint/data/torch_api.toml)


class CudaStreamEvent(Rule):
    """
    ## What it does
    Flags CUDA-only stream and event objects: `torch.cuda.Stream(...)`, `torch.cuda.Event(...)`
    and `with torch.cuda.stream(s):`. Annotations naming them are not findings (they change
    nothing at run time); the fix of a construction rewrites them.

    ## Why is this bad?
    `torch.cuda.Stream` and `torch.cuda.Event` exist only for CUDA; on XPU and other
    accelerators code creating them raises. `torch.Stream` and `torch.Event` are the
    device-generic classes (torch >= 2.5) and work on every accelerator.

    ## Example
    ```python
    self.transfer_event: torch.cuda.Event | None = None
    self.transfer_event = torch.cuda.Event()
    ```

    Use instead:
    ```python
    self.transfer_event: torch.Event | None = None
    self.transfer_event = torch.Event()
    ```

    ## Fix
    `torch.cuda.Stream`/`Event` become `torch.Stream`/`Event` (a construction's fix also
    rewrites the annotations of variables and attributes naming the class it constructs); `with torch.cuda.stream(s):` becomes `with s:` (a
    `torch.Stream` is a context manager from torch 2.7); below 2.7, `torch.cuda.stream(s)`
    becomes the current accelerator module's `torch.get_device_module().stream(s)` (torch
    >= 2.4; `torch.cuda` on CUDA, `torch.xpu`, `torch.cpu` without an accelerator, where it is a
    no-op like `torch.cuda.stream` there). The annotations of variables and attributes that
    name the class ride on the first reported construction's fix; a bare annotation in a file
    that only receives streams from elsewhere, or constructs them only under a CUDA guard, is
    left as it is.

    ## Fix safety
    Unsafe: the generic classes differ in details (`torch.Event`'s first positional argument is
    the device, `torch.Stream`'s `priority` is keyword-only, `with s:` needs `s` not `None`).

    ## Profiles
    Both profiles use `torch.Stream` / `torch.Event`.
    """

    code = "DL402"
    name = "cuda-stream-event"
    summary = "CUDA-only stream or event"

    exempt_by = STREAMS

    valid = [
        # an operand after a tensor's own CUDA test (cuda-guard): evaluated only on CUDA
        Valid("import torch\n\n\ndef f(x, s):\n"
              "    ok = x.is_cuda and isinstance(s, torch.cuda.Stream)\n    return ok\n"),
        # under a test for CUDA or ROCm, torch.cuda is that platform's API (cuda-alike-guard)
        Valid("from vllm.platforms import current_platform\nimport torch\n\n\ndef aux():\n"
              "    if current_platform.is_cuda_alike():\n        return torch.cuda.Stream()\n"
              "    return None\n"),
        Valid("import torch\n\n\ndef aux(s):\n    if s is None and is_cuda_alike():\n"
              "        s = torch.cuda.Stream()\n    return s\n"),
        # the same after an assert that leaves only CUDA or ROCm
        Valid("from vllm.platforms import current_platform\nimport torch\n\n\ndef events():\n"
              "    assert current_platform.is_cuda_alike()\n"
              "    return [torch.cuda.Event(), torch.cuda.Event()]\n"),
        # the block is CUDA-only code: a platform guard is its fix, not `with s:`
        Valid("import torch\nwith torch.cuda.stream(s):\n    torch.cuda.current_blas_handle()\n"),
        Valid("import torch\ne = torch.Event()\n"),
        Valid("import torch\n\n\ndef f(s: torch.cuda.Stream | None):\n    return s\n"),
        Valid("import torch\nwith torch.accelerator.device_index(0):\n    pass\n"),
        # the original saved before a monkeypatch is no use of the API
        Valid("import torch\ncuda_stream = torch.cuda.Stream\ntorch.cuda.Stream = torch.xpu.Stream\n"),
        # an annotation of a target the file never constructs into
        Valid("import torch\nx: torch.cuda.Event | None = None\nx = make_event()\n"),
        # an annotation whose construction stands under a CUDA guard (not-a-device)
        Valid("import torch\n\n\nclass A:\n    S: torch.cuda.Stream = None\n\n"
              "    def f(self):\n        if torch.cuda.is_available():\n"
              "            A.S = torch.cuda.Stream()\n"),
        # cuda-graph-capture: the side-stream warm-up of a function that captures a CUDA graph
        Valid("import torch\n\n\ndef capture(fn, x):\n    s = torch.cuda.Stream()\n"
              "    s.wait_stream(torch.cuda.current_stream())\n    with torch.cuda.stream(s):\n"
              "        fn(x)\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n"
              "        fn(x)\n    return g\n"),
        # cuda-graph-capture: a function named for an action on CUDA graphs that uses one
        Valid("import torch\n\n\ndef _replay_cuda_graph(self):\n"
              "    binding = self.cuda_graph\n    s = torch.cuda.Stream()\n    return s\n"),
        # cuda-graph-capture: a module named for CUDA graphs that captures one itself; its
        # side stream serves the graph's static inputs
        Valid("import torch\n\n\nclass Loader:\n    def __init__(self):\n"
              "        self.stream = torch.cuda.Stream()\n\n\n"
              "def capture(fn):\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n"
              "        fn()\n    return g\n", path="pkg/full_cuda_graph.py"),
        # flash-attention-impl: a benchmark that switches attention to FlashAttention-3 (the
        # only implementation it names), timed with CUDA events
        Valid("import torch\nfrom torch.nn.attention import activate_flash_attention_impl\n"
              "BACKENDS = {'fa3': {'flash_impl': 'FA3'}, 'sdpa': {'flash_impl': None}}\n\n\n"
              "def run(name, fn):\n    impl = BACKENDS[name]['flash_impl']\n    if impl:\n"
              "        activate_flash_attention_impl(impl)\n"
              "    e = torch.cuda.Event(enable_timing=True)\n    fn()\n    return e\n"),
    ]
    invalid = [
        Invalid("import torch\ne = torch.cuda.Event()\n", "import torch\ne = torch.Event()\n"),
        # ruling some platforms out is no test for a CUDA-alike platform
        Invalid("import torch\nif not is_xpu():\n    e = torch.cuda.Event()\n",
                "import torch\nif not is_xpu():\n    e = torch.Event()\n"),
        # the annotation is no finding of its own: the construction's fix rewrites it too
        Invalid("import torch\nx: torch.cuda.Event | None = None\nx = torch.cuda.Event()\n",
                "import torch\nx: torch.Event | None = None\nx = torch.Event()\n"),
        Invalid("import torch as th\ns = th.cuda.Stream(priority=-1)\n",
                "import torch as th\ns = th.Stream(priority=-1)\n"),
        Invalid("import torch\nwith torch.cuda.stream(s):\n    pass\n",
                "import torch\nwith s:\n    pass\n", profile="vllm"),
        # torch < 2.7 (the default target is 2.6): the current accelerator module's stream()
        Invalid("import torch\nwith torch.cuda.stream(s):\n    pass\n",
                "import torch\nwith torch.get_device_module().stream(s):\n    pass\n"),
        Invalid("import torch\nctx = nullcontext() if s is None else torch.cuda.stream(s)\n",
                "import torch\nctx = nullcontext() if s is None else torch.get_device_module().stream(s)\n"),
        # a predicate named for CUDA graphs asks about them, it does not act on one
        Invalid("import torch\n\n\ndef use_cuda_graph(m):\n    s = torch.cuda.Stream()\n"
                "    return m.cuda_graph, s\n",
                "import torch\n\n\ndef use_cuda_graph(m):\n    s = torch.Stream()\n"
                "    return m.cuda_graph, s\n"),
        # a capture that also serves another platform's graphs is shared code (the limit of
        # cuda-graph-capture)
        Invalid("import torch\n\n\ndef capture(fn, x):\n    s = torch.cuda.Stream()\n"
                "    g = torch.cuda.CUDAGraph() if is_cuda_alike() else torch.xpu.XPUGraph()\n"
                "    return g, s\n",
                "import torch\n\n\ndef capture(fn, x):\n    s = torch.Stream()\n"
                "    g = torch.cuda.CUDAGraph() if is_cuda_alike() else torch.xpu.XPUGraph()\n"
                "    return g, s\n"),
        # ... not one written against a platform layer (its runners serve other platforms)
        Invalid("import torch\nfrom pkg.platforms import current_platform\n\n\nclass Loader:\n"
                "    def __init__(self):\n        self.stream = torch.cuda.Stream()\n\n\n"
                "def capture(fn):\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n"
                "        fn()\n    return g\n",
                "import torch\nfrom pkg.platforms import current_platform\n\n\nclass Loader:\n"
                "    def __init__(self):\n        self.stream = torch.Stream()\n\n\n"
                "def capture(fn):\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n"
                "        fn()\n    return g\n", path="pkg/full_cuda_graph.py"),
        # a module that also names another implementation is no FlashAttention-3 benchmark
        # (the limit of flash-attention-impl)
        Invalid("import torch\nfrom torch.nn.attention import activate_flash_attention_impl\n"
                "BACKENDS = {'fa3': 'FA3', 'mine': 'FA2'}\n\n\n"
                "def run(name):\n    activate_flash_attention_impl(BACKENDS[name])\n"
                "    return torch.cuda.Event()\n",
                "import torch\nfrom torch.nn.attention import activate_flash_attention_impl\n"
                "BACKENDS = {'fa3': 'FA3', 'mine': 'FA2'}\n\n\n"
                "def run(name):\n    activate_flash_attention_impl(BACKENDS[name])\n"
                "    return torch.Event()\n"),
    ]

    def check(self, facts):
        yield from table_findings(self, facts, annotations_when_constructed=True)
        if facts.cuda_alike:
            return
        target = facts.settings.target_torch_tuple(facts.profile)
        for node, qual in facts.torch_refs:
            if qual != "torch.cuda.stream" or project_form(self.code, facts, qual):
                continue  # (the project's device module: table_findings wrote its form)
            call = facts.get_parent(node)
            if not isinstance(call, ast.Call) or call.func is not node:
                continue
            if skipped(facts, node, api=True):
                continue
            w_stmt = facts.get_parent(call)
            if isinstance(w_stmt, (ast.With, ast.AsyncWith)) and _only_ipc_events(w_stmt.body):
                continue  # the stream only orders CUDA IPC events: CUDA-only by construction
            if isinstance(w_stmt, (ast.With, ast.AsyncWith)) and all(
                    _cuda_only_call(facts, st) for st in w_stmt.body):
                # every statement is CUDA-only code (`torch.cuda.current_blas_handle()`): the
                # block needs a platform guard, and `with s:` alone would not make it portable
                continue
            fix = None
            in_with = isinstance(facts.get_parent(call), (ast.With, ast.AsyncWith))
            if in_with and len(call.args) == 1 and not call.keywords \
                    and target >= _STREAM_CONTEXT_SINCE:
                arg = facts.source(call.args[0])
                s, e = facts.span(call)
                fix = make_fix(facts, f"Enter the stream itself: `with {arg}:`",
                               [Edit(s, e, arg)], (), safe=False)
            elif target >= _DEVICE_MODULE_SINCE and facts.torch_name():
                # before `with s:` (2.7): the current accelerator's own `stream(s)`
                # (torch.get_device_module, 2.4); unsafe: torch.mps has no `stream`, and a
                # torch.Stream passed to a backend's StreamContext needs a human look
                repl = f"{facts.torch_name()}.get_device_module().stream"
                s, e = facts.span(node)
                fix = make_fix(facts, f"Use `{repl}`", [Edit(s, e, repl)], (), safe=False)
            yield self.diagnostic(facts, call, f"`{facts.source(call)}` is CUDA-only", fix)


def _cuda_only_call(facts, stmt) -> bool:
    """`torch.cuda.current_blas_handle()` (or `_ = ...`): a call of a `torch.cuda` API that no
    table maps to a generic form."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if not isinstance(value, ast.Call):
        return False
    q = facts.qualname(value.func) or ""
    return q.startswith("torch.cuda.") and not any(
        q in entries_by_name(code) for code in ("DL401", "DL402", "DL403", "DL404"))


def _only_ipc_events(body) -> bool:
    calls = [n for st in body for n in ast.walk(st) if isinstance(n, ast.Call)]
    return bool(calls) and any(any(k.arg == "interprocess" for k in c.keywords) for c in calls)


RULE = CudaStreamEvent
