"""Principle: code that captures a CUDA graph is CUDA's own.

```python
def capture(fn, x):
    stream = torch.cuda.Stream()                     # the side-stream warm-up of a capture
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn(x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn(x)
```
The capture APIs (`torch.cuda.graph`, `torch.cuda.CUDAGraph`, `make_graphed_callables`) have no
device-generic form in torch (`torch.accelerator` has no graph), and the recipe around them
(a side stream, its warm-up, the static buffers the graph replays) exists for the capture: a
CUDA graph is used for a CUDA-only purpose (the precision rubric: "nvtx ranges, CUDA graphs
capture"). Evidence (a `Reason("cuda-graph-capture", ...)`):
- a function that always calls a capture API (outside `if`/`try`): file:line of the call;
- a function named for an action on CUDA graphs (`_replay_cuda_graph`,
  `_run_iters_with_cuda_graph`, `capture_cuda_graphs`; not a test, a predicate, a getter or
  a setter: `use_cuda_graph`, `is_cuda_graph_ready`, `get_cuda_graph_bs`, nor one that
  prepares or configures graph state: `init_cuda_graph_state`) whose unconditional
  code works with one: it calls a graph API (`.replay()`, `graph_pool_handle()`) or something
  named for CUDA graphs (`_CudagraphGlobalRecord.create_cudagraphs()`; not a getter or
  predicate), or reads the graph itself (`binding, buffers = self.cuda_graph`: ONNX Runtime's
  CUDA-graph replay; not a setting such as `cuda_graph_max_bs`). Two
  signals, the name and the code: file:line of the first such use;
- a test class named for CUDA graphs (`TestCudaGraphReplay`) whose code calls a capture API
  or a callable named for CUDA graphs (`CudaGraphManager(...)`, `create_cudagraphs()`):
  the class line;
- a test module named for CUDA graphs (`test_cuda_graphs.py`) whose code calls a capture API,
  or imports or calls something named for CUDA graphs (two signals, the name and the code):
  file:line of that use;
- a library module named for CUDA graphs (`full_cuda_graph.py`, `cuda_graphs.py`) whose own
  code calls a capture API (`torch.cuda.CUDAGraph()`, `torch.cuda.graph(...)`,
  `make_graphed_callables`) and that nowhere asks which platform it runs on, names another
  accelerator or uses a platform layer: a module that exists to capture and replay CUDA
  graphs (its static input buffers, side streams and memory pools serve the graph):
  file:line of the capture call;
- the `torch.cuda.is_available()` operand of `torch.cuda.is_available() and
  torch.cuda.is_current_stream_capturing()` (and nothing else): the whole test asks whether a
  CUDA graph is being captured, the availability query only keeps the capture query from
  running without CUDA (`capture_query_reason`; sglang, 9 such findings at tensorguard):
  the test's line.
Limits: code written against a platform layer (`current_platform`, `torch.accelerator`) or
with torch's generic `torch.Event`/`torch.Stream` is shared by the platforms even where it
captures a CUDA graph (vLLM made its CUDA-graph tests and the synchronisations around
benchmark_moe's capture device-generic: dev corpus 010, 064); a library module is never exempt whole by its name (`decode_cuda_graph_runner.py`
may be the base class other platforms' graph runners subclass): only its functions that
capture are, unless it captures a graph itself and names no other platform or platform layer
anywhere (a runner other platforms subclass is written against a platform layer); code that also asks which platform it runs on or names another accelerator
(`current_platform.is_cuda_alike()`, `torch.xpu`, `"xpu"`, `XPUGraph`) captures on several
platforms and stays checked; a capture under `if`/`try` picks a mode among others (only that
function's unconditional calls count); a name alone (`cuda_graph_mode`, a function so named
whose code uses no graph) is no capture, nor is a flag or getter named for graphs (code that
runs with or without them: sglang's NPU graph runners share the `cuda_graph` names), and
nor is a check that a capture is under way (`is_current_stream_capturing`: a guard, branch
flow's business).
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason
from devlint.evidence.vocabulary import is_test_path, unconditional_in

_P = "cuda-graph-capture"
# the capture APIs, by the last parts of their dotted name
_CAPTURE = frozenset({"CUDAGraph", "make_graphed_callables"})
_CUDA_GRAPH_NAME = re.compile(r"(?i)cuda_?graphs?|cudagraphs?")
_OTHER = re.compile(r"(?i)\b(xpu|npu|hpu|mps|musa|mlu|XPUGraph)\b")
_PLATFORM_QUERY = re.compile(r"^(is_cuda_alike|is_rocm|is_xpu|is_npu|is_hpu|is_mps|is_tpu"
                             r"|is_musa|is_cpu|is_out_of_tree)$")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CONDITIONAL = (ast.If, ast.Try, ast.IfExp, ast.BoolOp, ast.Lambda, ast.ClassDef) + _FUNCS + tuple(
    getattr(ast, n) for n in ("Match", "TryStar") if hasattr(ast, n))


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def capture_call(node) -> bool:
    """`torch.cuda.graph(g)`, `torch.cuda.CUDAGraph()`, `make_graphed_callables(...)` (torch's
    or TransformerEngine's, which captures CUDA graphs too)."""
    if not isinstance(node, ast.Call):
        return False
    name = _dotted(node.func)
    last = name.rpartition(".")[2]
    return last in _CAPTURE or name.endswith("cuda.graph") or name == "cuda.graph"


def _graph_named_call(node) -> bool:
    if not isinstance(node, ast.Call):
        return False
    return bool(_CUDA_GRAPH_NAME.search(_dotted(node.func).rpartition(".")[2]))


# a project's platform layer or torch's accelerator API: graph code written against them is
# shared by the platforms (vLLM's `current_platform`: its CUDA-graph tests were made
# device-generic upstream, dev corpus 010)
_PLATFORM_LAYER = frozenset({"current_platform", "accelerator", "current_accelerator",
                             "get_device_module"})


def _shared(nodes) -> bool:
    """The code asks which platform it runs on, names another accelerator, or is written
    against a platform layer."""
    for n in nodes:
        if isinstance(n, ast.alias) and (n.asname or n.name).rpartition(".")[2] in _PLATFORM_LAYER:
            return True
        if isinstance(n, ast.Name) and n.id in _PLATFORM_LAYER \
                or isinstance(n, ast.Attribute) and n.attr in _PLATFORM_LAYER:
            return True
        if isinstance(n, ast.Attribute) and n.attr in ("Event", "Stream") \
                and isinstance(n.value, ast.Name) and n.value.id == "torch":
            return True  # torch's generic stream and event: the code is written for any device
        if isinstance(n, ast.Call):
            last = _dotted(n.func).rpartition(".")[2]
            if _PLATFORM_QUERY.match(last):
                return True
        elif isinstance(n, ast.Attribute) and _OTHER.fullmatch(n.attr):
            return True
        elif isinstance(n, ast.Name) and _OTHER.fullmatch(n.id):
            return True
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) < 40 \
                and _OTHER.search(n.value):
            return True
    return False


