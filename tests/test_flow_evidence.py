"""Issue 18 (flow): guards reached through helpers, CUDA-graph capture and data flow; values
that never reach a device (mock targets). Each principle with what it exempts (valid) and
its limits (still reported)."""
from __future__ import annotations

import pytest

from devlint.analysis.triage import build_facts
from devlint.rules._device import why_skipped
from devlint.settings import Settings


def _api_reasons(text, path="pkg/mod.py"):
    """row -> Reason (or None) of each `torch.cuda` reference of the text (rows of `text`)."""
    from devlint.rules.registry import lookup

    facts = build_facts(path, "import torch\n" + text, Settings(profile="torch"))
    facts.rule = lookup("DL401")  # a torch.cuda API rule runs
    return {node.lineno - 1: why_skipped(facts, node, api=True) for node, _ in facts.torch_refs}


def _string_reasons(text, path="tests/test_mod.py"):
    facts = build_facts(path, "import torch\n" + text, Settings(profile="torch"))
    return {node.lineno - 1: why_skipped(facts, node, api=True) for node in facts.api_strings}


_HELPER = ("def check_gpu_memory(threshold=0.9):\n"
           "    \"\"\"Whether the GPU memory is over the threshold.\"\"\"\n"
           "    if not torch.cuda.is_available():\n        return False\n"
           "    return torch.cuda.memory_allocated() > threshold\n\n\n")


@pytest.mark.parametrize("text, row, principle, evidence_row", [
    # a helper that returns a false value unless CUDA is there: true only on CUDA
    (_HELPER + "def f():\n    if check_gpu_memory(0.5):\n        torch.cuda.empty_cache()\n",
     10, "cuda-guard", 9),
    (_HELPER.replace("return False", "return") + "def f():\n    if not check_gpu_memory():\n"
     "        return\n    torch.cuda.empty_cache()\n", 11, "cuda-guard", 9),
    # CUDA-graph capture is CUDA's
    ("def f(e):\n    if torch.cuda.is_current_stream_capturing():\n"
     "        torch.cuda.current_stream().wait_event(e)\n", 3, "cuda-guard", 2),
    ("def f(e):\n    capturing = torch.cuda.is_current_stream_capturing()\n"
     "    if capturing:\n        torch.cuda.current_stream().wait_event(e)\n", 4, "cuda-guard", 3),
    # an instance of a class named after a CUDA-only stack
    ("def f(self, x):\n    if self.overlap and isinstance(self.dispatcher, NVLSAllGatherV):\n"
     "        torch.cuda.current_stream().wait_stream(x)\n", 3, "cuda-guard", 2),
])
def test_guard_principles(text, row, principle, evidence_row):
    why = _api_reasons(text)[row]
    assert why is not None and why.principle == principle, why
    assert why.location == f"pkg/mod.py:{evidence_row + 1}"


@pytest.mark.parametrize("text, row", [
    # the helper's own availability test stays the finding
    (_HELPER + "def f():\n    if check_gpu_memory(0.5):\n        torch.cuda.empty_cache()\n", 3),
    # a helper that returns a true value without CUDA proves nothing
    (_HELPER.replace("return False", "return True") + "def f():\n    if check_gpu_memory():\n"
     "        torch.cuda.empty_cache()\n", 10),
    # a helper whose CUDA test is not its first statement
    ("def check(x):\n    if x:\n        return True\n    if not torch.cuda.is_available():\n"
     "        return False\n    return True\n\n\ndef f(x):\n    if check(x):\n"
     "        torch.cuda.empty_cache()\n", 11),
    # a tuple with a generic class
    ("def f(c):\n    if isinstance(c, (NcclComm, GlooComm)):\n        torch.cuda.synchronize()\n",
     3),
    # a `Cuda` word that is no CamelCase class of a CUDA implementation
    ("def f(comm):\n    if isinstance(comm, Cudaish):\n        torch.cuda.synchronize()\n", 3),
    # a capture test guards its body, not what follows it
    ("def f(e):\n    if not torch.cuda.is_current_stream_capturing():\n        pass\n"
     "    torch.cuda.current_stream().wait_event(e)\n", 4),
])
def test_limits_of_the_guard_principles(text, row):
    assert _api_reasons(text)[row] is None


