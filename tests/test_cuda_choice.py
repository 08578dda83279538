"""A function reached only under a flag chosen by a CUDA test in another place
(`devlint.evidence.cuda_choice`, read by `devlint/engine/project/xchoice.py` for the caller
walk of `xcallers`), through real `devlint check` runs over small packages. Each exempt form
is paired with the nearest form that stays a finding."""
from __future__ import annotations

import os
import textwrap

import pytest
from _cli import package_findings, run, write_package

KERNEL = """\
    def fill(seq_lens, pool):
        assert seq_lens.is_cuda
        return seq_lens * pool
    """

KEPT = [("pkg/kernels/fused/fill.py", 2, "DL201")]

UTILS = """\
    def is_cuda():
        import torch
        return torch.version.cuda is not None


    def is_hip():
        import torch
        return torch.version.hip is not None
    """

# the choice: an attribute flag set from a CUDA test, its class default False; the kernel is
# imported lazily under it and handed on (not called there)
MIXIN = """\
    from functools import partial

    from pkg.utils import is_cuda, is_hip


    class MetadataMixin:
        use_fused = False

        def init_fused(self, requested):
            self.use_fused = requested and is_cuda() and not is_hip()
            self._fill = None
            if self.use_fused:
                from pkg.kernels.fused.fill import fill as fused_fill

                self._fill = partial(fused_fill, pool=2)
    """

# a module-level flag, the kernel called after an early exit without it
RUNNER = """\
    from pkg.utils import is_cuda

    _use_fused = is_cuda()


    def run(x):
        if not _use_fused:
            return x
        from pkg.kernels.fused.fill import fill

        return fill(x, 2)
    """


def findings(root):
    return package_findings(root)


@pytest.fixture
def pkg(tmp_path):
    write_package(tmp_path, {"pkg/kernels/fused/fill.py": KERNEL, "pkg/utils.py": UTILS,
                             "pkg/layers/metadata.py": MIXIN}, dedent=True)
    return tmp_path


def test_an_attribute_flag_chosen_by_a_cuda_test_selects_cuda(pkg):
    assert findings(pkg) == []
    r = run("check", "--no-cache", "--profile", "torch", "--show-exempt", "pkg", cwd=pkg)
    assert "[cuda-choice] every use of `fill` in the package runs on CUDA only" in r.stdout
    # the evidence is the choice: the flag's assignment from the CUDA test
    assert "(pkg/layers/metadata.py:10)" in r.stdout.replace(os.sep, "/"), r.stdout


def test_a_module_flag_and_its_early_exit_select_cuda(tmp_path):
    write_package(tmp_path, {"pkg/kernels/fused/fill.py": KERNEL, "pkg/utils.py": UTILS,
                             "pkg/layers/runner.py": RUNNER}, dedent=True)
    assert findings(tmp_path) == []


def test_a_package_above_that_never_names_the_function_does_not_reach_it(pkg):
    # `from pkg import kernels` elsewhere (for other kernels) cannot call `fill` by name
    write_package(pkg, {"pkg/api.py": "from pkg import kernels\n\nKINDS = [kernels]\n"})
    assert findings(pkg) == []
    write_package(pkg, {"pkg/api.py": "from pkg import kernels\n\n\ndef go(x):\n"
                                      "    return kernels.fused.fill.fill(x, 1)\n"})
    assert findings(pkg) == KEPT


@pytest.mark.parametrize("old, new", [
    # also set from a setting: true anywhere
    ("self.use_fused = requested and is_cuda() and not is_hip()",
     "self.use_fused = requested"),
    # the class default True
    ("use_fused = False", "use_fused = True"),
    # only rules platforms out: no CUDA test
    ("self.use_fused = requested and is_cuda() and not is_hip()",
     "self.use_fused = requested and not is_hip()"),
    # a tensor's own test is a finding itself (DL202): it chooses nothing
    ("self.use_fused = requested and is_cuda() and not is_hip()",
     "self.use_fused = requested.is_cuda"),
])
def test_a_flag_not_chosen_by_a_cuda_test_keeps_the_findings(pkg, old, new):
    write_package(pkg, {"pkg/layers/metadata.py": MIXIN.replace(old, new)}, dedent=True)
    assert KEPT[0] in findings(pkg)


def test_an_attribute_flag_written_in_another_file_keeps_the_findings(pkg):
    write_package(pkg, {"pkg/kits/force.py": "def force(backend):\n"
                                             "    backend.use_fused = True\n"})
    assert findings(pkg) == KEPT
    write_package(pkg, {"pkg/kits/force.py": "from pkg.layers.metadata import MetadataMixin"
                                             "\n\n\nclass Forced(MetadataMixin):\n"
                                             "    use_fused = True\n"})
    assert findings(pkg) == KEPT


def test_a_second_generic_use_keeps_the_findings(pkg):
    write_package(pkg, {"pkg/layers/plain.py": "from pkg.kernels.fused.fill import fill\n\n\n"
                                               "def go(x):\n    return fill(x, 1)\n"})
    assert findings(pkg) == KEPT


def test_a_triton_kernel_wrapper_keeps_its_findings_whoever_chose_cuda(pkg):
    # a Triton kernel runs on other accelerators too: its wrapper is device-generic code
    write_package(pkg, {"pkg/kernels/fused/fill.py": "import triton\n\n\n@triton.jit\n"
                                                     "def _k(x):\n    pass\n\n\n"
                                                     + textwrap.dedent(KERNEL)})
    assert findings(pkg) == [("pkg/kernels/fused/fill.py", 10, "DL201")]
