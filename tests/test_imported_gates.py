"""Skip gates imported from another project module (`devlint.evidence.imported_gate`, applied
by `devlint/engine/project/xgates.py`), through real `devlint check` runs over small packages.
Each exempt form is paired with the nearest form that stays a finding, and with the same gate
written in the test's own file: the two must agree."""
from __future__ import annotations

import json
import os
import textwrap

import pytest
from _cli import run, write_package


def write(root, files: dict):
    write_package(root, files, dedent=True)


def findings(root, *paths, extra=("--no-cache",)):
    r = run("check", "--output-format", "json", *extra, *(paths or ["tests"]), cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                  for f in json.loads(r.stdout))


UTILS = """\
    import unittest

    import pytest
    import torch

    from .platform import torch_device

    cuda_mark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
    needs_accelerator = pytest.mark.skipif(torch_device == "cpu", reason="needs a device")
    needs_cuda_platform = pytest.mark.skipif(not current_platform.is_cuda(), reason="CUDA")


    def gpu_test(test_case):
        return unittest.skipUnless(torch.cuda.is_available(), "needs CUDA")(test_case)


    def require_torch_gpu(test_case):
        return unittest.skipUnless(torch_device == "cuda", "test requires CUDA")(test_case)


    def require_torch_accelerator(test_case):
        return unittest.skipUnless(torch_device != "cpu", "test requires a device")(test_case)


    def require_big_gpu(test_case):
        return unittest.skipUnless(torch_device == "cuda", "test requires CUDA")(test_case)
    """
PLATFORM = 'torch_device = "cuda"\n'


def _test_module(gate, how="from tests.utils import {gate}\n"):
    return how.format(gate=gate) + textwrap.dedent(f"""\
        import unittest

        import torch


        @{gate}
        def test_one():
            x = torch.ones(2, device="cuda")
            torch.cuda.synchronize()


        @{gate}
        class TestMany(unittest.TestCase):
            def test_two(self):
                y = torch.ones(2).cuda()


        def test_ungated():
            z = torch.ones(2, device="cuda")
        """)


@pytest.fixture
def tree(tmp_path):
    write(tmp_path, {"tests/utils.py": UTILS, "tests/platform.py": PLATFORM})
    return tmp_path


UNGATED = ("tests/test_x.py", 20, "DL103")


@pytest.mark.parametrize("gate", ["cuda_mark", "gpu_test", "require_torch_gpu"])
def test_an_imported_cuda_gate_covers_its_tests_bodies(tree, gate):
    write(tree, {"tests/test_x.py": _test_module(gate)})
    assert findings(tree, "tests/test_x.py") == [UNGATED]


def test_relative_imports_aliases_and_re_exports_resolve(tree):
    write(tree, {"tests/common/__init__.py": "from ..utils import cuda_mark\n",
                 "tests/test_x.py": _test_module(
                     "gpu_only", "from .common import cuda_mark as gpu_only\n")})
    assert findings(tree, "tests/test_x.py") == [UNGATED]


@pytest.mark.parametrize("gate", [
    "needs_accelerator",  # excludes only the CPU: no CUDA gate
    "require_torch_accelerator",
    "needs_cuda_platform",  # a platform query that merely asks exempts nothing, as in a file
    "require_big_gpu",  # a device-name test with no generic twin beside it
])
def test_gates_that_do_not_establish_cuda_keep_the_findings(tree, gate):
    write(tree, {"tests/test_x.py": _test_module(gate)})
    assert len(findings(tree, "tests/test_x.py")) == 4


def test_an_unresolved_gate_keeps_the_findings(tree):
    write(tree, {"tests/test_x.py": _test_module(
        "requires_gpu_x", "from some_plugin import requires_gpu_x\n")})
    assert len(findings(tree, "tests/test_x.py")) == 4


def test_the_imported_gate_agrees_with_the_same_gate_in_the_file(tree):
    inline = _test_module("cuda_mark", "import pytest\ncuda_mark = pytest.mark."
                          "skipif(not torch.cuda.is_available(), reason='needs CUDA')\n")
    inline = inline.replace("import torch\n", "", 1)
    write(tree, {"tests/test_in.py": "import torch\n" + inline,
                 "tests/test_x.py": _test_module("cuda_mark")})
    got = findings(tree, "tests/test_in.py", "tests/test_x.py")
    # the in-file mark is itself the DL203 finding; the bodies are exempt in both files
    assert [f for f in got if f[0] == "tests/test_x.py"] == [UNGATED]
    assert {f[2] for f in got if f[0] == "tests/test_in.py"} == {"DL203", "DL103"}
    assert len([f for f in got if f[0] == "tests/test_in.py"]) == 2