@pytest.mark.parametrize("text, row", [
    ('from unittest.mock import patch\n\n\n@patch("torch.cuda.current_stream")\n'
     'def test_x(m):\n    pass\n', 4),
    ('def test_x(monkeypatch):\n    monkeypatch.setattr("torch.cuda.empty_cache", lambda: 0)\n',
     2),
    ('from unittest import mock\n\n\ndef test_x():\n'
     '    with mock.patch("torch.cuda.synchronize", new=lambda: None):\n        run()\n', 5),
])
def test_a_mock_target_is_a_name_not_a_use(text, row):
    why = _string_reasons(text)[row]
    assert why is not None and why.principle == "mock-target", why


@pytest.mark.parametrize("text, row, expected", [
    ('def test_x(monkeypatch):\n    monkeypatch.setattr(torch.cuda, "is_available", '
     'lambda: True)\n', 2, "mock-target"),
    ('from unittest import mock\n\n\ndef test_x():\n'
     '    with mock.patch.object(torch.cuda, "synchronize"):\n        run()\n', 5, "mock-target"),
    # the replacement given to the patch runs: still a finding
    ('def test_x(monkeypatch):\n    monkeypatch.setattr(torch.cuda, "synchronize", '
     'torch.cuda.empty_cache)\n', 2, None),
])
def test_mock_targets_through_the_module_object(text, row, expected):
    facts = build_facts("tests/test_mod.py", "import torch\n" + text, Settings(profile="torch"))
    whys = [why_skipped(facts, node, api=True) for node, _ in facts.torch_refs
            if node.lineno - 1 == row]
    got = {getattr(w, "principle", None) for w in whys}
    assert expected in got, whys
    if expected is None:
        assert any(w is None for w in whys)


# --- values made only on CUDA (`cuda-value`), followed through the file ------------------

_PRODUCER = ("def make_stream(cfg):\n    if cfg.off:\n        return None\n"
             "    if not current_platform.is_cuda():\n        return None\n"
             "    return torch.cuda.Stream()\n\n\n")  # rows 1-6, the CUDA test on row 4


@pytest.mark.parametrize("text, row, principle, evidence_row", [
    # a producer, a `self` attribute, an alias and an assert
    (_PRODUCER + "class L:\n    def __init__(self, cfg):\n        self.s = make_stream(cfg)\n\n"
     "    def fork(self):\n        state = self.s\n        assert state is not None\n"
     "        torch.cuda.current_stream().wait_stream(state)\n", 16, "cuda-value", 4),
    # `if s is not None:`, `if s:`, `if x and s:`
    (_PRODUCER + "def f(cfg, x):\n    s = make_stream(cfg)\n    if s is not None:\n"
     "        torch.cuda.synchronize()\n", 12, "cuda-value", 4),
    (_PRODUCER + "def f(cfg, x):\n    s = make_stream(cfg)\n    if x and s:\n"
     "        torch.cuda.synchronize()\n", 12, "cuda-value", 4),
    # the else-branch of `is None`, and an early exit
    (_PRODUCER + "def f(cfg):\n    s = make_stream(cfg)\n    if s is None:\n        pass\n"
     "    else:\n        torch.cuda.synchronize()\n", 14, "cuda-value", 4),
    (_PRODUCER + "def f(cfg):\n    s = make_stream(cfg)\n    if s is None:\n        return\n"
     "    torch.cuda.synchronize()\n", 13, "cuda-value", 4),
    # a conditional expression, and a store under a CUDA test
    ("class L:\n    def __init__(self):\n"
     "        self.alt = torch.cuda.Stream() if current_platform.is_cuda() else None\n\n"
     "    def g(self):\n        if self.alt is not None:\n            torch.cuda.synchronize()\n",
     7, "cuda-value", 3),
    ("class L:\n    def __init__(self):\n        self.alt = None\n"
     "        if current_platform.is_cuda():\n            self.alt = torch.cuda.Stream()\n\n"
     "    def g(self):\n        if self.alt:\n            torch.cuda.synchronize()\n",
     9, "cuda-value", 4),
    # a cached singleton: a module name a function declares `global`
    ("_s = None\n\n\ndef get_s():\n    global _s\n    if _s is None and current_platform.is_cuda():\n"
     "        _s = torch.cuda.Stream()\n    return _s\n\n\ndef f():\n    if get_s() is not None:\n"
     "        torch.cuda.synchronize()\n", 13, "cuda-value", 6),
    # a flag true only on CUDA, in a truth test
    ("_is_cuda = current_platform.is_cuda()\n\n\nclass I:\n    def __init__(self, cfg):\n"
     "        self.fuse = _is_cuda and not cfg.off\n\n    def f(self):\n        if self.fuse:\n"
     "            torch.cuda.synchronize()\n", 10, "cuda-value", 6),
    # the CUDA implementation of something, asserted or tested
    ("def f(comm):\n    if isinstance(comm, CudaCommunicator):\n        torch.cuda.synchronize()\n",
     3, "cuda-guard", 2),
    ("class C:\n    def __init__(self, use):\n        self.comm = None\n        if use:\n"
     "            cls = resolve(current_platform.get_device_communicator_cls())\n"
     "            assert cls == CudaCommunicator\n            self.comm = CudaCommunicator()\n\n"
     "    def f(self):\n        if self.comm is not None:\n            torch.cuda.synchronize()\n",
     11, "cuda-value", 6),
    # made under `is_cuda_alike()`: the torch.cuda API only (ROCm's too)
    ("def aux():\n    if current_platform.is_cuda_alike():\n        return torch.cuda.Stream()\n"
     "    return None\n\n\ndef f():\n    s = aux()\n    if s is not None:\n"
     "        torch.cuda.synchronize()\n", 10, "cuda-alike-guard", 2),
])
def test_value_made_only_on_cuda(text, row, principle, evidence_row):
    why = _api_reasons(text)[row]
    assert why is not None and why.principle == principle, why
    assert why.location == f"pkg/mod.py:{evidence_row + 1}"