def _mentions(text: str) -> bool:
    return "graph" in text or "Graph" in text


def platform_layer(tree: ast.Module) -> bool:
    """The module imports a platform layer (`from vllm.platforms import current_platform`)."""
    return any(isinstance(n, ast.alias) and (n.asname or n.name).rpartition(".")[2]
               in _PLATFORM_LAYER for st in tree.body
               if isinstance(st, (ast.Import, ast.ImportFrom)) for n in st.names)


def scope_reason(scope, text: str, path: str | None, layer: bool = False) -> Reason | None:
    """The function always captures a CUDA graph, or the test class is about CUDA graphs;
    `text` is the scope's source (a cheap gate), `layer` whether its module imports a
    platform layer (then nothing in it is CUDA's own by its graphs)."""
    if layer or not _mentions(text):
        return None
    if isinstance(scope, _FUNCS):
        call = next((n for n in unconditional_in(scope.body, _CONDITIONAL) if capture_call(n)), None)
        if call is None:
            return _named_graph_function(scope, path)
        if _shared(ast.walk(scope)):
            return None
        return Reason(_P, f"`{scope.name}` captures a CUDA graph", path, call.lineno)
    if isinstance(scope, ast.ClassDef) and scope.name.startswith("Test") \
            and _CUDA_GRAPH_NAME.search(scope.name):
        if any(capture_call(n) or _graph_named_call(n) for n in ast.walk(scope)) \
                and not _shared(ast.walk(scope)):
            return Reason(_P, f"`{scope.name}` tests CUDA graphs", path, scope.lineno)
    return None


# a name that asks, reads or configures rather than acts on a graph (`is_cuda_graph_enabled`,
# `get_cuda_graph_bs`, `use_cuda_graph`): a flag of code that runs with or without graphs
# likewise a name that prepares, parses or configures state for graphs (`init_cuda_graph_state`,
# `parse_cuda_graph_config`): every platform's runner implements those
_NOT_ACTION = re.compile(r"^(?:test|is|has|use|can|should|supports?|needs?|requires?|get|set"
                         r"|validate|toggle|enable|disable|maybe|with|init|prepare|parse"
                         r"|resolve|finalize|configure)(?:_|$)")


