"""A module every reference to which in its package runs on CUDA only
(`devlint.evidence.cuda_reach`, applied by `devlint/engine/project/xreach.py`), through real
`devlint check` runs over small packages. Each exempt form is paired with the nearest form
that stays a finding."""
from __future__ import annotations

import json
import os
import time

import pytest
from _cli import package_findings, run, write_package

BACKEND = """\
    import torch


    class SLABackend:
        def forward(self, q):
            torch.cuda.synchronize()
            return q.to("cuda")
    """

KEPT = [("pkg/layers/backends/sla.py", 6, "DL401"), ("pkg/layers/backends/sla.py", 7, "DL101")]

# the CUDA platform module alone resolves the backend, by a dotted path
CUDA_PLATFORM = """\
    def get_attn_backend_cls(selected):
        if selected == "sla":
            return "pkg.layers.backends.sla.SLABackend"
        return "pkg.layers.backends.sdpa.SDPABackend"
    """

# a generic module that imports it lazily under a CUDA test
LOADER = """\
    import torch


    def load(selected):
        if torch.version.cuda is not None and selected == "sla":
            from pkg.layers.backends.sla import SLABackend

            return SLABackend()
        return None
    """


def findings(root):
    return package_findings(root)


@pytest.fixture
def pkg(tmp_path):
    write_package(tmp_path, {"pkg/layers/backends/sla.py": BACKEND,
                             "pkg/platforms/cuda.py": CUDA_PLATFORM}, dedent=True)
    return tmp_path


def test_a_backend_only_the_cuda_platform_names_is_reached_on_cuda_only(pkg):
    assert findings(pkg) == []
    r = run("check", "--no-cache", "--profile", "torch", "--show-exempt", "pkg", cwd=pkg)
    assert "[cuda-reach] every reference to `pkg.layers.backends.sla`" in r.stdout, r.stdout
    assert "pkg/platforms/cuda.py:3 names it in a dotted path" in r.stdout.replace(os.sep, "/")


def test_a_lazy_import_under_a_cuda_test_reaches_it_on_cuda_only(tmp_path):
    write_package(tmp_path, {"pkg/layers/backends/sla.py": BACKEND,
                             "pkg/layers/loader.py": LOADER}, dedent=True)
    # the literal goes; a table API selected by a platform test stays, as under the test
    assert [f for f in findings(tmp_path) if "sla" in f[0]] == KEPT[:1]


@pytest.mark.parametrize("files", [
    # another platform names it too
    {"pkg/platforms/xpu.py": CUDA_PLATFORM},
    # generic code names it by a dotted path
    {"pkg/layers/registry.py": "BACKENDS = {'sla': 'pkg.layers.backends.sla.SLABackend'}\n"},
    # a path built from its package's prefix
    {"pkg/layers/registry.py": "def cls(name):\n"
                              "    return 'pkg.layers.backends.' + name\n"},
    # a formatted path that may name it
    {"pkg/layers/registry.py": "def cls(name):\n"
                              "    return f'pkg.layers.backends.{name}.Backend'\n"},
    # generic code imports it and uses it anywhere
    {"pkg/layers/any.py": "from pkg.layers.backends.sla import SLABackend\n\n\n"
                          "def make():\n    return SLABackend()\n"},
    # a test that rules platforms out establishes nothing
    {"pkg/layers/loader.py": LOADER.replace("torch.version.cuda is not None",
                                            "torch.version.hip is None")},
])
def test_a_reference_that_may_run_elsewhere_keeps_the_findings(pkg, files):
    write_package(pkg, files, dedent=True)
    assert [f for f in findings(pkg) if "sla" in f[0]] == KEPT


def test_a_module_without_references_keeps_its_findings(tmp_path):
    write_package(tmp_path, {"pkg/layers/backends/sla.py": BACKEND}, dedent=True)
    assert [f for f in findings(tmp_path) if "sla" in f[0]] == KEPT