def test_a_cuda_alike_value_leaves_the_device_literals_reported():
    text = ("import torch\n\n\ndef aux():\n    if current_platform.is_cuda_alike():\n"
            "        return torch.cuda.Stream()\n    return None\n\n\ndef f(x):\n    s = aux()\n"
            "    if s is not None:\n        return x.to('cuda')\n")
    facts = build_facts("pkg/mod.py", text, Settings(profile="torch"))
    from devlint.rules._device import device_strings
    assert [why_skipped(facts, n) for n in device_strings(facts)] == [None]


@pytest.mark.parametrize("text, row", [
    # a producer with a path that returns a value without a CUDA test
    ("def make(cfg):\n    if cfg.x:\n        return torch.cuda.Stream()\n"
     "    if not current_platform.is_cuda():\n        return None\n    return object()\n\n\n"
     "def f(cfg):\n    s = make(cfg)\n    if s is not None:\n        torch.cuda.synchronize()\n",
     12),
    # the attribute is also stored from a parameter (the caller chooses it)
    (_PRODUCER + "class L:\n    def __init__(self, cfg, s=None):\n        self.s = make_stream(cfg)\n"
     "        if s is not None:\n            self.s = s\n\n"
     "    def g(self):\n        if self.s is not None:\n            torch.cuda.synchronize()\n", 17),
    # a parameter is not followed; nor an unpacked store
    (_PRODUCER + "def f(s):\n    if s is not None:\n        torch.cuda.synchronize()\n", 11),
    (_PRODUCER + "def f(cfg):\n    s, t = make_stream(cfg), 1\n    if s is not None:\n"
     "        torch.cuda.synchronize()\n", 12),
    # excluding the CPU is no CUDA test: the value exists on any accelerator
    ("def make(device):\n    if device.type == 'cpu':\n        return None\n"
     "    return torch.cuda.Stream()\n\n\ndef f(d):\n    s = make(d)\n    if s is not None:\n"
     "        torch.cuda.synchronize()\n", 10),
    # a flag is no value for `is not None` (False is not None); a flag of another test
    ("_is_cuda = current_platform.is_cuda()\n\n\nclass I:\n    def __init__(self, cfg):\n"
     "        self.fuse = _is_cuda and not cfg.off\n\n    def f(self):\n"
     "        if self.fuse is not None:\n            torch.cuda.synchronize()\n", 10),
    ("class I:\n    def __init__(self, cfg):\n        self.fuse = cfg.fuse\n\n    def f(self):\n"
     "        if self.fuse:\n            torch.cuda.synchronize()\n", 7),
    # made under `torch.cuda.is_available()`: that test is a finding, fixed with its users
    ("class G:\n    def __init__(self, use):\n        self.s = None\n        if use:\n"
     "            if torch.cuda.is_available():\n                self.s = torch.cuda.Stream()\n\n"
     "    def off(self):\n        if self.s is not None:\n            torch.cuda.synchronize()\n",
     10),
    # a generator is no producer
    ("def make():\n    if current_platform.is_cuda():\n        yield torch.cuda.Stream()\n"
     "    return None\n\n\ndef f():\n    s = make()\n    if s is not None:\n"
     "        torch.cuda.synchronize()\n", 10),
])
def test_limits_of_values_made_only_on_cuda(text, row):
    assert _api_reasons(text)[row] is None


