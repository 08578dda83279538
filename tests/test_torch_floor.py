"""The torch floor a project declares: read from its packaging files when target-torch is unset."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from devlint.api import settings_for
from devlint.config import find_config
from devlint.torch_floor import floor_in, lower_bound, project_floor


@pytest.fixture(autouse=True)
def _fresh_cache():
    project_floor.cache_clear()
    yield
    project_floor.cache_clear()


@pytest.mark.parametrize("req, bound", [
    ("torch>=2.8", (2, 8)),
    ("torch >= 2.8.1, <3", (2, 8)),
    ("torch==2.9.1+cu128", (2, 9)),
    ("torch~=2.7.0", (2, 7)),
    ("torch[opt-einsum]>=2.6 ; python_version >= '3.10'", (2, 6)),
    ("torch (>=2.5)", (2, 5)),
    ("torch>2.6", (2, 6)),
    ("torch^2.8", (2, 8)),
    ("torch", None),
    ("torch<3", None),
])
def test_lower_bound_of_a_torch_requirement(req, bound):
    assert lower_bound(req) == (True, bound)


@pytest.mark.parametrize("req", ["torchvision>=0.20", "torch-geometric>=2.5", "numpy>=2", ""])
def test_other_packages_are_not_torch(req):
    assert lower_bound(req) == (False, None)


def _write(root, files: dict):
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def test_pyproject_dependencies_win_over_optional_and_requirements(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": """
            [project]
            name = "x"
            dependencies = ["numpy", "torch>=2.8"]
            [project.optional-dependencies]
            old = ["torch>=2.1"]
        """,
        "requirements.txt": "torch>=2.0\n",
    })
    floor = floor_in(str(tmp_path))
    assert floor.version == "2.8"
    assert floor.source == "pyproject.toml [project] dependencies: torch>=2.8"


def test_the_lowest_bound_of_one_level_wins(tmp_path):
    _write(tmp_path, {"requirements.txt": "torch>=2.9\n", "requirements/old.txt": "torch>=2.7 # CI\n"})
    assert floor_in(str(tmp_path)).version == "2.7"


def test_optional_dependencies_when_nothing_else_names_torch(tmp_path):
    _write(tmp_path, {"pyproject.toml": """
        [project]
        name = "x"
        dependencies = ["numpy"]
        [project.optional-dependencies]
        hf = ["torch>=1.8", "transformers"]
    """})
    assert floor_in(str(tmp_path)).version == "1.8"


def test_setup_cfg_and_setup_py_are_read_without_running_them(tmp_path):
    _write(tmp_path, {
        "setup.cfg": """
            [options]
            install_requires =
                numpy
                torch>=2.7,<3
        """,
    })
    assert floor_in(str(tmp_path)).version == "2.7"
    other = tmp_path / "other"
    _write(other, {"setup.py": """
        import sys
        sys.exit("setup.py must never be executed by devlint")
        _deps = ["numpy>=1", "torch>=2.9"]
        extras = {"torch": ["torch"]}  # a bare name is a key here, not a requirement
        setup(install_requires=_deps)
    """})
    floor = floor_in(str(other))
    assert (floor.version, floor.source) == ("2.9", "setup.py: torch>=2.9")


def test_poetry_caret(tmp_path):
    _write(tmp_path, {"pyproject.toml": """
        [tool.poetry.dependencies]
        python = "^3.10"
        torch = { version = "^2.8", source = "pytorch" }
    """})
    assert floor_in(str(tmp_path)).version == "2.8"


def test_a_declaration_without_a_lower_bound_keeps_the_default_and_says_why(tmp_path):
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch"]\n'})
    floor = floor_in(str(tmp_path))
    assert floor.version is None and "no lower bound" in floor.source


def test_nearest_declaration_up_from_the_file_stopping_at_the_repository_root(tmp_path):
    _write(tmp_path, {"requirements.txt": "torch>=2.9\n", "repo/pkg/sub/m.py": "x = 1\n",
                      "repo/pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch>=2.8"]\n'})
    assert project_floor(str(tmp_path / "repo" / "pkg" / "sub")).version == "2.8"
    (tmp_path / "repo" / "pyproject.toml").unlink()
    (tmp_path / "repo" / ".git").mkdir()
    project_floor.cache_clear()
    assert project_floor(str(tmp_path / "repo" / "pkg" / "sub")) is None


def test_settings_for_uses_the_floor_unless_target_torch_is_configured(tmp_path):
    _write(tmp_path, {".git/HEAD": "", "pkg/m.py": "x = 1\n",
                      "pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch>=2.8"]\n'})
    s = settings_for(str(tmp_path / "pkg" / "m.py"))
    assert s.target_torch_tuple("torch") == (2, 8)
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch>=2.8"]\n'
                      '[tool.devlint]\ntarget-torch = "2.6"\n'})
    project_floor.cache_clear()
    find_config.cache_clear()
    s = settings_for(str(tmp_path / "pkg" / "m.py"))
    assert s.target_torch_tuple("torch") == (2, 6)


def _devlint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "devlint", *args], cwd=cwd,
                          capture_output=True, text=True)


def test_the_floor_decides_the_fix_and_show_settings_names_its_source(tmp_path):
    code = "import torch\n\n\ndef free():\n    torch.cuda.max_memory_allocated()\n"
    _write(tmp_path, {".git/HEAD": "", "pkg/m.py": code})
    # below 2.9 (no torch.accelerator memory API) the device module's own counter
    r = _devlint("check", "--output-format", "json", "pkg", cwd=tmp_path)
    assert "torch.get_device_module().max_memory_allocated" in r.stdout
    assert "torch.accelerator.max_memory_allocated" not in r.stdout
    r = _devlint("check", "--show-settings", "pkg/m.py", cwd=tmp_path)
    assert 'target-torch = "2.6"  # the default (no torch requirement declared)' in r.stdout

    _write(tmp_path, {"requirements.txt": "torch>=2.9\n"})
    r = _devlint("check", "--no-cache", "--output-format", "json", "pkg", cwd=tmp_path)
    assert "get_device_module" not in r.stdout and "torch.accelerator.max_memory_allocated" in r.stdout
    r = _devlint("check", "--show-settings", "pkg/m.py", cwd=tmp_path)
    assert "the project's torch floor, from" in r.stdout and "requirements.txt: torch>=2.9" in r.stdout
    # the command line still wins
    r = _devlint("check", "--no-cache", "--target-torch", "2.6", "--output-format", "json", "pkg",
                 cwd=tmp_path)
    assert "torch.get_device_module().max_memory_allocated" in r.stdout
