"""Code that is CUDA-specific on purpose (issue 18): CUDA graph capture, tools built on
nvidia-smi, packages named for a CUDA-only stack, libraries stubbed with mocks when absent,
TransformerEngine wrappers, CUDA fast paths. Each case pairs the exempt form with the nearest
form that is still reported."""
import devlint


def rows(text, path="pkg/mod.py"):
    return [(d.code, d.location[0]) for d in devlint.check_source(text, path=path)]


CAPTURE = (
    "import torch\n\n\n"
    "def capture(fn, x):\n"
    "    s = torch.cuda.Stream()\n"
    "    s.wait_stream(torch.cuda.current_stream())\n"
    "    with torch.cuda.stream(s):\n"
    "        fn(x)\n"
    "    torch.cuda.current_stream().wait_stream(s)\n"
    "    g = torch.cuda.CUDAGraph()\n"
    "    buf = torch.zeros(4, device=\"cuda\")\n"
    "    with torch.cuda.graph(g):\n"
    "        out = fn(buf)\n"
    "    return g, out\n"
)


def test_a_function_that_captures_a_cuda_graph_is_cuda_only():
    assert rows(CAPTURE) == []
    # without the capture, the same warm-up is generic code
    plain = CAPTURE.replace("    g = torch.cuda.CUDAGraph()\n", "    g = None\n").replace(
        "    with torch.cuda.graph(g):\n        out = fn(buf)\n", "    out = fn(buf)\n")
    assert [c for c, _ in rows(plain)] == ["DL402", "DL401", "DL402", "DL401", "DL103"]


def test_a_capture_that_asks_the_platform_is_shared():
    shared = CAPTURE.replace("    g = torch.cuda.CUDAGraph()\n",
                             "    g = torch.cuda.CUDAGraph() if is_cuda_alike() else XPUGraph()\n")
    assert len(rows(shared)) == 5


def test_a_capture_under_an_if_is_one_mode_among_others():
    text = ("import torch\n\n\ndef run(fn, x, graphed):\n    s = torch.cuda.Stream()\n"
            "    if graphed:\n        g = torch.cuda.CUDAGraph()\n"
            "        with torch.cuda.graph(g, stream=s):\n            fn(x)\n    return fn(x)\n")
    assert [c for c, _ in rows(text)] == ["DL402"]


def test_a_module_and_a_test_class_about_cuda_graphs():
    text = ("import torch\nfrom pkg.cuda_graphs import CudaGraphManager\n\n\n"
            "def test_replay():\n    m = CudaGraphManager(torch.nn.Linear(2, 2).cuda())\n"
            "    m(torch.randn(2, device=\"cuda\"))\n")
    assert rows(text, "tests/test_cuda_graphs.py") == []
    # the same code under another name, and a name without such code, are checked
    assert len(rows(text, "tests/test_linear.py")) == 2
    bare = "import torch\n\n\ndef test_a():\n    torch.randn(2, device=\"cuda\")\n"
    assert len(rows(bare, "tests/test_cuda_graphs.py")) == 1
    cls = ("import torch\n\n\nclass TestCudaGraphReplay:\n    def test_a(self):\n"
           "        m = CudaGraphManager(torch.nn.Linear(2, 2).cuda())\n\n\n"
           "class TestOther:\n    def test_a(self):\n        torch.cuda.synchronize()\n")
    assert rows(cls, "tests/test_x.py") == [("DL401", 11)]


SMI = ("import os\nimport subprocess\n\n\n"
       "def smi(q):\n    return subprocess.check_output([\"nvidia-smi\", q]).decode()\n\n\n"
       "def pids():\n    return subprocess.check_output(\"nvidia-smi -q\", shell=True)\n\n\n"
       "def gpus():\n    return os.environ.get(\"CUDA_VISIBLE_DEVICES\")\n")


def test_a_tool_built_on_nvidia_smi():
    assert rows(SMI) == []
    # one helper that runs it exempts only itself
    one = SMI.replace("subprocess.check_output(\"nvidia-smi -q\", shell=True)", "[]")
    assert rows(one) == [("DL301", 14)]
    helper = ("import os\nimport subprocess\n\n\ndef free():\n"
              "    d = os.environ.get(\"CUDA_VISIBLE_DEVICES\", \"0\")\n"
              "    return subprocess.check_output([\"nvidia-smi\", \"-i\", d])\n")
    assert rows(helper) == []
    # another vendor's tool beside it: the tool serves several platforms
    amd = SMI.replace("\"nvidia-smi -q\"", "\"rocm-smi\"")
    assert rows(amd) == [("DL301", 14)]