# --- a device given to a function whose choice of device the test compares; fake tensors --

def _literal_reasons(text, path="tests/test_mod.py"):
    from devlint.rules._device import device_strings

    facts = build_facts(path, "import torch\n" + text, Settings(profile="torch"))
    out = {}
    for node in device_strings(facts):
        out.setdefault(node.lineno - 1, why_skipped(facts, node))
    for node in facts.calls:
        if (facts.qualname(node.func) or "") == "torch.device":
            out[node.lineno - 1] = out.get(node.lineno - 1) or why_skipped(facts, node)
    return out


@pytest.mark.parametrize("text, row, principle, evidence_row", [
    ("def test_x():\n    d = resolve_device(torch.device('cuda:0'), offload=True)\n"
     "    assert d == torch.device('cpu')\n", 2, "compared-value", 3),
    ("class T:\n    def test_x(self):\n        rt = torch.device('cuda:0')\n"
     "        d = resolve_device(rt, offload=False)\n        self.assertEqual(d, rt)\n",
     3, "compared-value", 5),
    ("from types import SimpleNamespace\n\n\ndef test_x(op):\n"
     "    q = SimpleNamespace(device=torch.device('cuda'), dtype=torch.bfloat16, shape=(1, 2))\n"
     "    run(q)\n    op.assert_called_once_with(q)\n", 5, "fake-tensor", 7),
    # tensors made under torch's fake tensor mode (also one bound to a name first)
    ("from torch._subclasses.fake_tensor import FakeTensorMode\n\n\ndef test_x():\n"
     "    with FakeTensorMode():\n        w = torch.empty(2, device='cuda')\n"
     "    assert w.shape == (2,)\n", 6, "fake-tensor", 5),
    ("from torch._subclasses.fake_tensor import FakeTensorMode\n\n\ndef test_x():\n"
     "    mode = FakeTensorMode()\n    with mode:\n        w = torch.empty(2, device='cuda')\n",
     7, "fake-tensor", 6),
])
def test_values_that_never_reach_a_device(text, row, principle, evidence_row):
    why = _literal_reasons(text)[row]
    assert why is not None and why.principle == principle, why
    assert why.location == f"tests/test_mod.py:{evidence_row + 1}"


