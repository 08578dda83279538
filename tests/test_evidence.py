"""The evidence layer: every reason not to report a candidate is a `Reason` naming its
principle and where its evidence stands (what a `--show-exempt` prints)."""
from __future__ import annotations

import pickle

import pytest

from devlint.analysis.triage import build_facts
from devlint.evidence import Reason
from devlint.rules._device import device_strings, skipped, why_skipped
from devlint.settings import Settings


def test_reason_is_its_text_with_a_principle_and_a_location():
    r = Reason("cuda-only-module", "imports `cupy`", "pkg/k.py", 3)
    assert r == "imports `cupy`" and f"{r}" == "imports `cupy`" and r
    assert (r.principle, r.text, r.location) == ("cuda-only-module", "imports `cupy`",
                                                 "pkg/k.py:3")
    assert Reason("cuda-only-module", "in a `nvidia/` folder", "a/nvidia/k.py").location \
        == "a/nvidia/k.py"
    assert r.to_dict() == {"principle": "cuda-only-module", "message": "imports `cupy`",
                           "location": "pkg/k.py:3"}
    back = pickle.loads(pickle.dumps(r))  # crosses the process pool with its fields
    assert (back.principle, back.text, back.location) == (r.principle, r.text, r.location)


def _reasons(text, path="pkg/mod.py"):
    facts = build_facts(path, text, Settings(profile="torch"))
    return facts, {node.lineno: why_skipped(facts, node) for node in device_strings(facts)}


def test_a_cuda_only_import_exempts_the_file_with_its_line():
    facts, reasons = _reasons('import os\nimport cupy\n\nx = t.to("cuda")\n')
    assert facts.cuda_only.principle == "cuda-only-module"
    assert facts.cuda_only.location == "pkg/mod.py:2"
    assert reasons[4] is facts.cuda_only


@pytest.mark.parametrize("text, row, principle, evidence_row", [
    # a guard that establishes CUDA, and the else-branch of the opposite test
    ('if current_platform.is_cuda():\n    d = "cuda"\n', 2, "cuda-guard", 1),
    ('if not current_platform.is_cuda():\n    d = "cpu"\nelse:\n    d = "cuda"\n', 4,
     "cuda-guard", 1),
    # an early exit that leaves only CUDA
    ('def f():\n    if not current_platform.is_cuda():\n        return\n    d = "cuda"\n', 4,
     "cuda-guard", 2),
    # a platform ladder: the CUDA arm of a chain that names another platform
    ('if torch.cuda.is_available():\n    d = "cuda"\nelif torch.xpu.is_available():\n'
     '    d = "xpu"\n', 2, "platform-ladder", 1),
    # the literal's own expression tests for a CUDA-alike platform
    ('d = "cuda" if is_cuda_alike() else "cpu"\n', 1, "cuda-guard", 1),
    # never runs
    ('if TYPE_CHECKING:\n    d = "cuda"\n', 2, "not-a-device", 1),
    # a CUDA-only scope, by its name
    ('def _flashinfer_setup(t):\n    return t.to("cuda")\n', 2, "cuda-only-scope", 1),
    ('class Op:\n    def forward_native(self, t):\n        return t\n\n'
     '    def forward_cuda(self, t):\n        return t.to("cuda")\n', 6, "cuda-twin", 2),
])
def test_each_principle_names_itself_and_its_evidence(text, row, principle, evidence_row):
    facts, reasons = _reasons("import torch\n" + text)
    why = reasons[row + 1]
    assert why is not None, text
    assert why.principle == principle
    assert why.location == f"pkg/mod.py:{evidence_row + 1}"
    node = next(n for n in device_strings(facts) if n.lineno == row + 1)
    assert skipped(facts, node)