def test_a_pytestmark_covers_tests_and_methods_but_not_import_time_calls(tree):
    write(tree, {"tests/test_x.py": """\
        import unittest

        import pytest
        import torch

        from .utils import cuda_mark

        pytestmark = [pytest.mark.slow, cuda_mark]


        def configs():
            return [torch.ones(1, device="cuda")]


        @pytest.mark.parametrize("c", configs())
        def test_one(c):
            torch.cuda.synchronize()


        class TestMany(unittest.TestCase):
            def test_two(self):
                y = torch.ones(2).cuda()
        """})
    assert findings(tree, "tests/test_x.py") == [("tests/test_x.py", 12, "DL103")]


def test_a_skip_gate_inside_a_gated_class_stays_a_finding(tree):
    write(tree, {"tests/test_x.py": """\
        import unittest

        import torch

        from .utils import require_torch_gpu


        @require_torch_gpu
        class TestMany(unittest.TestCase):
            @unittest.skipIf(torch.cuda.device_count() < 2, "needs 2 GPUs")
            def test_two(self):
                y = torch.ones(2).cuda()
        """})
    assert findings(tree, "tests/test_x.py") == [("tests/test_x.py", 10, "DL203")]


def test_show_exempt_names_the_gate_and_its_definition(tree):
    write(tree, {"tests/test_x.py": _test_module("require_torch_gpu")})
    r = run("check", "--no-cache", "--show-exempt", "tests/test_x.py", cwd=tree)
    assert "[imported-gate]" in r.stdout
    assert "`@require_torch_gpu` (imported from `tests.utils`)" in r.stdout
    assert "require_torch_accelerator" in r.stdout and "tests/utils.py:" in r.stdout


def test_a_src_layout_package_resolves(tmp_path):
    write(tmp_path, {"src/lib/testing_utils.py": UTILS.replace("from .platform", "from lib.platform"),
                     "src/lib/platform.py": PLATFORM,
                     "tests/test_x.py": _test_module(
                         "require_torch_gpu", "from lib.testing_utils import {gate}\n")})
    assert findings(tmp_path, "tests/test_x.py") == [UNGATED]


def test_warm_runs_agree_and_a_changed_gate_is_judged_again(tree):
    write(tree, {"tests/test_x.py": _test_module("require_torch_gpu")})
    cold = findings(tree, "tests/test_x.py", extra=())
    assert cold == findings(tree, "tests/test_x.py", extra=()) == [UNGATED]
    utils = tree / "tests" / "utils.py"
    utils.write_text(utils.read_text().replace("def require_torch_accelerator",
                                               "def require_other"))
    os.utime(utils, ns=(1, 1))  # an old mtime: the stores may reuse answers
    assert len(findings(tree, "tests/test_x.py", extra=())) == 4


def test_fix_leaves_the_gated_bodies_alone(tree):
    write(tree, {"tests/test_x.py": _test_module("require_torch_gpu")})
    r = run("check", "--no-cache", "--fix", "tests/test_x.py", cwd=tree)
    assert r.returncode in (0, 1), r.stderr
    text = (tree / "tests" / "test_x.py").read_text()
    assert 'x = torch.ones(2, device="cuda")' in text and "torch.ones(2).cuda()" in text
    assert 'z = torch.ones(2, device="cuda")' not in text


def test_a_fix_earlier_in_the_file_does_not_unlock_the_gated_bodies(tree):
    # the fix of the first test moves the gated findings: they are followed through the
    # rounds and the report after the fix, not matched by their old places
    write(tree, {"tests/test_x.py": """\
        import torch

        from .utils import gpu_test


        def test_ungated():
            z = torch.ones(2, device="cuda")


        @gpu_test
        def test_one():
            x = torch.ones(2, device="cuda")
        """})
    r = run("check", "--no-cache", "--fix", "--unsafe-fixes", "tests/test_x.py", cwd=tree)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 fixed, 0 remaining" in r.stdout
    text = (tree / "tests" / "test_x.py").read_text()
    assert 'x = torch.ones(2, device="cuda")' in text
    assert 'z = torch.ones(2, device="cuda")' not in text
    assert findings(tree, "tests/test_x.py") == []
