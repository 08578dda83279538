"""Code that is CUDA-only by construction is not reported (SPEC section 3): each case pairs a
CUDA-only form with the same code in a device-generic form, which is reported."""
import devlint


def codes(text, path="pkg/mod.py", **kw):
    return [d.code for d in devlint.check_source(text, path=path, **kw)]


def test_cuda_ipc_module_is_cuda_only():
    generic = "import torch\n\n\ndef load(t):\n    return t.cuda()\n"
    assert codes(generic) == ["DL102"]
    ipc = ("import torch\nfrom torch.multiprocessing.reductions import reduce_tensor\n\n\n"
           "def export(t):\n    return reduce_tensor(t.cuda())\n")
    assert codes(ipc) == []
    event = ("import torch\n\n\ndef handle():\n    s = torch.cuda.Stream()\n"
             "    return torch.cuda.Event(interprocess=True), s\n")
    assert codes(event) == []
    # `interprocess=False` is no IPC
    assert codes(event.replace("interprocess=True", "interprocess=False")) == ["DL402", "DL402"]


def test_a_marker_in_a_comment_or_string_does_not_count():
    text = ("import torch\n# cudaHostRegister is used elsewhere\nNOTE = 'reduce_tensor'\n\n\n"
            "def load(t):\n    return t.cuda()\n")
    assert codes(text) == ["DL102"]


def test_arguments_of_a_cuda_only_kernel():
    text = ("import torch\n\n\ndef warm(k):\n    if k:\n"
            "        from vllm.vllm_flash_attn.cute.interface import combine\n"
            "        combine(torch.empty(3, device=\"cuda\"))\n"
            "    other(torch.empty(3, device=\"cuda\"))\n")
    assert [d.location[0] for d in devlint.check_source(text, path="pkg/m.py")] == [8]


def test_unconditional_calls_into_a_cuda_only_module():
    text = ("import torch\nfrom pkg.nccl_common import create_communicator, is_nccl_ready\n\n\n"
            "def setup(group):\n    comm = create_communicator(group)\n"
            "    return comm, torch.cuda.current_stream()\n\n\n"
            "def maybe(group, use):\n    if use:\n        create_communicator(group)\n"
            "    return torch.cuda.current_stream()\n\n\n"
            "def ask():\n    is_nccl_ready()\n    return torch.cuda.current_stream()\n")
    rows = [d.location[0] for d in devlint.check_source(text, path="pkg/m.py")]
    assert rows == [13, 18]  # a conditional call or an availability check does not count


def test_device_type_cuda_and_mempool_mark_the_scope():
    text = ("import torch\n\n\ndef probe(group):\n    dev = torch.device('cuda', 0)\n"
            "    return enable(group, DeviceType.CUDA, dev)\n\n\n"
            "def plain():\n    return torch.device('cuda', 0)\n")
    assert [d.location[0] for d in devlint.check_source(text, path="pkg/m.py")] == [10]


def test_early_exit_availability_guard_before_cuda_only_code():
    guarded = ("import torch\n\n\ndef capturing():\n    if not torch.cuda.is_available():\n"
               "        return False\n    return torch.cuda.is_current_stream_capturing()\n")
    assert codes(guarded) == []
    generic = ("import torch\n\n\ndef sync():\n    if not torch.cuda.is_available():\n"
               "        return\n    x = 1\n    return x\n")
    assert codes(generic) == ["DL401"]


def test_literal_whose_own_expression_tests_cuda_alike():
    text = ("from vllm.platforms import current_platform\n\n"
            "dev = f\"cuda:{i}\" if current_platform.is_cuda_alike() else \"cpu\"\n"
            "other = f\"cuda:{i}\" if flag else \"cpu\"\n")
    assert [d.location[0] for d in devlint.check_source(text, path="pkg/m.py")] == [4]


def test_annotation_follows_a_constructed_class_not_parameters():
    text = ("import torch\n\n\nclass W:\n    def __init__(self):\n"
            "        self.pool: list[torch.cuda.Event] = []\n"
            "        self.e = torch.cuda.Event()\n\n"
            "    def use(self, e: torch.cuda.Event) -> torch.cuda.Event:\n        return e\n")
    found = devlint.check_source(text, path="pkg/m.py")
    # the annotation is no finding of its own: the construction's fix rewrites it
    assert [d.location[0] for d in found] == [7]
    fixed = devlint.fix_source(text, path="pkg/m.py", unsafe=True)[0]
    assert "self.pool: list[torch.Event] = []" in fixed and "torch.Event()" in fixed
    assert "e: torch.cuda.Event) -> torch.cuda.Event" in fixed


def test_building_against_the_cuda_toolkit_makes_a_module_cuda_only():
    generic = "import torch\n\n\ndef load(t):\n    return t.cuda()\n"
    ext = ("import os\nimport torch.utils.cpp_extension\n\n"
           "INC = os.path.join(torch.utils.cpp_extension.CUDA_HOME, 'include')\n\n\n"
           "def load(t):\n    return t.cuda()\n")
    assert codes(generic) == ["DL102"] and codes(ext) == []
    # under a platform test it is one platform's path, not the module's
    guarded = ext.replace("INC = os.path", "if current_platform.is_cuda():\n    INC = os.path")
    assert codes(guarded) == ["DL102"]