def test_an_annotation_is_not_a_device():
    facts = build_facts("pkg/mod.py", "import torch\ns: torch.cuda.Stream | None = None\n",
                        Settings(profile="torch"))
    node, _ = facts.torch_refs[0]
    why = why_skipped(facts, node)
    assert (why.principle, why.location) == ("not-a-device", "pkg/mod.py:2")
    assert why_skipped(facts, node, annotations=True) is None


def test_no_reason_no_exemption():
    # not CUDA: excluding the CPU is no evidence of CUDA
    facts, reasons = _reasons('import torch\ndef f(device):\n    if device == "cpu":\n'
                              '        return\n    d = "cuda"\n    return d\n')
    assert reasons[5] is None
    node = next(n for n in device_strings(facts) if n.lineno == 5)
    assert not skipped(facts, node)


def _api_reasons(text, path="pkg/mod.py"):
    """row -> Reason (or None) of each `torch.cuda` reference of the text."""
    facts = build_facts(path, "import torch\n" + text, Settings(profile="torch"))
    return {node.lineno - 1: why_skipped(facts, node, api=True) for node, _ in facts.torch_refs}


@pytest.mark.parametrize("text, row, principle", [
    # a guard: its body is CUDA's, the guard itself is not exempt
    ("if torch.cuda.is_available():\n    torch.cuda.synchronize()\n", 2, "cuda-guard"),
    ("_ON_CUDA = torch.cuda.is_available()\n\n\ndef f():\n    if _ON_CUDA:\n"
     "        torch.cuda.synchronize()\n", 6, "cuda-guard"),
    ("def f(x, defer):\n    if defer or x.device.type != 'cuda':\n        return\n    else:\n"
     "        torch.cuda.current_stream()\n", 5, "cuda-guard"),
    ("def _require_cuda():\n    assert torch.cuda.is_available()\n\n\ndef f():\n"
     "    _require_cuda()\n    torch.cuda.synchronize()\n", 7, "cuda-guard"),
    # ladders: torch's device modules, a project's helpers, the final else
    ("if is_torch_npu_available():\n    pass\nelif torch.cuda.is_available():\n"
     "    torch.cuda.empty_cache()\n", 3, "platform-ladder"),
    ("if is_torch_npu_available():\n    pass\nelif torch.cuda.is_available():\n"
     "    torch.cuda.empty_cache()\n", 4, "platform-ladder"),
    ("if hasattr(torch, 'npu'):\n    pass\nelif is_torch_xpu_available():\n    pass\nelse:\n"
     "    torch.cuda.empty_cache()\n", 6, "platform-ladder"),
    # several platforms, a capability gate
    ("ok = torch.cuda.is_available() or torch.backends.mps.is_available()\n", 1,
     "several-platforms"),
    ("ok = torch.cuda.is_available() and not is_sm_at_least_89()\n", 1, "capability-gate"),
])
def test_in_function_principles(text, row, principle):
    why = _api_reasons(text)[row]
    assert why is not None and why.principle == principle, why


@pytest.mark.parametrize("text, row", [
    # the guard itself stays a finding
    ("if torch.cuda.is_available():\n    torch.cuda.synchronize()\n", 1),
    # excluding the CPU, or some platforms, is not CUDA
    ("def f(device):\n    if device == 'cpu':\n        return\n    torch.cuda.synchronize()\n", 4),
    ("if not is_xpu() and not is_rocm():\n    torch.cuda.synchronize()\n", 2),
    # the CPU is no other accelerator: no ladder
    ("if torch.cuda.is_available():\n    pass\nelif device == 'cpu':\n    pass\nelse:\n"
     "    torch.cuda.synchronize()\n", 6),
    # the else after a single other platform is every remaining platform's
    ("if current_platform.is_tpu():\n    pass\nelse:\n    torch.cuda.set_device(0)\n", 4),
    # a gate that merely asks exempts nothing under it
    ("@pytest.mark.skipif(not current_platform.is_cuda(), reason='x')\ndef test_x():\n"
     "    torch.cuda.synchronize()\n", 3),
])
def test_limits_of_the_in_function_principles(text, row):
    assert _api_reasons(text)[row] is None


