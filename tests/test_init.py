"""`devlint init`: the device layer a project already uses, found from its code (stdlib ast
only), shown with evidence and written to pyproject.toml; and the profile roles it fills
(`device-module`, the `tests` and `api` tables) in the fixes."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def run(*args, cwd, input=None):
    env = dict(os.environ)
    env.pop("DEVLINT_OUTPUT_FORMAT", None)
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd, input=input, env=env)


def write(root, files: dict):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip())


# A library whose helper returns the platform's device module, and one that returns its
# device type string, each used from two other modules.
LIBRARY = {
    "pyproject.toml": """
        [project]
        name = "acme"
        dependencies = ["torch>=2.8"]
    """,
    "acme/__init__.py": "",
    "acme/device.py": """
        import torch


        def is_npu_available():
            return hasattr(torch, "npu") and torch.npu.is_available()


        def get_torch_device():
            if torch.cuda.is_available():
                return torch.cuda
            if is_npu_available():
                return torch.npu
            return torch.cpu


        def get_device_name():
            if torch.cuda.is_available():
                device = "cuda"
            elif is_npu_available():
                device = "npu"
            else:
                device = "cpu"
            return device
    """,
    "acme/train.py": """
        from acme.device import get_device_name, get_torch_device


        def step(model, batch):
            get_torch_device().synchronize()
            return model(batch.to(get_device_name()))
    """,
    "acme/eval.py": """
        from .device import get_device_name, get_torch_device


        def evaluate(model):
            get_torch_device().empty_cache()
            return model.to(get_device_name())
    """,
    "acme/legacy.py": """
        import torch


        def run(x):
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            return x.to("cuda")
    """,
}

# A test suite with its own device constant and a helper around it.
TEST_SUITE = {
    "tests/__init__.py": "",
    "tests/testing_utils.py": """
        import torch

        if torch.cuda.is_available():
            torch_device = "cuda"
        elif hasattr(torch, "xpu") and torch.xpu.is_available():
            torch_device = "xpu"
        else:
            torch_device = "cpu"

        BACKEND_EMPTY_CACHE = {"cuda": torch.cuda.empty_cache, "xpu": torch.xpu.empty_cache,
                               "cpu": None}


        def backend_empty_cache(device):
            fn = BACKEND_EMPTY_CACHE[device]
            if fn is not None:
                fn()
    """,
    "tests/test_a.py": """
        from tests.testing_utils import backend_empty_cache, torch_device


        def test_a(model):
            model.to(torch_device)
            backend_empty_cache(torch_device)
    """,
    "tests/test_b.py": """
        from tests.testing_utils import backend_empty_cache, torch_device


        def test_b(model):
            model.to(torch_device)
            backend_empty_cache(torch_device)
    """,
    "tests/test_old.py": """
        import torch


        def test_old(model):
            model.to("cuda")
            torch.cuda.empty_cache()
    """,
}


@pytest.fixture
def library(tmp_path):
    root = tmp_path / "acme"
    write(root, LIBRARY)
    return root


def test_finds_the_device_module_and_device_type_helpers_with_evidence(library):
    p = run("init", "--yes", cwd=library)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "torch floor: 2.8 (pyproject.toml" in out
    assert "device-module = get_torch_device()  (acme/device.py:8, returns a device module " \
           "over cuda, npu; 2 uses)" in out
    assert "device-type = get_device_name()  (acme/device.py:16" in out
    # the evidence names each use
    assert "acme/eval.py:5" in out and "acme/train.py:5" in out
    text = (library / "pyproject.toml").read_text()
    assert 'profile = "acme"' in text and 'target-torch = "2.8"' in text
    assert ('device-module = { expr = "get_torch_device()", import = '
            '"from acme.device import get_torch_device" }') in text
    assert text.startswith('[project]\nname = "acme"\n')  # the rest of the file is kept


def test_a_fixed_file_calls_the_detected_layer(library):
    assert run("init", "--yes", cwd=library).returncode == 0
    p = run("check", "--fix", "--unsafe-fixes", "acme/legacy.py", cwd=library)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (library / "acme/legacy.py").read_text() == textwrap.dedent("""\
        import torch
        from acme.device import get_torch_device
        from acme.device import get_device_name


        def run(x):
            get_torch_device().synchronize()
            get_torch_device().empty_cache()
            return x.to(get_device_name())
    """)


def test_second_run_changes_nothing_and_output_is_deterministic(library, tmp_path):
    first = run("init", "--yes", cwd=library)
    before = (library / "pyproject.toml").read_bytes()
    second = run("init", "--yes", cwd=library)
    assert second.returncode == 0
    assert "up to date; nothing to change" in second.stdout
    assert (library / "pyproject.toml").read_bytes() == before
    # the same project elsewhere gives the same report and file
    other = tmp_path / "copy" / "acme"
    write(other, LIBRARY)
    again = run("init", "--yes", cwd=other)
    assert again.stdout == first.stdout
    assert (other / "pyproject.toml").read_bytes() == before


def test_without_yes_and_without_a_terminal_nothing_is_written(library):
    original = (library / "pyproject.toml").read_text()
    p = run("init", cwd=library, input="")
    assert p.returncode == 1
    assert "re-run with --yes" in p.stderr
    assert (library / "pyproject.toml").read_text() == original


def test_an_existing_devlint_table_is_not_clobbered_without_confirmation(library):
    cfg = library / "pyproject.toml"
    cfg.write_text(cfg.read_text() + '\n[tool.devlint]\nselect = ["DL4"]\nprofile = "torch"\n')
    original = cfg.read_text()
    p = run("init", str(library), cwd=library.parent, input="")
    assert p.returncode == 1
    assert cfg.read_text() == original
    # confirmed: init sets only its own keys; the user's other settings stay
    assert run("init", "--yes", cwd=library).returncode == 0
    text = cfg.read_text()
    assert 'select = ["DL4"]' in text and 'profile = "acme"' in text
    assert 'profile = "torch"' not in text
    assert run("init", "--yes", cwd=library).stdout.endswith("nothing to change\n")


def test_test_suite_constant_and_its_helpers_fill_the_tests_table(tmp_path):
    root = tmp_path / "proj"
    write(root, TEST_SUITE)
    p = run("init", "--yes", cwd=root)
    assert p.returncode == 0, p.stderr
    assert "tests: device = torch_device  (tests/testing_utils.py:4" in p.stdout
    assert "tests: torch.cuda.empty_cache -> backend_empty_cache(torch_device)" in p.stdout
    text = (root / "pyproject.toml").read_text()
    assert "[tool.devlint.profiles.proj.tests]" in text
    assert "[tool.devlint.profiles.proj.tests.api]" in text
    assert run("check", "--fix", "--unsafe-fixes", "tests/test_old.py",
               cwd=root).returncode == 0
    assert (root / "tests/test_old.py").read_text() == textwrap.dedent("""\
        import torch
        from tests.testing_utils import torch_device
        from tests.testing_utils import backend_empty_cache


        def test_old(model):
            model.to(torch_device)
            backend_empty_cache(torch_device)
    """)


def test_no_layer_found_says_so(tmp_path):
    write(tmp_path, {"m.py": "import torch\nx = torch.zeros(1, device='cuda')\n"})
    p = run("init", "--yes", cwd=tmp_path)
    assert p.returncode == 0
    assert "device layer: none found" in p.stdout
    assert "torch floor: not declared" in p.stdout


def test_a_platform_name_torch_does_not_accept_is_no_device_type(tmp_path):
    """`"hip"` is the project's own platform name: a constant that can hold it is no device
    type; the one the project maps to torch's names is."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/device_type.py": """
            import torch


            def get_device_type():
                if torch.cuda.is_available():
                    return "hip" if torch.version.hip else "cuda"
                if torch.xpu.is_available():
                    return "xpu"
                return "cpu"


            DEVICE_TYPE = get_device_type()
            DEVICE_TYPE_TORCH = DEVICE_TYPE
            if DEVICE_TYPE_TORCH == "hip":
                DEVICE_TYPE_TORCH = "cuda"
        """,
        "pkg/a.py": "from pkg.device_type import DEVICE_TYPE, DEVICE_TYPE_TORCH\n"
                    "x = (DEVICE_TYPE, DEVICE_TYPE, DEVICE_TYPE, DEVICE_TYPE_TORCH)\n",
        "pkg/b.py": "from pkg.device_type import DEVICE_TYPE_TORCH\ny = DEVICE_TYPE_TORCH\n",
    })
    p = run("init", "--yes", cwd=tmp_path)
    assert "device-type = DEVICE_TYPE_TORCH  (pkg/device_type.py:13" in p.stdout
    assert "= DEVICE_TYPE  (" not in p.stdout


def test_not_a_directory_is_bad_usage(tmp_path):
    (tmp_path / "f.py").write_text("")
    assert run("init", "f.py", cwd=tmp_path).returncode == 2


def test_device_module_names_exist_on_cuda_and_xpu():
    torch = pytest.importorskip("torch")
    from devlint.rules._api_table import device_module_names

    for name in sorted(device_module_names()):
        assert hasattr(torch.cuda, name), name
        assert hasattr(torch.xpu, name), name


def test_profile_tables_are_validated(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.devlint]
        profile = "p"
        [tool.devlint.profiles.p]
        device = { expr = "dev()", names = ["x"] }
    """))
    (tmp_path / "m.py").write_text("x = 1\n")
    p = run("check", "m.py", cwd=tmp_path)
    assert p.returncode == 2 and "unknown key(s) names" in p.stderr
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.devlint]
        profile = "p"
        [tool.devlint.profiles.p.api]
        "os.getcwd" = "f()"
    """))
    p = run("check", "m.py", cwd=tmp_path)
    assert p.returncode == 2 and "expected a `torch.cuda.NAME` API" in p.stderr


def test_an_accelerator_object_offers_only_its_methods(tmp_path):
    """`get_accelerator()` returns an object whose class family wraps torch.cuda / torch.npu:
    it stands for the device module for the names its class defines."""
    write(tmp_path, {
        "acc/__init__.py": "",
        "acc/base.py": """
            class BaseAccelerator:
                def synchronize(self):
                    raise NotImplementedError

                def current_device(self):
                    raise NotImplementedError
        """,
        "acc/impl.py": """
            import torch
            from acc.base import BaseAccelerator


            class CudaAccelerator(BaseAccelerator):
                def synchronize(self):
                    torch.cuda.synchronize()


            class NpuAccelerator(BaseAccelerator):
                def synchronize(self):
                    torch.npu.synchronize()
        """,
        "acc/api.py": """
            from acc.base import BaseAccelerator
            from acc.impl import CudaAccelerator, NpuAccelerator

            _ACCELERATOR = None
            _MAPPING = dict(cuda=CudaAccelerator, npu=NpuAccelerator)


            def get_accelerator() -> BaseAccelerator:
                return _ACCELERATOR
        """,
        "acc/a.py": "from acc.api import get_accelerator\nget_accelerator().synchronize()\n",
        "acc/b.py": "from acc.api import get_accelerator\nget_accelerator().synchronize()\n",
        "acc/old.py": "import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n",
    })
    p = run("init", "--yes", cwd=tmp_path)
    assert "device-module = get_accelerator()  (acc/api.py:8" in p.stdout, p.stdout
    assert 'names = ["current_device", "synchronize"]' in (tmp_path / "pyproject.toml").read_text()
    assert run("check", "--fix", "--unsafe-fixes", "acc/old.py", cwd=tmp_path).returncode == 0
    text = (tmp_path / "acc/old.py").read_text()
    assert "get_accelerator().synchronize()" in text
    # the object has no empty_cache: torch's table (at target 2.6, the device module's)
    assert "torch.get_device_module().empty_cache()" in text