@pytest.mark.parametrize("text, row", [
    # the result is used beyond a comparison of devices
    ("def test_x():\n    b = make_buffer(torch.device('cuda:0'))\n    assert b.shape == (2,)\n", 2),
    ("def test_x():\n    d = resolve_device(torch.device('cuda:0'))\n    assert d == 'cpu'\n"
     "    run(d)\n", 2),
    # a torch API is no function that merely chooses
    ("def test_x():\n    t = torch.zeros(2, device=torch.device('cuda:0'))\n"
     "    assert t == torch.device('cpu')\n", 2),
    # outside a test module
    ("def f():\n    d = resolve_device(torch.device('cuda:0'))\n    assert d == 'cpu'\n", 2),
    # a fake tensor given to code that is not mocked, or a record without tensor metadata
    ("from types import SimpleNamespace\n\n\ndef test_x():\n"
     "    q = SimpleNamespace(device=torch.device('cuda'), dtype=torch.bfloat16)\n    run(q)\n", 5),
    ("from types import SimpleNamespace\n\n\ndef test_x(op):\n"
     "    q = SimpleNamespace(device=torch.device('cuda'), name='q')\n    run(q)\n"
     "    op.assert_called_once_with(q)\n", 5),
    # after the fake mode's block, or in a function defined inside it, tensors are real
    ("from torch._subclasses.fake_tensor import FakeTensorMode\n\n\ndef test_x():\n"
     "    with FakeTensorMode():\n        pass\n    w = torch.empty(2, device='cuda')\n", 7),
    ("from torch._subclasses.fake_tensor import FakeTensorMode\n\n\ndef test_x():\n"
     "    with FakeTensorMode():\n        def later():\n"
     "            return torch.empty(2, device='cuda')\n    later()\n", 7),
    # a mode chosen by a condition, or a name bound to the fake mode only in another function
    # (found in review)
    ("from torch._subclasses.fake_tensor import FakeTensorMode\n\n\ndef test_x(fake):\n"
     "    if fake:\n        mode = FakeTensorMode()\n    else:\n        mode = nullcontext()\n"
     "    with mode:\n        w = torch.empty(2, device='cuda')\n", 10),
    ("from torch._subclasses.fake_tensor import FakeTensorMode\n\n\ndef helper():\n"
     "    mode = FakeTensorMode()\n    return mode\n\n\nmode = nullcontext()\nwith mode:\n"
     "    w = torch.empty(2, device='cuda')\n", 11),
])
def test_limits_of_values_that_never_reach_a_device(text, row):
    path = "pkg/mod.py" if text.startswith("def f():") else "tests/test_mod.py"
    assert _literal_reasons(text, path)[row] is None


def test_a_parameter_every_call_of_the_file_passes_a_cuda_value():
    text = (_PRODUCER + "class Layer:\n    def __init__(self, *, stream=None):\n"
            "        if stream is not None and off():\n            stream = None\n"
            "        self.state = State(stream) if stream is not None else None\n\n"
            "    def join(self):\n        state = self.state\n        assert state is not None\n"
            "        torch.cuda.current_stream().wait_stream(state.stream)\n\n\n"
            "class Model:\n    def __init__(self, cfg):\n        self.s = make_stream(cfg)\n"
            "        self.layers = [Layer(stream=self.s) for _ in range(2)]\n"
            "        self.first = Layer()\n\n\n"
            "def is_layer(x):\n    return isinstance(x, Layer)\n")
    why = _api_reasons(text)[18]
    assert why is not None and why.principle == "cuda-value", why
    # a call elsewhere in the file that passes a value of another kind, or a reference that
    # is no call, and the parameter is the caller's choice
    for extra in ("\n\ndef other(s):\n    return Layer(stream=s)\n",
                  "\n\nLAYERS = {'layer': Layer}\n"):
        assert _api_reasons(text + extra)[18] is None


def test_a_flag_passed_to_a_private_method_through_self():
    text = ("class P:\n    def forward(self, x):\n        borrow = False\n"
            "        if is_cuda():\n            borrow = self._can_borrow(x)\n"
            "        return self._by_chunk(x, borrow=borrow)\n\n"
            "    def _by_chunk(self, x, borrow: bool = False):\n        if borrow:\n"
            "            torch.cuda.current_stream().synchronize()\n        return x\n")
    why = _api_reasons(text)[10]
    assert why is not None and why.principle == "cuda-value", why
    # a public method (callers elsewhere choose), a reference other than `self._by_chunk(...)`,
    # a subclass in the file (it may call or override it), a value of another kind
    for changed in (text.replace("_by_chunk", "by_chunk"),
                    text + "\n\ndef g(p, x):\n    return p._by_chunk(x, borrow=True)\n",
                    text + "\n\nclass Q(P):\n    pass\n",
                    text.replace("return self._by_chunk(x, borrow=borrow)",
                                 "return self._by_chunk(x, borrow=x.numel() > 4)")):
        assert _api_reasons(changed)[10] is None