# --- principles of issue 18 (phf): side-by-side platforms, CUDA-only backends of another
# runtime, a stated CUDA requirement, abstract defaults

@pytest.mark.parametrize("text, row, principle, evidence_row", [
    # CUDA and another accelerator tested side by side (not an elif chain)
    ("if torch.cuda.is_available():\n    torch.cuda.empty_cache()\n"
     "if torch.xpu.is_available():\n    torch.xpu.empty_cache()\n", 1, "sibling-platforms", 3),
    ("if torch.cuda.is_available():\n    torch.cuda.empty_cache()\n"
     "if torch.xpu.is_available():\n    torch.xpu.empty_cache()\n", 2, "sibling-platforms", 3),
    ("def f(cfg):\n    cuda_ok = torch.cuda.is_available()\n    fa = cfg.fa and cuda_ok\n"
     "    xpu_ok = is_torch_xpu_available()\n    return fa or xpu_ok\n", 2,
     "sibling-platforms", 4),
    # a project's CUDA availability helper is one arm of its ladder
    ("if is_torch_mlu_available():\n    d = 1\nelif is_torch_cuda_available():\n"
     "    torch.cuda.set_device(0)\nelif is_torch_npu_available():\n    d = 2\n", 4,
     "platform-ladder", 3),
    # another runtime's CUDA-only backend
    ("def f(available):\n    return torch.cuda.is_available() and "
     "'CUDAExecutionProvider' in available\n", 2, "cuda-backend", 2),
])
def test_phf_principles(text, row, principle, evidence_row):
    why = _api_reasons(text)[row]
    assert why is not None and why.principle == principle, why
    assert why.location == f"pkg/mod.py:{evidence_row + 1}"


@pytest.mark.parametrize("text, row", [
    # a lone CUDA guard, or one far from the other platform's statement
    ("if torch.cuda.is_available():\n    torch.cuda.empty_cache()\n", 1),
    ("if torch.cuda.is_available():\n    torch.cuda.empty_cache()\na = 1\nb = 2\n"
     "if torch.xpu.is_available():\n    torch.xpu.empty_cache()\n", 1),
    # the CPU is no other accelerator; excluding a platform is not handling it
    ("if torch.cuda.is_available():\n    torch.cuda.empty_cache()\nif device == 'cpu':\n"
     "    pass\n", 1),
    ("if torch.cuda.is_available():\n    torch.cuda.empty_cache()\nif not is_xpu():\n"
     "    pass\n", 1),
    # a backend list that also names another backend is no CUDA test
    ("def f(p):\n    if p in ('CUDAExecutionProvider', 'ROCMExecutionProvider'):\n"
     "        torch.cuda.synchronize()\n", 3),
])
def test_limits_of_the_phf_principles(text, row):
    assert _api_reasons(text)[row] is None


@pytest.mark.parametrize("test, exempt", [
    ('backend == "nccl"', True), ('"nccl" == dist.get_backend()', True),
    ('backend in ("nccl",)', True),
    # another backend in the test, or the test's other side, is no NCCL test
    ('backend in ("nccl", "gloo")', False), ('backend != "nccl"', False),
])
def test_a_test_for_the_nccl_backend_is_a_cuda_alike_guard(test, exempt):
    # NCCL is CUDA's (or ROCm's RCCL, under the same name): torch.cuda is its device API; a
    # device literal under it is a device choice the platform owns (corpus case 097)
    from devlint.api import check_source

    text = ("import torch\n\n\ndef worker(rank, backend):\n"
            f"    if {test}:\n        torch.cuda.set_device(rank)\n"
            "        d = torch.device('cuda')\n    return d\n")
    found = sorted((d.location[0], d.code) for d in check_source(text, "pkg/mod.py"))
    assert found == ([(7, "DL103")] if exempt else [(6, "DL401"), (7, "DL103")])


