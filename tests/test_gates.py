"""Test and script gates that establish CUDA (issue #18): what runs only past a gate that
requires CUDA or a compute capability is not reported, at every level (function, class,
module), and the gate itself is the finding; each case pairs a gate that establishes CUDA
with one that does not, whose lines are still reported."""
import devlint


def rows(text, path="tests/test_k.py", code=None):
    return [d.location[0] for d in devlint.check_source(text, path=path)
            if code is None or d.code == code]


HEAD = "import pytest\nimport torch\nimport unittest\n"
BODY = "    x = torch.zeros(2, device='cuda')\n"


def last_body(text):
    """The row of the last device literal of `text` (the one case still reported)."""
    return [i for i, line in enumerate(text.splitlines(), 1) if "device='cuda'" in line][-1:]


def test_a_flag_of_the_module_resolves_to_its_capability_test():
    text = (HEAD + "_IS_BW = torch.cuda.is_available() and "
            "torch.cuda.get_device_properties(0).major >= 10\n"
            "_HAS_GPU = torch.accelerator.is_available()\n\n\n"
            "@pytest.mark.skipif(not _IS_BW, reason='SM100')\ndef test_a():\n" + BODY +
            "\n\n@pytest.mark.skipif(not _HAS_GPU, reason='gpu')\ndef test_b():\n" + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_a_bound_mark_and_a_parametrisation_whose_values_are_all_gated():
    text = (HEAD + "_sm100 = pytest.mark.skipif(not is_sm_at_least_100(), reason='SM100')\n"
            "_new_torch = pytest.mark.skipif(not torch_version_at_least('2.10'), reason='x')\n"
            "_ALL = [pytest.param('a', marks=_sm100), pytest.param('b', marks=_sm100)]\n"
            "_SOME = [pytest.param('a', marks=_sm100), pytest.param('b', marks=_new_torch)]\n\n\n"
            "@pytest.mark.parametrize('kernel', _ALL)\ndef test_a(kernel):\n" + BODY +
            "\n\n@pytest.mark.parametrize('kernel', _SOME)\ndef test_b(kernel):\n" + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_a_helper_true_only_past_a_capability_test():
    helper = ("def _fa3_available():\n    \"\"\"FA3.\"\"\"\n"
              "    if not torch.cuda.is_available():\n        return False\n"
              "    if torch.cuda.get_device_capability() != (9, 0):\n        return False\n"
              "    try:\n        import fa3\n        return True\n    except ImportError:\n"
              "        return False\n\n\n"
              "def _gpu_available():\n    if not torch.accelerator.is_available():\n"
              "        return False\n    return True\n\n\n")
    text = (HEAD + helper + "class T(unittest.TestCase):\n"
            "    @unittest.skipIf(not _fa3_available(), 'FA3')\n    def test_a(self):\n"
            "    " + BODY + "\n    @unittest.skipIf(not _gpu_available(), 'gpu')\n"
            "    def test_b(self):\n    " + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_a_helper_whose_capability_is_bound_to_local_names_first():
    helper = ("def _fp8_capable():\n    if not torch.cuda.is_available() or torch.version.hip:\n"
              "        return False\n    major, minor = torch.cuda.get_device_capability()\n"
              "    return major >= 9 or (major == 8 and minor >= 9)\n\n\n"
              # a name bound to the capability, then to something else, stands for nothing
              "def _rebound():\n    major, minor = torch.cuda.get_device_capability()\n"
              "    major = torch.accelerator.device_count()\n    return major >= 9\n\n\n")
    text = (HEAD + helper + "@unittest.skipUnless(_fp8_capable(), 'FP8 GPU')\n"
            "class T(unittest.TestCase):\n    def test_a(self):\n    " + BODY +
            "\n\n@unittest.skipUnless(_rebound(), 'x')\nclass U(unittest.TestCase):\n"
            "    def test_b(self):\n    " + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_a_skip_reason_that_is_none_only_on_a_capable_gpu():
    helper = ("def _quant_skip_reason():\n    if not torch.cuda.is_available():\n"
              "        return 'Need CUDA'\n    if not (is_sm_at_least_90() or is_MI300()):\n"
              "        return 'Need SM90'\n    return None\n\n\n"
              "def _gemm_skip_reason():\n    if reason := _quant_skip_reason():\n"
              "        return reason\n    if is_rocm():\n        return 'not on ROCm'\n"
              "    return None\n\n\n"
              "def _dist_skip_reason():\n    if torch.accelerator.device_count() < 2:\n"
              "        return 'Need 2 devices'\n    return None\n\n\n"
              "GEMM_SKIP = _gemm_skip_reason()\nDIST_SKIP = _dist_skip_reason()\n\n\n")
    text = (HEAD + helper + "class T(unittest.TestCase):\n"
            "    @unittest.skipIf(GEMM_SKIP is not None, GEMM_SKIP or '')\n    def test_a(self):\n"
            "    " + BODY + "\n    @unittest.skipIf(DIST_SKIP, DIST_SKIP)\n"
            "    def test_b(self):\n    " + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_a_module_gate_on_availability_is_the_finding_and_covers_the_tests():
    text = (HEAD + "pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), "
            "reason='CUDA')\nDEVICE = 'cuda'\n\n\ndef test_a():\n" + BODY +
            "\n\nclass TestB:\n    def test_b(self):\n        torch.cuda.synchronize()\n")
    found = devlint.check_source(text, path="tests/test_k.py")
    # the gate (DL203) and the module-level constant, which runs at import, gated or not
    assert sorted((d.location[0], d.code) for d in found) == [(4, "DL203"), (5, "DL104")]
    gate = next(d for d in found if d.code == "DL203")
    assert gate.end_location[0] == 14  # the gate's finding runs over what it guards
    # a module gate that only excludes the CPU establishes nothing
    other = text.replace("not torch.cuda.is_available()", "torch_device == 'cpu'")
    assert rows(other, code="DL103") == [9]


def test_a_class_whose_setup_skips_without_cuda():
    text = (HEAD + "def _requires_cuda():\n    if not torch.cuda.is_available():\n"
            "        pytest.skip('CUDA')\n\n\n"
            "class TestA:\n    def setup_method(self, method):\n        _requires_cuda()\n\n"
            "    def test_a(self):\n    " + BODY + "\n\n"
            "class TestB(unittest.TestCase):\n    def setUp(self):\n"
            "        if torch_device == 'cpu':\n            self.skipTest('no GPU')\n\n"
            "    def test_b(self):\n    " + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_an_early_skip_inside_a_test():
    text = (HEAD + "class T(unittest.TestCase):\n    def test_a(self):\n"
            "        if not current_platform.is_cuda():\n            self.skipTest('CUDA-only')\n"
            "    " + BODY + "\n    def test_b(self):\n"
            "        if current_platform.is_xpu() or current_platform.is_rocm():\n"
            "            self.skipTest('not here')\n    " + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_an_availability_gate_stacked_with_a_capability_gate():
    text = (HEAD + "\n\n@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
            "@pytest.mark.skipif(not is_sm_at_least_89(), reason='SM89')\ndef test_a():\n"
            "    pass\n\n\n"
            "@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
            "@pytest.mark.skipif(not torch_version_at_least('2.10'), reason='new')\n"
            "def test_b():\n    pass\n")
    assert rows(text, code="DL203") == [12]
    listed = HEAD + ("pytestmark = [pytest.mark.skipif(not torch.cuda.is_available(), reason='x'),"
                     "\n              pytest.mark.skipif(not is_sm_at_least_90(), reason='y')]\n")
    assert rows(listed, code="DL203") == []


def test_a_gate_on_a_helper_whose_reason_states_a_gpu_generation():
    text = (HEAD + "from pkg.kernels import cutedsl_available, triton_available\n"
            "_cute = pytest.mark.skipif(not cutedsl_available(), "
            "reason='requires SM100 (Blackwell) + CuteDSL')\n\n\n"
            "@_cute\ndef test_a():\n" + BODY +
            "\n\n@pytest.mark.skipif(not triton_available(), reason='requires triton')\n"
            "def test_b():\n" + BODY)
    assert rows(text, code="DL103") == last_body(text)
    # torch's own queries are read as they are, whatever the reason says
    plain = (HEAD + "\n\n@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs H100')\n"
             "def test_a():\n    pass\n")
    assert rows(plain, code="DL203") == [6]


def test_the_module_gate_fix_rewrites_the_bodies_of_the_tests_it_gates():
    text = (HEAD + "pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), "
            "reason='CUDA')\n\n\ndef test_a():\n" + BODY +
            "\n\nclass TestB:\n    dev = 'cuda'\n\n    def test_b(self):\n"
            "        torch.cuda.synchronize()\n")
    # the class attribute runs at import, gated or not: its own finding
    assert rows(text) == [4, 12]
    fixed = devlint.fix_source(text, path="tests/test_k.py", unsafe=True)[0]
    assert "torch.accelerator.is_available()" in fixed
    assert "device=torch.accelerator.current_accelerator()" in fixed
    assert "torch.accelerator.synchronize()" in fixed
    assert "'cuda'" not in fixed


def test_a_per_test_setup_gate_does_not_cover_the_class_setup():
    text = (HEAD + "class TestA(unittest.TestCase):\n    @classmethod\n"
            "    def setUpClass(cls):\n        cls.x = torch.zeros(2, device='cuda')\n\n"
            "    def setUp(self):\n        if not torch.cuda.is_available():\n"
            "            self.skipTest('CUDA')\n\n    def test_a(self):\n    " + BODY)
    assert rows(text, code="DL103") == [7]


def test_a_setup_that_returns_early_gates_nothing():
    text = (HEAD + "class TestA(unittest.TestCase):\n    def setUp(self):\n"
            "        if not torch.cuda.is_available():\n            return\n"
            "        self.big = True\n\n    def test_a(self):\n    " + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_a_script_whose_entry_stops_unless_a_module_flag_holds():
    script = ("import sys\nimport torch\n\n_IS_BW = torch.cuda.get_device_capability()[0] >= 10\n"
              "_HAS_GPU = torch.accelerator.is_available()\n\n\n"
              "def run():\n    x = torch.zeros(2, device='cuda')\n\n\n"
              "def main():\n    if not _IS_BW:\n        sys.exit('needs Blackwell')\n"
              "    run()\n\n\nif __name__ == '__main__':\n    main()\n")
    assert rows(script, path="bench/bench_k.py", code="DL103") == []
    generic = script.replace("if not _IS_BW:", "if not _HAS_GPU:")
    assert rows(generic, path="bench/bench_k.py", code="DL103") == [9]


def test_an_early_skip_unless_a_compute_capability():
    text = (HEAD + "\n\ndef test_a():\n    if torch.cuda.get_device_capability()[0] < 10:\n"
            "        pytest.skip('needs Blackwell')\n" + BODY +
            "\n\ndef test_b():\n    if torch_version() < (2, 10):\n"
            "        pytest.skip('needs torch 2.10')\n" + BODY)
    assert rows(text, code="DL103") == last_body(text)


def test_the_per_test_setup_of_a_class_whose_every_test_is_gated():
    gate = "    @pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
    text = (HEAD + "class TestA:\n    def setup_method(self, method):\n"
            "        self.x = torch.zeros(2, device='cuda')\n\n"
            + gate + "    def test_a(self):\n        pass\n\n"
            + gate + "    def test_b(self):\n        pass\n\n\n"
            "class TestB:\n    def setup_method(self, method):\n"
            "        self.x = torch.zeros(2, device='cuda')\n\n"
            + gate + "    def test_a(self):\n        pass\n\n"
            "    def test_b(self):\n        pass\n")
    assert rows(text, code="DL103") == last_body(text)


def test_a_function_called_at_import_is_not_under_the_module_gate():
    text = (HEAD + "pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), "
            "reason='CUDA')\n\n\ndef configs():\n    return [torch.zeros(2, device='cuda')]\n\n\n"
            "@pytest.mark.parametrize('x', configs())\ndef test_a(x):\n    pass\n")
    assert rows(text, code="DL103") == last_body(text)
    fixed = devlint.fix_source(text, path="tests/test_k.py", unsafe=True)[0]
    assert "torch.accelerator.is_available()" in fixed


def test_a_list_of_marks_applied_by_a_decorator_function_of_the_module():
    # the same gate as the inline one: `@_maybe_sm100` applies `requires_sm100`'s marks; a
    # decorator function that applies a torch-version mark, or does anything else, gates nothing
    text = (HEAD + "requires_sm100 = [\n"
            "    pytest.mark.skipif(not has_triton(), reason='triton'),\n"
            "    pytest.mark.skipif(not is_sm_at_least_100(), reason='SM100')]\n"
            "requires_new = [pytest.mark.skipif(not torch_version_at_least('2.10'), reason='x')]"
            "\n\n\ndef _maybe_sm100(fn):\n    for mark in requires_sm100:\n        fn = mark(fn)\n"
            "    return fn\n\n\ndef _sm100_once(fn):\n"
            "    return pytest.mark.skipif(not is_sm_at_least_100(), reason='SM100')(fn)\n\n\n"
            "def _maybe_new(fn):\n    for mark in requires_new:\n        fn = mark(fn)\n"
            "    return fn\n\n\ndef _logged(fn):\n    print(fn.__name__)\n"
            "    return requires_sm100[1](fn)\n\n\n"
            "@_maybe_sm100\ndef test_a():\n" + BODY + "\n\n@_sm100_once\ndef test_b():\n" + BODY
            + "\n\n@_maybe_new\ndef test_c():\n" + BODY + "\n\n@_logged\ndef test_d():\n" + BODY)
    lines = [i for i, line in enumerate(text.splitlines(), 1) if "device='cuda'" in line]
    assert rows(text, code="DL103") == lines[2:]


def test_an_availability_gate_applied_by_a_decorator_function_is_the_finding():
    # `@_maybe_gpu` applies a CUDA-availability mark: the mark is the finding (DL203) and the
    # test's body runs only past it, as under `@pytest.mark.skipif(...)` written inline
    text = (HEAD + "requires_gpu = [pytest.mark.skipif(not torch.cuda.is_available(), "
            "reason='CUDA')]\n\n\ndef _maybe_gpu(fn):\n    for mark in requires_gpu:\n"
            "        fn = mark(fn)\n    return fn\n\n\n@_maybe_gpu\ndef test_a():\n" + BODY
            + "\n\ndef test_b():\n" + BODY)
    assert rows(text, code="DL203") == [4]
    assert rows(text, code="DL103") == last_body(text)


def test_an_availability_gate_stacked_with_a_gpu_kernel_library_gate():
    # the test exercises the library's GPU path (`gate_stacks`: NVIDIA/AMD GPU kernels only),
    # on the same test, through every parametrised value's marks, or in the same `or`; a
    # library that runs anywhere, or one value of several without it, asks for no GPU
    gate = "@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
    text = (HEAD + gate + "@pytest.mark.skipif(not _is_mslk_available(), reason='mslk')\n"
            "def test_a():\n    pass\n\n\n" + gate +
            "@pytest.mark.parametrize('c', [pytest.param(1, marks=pytest.mark.skipif("
            "not is_mslk_available(), reason='m'))])\ndef test_b(c):\n    pass\n\n\n"
            "@pytest.mark.skipif(not torch.cuda.is_available() or not is_xformers_available(),"
            " reason='x')\ndef test_c():\n    pass\n\n\n" + gate +
            "@pytest.mark.skipif(not is_scipy_available(), reason='scipy')\n"
            "def test_d():\n    pass\n\n\n" + gate +
            "@pytest.mark.parametrize('c', [pytest.param(1, marks=pytest.mark.skipif("
            "not is_mslk_available(), reason='m')), 2])\ndef test_e(c):\n    pass\n")
    gates = [i for i, line in enumerate(text.splitlines(), 1)
             if line.startswith("@pytest.mark.skipif(not torch.cuda")]
    assert rows(text, code="DL203") == gates[-2:]


def _library_gated(flag_lines: str) -> str:
    """A test gated on `HAVE_FA3`, the flag set by `flag_lines` (module level)."""
    return (HEAD + flag_lines + "\n\n@pytest.mark.skipif(not HAVE_FA3, reason='FA3')\n"
            "def test_a():\n" + BODY)


def test_a_library_flag_counts_only_where_every_true_follows_the_import():
    # set only past a successful import of a library of GPU kernels: the test's body is exempt
    ok = "try:\n    import flash_attn_3\n    HAVE_FA3 = True\nexcept ImportError:\n" \
         "    HAVE_FA3 = False\n"
    assert rows(_library_gated(ok), code="DL103") == []
    # also true without the library: set before the import (a failed import leaves it
    # true), or also set true outside the `try` (after it, under an `if`, in a function
    # declaring it global)
    for flags in (
            "try:\n    HAVE_FA3 = True\n    import flash_attn_3\nexcept ImportError:\n    pass\n",
            ok + "HAVE_FA3 = True\n",
            ok + "if os.environ.get('FORCE'):\n    HAVE_FA3 = True\n",
            ok + "\n\ndef force():\n    global HAVE_FA3\n    HAVE_FA3 = True\n",
            "HAVE_FA3 = True\n" + ok.replace("    HAVE_FA3 = False\n", "    pass\n"),
            ok + "HAVE_FA3, X = True, 1\n"):
        text = _library_gated(flags)
        assert rows(text, code="DL103") == last_body(text), flags