def test_an_operand_after_one_that_establishes_cuda_is_cuda_s():
    from devlint.api import check_source

    text = ("import torch\n_is_cuda = current_platform.is_cuda()\n\n\ndef f(q):\n"
            "    if _is_cuda and q.is_cuda and q.dtype is torch.bfloat16:\n        return 1\n"
            "    if q.is_cuda:\n        return 2\n"
            "    if torch.cuda.is_available() and torch.cuda.device_count() > 1:\n"
            "        return 3\n")
    rows = sorted((d.code, d.location[0]) for d in check_source(text, "pkg/mod.py",
                                                                  profile="torch"))
    # the operand after `_is_cuda` is not reported; a lone tensor test is, and so is every
    # operand after `torch.cuda.is_available()` (itself a finding, whose fix rewrites them)
    assert rows == [("DL202", 8), ("DL401", 10), ("DL401", 10)]


_PRIVATE = (_PRODUCER + "@dataclass\nclass _State:\n    stream: object\n"
            "    done: object = field(default_factory=torch.cuda.Event)\n\n\n"
            "class Layer:\n    def __init__(self, cfg):\n        s = make_stream(cfg)\n"
            "        self.state = _State(s) if s is not None else None\n")  # row 12: the Event


def test_a_private_class_used_only_on_cuda_is_cuda_s():
    why = _api_reasons(_PRIVATE)[12]
    assert why is not None and why.principle == "cuda-value", why
    assert "`_State`" in why and why.location == "pkg/mod.py:19"


@pytest.mark.parametrize("extra", [
    "\n\ndef fresh():\n    return _State(None)\n",  # also built off CUDA
    "\n\nFACTORY = _State\n",  # passed on as a value: not followed
])
def test_limits_of_private_classes_used_only_on_cuda(extra):
    assert _api_reasons(_PRIVATE + extra)[12] is None
    # a public class may be built elsewhere
    assert _api_reasons(_PRIVATE.replace("_State", "State"))[12] is None


def test_assert_of_a_cuda_alike_platform_covers_the_torch_cuda_api_only():
    # `assert current_platform.is_cuda_alike()` leaves CUDA or ROCm, where torch.cuda is the
    # platform's API (like `if not is_cuda_alike(): return`); a device literal after it is
    # still reported (ROCm's tensors need not live on the default device)
    from devlint.api import check_source

    src = ("import torch\nfrom vllm.platforms import current_platform\n\n\ndef f(n):\n"
           "    assert current_platform.is_cuda_alike()\n"
           "    e = torch.cuda.Event()\n"
           "    return e, torch.zeros(n, device=\"cuda\")\n")
    codes = sorted(d.code for d in check_source(src, "m.py"))
    assert codes == ["DL103"]


# --- a private helper of a test module called only by tests gated on a compute capability --

_HELPER = ("import pytest\n\n\ndef _make():\n    return torch.ones(2, device='cuda')\n\n\n")
_SM90 = "@pytest.mark.skipif(torch.cuda.get_device_capability() < (9, 0), reason='SM90')\n"


def test_a_helper_called_only_by_capability_gated_tests():
    text = (_HELPER + _SM90 + "def test_a():\n    _make()\n\n\n"
            "class TestK:\n    @pytest.mark.skipif(not is_sm_at_least_90(), reason='SM90')\n"
            "    def test_b(self):\n        _make()\n\n\n"
            "def is_sm_at_least_90():\n    return torch.cuda.get_device_capability() >= (9, 0)\n")
    why = _literal_reasons(text)[5]
    assert why is not None and why.principle == "cuda-value", why
    assert why.location == "tests/test_mod.py:9"


@pytest.mark.parametrize("callers", [
    # an availability gate is a finding whose fix does not reach the helper
    "@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
    "def test_a():\n    _make()\n",
    # one caller is not gated
    _SM90 + "def test_a():\n    _make()\n\n\ndef test_b():\n    _make()\n",
    # a gate that asks something else
    "@pytest.mark.skipif(sys.platform == 'win32', reason='posix')\ndef test_a():\n    _make()\n",
])
def test_limits_of_a_helper_of_capability_gated_tests(callers):
    assert _literal_reasons(_HELPER + callers)[5] is None