def test_a_backend_test_guards_the_code_under_it():
    facts, reasons = _reasons("import torch\n\n\ndef device(provider, i):\n"
                              "    if provider in ('CUDAExecutionProvider', "
                              "'TensorrtExecutionProvider'):\n"
                              "        return torch.device('cuda', i)\n")
    assert reasons[6].principle == "cuda-guard"
    assert reasons[6].location == "pkg/mod.py:5"


def test_a_stated_cuda_requirement_makes_the_module_cuda_only():
    text = ('"""Megatron backend.\n\nRequirements:\n    - PyTorch with CUDA support\n"""\n'
            'import torch\nd = torch.device("cuda")\n')
    facts = build_facts("pkg/backend.py", text, Settings(profile="torch"))
    why = facts.cuda_only
    assert (why.principle, why.location) == ("stated-requirement", "pkg/backend.py:4")
    for doc in ('"""CUDA-only primitives, so on ROCm we dispatch here."""',
                '"""Requires CUDA or XPU."""', '"""A model. See the CUDA docs."""'):
        facts = build_facts("pkg/backend.py", doc + '\nimport torch\nd = torch.device("cuda")\n',
                            Settings(profile="torch"))
        assert facts.cuda_only is None, doc
    # a test module's docstring is no contract: its gates are
    facts = build_facts("tests/test_x.py", '"""Requires CUDA."""\nd = "cuda"\n',
                        Settings(profile="torch"))
    assert facts.cuda_only is None


def test_a_benchmark_stating_the_nvidia_hardware_it_models_is_cuda_only():
    doc = ('"""Estimate the float8 speedup of a linear layer.\n\nThe gemm times come from a '
           'roofline based on the peak TOPS of an\nNVIDIA H100 or B200.\n"""\n')
    body = 'import torch\nd = torch.device("cuda")\n'
    facts = build_facts("benchmarks/float8_roofline.py", doc + body, Settings(profile="torch"))
    why = facts.cuda_only
    assert (why.principle, why.location) == ("stated-requirement",
                                             "benchmarks/float8_roofline.py:4")
    # a library module naming the GPU, a bare model code, another vendor named beside it,
    # a test module: none states a CUDA-only purpose
    for path, text in (
            ("pkg/gemm_config.py", doc),
            ("benchmarks/bench_gemm.py", '"""Tuned on H100."""\n'),
            ("benchmarks/bench_gemm.py", '"""Peak TOPS of an NVIDIA H100 or an AMD MI300X."""\n'),
            ("benchmarks/bench_gemm.py", '"""NVIDIA H100 numbers; XPU numbers below."""\n'),
            ("tests/test_roofline.py", doc)):
        facts = build_facts(path, text + body, Settings(profile="torch"))
        assert facts.cuda_only is None, (path, text)


def test_an_abstract_default_is_dead_and_a_concrete_one_is_not():
    text = ("import abc\nimport torch\n\n\nclass Base(abc.ABC):\n    @abc.abstractmethod\n"
            "    def set_state(self, s, device='cuda'):\n        raise NotImplementedError\n\n"
            "    def get(self, device='cuda'):\n        return torch.ones(1, device=device)\n")
    facts = build_facts("pkg/mod.py", text, Settings(profile="torch"))
    by_row = {n.lineno: why_skipped(facts, n) for n in device_strings(facts)}
    assert (by_row[7].principle, by_row[7].location) == ("abstract-default", "pkg/mod.py:6")
    assert by_row[10] is None


@pytest.mark.parametrize("text, row, principle, evidence_row", [
    # a device value a script assigns and never reads
    ("if __name__ == '__main__':\n    device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
     "    main()\n", 2, "dead-value", 2),
])
def test_value_principles(text, row, principle, evidence_row):
    why = _api_reasons(text)[row]
    assert why is not None and why.principle == principle, why
    assert why.location == f"pkg/mod.py:{evidence_row + 1}"