def test_amd_kernel_stacks_are_cuda_alike():
    text = "import torch\n\n\ndef launch(k):\n    k(stream=torch.cuda.current_stream())\n"
    assert codes(text, path="pkg/ops/decode.py") == ["DL401"]
    assert codes(text, path="pkg/ops/flydsl_decode.py") == []
    assert codes("import flydsl\n" + text, path="pkg/ops/decode.py") == []
    # so are its device literals: torch calls the AMD GPU "cuda" (evidence.hip_device)
    literal = "import torch\nx = torch.zeros(2, device='cuda')\n"
    assert codes(literal, path="pkg/ops/flydsl_decode.py") == []
    assert codes(literal, path="pkg/ops/decode.py") == ["DL103"]
    # TransformerEngine is CUDA-alike for its torch.cuda API only: its ports rebind
    # torch.cuda, a "cuda" literal is not their device
    te = "import transformer_engine.pytorch as te\n" + literal
    assert codes(te, path="pkg/ops/decode.py") == ["DL103"]
    assert codes("import transformer_engine.pytorch as te\n" + text,
                 path="pkg/ops/decode.py") == []


def test_a_torch_cuda_shim_of_another_device_covers_the_api_only():
    # torchada (MUSA) and transfer_to_npu (Ascend) route torch.cuda.* to their device in the
    # module that imports them: the API is that device's there, a "cuda" literal stays reported
    body = "\n\ndef f():\n    torch.cuda.empty_cache()\n    return torch.zeros(2, device='cuda')\n"
    assert codes("import torch\n" + body, path="pkg/platforms/musa.py") == ["DL401", "DL103"]
    for shim in ("import torchada  # noqa: F401\n",
                 "import torch_npu.contrib.transfer_to_npu  # noqa: F401\n"):
        assert codes("import torch\n" + shim + body, path="pkg/platforms/musa.py") == ["DL103"]
    # another module of torch_npu's contrib is no shim
    assert codes("import torch\nfrom torch_npu.contrib import function\n" + body,
                 path="pkg/platforms/npu.py") == ["DL401", "DL103"]


def test_cute_dsl_modules_are_cuda_only():
    text = "import torch\nx = torch.zeros(2, device='cuda')\n"
    assert codes(text, path="pkg/ops/attn.py") == ["DL103"]
    assert codes(text, path="pkg/ops/attn_cutedsl.py") == []


def test_a_module_gated_on_a_compute_capability_is_cuda_only():
    body = "\n\ndef test_a():\n    x = torch.zeros(2, device=\"cuda\")\n"
    gated = ("import pytest\nimport torch\n\n"
             "pytestmark = pytest.mark.skipif(\n    not torch.cuda.is_available()\n"
             "    or torch.cuda.get_device_capability() != (12, 0), reason='SM120')\n" + body)
    assert codes(gated, path="tests/test_k.py") == []
    skipped = ("import pytest\nimport torch\nfrom pkg.utils import is_sm_at_least_90\n\n"
               "if not is_sm_at_least_90():\n    pytest.skip('SM90', allow_module_level=True)\n"
               + body)
    assert codes(skipped, path="tests/test_k.py") == []
    # a gate that only skips old CUDA GPUs runs everywhere else
    old_only = ("import pytest\nimport torch\nfrom pkg.utils import is_sm_at_least_89\n\n"
                "pytestmark = pytest.mark.skipif(\n    torch.cuda.is_available() and "
                "not is_sm_at_least_89(), reason='old GPU')\n" + body)
    assert "DL103" in codes(old_only, path="tests/test_k.py")


def test_a_test_gated_on_a_compute_capability_is_cuda_only():
    text = ("import pytest\nimport torch\n\n\n"
            "@pytest.mark.skipif(not is_sm_at_least_100(), reason='SM100')\n"
            "def test_kernel():\n    x = torch.zeros(2, device=\"cuda\")\n\n\n"
            "def test_generic():\n    x = torch.zeros(2, device=\"cuda\")\n")
    assert [d.location[0] for d in devlint.check_source(text, path="tests/test_k.py")] == [11]


def test_print_only_twin_and_never_run_tests():
    text = ("import logging\nimport pytest\nimport torch\nimport unittest\n"
            "logger = logging.getLogger(__name__)\n\n\n"
            "def warn(t):\n    if t.is_cuda:\n        logger.warning_once('moving to the CPU')\n"
            "    return t.cpu()\n\n\n"
            "def require_multi_gpu(test):\n"
            "    return unittest.skipUnless(torch.cuda.device_count() > 1, '2')(test)\n\n\n"
            "def require_multi_accelerator(test):\n    return test\n\n\n"
            "@pytest.mark.skip(reason='requires CUDA')\nclass TestOld:\n"
            "    def test_a(self):\n        x = torch.zeros(2, device='cuda')\n")
    assert codes(text, path="tests/test_k.py") == []


