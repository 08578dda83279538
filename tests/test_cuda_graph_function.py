"""cuda-graph-capture, named functions (issue #18): a function named for an action on CUDA
graphs (`_replay_cuda_graph`, `_run_iters_with_cuda_graph`) whose unconditional code works
with one (a graph API, a call or a value named for CUDA graphs) is CUDA's own; a test, a
predicate, a getter, a name alone, a use under `if`, and code that names another platform or
a platform layer are not."""
import ast

import devlint
from devlint.evidence.cuda_graph_capture import scope_reason

SYNC = "    torch.cuda.synchronize()\n"


def codes(text, path="pkg/runner.py"):
    return sorted(d.code for d in devlint.check_source("import torch\n\n\n" + text, path=path))


def test_a_function_named_for_cuda_graphs_that_works_with_one():
    assert codes("def _run_iters_with_cuda_graph(model):\n"
                 "    _CudagraphGlobalRecord.create_cudagraphs()\n" + SYNC) == []
    assert codes("class R:\n    def _replay_cuda_graph(self, x):\n"
                 "        binding, buffers = self.cuda_graph\n"
                 "        torch.cuda.current_stream().synchronize()\n") == []
    assert codes("def replay_cudagraph(graph):\n    graph.replay()\n" + SYNC) == []
    assert codes("def capture_cuda_graphs(pool):\n"
                 "    pool = torch.cuda.graph_pool_handle()\n" + SYNC) == []


def test_a_name_alone_or_a_flag_keeps_the_findings():
    # the name, but no graph in the code
    assert codes("def _run_with_cuda_graph(model):\n    model()\n" + SYNC) == ["DL401"]
    # the graph only on one path
    assert codes("def _run_with_cuda_graph(model, g):\n    if g:\n        g.replay()\n"
                 + SYNC) == ["DL401"]
    # a setting about graphs is no graph
    assert codes("def _run_with_cuda_graph(args):\n    n = args.cuda_graph_max_bs\n"
                 + SYNC) == ["DL401"]
    for name in ("use_cuda_graph", "is_cuda_graph_ready", "get_cuda_graph_bs",
                 "set_cuda_graph_pool", "test_decode_cuda_graph", "init_cuda_graph_state",
                 "parse_cuda_graph_config"):
        assert codes(f"def {name}(m):\n    m.cuda_graph.replay()\n" + SYNC) == ["DL401"], name


def test_shared_code_keeps_the_findings():
    assert codes("def capture_cuda_graphs(m):\n    m.cuda_graph.replay()\n"
                 "    torch.xpu.synchronize()\n" + SYNC) == ["DL401"]
    assert codes("from pkg.platforms import current_platform\n\n\n"
                 "def capture_cuda_graphs(m):\n    m.cuda_graph.replay()\n" + SYNC) == ["DL401"]


def test_the_reason_names_the_function_and_the_graph_use():
    tree = ast.parse("def _replay_cuda_graph(self):\n    x = 1\n    b = self.cuda_graph\n")
    why = scope_reason(tree.body[0], "graph", "pkg/r.py")
    assert why.principle == "cuda-graph-capture" and why.line == 3
    assert "_replay_cuda_graph" in why.text