def test_a_package_named_for_a_cuda_only_stack(tmp_path):
    pkg = tmp_path / "proj" / "layers" / "deep_gemm_wrapper"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    text = "import torch\nbuf = torch.empty(8, device=\"cuda\")\n"
    (pkg / "warmup.py").write_text(text)
    assert rows(text, str(pkg / "warmup.py")) == []
    # a folder that is no package (a checkout, a data folder) is matched by exact names only
    plain = tmp_path / "deep_gemm_runs"
    plain.mkdir()
    (plain / "warmup.py").write_text(text)
    assert rows(text, str(plain / "warmup.py")) == [("DL103", 2)]
    # a ROCm-only stack's package: the torch.cuda API is right there, and so is a "cuda"
    # device literal, the name torch gives the AMD GPU (evidence.hip_device)
    mori = tmp_path / "proj" / "mori"
    mori.mkdir()
    (mori / "__init__.py").write_text("")
    text2 = "import torch\ns = torch.cuda.Stream()\nbuf = torch.empty(8, device=\"cuda\")\n"
    assert rows(text2, str(mori / "conn.py")) == []


STUBBED = ("import torch\n\ntry:\n    import transformer_engine as te\n    HAVE_TE = True\n"
           "except ImportError:\n    from unittest.mock import MagicMock\n\n"
           "    te = MagicMock()\n    HAVE_TE = False\n\n\n"
           "class TELinear(te.pytorch.Linear):\n    def sync(self):\n"
           "        torch.cuda.synchronize()\n        return torch.zeros(1, device=\"cuda\")\n")


def test_a_library_stubbed_with_mocks_is_required():
    # TransformerEngine is CUDA-alike: the torch.cuda API is right, device literals are not
    assert rows(STUBBED) == [("DL103", 16)]
    # an optional import with a real fallback leaves the module checked
    optional = STUBBED.replace("    from unittest.mock import MagicMock\n\n    te = MagicMock()\n",
                               "    te = None\n")
    assert [c for c, _ in rows(optional)] == ["DL401", "DL103"]
    # a CUDA-only stack stubbed the same way makes the whole module CUDA-only
    flashinfer = STUBBED.replace("import transformer_engine as te", "import flashinfer as te")
    assert rows(flashinfer) == []


def test_fast_paths_through_with_blocks_tuples_and_elif_chains():
    text = ("import torch\nimport torch.nn.functional as F\n\n\n"
            "def apply(w, x):\n    if use_aiter:\n        return aiter_mm(x, w)\n"
            "    elif x.is_cuda and x.dtype == torch.bfloat16:\n        return gemv(x, w)\n"
            "    return F.linear(x, w)\n\n\n"
            "def norm(m, h):\n    if h.is_cuda and h.dtype == torch.float16:\n"
            "        with no_autocast():\n            return m(h)\n"
            "    return m(h.float()).to(h.dtype)\n\n\n"
            "def pair(q, k, t):\n    if q.is_cuda and q.dtype is torch.bfloat16:\n"
            "        return fused_rope(q, k, t)\n    return rope(q, t), rope(k, t)\n")
    assert rows(text) == []
    # an elif arm with no alternative after the chain skips the work elsewhere
    skip = ("import torch\n\n\ndef only(x):\n    if use_aiter:\n        return aiter_mm(x)\n"
            "    elif x.is_cuda:\n        x = x.pin_memory()\n    return x\n")
    assert rows(skip) == [("DL202", 7)]


def test_a_fast_path_whose_alternative_allocates_on_the_cpu_is_none():
    # a tensor's own test (`x.is_cuda`, `x.device.type == "cuda"`) whose other arm allocates
    # with no device: off CUDA the result lands on the CPU, not beside `x` (no generic path)
    arms = ("        y = torch.empty(n, device=x.device)\n    else:\n"
            "        y = torch.empty(n{kw})\n    return y + x\n")
    for test in ("x.is_cuda", 'x.device.type == "cuda"'):
        text = "import torch\n\n\ndef f(x, n):\n    if %s:\n" % test + arms
        assert rows(text.format(kw="")) == [("DL202", 5)], test
        # the same arm on the tensor's own device (or `torch.empty_like`) is the generic path
        assert rows(text.format(kw=", device=x.device")) == [], test
        assert rows(text.replace("torch.empty(n{kw})", "torch.empty_like(x)")) == [], test