def test_a_default_every_call_overrides_is_dead_in_a_test_module():
    text = ("import torch\n\n\nclass Toy(torch.nn.Module):\n"
            "    def __init__(self, dim, device=\"cuda\"):\n        super().__init__()\n\n\n"
            "def test_a(device):\n    m = Toy(4, device=device)\n    n = Toy(4, device)\n"
            "    assert isinstance(m, Toy)\n")
    assert codes(text, path="tests/test_toy.py") == []
    # one call that takes the default, a use that is not a call, or a library module: reported
    for extra, path in (("    Toy(4)\n", "tests/test_toy.py"),
                        ("    make = Toy\n", "tests/test_toy.py"), ("", "pkg/toy.py")):
        assert codes(text + extra, path=path) == ["DL103"]


def test_cuda_in_a_function_name_is_no_stack():
    text = "import torch\n\n\ndef move_to_cuda(batch):\n    return {k: v.cuda() for k, v in batch.items()}\n"
    assert codes(text) == ["DL102"]
    # with a CPU twin it is still a device move, not a platform dispatch
    assert codes(text + "\n\ndef move_to_cpu(batch):\n    return batch\n") == ["DL102"]


def test_the_torch_build_asked_for():
    # a module that asserts a CUDA build does not import elsewhere
    bench = ("import torch\n\ndevice = torch.device('cuda')\n"
             "assert torch.version.cuda is not None, 'CUDA is not available'\n")
    assert codes(bench, path="bench/b.py") == []
    # the torch.cuda query of a test that also asks for the ROCm build is ROCm's own
    rocm = ("import torch\n\n\ndef available():\n"
            "    if not torch.version.hip or not torch.cuda.is_available():\n"
            "        return False\n    return True\n")
    assert codes(rocm) == []
    # the body is not the test: still reported
    body = ("import torch\n\n\ndef f():\n    if torch.version.hip:\n"
            "        torch.cuda.synchronize()\n")
    assert codes(body) == ["DL401"]


def test_a_stand_in_for_the_cuda_api_and_a_default_of_a_cuda_only_function():
    text = ("import torch\n\n\ndef _checked_cuda(self, device=None):\n"
            "    return torch.device('cuda') if device is None else device\n\n\n"
            "def install():\n    torch.Tensor.cuda = _checked_cuda\n\n\n"
            "def nccl_broadcast(t, device='cuda'):\n    return t\n")
    assert codes(text) == []


def test_one_ipc_helper_scopes_to_itself_two_make_the_module():
    helper = ("import torch\nfrom torch.multiprocessing.reductions import reduce_tensor\n\n\n"
              "def share(t):\n    return reduce_tensor(t.cuda())\n\n\n"
              "def train(m):\n    return m.cuda()\n")
    assert [d.location[0] for d in devlint.check_source(helper, path="pkg/m.py")] == [10]
    # torch's tensor-sharing pair alone, in two functions: still only those functions
    both = helper + ("\n\ndef receive(args):\n    from torch.multiprocessing.reductions import "
                     "rebuild_cuda_tensor\n    return rebuild_cuda_tensor(*args)\n")
    assert [d.location[0] for d in devlint.check_source(both, path="pkg/m.py")] == [10]
    # the CUDA driver API in two of them: the module is built on it
    driver = helper + "\n\ndef pin(lib, p, n):\n    return lib.cudaHostRegister(p, n, 0)\n"
    assert codes(driver) == []


def test_an_assert_on_a_tensor_device_is_no_contract_and_a_cuda_method_override_is():
    text = ("def all_to_all(tensor):\n    assert tensor.device.type == 'cuda', 'only CUDA tensors'\n"
            "    return tensor\n")
    assert codes(text) == ["DL201"]
    meta = ("import torch\n\n\nclass MetaTensor(torch.Tensor):\n"
            "    def cuda(self, device=None, non_blocking=False):\n"
            "        return self.to(device='cuda:0', non_blocking=non_blocking)\n")
    assert codes(meta) == []


def test_a_vendor_familys_shared_code_keeps_its_device_literals(tmp_path):
    # `kernels/{cuda,triton}/`: CUDA-alike for the torch.cuda API, but the shared code is no
    # ROCm module (a `triton/` sibling may run elsewhere): its "cuda" literals stay findings
    fam = tmp_path / "kernels"
    for sub in ("cuda", "triton"):
        (fam / sub).mkdir(parents=True)
    path = str(fam / "triton" / "utils.py")
    assert codes("import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n", path=path) == []
    assert codes("import torch\nx = torch.zeros(2, device='cuda')\n", path=path) == ["DL103"]
    # a module in an `amd/` folder is one: torch calls the AMD GPU "cuda"
    amd = tmp_path / "models" / "amd"
    amd.mkdir(parents=True)
    assert codes("import torch\nx = torch.zeros(2, device='cuda')\n",
                 path=str(amd / "runner.py")) == []
