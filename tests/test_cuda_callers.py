"""Functions every caller of which in the package runs on CUDA only, across modules and
through callers of callers (`devlint.evidence.cuda_callers`, applied by
`devlint/engine/project/xcallers.py`), through real `devlint check` runs over small packages.
Each exempt form is paired with the nearest form that stays a finding."""
from __future__ import annotations

import json
import os
import textwrap

import pytest
from _cli import run, write_package

HELPER = """\
    import torch


    def convert_scales(scales):
        assert scales.is_cuda, "scales must be on gpu"
        return scales.float()
    """

# a CUDA-only module (its name) and a private function only called under a platform test
CUTLASS = """\
    from pkg.quant.utils import convert_scales


    def prepare(layer):
        return convert_scales(layer.scales)
    """

MIXER = """\
    from vllm.platforms import current_platform

    from pkg.quant.utils import convert_scales


    def _cuda_prepare(layer):
        return convert_scales(layer.scales)


    def setup(layer):
        if current_platform.is_cuda():
            return _cuda_prepare(layer)
        return layer
    """


def findings(root, *paths):
    r = run("check", "--output-format", "json", "--no-cache", "--profile", "torch",
            *(paths or ["pkg"]), cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                  for f in json.loads(r.stdout))


def exempt(root, *paths):
    r = run("check", "--output-format", "json", "--no-cache", "--profile", "torch",
            "--show-exempt", *(paths or ["pkg"]), cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return r


@pytest.fixture
def pkg(tmp_path):
    write_package(tmp_path, {"pkg/quant/utils.py": HELPER,
                             "pkg/kernels/cutlass_w4a8.py": CUTLASS,
                             "pkg/layers/mixer.py": MIXER}, dedent=True)
    return tmp_path


KEPT = [("pkg/quant/utils.py", 5, "DL201")]


def test_a_helper_only_cuda_code_calls_is_exempt(pkg):
    # one caller in a CUDA-only module, one in a function only called under a CUDA test of a
    # third module: every call runs on CUDA only
    assert findings(pkg) == []
    # a pre-commit run over the helper alone judges it the same way
    assert findings(pkg, "pkg/quant/utils.py") == []


def test_the_evidence_is_a_caller(pkg):
    r = run("check", "--no-cache", "--profile", "torch", "--show-exempt", "pkg", cwd=pkg)
    assert "only-called-on-cuda" in r.stdout, r.stdout
    assert "every call of `convert_scales` in the package runs on CUDA only" in r.stdout


def test_one_caller_that_may_run_elsewhere_keeps_the_findings(pkg):
    write_package(pkg, {"pkg/layers/generic.py": "from pkg.quant.utils import convert_scales\n"
                                                 "\n\ndef load(layer):\n"
                                                 "    return convert_scales(layer.scales)\n"})
    assert findings(pkg) == KEPT


def test_a_caller_of_the_caller_that_may_run_elsewhere_keeps_the_findings(pkg):
    write_package(pkg, {"pkg/layers/generic.py": "from pkg.layers.mixer import _cuda_prepare\n"
                                                 "\n\ndef load(layer):\n"
                                                 "    return _cuda_prepare(layer)\n"})
    assert findings(pkg) == KEPT


@pytest.mark.parametrize("use", [
    "REGISTRY = {'w4a8': convert_scales}\n",               # stored as a value
    "def hook(register):\n    register(convert_scales)\n",  # passed on as a callback
])
def test_a_helper_used_as_a_value_keeps_the_findings(pkg, use):
    write_package(pkg, {"pkg/layers/table.py": "from pkg.quant.utils import convert_scales\n\n"
                                               + use})
    assert findings(pkg) == KEPT


def test_a_helper_without_callers_keeps_the_findings(tmp_path):
    write_package(tmp_path, {"pkg/quant/utils.py": HELPER}, dedent=True)
    assert findings(tmp_path) == KEPT


def test_public_api_listed_in_all_keeps_the_findings(pkg):
    write_package(pkg, {"pkg/quant/utils.py": textwrap.dedent(HELPER)
                        + "\n\n__all__ = ['convert_scales']\n"})
    assert findings(pkg) == [("pkg/quant/utils.py", 5, "DL201")]


def test_a_re_export_keeps_the_findings(pkg):
    write_package(pkg, {"pkg/quant/__init__.py": "from pkg.quant.utils import convert_scales\n"})
    assert findings(pkg) == KEPT


def test_a_call_through_the_module_object_keeps_the_findings(pkg):
    write_package(pkg, {"pkg/layers/generic.py": "from pkg.quant import utils\n\n\n"
                                                 "def load(layer):\n"
                                                 "    return utils.convert_scales(layer)\n"})
    assert findings(pkg) == KEPT


def test_a_test_that_is_a_finding_itself_establishes_nothing(pkg):
    # `if layer.scales.is_cuda:` is DL202: its fix lets the other accelerators in
    write_package(pkg, {"pkg/layers/mixer.py": MIXER.replace(
        "current_platform.is_cuda()", "layer.scales.is_cuda")}, dedent=True)
    assert ("pkg/quant/utils.py", 5, "DL201") in findings(pkg)


def test_a_cuda_dispatch_arm_is_a_cuda_caller(tmp_path):
    write_package(tmp_path, {
        "pkg/quant/utils.py": HELPER,
        "pkg/layers/op.py": """\
            from pkg.quant.utils import convert_scales


            class Scale:
                def forward_native(self, x):
                    return x

                def forward_cuda(self, x):
                    return self._fused(x)

                def _fused(self, x):
                    return convert_scales(x)
            """}, dedent=True)
    assert findings(tmp_path) == []
    write_package(tmp_path, {"pkg/layers/op.py": """\
            from pkg.quant.utils import convert_scales


            class Scale:
                def forward_native(self, x):
                    return self._fused(x)

                def forward_cuda(self, x):
                    return self._fused(x)

                def _fused(self, x):
                    return convert_scales(x)
            """}, dedent=True)
    assert findings(tmp_path) == KEPT


def test_a_table_api_selected_by_a_platform_test_stays_a_finding(tmp_path):
    write_package(tmp_path, {
        "pkg/quant/utils.py": """\
            import torch


            def sync_scales(scales):
                torch.cuda.synchronize()
                return scales.to("cuda")
            """,
        "pkg/layers/mixer.py": MIXER.replace("convert_scales", "sync_scales")}, dedent=True)
    # the literal goes; the same call as under an in-file guard stays
    assert findings(tmp_path) == [("pkg/quant/utils.py", 5, "DL401")]


def test_a_private_method_only_cuda_callers_reach(tmp_path):
    write_package(tmp_path, {
        "pkg/worker.py": """\
            import torch

            from pkg.runner import Runner


            class Worker:
                def _peak(self):
                    torch.cuda.reset_peak_memory_stats()
                    return 0

                def _measure(self):
                    return self._peak()

                def prewarm(self):
                    return Runner()
            """,
        "pkg/runner.py": "class Runner:\n    pass\n"}, dedent=True)
    # `_measure` has no caller: nothing establishes `_peak`
    assert findings(tmp_path) == [("pkg/worker.py", 8, "DL401")]


KERNEL_BLOCK = """\
    from pkg import ops
    from pkg.quant.utils import convert_scales


    def convert(backend, w):
        if backend == "humming":
            return w
        convert_scales(w)
        ops.sync()
        return ops.cutlass_encode_and_reorder(w)
    """


@pytest.mark.parametrize("caller, exempt", [
    (KERNEL_BLOCK, True),
    # the kernel runs before the call
    (KERNEL_BLOCK.replace("        convert_scales(w)\n", "").replace(
        "        return ops.cutlass", "        w = ops.cutlass").replace(
        "_reorder(w)\n", "_reorder(w)\n        return convert_scales(w)\n"), True),
    # an exit between the call and the kernel: the call may run without it
    (KERNEL_BLOCK.replace("        ops.sync()\n", "        if w is None:\n            return w\n"),
     False),
    # a question about the library is no kernel
    (KERNEL_BLOCK.replace("ops.cutlass_encode_and_reorder(w)", "ops.cutlass_fp8_supported()"),
     False),
    # a kernel in one operand of a conditional expression may not run
    (KERNEL_BLOCK.replace("return ops.cutlass_encode_and_reorder(w)",
                          "return ops.cutlass_encode_and_reorder(w) if w else w"), False),
])
def test_a_block_that_always_runs_a_cuda_only_kernel(tmp_path, caller, exempt):
    write_package(tmp_path, {"pkg/quant/utils.py": HELPER, "pkg/ops.py": "def sync():\n    pass\n",
                             "pkg/layers/w4a8.py": caller}, dedent=True)
    assert findings(tmp_path) == ([] if exempt else KEPT)


SAMPLER = """\
    import torch


    class Sampler:
        def __init__(self, n):
            self.buf = torch.empty(n, device="cuda")

        def step(self, x):
            return x.to("cuda")
    """

BACKEND = """\
    from pkg.utils.sampler import Sampler


    def make_flashinfer_sampler(n: int) -> Sampler:
        return Sampler(n)
    """


@pytest.mark.parametrize("other, exempt", [
    # an annotation or an isinstance test builds nothing
    ("from pkg.utils.sampler import Sampler\n\n\ndef check(s: Sampler):\n"
     "    return isinstance(s, Sampler)\n", True),
    ("from pkg.utils.sampler import Sampler\n\n\ndef make(n):\n    return Sampler(n)\n", False),
    # a subclass may be built anywhere
    ("from pkg.utils.sampler import Sampler\n\n\nclass Other(Sampler):\n    pass\n", False),
    # the class handed on as a value
    ("from pkg.utils.sampler import Sampler\n\nKINDS = [Sampler]\n", False),
])
def test_the_methods_of_a_class_only_constructed_on_cuda(tmp_path, other, exempt):
    write_package(tmp_path, {"pkg/utils/sampler.py": SAMPLER,
                             "pkg/kernels/backend.py": BACKEND}, dedent=True)
    write_package(tmp_path, {"pkg/layers/other.py": other})
    assert findings(tmp_path) == ([] if exempt else [
        ("pkg/utils/sampler.py", 6, "DL103"), ("pkg/utils/sampler.py", 9, "DL101")])


def _write_namespace_package(root):
    """`pkg` a package, `pkg/srt/` below it a namespace package (no `__init__.py`): the
    helper, the CUTLASS kernel module calling it, and the mixer."""
    write_package(root, {"pkg/srt/quant/utils.py": HELPER,
                         "pkg/srt/kernels/cutlass_w4a8.py":
                             CUTLASS.replace("pkg.quant", "pkg.srt.quant"),
                         "pkg/srt/layers/mixer.py": MIXER.replace("pkg.quant", "pkg.srt.quant")},
                  dedent=True, namespace=("pkg/srt", "pkg/srt/quant", "pkg/srt/kernels",
                                          "pkg/srt/layers"))


def test_a_namespace_package_is_followed_too(tmp_path):
    # `pkg/srt/` has no `__init__.py`: its modules are `pkg.srt.*` below the package `pkg`
    # (PEP 420)
    _write_namespace_package(tmp_path)
    assert findings(tmp_path, "pkg") == []
    (tmp_path / "pkg/srt/layers/generic.py").write_text(
        "from pkg.srt.quant.utils import convert_scales\n\n\ndef load(layer):\n"
        "    return convert_scales(layer.scales)\n")
    assert findings(tmp_path, "pkg") == [("pkg/srt/quant/utils.py", 5, "DL201")]


def test_a_caller_that_uses_the_cuda_runtime_somewhere_does_not_vouch_for_its_calls(tmp_path):
    # `main` is CUDA-only scope for its own findings (`.cudart`), but the profiler call is
    # conditional: what it calls, and what that calls, may run anywhere (Megatron's
    # offline_inference example)
    write_package(tmp_path, {"pkg/quant/utils.py": HELPER, "pkg/run.py": """\
        import torch

        from pkg.quant.utils import convert_scales


        def _run(layer):
            return convert_scales(layer)


        def main(args, layer):
            if args.profile:
                torch.cuda.cudart().cudaProfilerStart()
            return _run(layer)
        """}, dedent=True)
    assert KEPT[0] in findings(tmp_path)


def test_a_namespace_module_s_answer_is_stored_and_checked(tmp_path):
    # the modules of `pkg/srt/` (a namespace portion of the package `pkg`) are the package's:
    # their answers are stored with the package's, a warm run reads them back, and a new
    # caller (a changed file of the package) invalidates them
    _write_namespace_package(tmp_path)

    def age():
        for p in tmp_path.rglob("*.py"):
            st = p.stat()
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - 10 * 10**9))

    def cached():
        r = run("check", "--output-format", "json", "--profile", "torch", "--cache-dir",
                str(tmp_path / ".cache"), "pkg", cwd=tmp_path)
        assert r.returncode in (0, 1), r.stderr
        return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                      for f in json.loads(r.stdout))

    age()
    assert cached() == findings(tmp_path, "pkg") == []
    assert list((tmp_path / ".cache").rglob("project/*.json"))  # the package's store
    assert cached() == []  # warm
    (tmp_path / "pkg/srt/layers/generic.py").write_text(
        "from pkg.srt.quant.utils import convert_scales\n\n\ndef load(layer):\n"
        "    return convert_scales(layer.scales)\n")
    age()
    assert cached() == findings(tmp_path, "pkg") == [("pkg/srt/quant/utils.py", 5, "DL201")]


def test_a_caller_that_uses_the_cuda_runtime_somewhere_does_not_vouch_for_its_own_module(
        tmp_path):
    # the same within one module of a package: `_run` is used only in `main`, whose CUDA
    # runtime use (the profiler, under `if`) says nothing of where `_run` runs
    write_package(tmp_path, {"pkg/run.py": """\
        import torch


        def _run(layer):
            torch.cuda.synchronize()
            return layer


        def main(args, layer):
            if args.profile:
                torch.cuda.cudart().cudaProfilerStart()
            return _run(layer)
        """}, dedent=True)
    assert ("pkg/run.py", 5, "DL401") in findings(tmp_path)