def test_green_contexts_and_nvlink_multicast_are_cuda_runtime():
    green = ("import torch\n\n\ndef streams(gpu, sms):\n    from kernels import spatial\n"
             "    s = [torch.cuda.Stream(gpu)]\n"
             "    s.append(spatial.create_greenctx_stream_by_value(sms, sms, gpu))\n"
             "    return s\n\n\n"
             "def plain(gpu):\n    return torch.cuda.Stream(gpu)\n")
    assert rows(green) == [("DL402", 12)]
    mc = ("import torch\n\n\ndef buffer(handle, n):\n    x = torch.empty(n, device=\"cuda\")\n"
          "    return x, handle.multicast_ptr\n\n\n"
          "def plain(n):\n    return torch.empty(n, device=\"cuda\")\n")
    assert rows(mc) == [("DL103", 10)]


def test_the_rocm_module_of_a_platforms_package(tmp_path):
    pkg = tmp_path / "proj" / "platforms"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    text = "import torch\n\n\ndef device(i):\n    return torch.device(f\"cuda:{i}\")\n"
    assert rows(text, str(pkg / "rocm.py")) == []
    # elsewhere a ROCm-named file is CUDA-alike: its device literals name the HIP device
    # (evidence.hip_device); a file of another name is generic
    other = tmp_path / "proj" / "ops"
    other.mkdir()
    (other / "__init__.py").write_text("")
    assert rows(text, str(other / "rocm.py")) == []
    assert [c for c, _ in rows(text, str(other / "decode.py"))] == ["DL105"]


def test_a_function_built_on_a_cpu_or_cuda_library():
    text = ("import torch\n\n\ndef load(files):\n    from fastsafetensors import SafeTensorsFileLoader\n"
            "    device = torch.device(f\"cuda:{rank()}\")\n"
            "    return SafeTensorsFileLoader(files, device)\n\n\n"
            "def plain(files):\n    return torch.device(f\"cuda:{rank()}\")\n")
    assert rows(text) == [("DL105", 11)]
    # an import at the top of the module only gates the module's loader functions
    top = ("import torch\nfrom fastsafetensors import SafeTensorsFileLoader\n\n\n"
           "def load(files):\n    return SafeTensorsFileLoader(files, torch.device(\"cuda\"))\n")
    assert [c for c, _ in rows(top)] == ["DL103"]


def test_a_class_whose_constructor_calls_into_a_cuda_only_module():
    text = ("import torch\nimport apex.contrib.nccl_allocator as nccl_allocator\n\n\n"
            "class Registered:\n    def __init__(self, pool, group):\n"
            "        self.mem = nccl_allocator.nccl_mem(pool, group=group)\n\n"
            "    def __enter__(self):\n        return torch.device(\"cuda\", torch.cuda.current_device())\n\n\n"
            "class Plain:\n    def __init__(self, pool):\n        self.pool = pool\n\n"
            "    def __enter__(self):\n        return torch.device(\"cuda\", 0)\n")
    assert rows(text) == [("DL103", 18)]
    # only the constructor counts: a method that calls the module exempts only itself
    other = text.replace("        self.mem = nccl_allocator.nccl_mem(pool, group=group)\n",
                         "        self.pool = pool\n\n    def reg(self):\n"
                         "        return nccl_allocator.nccl_mem(self.pool)\n")
    assert [c for c, _ in rows(other)] == ["DL103", "DL401", "DL103"]


def test_code_that_switches_attention_to_flash_attention_3():
    text = ("import torch\nfrom torch.nn.attention import activate_flash_attention_impl\n\n\n"
            "def test_fa3():\n    q = torch.randn(2, 8, device=\"cuda\")\n"
            "    activate_flash_attention_impl(\"FA3\")\n    return q\n\n\n"
            "def test_default(impl):\n    q = torch.randn(2, 8, device=\"cuda\")\n"
            "    activate_flash_attention_impl(impl)\n    return q\n")
    # the call with a run-time name in a module that names only FA3: the whole module is
    # about the CUDA-only implementations
    assert rows(text) == []
    two = text.replace("activate_flash_attention_impl(impl)", "activate_flash_attention_impl(\"FA4\")")
    assert rows(two) == []
    # a module that names another implementation: only the function that activates FA3
    other = text.replace("activate_flash_attention_impl(impl)",
                         "activate_flash_attention_impl(\"MYFA\")")
    assert rows(other) == [("DL103", 12)]
    other = text.replace("    return q\n\n\n", "    return q, \"FA2\"\n\n\n")
    assert rows(other) == [("DL103", 12)]
    # a run-time name in a module that names no implementation: nothing says which it is
    none = text.replace("activate_flash_attention_impl(\"FA3\")", "q = q * 2")
    assert rows(none) == [("DL103", 6), ("DL103", 12)]