def test_top_level_code_imported_at_an_importers_import_keeps_its_findings(tmp_path):
    # the import runs when the importer is imported: the module's own top-level code with it
    write_package(tmp_path, {
        "pkg/layers/backends/sla.py": "import torch\n\nSTREAM = torch.cuda.Stream()\n\n\n"
                                      "def run(q):\n    return q.to('cuda')\n",
        "pkg/layers/user.py": "import torch\n\nfrom pkg.layers.backends.sla import run\n\n\n"
                              "def go(q):\n    if torch.version.cuda is not None:\n"
                              "        return run(q)\n    return q\n"})
    assert findings(tmp_path) == [("pkg/layers/backends/sla.py", 3, "DL402")]


def test_tests_and_broad_prefixes_are_no_references(pkg):
    # a test names it wherever it runs; a prefix of the whole tree names no module
    write_package(pkg, {"pkg/tests/test_sla.py": "from pkg.layers.backends.sla import SLABackend"
                                                 "\n\n\ndef test_it():\n"
                                                 "    SLABackend().forward(1)\n",
                        "pkg/boot.py": "PREFIX = 'pkg.layers.'\n"})
    assert [f for f in findings(pkg) if "tests/" not in f[0]] == []


@pytest.mark.parametrize("test_file", ["pkg/tests/helpers.py", "pkg/layers/sla_test.py"])
def test_test_helpers_and_suffixed_tests_are_no_references(pkg, test_file):
    # a helper under `tests/` and pytest's `*_test.py` are test code too
    # (`vocabulary.is_test_module`, the project stage's one test predicate)
    write_package(pkg, {test_file: "from pkg.layers.backends.sla import SLABackend\n\n\n"
                                   "def make():\n    return SLABackend()\n"})
    assert [f for f in findings(pkg) if f[0] != test_file] == []


def test_a_shipped_testing_package_is_a_reference(pkg):
    # `pkg/testing/` (like `torch.testing`) is imported by users: its generic use keeps the
    # module's findings (found in review: it was taken for test code)
    write_package(pkg, {"pkg/testing/fake_platform.py":
                         "from pkg.layers.backends.sla import SLABackend\n\n\n"
                         "def generic_backend():\n    return SLABackend()\n"})
    assert any(f[0].endswith("sla.py") for f in findings(pkg))


def test_a_warm_answer_sees_a_new_importer_in_the_package_above(tmp_path):
    # the module sits in a folder without __init__.py below `outer`: its references are read
    # from `outer`, whose files the stored answer must depend on (found in review)
    files = {"outer/sub/inner/mod.py": 'import torch\n\n\ndef run(x):\n    return x.to("cuda")\n',
             "outer/platforms/cuda.py": "from outer.sub.inner.mod import run\n\n\n"
                                        "def go(x):\n    return run(x)\n"}
    write_package(tmp_path, files, namespace=("outer/sub",))

    old = time.time() - 100

    def settle():  # past the racy window (answers stored), the old files' stats kept
        for p in tmp_path.glob("outer/**/*"):
            os.utime(p, (old, old))

    def rows():
        r = run("check", "--output-format", "json", "--profile", "torch", "outer", cwd=tmp_path)
        assert r.returncode in (0, 1), r.stderr
        return [(f["filename"].replace(os.sep, "/"), f["code"]) for f in json.loads(r.stdout)]
    settle()
    assert rows() == []  # reached only from the CUDA platform module
    (tmp_path / "outer/generic.py").write_text(files["outer/platforms/cuda.py"])
    settle()
    assert rows() == [("outer/sub/inner/mod.py", "DL101")]  # warm: a generic importer now
    assert [(f, c) for f, _, c in package_findings(tmp_path, "outer")] == rows()  # as cold


@pytest.mark.parametrize("path, expected", [
    ("pkg/tests/helpers.py", True),  # a helper under tests/ (xreach's own said no)
    ("pkg/test/common.py", True),  # under test/ (`is_test_path` says no)
    ("pkg/ops/fused_test.py", True),  # pytest's `*_test.py` (callees' own said no)
    ("pkg/test_ops.py", True), ("conftest.py", True),
    ("pkg/ops/fused.py", False), ("pkg/testament.py", False), ("pkg/latest/run.py", False),
    # a shipped package of test utilities (`torch.testing`) is product code (found in review)
    ("pkg/testing/fake_platform.py", False),
])
def test_one_test_predicate_for_the_project_stage(path, expected):
    from devlint.evidence.vocabulary import is_test_module

    assert is_test_module(path) is expected