@pytest.mark.parametrize("text, row", [
    # a memory statistic that is only printed is no dead value (maintainers fix them)
    ("def f():\n    peak = torch.cuda.max_memory_allocated()\n    print(peak)\n", 2),
    # a library module's names are read by its importers; a read name is alive
    ("device = 'cuda' if torch.cuda.is_available() else 'cpu'\n", 1),
    ("if __name__ == '__main__':\n    device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
     "    main(device)\n", 2),
])
def test_limits_of_the_value_principles(text, row):
    assert _api_reasons(text)[row] is None


def test_dead_default_covers_methods_but_not_dunders():
    from devlint.evidence.package_dead_default import default_at
    import ast as _ast
    tree = _ast.parse("class P:\n    @staticmethod\n    def mask(t, device='cuda'):\n"
                      "        return t\n\n    def get(self, n, device='cuda'):\n        return n\n\n"
                      "    def __call__(self, device='cuda'):\n        return 1\n")
    assert default_at(tree, 3, 23) == ("mask", "device", 1, 3)
    assert default_at(tree, 6, 28) == ("get", "device", 1, 6)
    assert default_at(tree, 9, 30) is None


def test_a_cuda_toolkit_version_gate_establishes_a_cuda_build():
    text = ("import pytest\nfrom packaging import version\n"
            "CUDA_OK = version.parse(torch.version.cuda) > version.parse('11.4')\n\n\n"
            "@pytest.mark.skipif(not CUDA_OK, reason='triton requires cuda > 11.4')\n"
            "def test_x():\n    torch.cuda.synchronize()\n")
    why = _api_reasons(text)[8]
    assert why is not None and why.principle == "cuda-guard", why
    assert why.location == "pkg/mod.py:7"
    # `torch.version.cuda is None` is the opposite test
    assert _api_reasons("if torch.version.cuda is None:\n    torch.cuda.synchronize()\n")[2] is None
    assert _api_reasons("if torch.version.cuda is not None:\n    torch.cuda.synchronize()\n")[2] \
        .principle == "cuda-guard"


# --- print-only: reports (messages, memory statistics measured for them, metrics dicts) ------

_SWITCHED = ("def run(model, x, print_mem=False):\n    if print_mem:\n"
             "        torch.cuda.reset_peak_memory_stats()\n"
             "        base = torch.cuda.memory_allocated()\n    y = model(x)\n"
             "    if print_mem:\n        peak = torch.cuda.max_memory_allocated() - base\n"
             "        delta = peak / 2**20\n        print(f'{delta:.1f} MB')\n    return y\n")


@pytest.mark.parametrize("text, row, evidence_row", [
    # an opt-in report under a switch: the resets and statistics of its branches
    (_SWITCHED, 3, 2), (_SWITCHED, 4, 2), (_SWITCHED, 7, 6),
    # the guard of a metrics dict that only a logger reads
    ("def log(acc, loss):\n    logs = {'loss': loss}\n    if torch.cuda.is_available():\n"
     "        logs['mem'] = torch.cuda.memory_allocated()\n    acc.log(logs)\n", 3, 3),
    # the early exit of a function whose rest only logs (once per key)
    ("def log_once(self, k):\n    if k in self._seen or not torch.cuda.is_available():\n"
     "        return\n    self._seen.add(k)\n    logger.info('k=%s', k)\n", 2, 2),
])
def test_print_only_reports(text, row, evidence_row):
    why = _api_reasons(text)[row]
    assert why is not None and why.principle == "print-only", why
    assert why.location == f"pkg/mod.py:{evidence_row + 1}"