def _graph_named(node) -> bool:
    """A call, name or attribute read named for CUDA graphs, or a graph API's own call
    (`.replay()`, `graph_pool_handle()`)."""
    if isinstance(node, ast.Call):
        last = _dotted(node.func).rpartition(".")[2]
        return capture_call(node) or last in ("replay", "graph_pool_handle") \
            or bool(_CUDA_GRAPH_NAME.search(last)) \
            and not _NOT_ACTION.match(last.lstrip("_").lower())
    # the graph object itself (`self.cuda_graph`), not a setting about graphs
    # (`server_args.cuda_graph_max_bs`, `self.cuda_graph_kv_indices`)
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        return bool(_CUDA_GRAPH_NAME.fullmatch(node.attr.strip("_")))
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return bool(_CUDA_GRAPH_NAME.fullmatch(node.id.strip("_")))
    return False


def _named_graph_function(scope, path: str | None) -> Reason | None:
    """A function named for an action on CUDA graphs (`_replay_cuda_graph`,
    `_run_iters_with_cuda_graph`, `capture_cuda_graphs`; not a test, a predicate, a getter or
    a setter) whose unconditional code works with one: it calls a graph API or something
    named for CUDA graphs (`_CudagraphGlobalRecord.create_cudagraphs()`, `graph.replay()`), or
    reads a value so named (`binding, buffers = self.cuda_graph`). Two signals, the name and
    the code; code that names another platform or a platform layer is shared."""
    name = scope.name.lstrip("_")
    if not _CUDA_GRAPH_NAME.search(name) or _NOT_ACTION.match(name.lower()):
        return None
    use = min((n for n in unconditional_in(scope.body, _CONDITIONAL) if _graph_named(n)),
              key=lambda n: n.lineno, default=None)
    if use is None or _shared(ast.walk(scope)):
        return None
    return Reason(_P, f"`{scope.name}` is named for CUDA graphs and works with one", path,
                  use.lineno)


def module_reason(tree: ast.Module, text: str, path: str) -> Reason | None:
    """A test module named for CUDA graphs whose code captures one or uses something named
    for them; a library module named for them that captures one itself."""
    parts = path.replace("\\", "/").split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    if not _CUDA_GRAPH_NAME.search(stem) or not _mentions(text):
        return None
    if not is_test_path(parts):
        return _graph_module(tree, stem, path)
    use = None
    for n in ast.walk(tree):
        if capture_call(n) or _graph_named_call(n):
            use = use or n
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""]
            if any(_CUDA_GRAPH_NAME.search(m.rpartition(".")[2]) for m in mods):
                use = use or n
    if use is None or _shared(ast.walk(tree)):
        return None
    return Reason(_P, f"its name `{stem}` and its code are about CUDA graphs", path,
                  use.lineno)


def _graph_module(tree: ast.Module, stem: str, path: str) -> Reason | None:
    """A library module named for CUDA graphs that calls a capture API itself and is not
    shared by the platforms (`_shared`)."""
    call = next((n for n in ast.walk(tree) if capture_call(n)), None)
    if call is None or _shared(ast.walk(tree)):
        return None
    return Reason(_P, f"its name `{stem}` says it is about CUDA graphs, and it captures one "
                  "itself", path, call.lineno)


# --- tensorguard (issue #18): the availability operand of a capture query ---
_CAPTURING = "torch.cuda.is_current_stream_capturing"
_AVAILABLE = "torch.cuda.is_available"


def capture_query_reason(node, qualname, path) -> Reason | None:
    """`torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()`: the
    availability operand only keeps the capture query from running without CUDA; the whole
    test asks whether a CUDA graph is being captured, which has no device-generic form (the
    rubric's "CUDA graphs capture"). Evidence: an `and` whose operands are that availability
    query and the capture query, nothing else. The evidence is the test's line. Limits: any
    other operand (a flag, a tensor test, another platform) makes it a test of its own, which
    stays checked; the capture query alone is a guard (`cuda-guard`), not this reason."""
    if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And)):
        return None
    names = []
    for v in node.values:
        if not (isinstance(v, ast.Call) and not v.args and not v.keywords):
            return None
        names.append(qualname(v.func))
    if _CAPTURING not in names or any(n not in (_CAPTURING, _AVAILABLE) for n in names):
        return None
    return Reason("cuda-graph-capture", "the availability query only guards a query whether a "
                  "CUDA graph is being captured", path, node.lineno)
# --- end tensorguard ---