def test_graph_code_written_against_a_platform_layer_is_shared():
    text = ("import torch\nfrom vllm.platforms import current_platform\n"
            "from vllm.compilation.cuda_graph import CUDAGraphWrapper\n\n\n"
            "class TestCUDAGraphWrapper:\n    def setup_method(self):\n"
            "        self.model = SimpleMLP().to(\"cuda\")\n\n"
            "    def test_capture(self):\n        w = CUDAGraphWrapper(self.model)\n")
    assert [c for c, _ in rows(text, "tests/test_cudagraph_dispatch.py")] == ["DL101"]
    assert rows(CAPTURE.replace("    g = torch.cuda.CUDAGraph()\n",
                                "    g = torch.cuda.CUDAGraph()\n"
                                "    d = torch.accelerator.current_accelerator()\n")) != []
    # torch's generic event beside the capture: the function is written for any device
    # (vLLM's benchmark_moe, dev corpus 064)
    generic = CAPTURE.replace("    return g, out\n", "    e = torch.Event(enable_timing=True)\n"
                              "    return g, out, e\n")
    assert len(rows(generic)) == 5


def test_a_large_class_is_no_wrapper_of_what_its_constructor_calls():
    methods = "".join(f"\n    def m{i}(self):\n        return {i}\n" for i in range(4))
    text = ("import torch\nimport apex.contrib.nccl_allocator as nccl_allocator\n\n\n"
            "class Runner:\n    def __init__(self, pool):\n"
            "        self.mem = nccl_allocator.nccl_mem(pool)\n" + methods +
            "\n    def stream(self):\n        return torch.cuda.Stream()\n")
    assert [c for c, _ in rows(text)] == ["DL402"]


GRAPH_MODULE = (
    "import torch\n\n\n"
    "class StaticBufferLoader:\n"
    "    def __init__(self):\n        self.stream = torch.cuda.Stream()\n\n"
    "    def load(self, batch):\n"
    "        self.stream.wait_stream(torch.cuda.current_stream())\n"
    "        with torch.cuda.stream(self.stream):\n"
    "            return [t.cuda(non_blocking=True) for t in batch]\n\n\n"
    "class Wrapper:\n"
    "    def __call__(self, fn, step):\n"
    "        if step == 1:\n"
    "            self.graph = torch.cuda.CUDAGraph()\n"
    "            with torch.cuda.graph(self.graph):\n"
    "                fn()\n"
    "        torch.cuda.synchronize()\n"
)


def test_a_library_module_named_for_cuda_graphs_that_captures_one_is_graph_code():
    # the name and its own capture: the static buffers, streams and syncs serve the graph
    assert rows(GRAPH_MODULE, "pkg/core/full_cuda_graph.py") == []
    # the same code under another name: only what the functions say (the capture is
    # conditional, so nothing)
    assert rows(GRAPH_MODULE, "pkg/core/loader.py") == [
        ("DL402", 6), ("DL401", 9), ("DL402", 10), ("DL102", 11), ("DL401", 20)]
    # named for graphs, but it captures none itself (it may configure or dispatch them)
    no_capture = GRAPH_MODULE.replace("            self.graph = torch.cuda.CUDAGraph()\n"
                                      "            with torch.cuda.graph(self.graph):\n"
                                      "                fn()\n", "            fn()\n")
    # a graph module written against a platform layer or naming another accelerator is shared
    layer = GRAPH_MODULE.replace("import torch\n", "import torch\n"
                                 "from pkg.platforms import current_platform\n", 1)
    xpu = GRAPH_MODULE.replace("        torch.cuda.synchronize()\n",
                               "        torch.cuda.synchronize()\n        return 'xpu'\n")
    for text in (no_capture, layer, xpu):
        found = rows(text, "pkg/core/cuda_graphs.py")
        assert len(found) == 5 and found == rows(text, "pkg/core/loader.py")