@pytest.mark.parametrize("text, row", [
    # a statistic whose value decides: an assert, through arithmetic
    (_SWITCHED.replace("        print(f'{delta:.1f} MB')\n", "        assert delta < 9\n"), 7),
    (_SWITCHED.replace("        print(f'{delta:.1f} MB')\n", "        assert delta < 9\n"), 4),
    # a comparison is no switch; a statistic in the main flow stays a finding
    ("def f(rank):\n    if rank == 0:\n        peak = torch.cuda.max_memory_allocated()\n"
     "        print(peak)\n", 3),
    ("def f():\n    peak = torch.cuda.max_memory_allocated()\n    print(peak)\n", 2),
    # a dict handed to anything but a logger, or not only built from displays
    ("def f(loss):\n    logs = {'loss': loss}\n    if torch.cuda.is_available():\n"
     "        logs['mem'] = torch.cuda.memory_allocated()\n    return logs\n", 3),
    ("def f(logs):\n    if torch.cuda.is_available():\n"
     "        logs['mem'] = torch.cuda.memory_allocated()\n    acc.log(logs)\n", 2),
    # an early exit whose rest does more than report
    ("def f(self):\n    if not torch.cuda.is_available():\n        return\n"
     "    logger.info('sync')\n    self.step()\n", 2),
])
def test_limits_of_print_only(text, row):
    why = _api_reasons(text)[row]
    assert why is None or why.principle != "print-only", why


def _reason_of(text, qual):
    facts = build_facts("pkg/mod.py", "import torch\n" + text, Settings(profile="torch"))
    return [why_skipped(facts, n, api=True) for n, q in facts.torch_refs if q == qual]


def test_a_tensors_own_cuda_test_guards_its_body_arm_flag_and_operands():
    cases = [
        "def f(t):\n    if t.is_cuda:\n        t.record_stream(torch.cuda.current_stream())\n",
        "def f(t):\n    return torch.cuda.current_stream() if t.is_cuda else None\n",
        "def f(s, x):\n    two = s is not None and x.is_cuda\n    if two:\n"
        "        s.wait_stream(torch.cuda.current_stream())\n",
        "def f(x):\n    return x.is_cuda and torch.cuda.current_stream() is not None\n",
    ]
    for text in cases:
        why = _reason_of(text, "torch.cuda.current_stream")
        assert why and why[0] is not None and why[0].principle == "cuda-guard", text
    # limits: the test guards nothing before it in an `and`, nor after an `assert`
    for text in ["def f(x):\n    return torch.cuda.current_stream() is not None and x.is_cuda\n",
                 "def f(x):\n    assert x.is_cuda\n    torch.cuda.synchronize()\n"]:
        assert _reason_of(text, "torch.cuda.current_stream" if "stream" in text
                          else "torch.cuda.synchronize") == [None], text


def test_the_availability_operand_of_a_capture_query_is_the_capture_question():
    why = _reason_of("def f():\n    return torch.cuda.is_available() and "
                     "torch.cuda.is_current_stream_capturing()\n", "torch.cuda.is_available")
    assert why[0] is not None and why[0].principle == "cuda-graph-capture"
    assert why[0].location == "pkg/mod.py:3"
    # another operand makes it a test of its own: still checked
    assert _reason_of("def f(g):\n    return torch.cuda.is_available() and g and "
                      "torch.cuda.is_current_stream_capturing()\n",
                      "torch.cuda.is_available") == [None]
    assert _reason_of("def f():\n    return torch.cuda.is_available() and "
                      "torch.cuda.device_count() > 1\n", "torch.cuda.is_available") == [None]


def test_a_scope_s_reason_is_memoized_per_scope_and_class():
    # the twin of `forward_cuda` is in its class's body, not in the module's: asked of the
    # same method without its class and then with it, each answer is its own
    text = ("class A:\n    def forward_native(self, x):\n        return x\n\n"
            "    def forward_cuda(self, x):\n        return x\n")
    for order in ((None, "class"), ("class", None)):
        facts = build_facts("pkg/mod.py", text, Settings(profile="torch"))
        klass = facts.tree.body[0]
        method = klass.body[1]
        got = {k: facts.scope_reason(method, klass if k else None) for k in order}
        assert got[None] is None and got["class"].principle == "cuda-twin", order
