"""Profiles decide the form of fixes: torch, vllm, auto, and custom profiles from config."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from devlint.api import check_source, fix_source

SRC = 'import torch\n\nDEVICE = "cuda"\nx = torch.zeros(2, device="cuda")\n'


def test_auto_picks_vllm_for_vllm_imports_and_paths():
    vsrc = "from vllm.platforms import current_platform\n" + SRC
    fixed, _, _ = fix_source(vsrc, "m.py", profile="auto")
    assert "DEVICE = current_platform.device_type" in fixed
    fixed, _, _ = fix_source(SRC, "proj/vllm/model.py", profile="auto")
    assert "current_platform.device_type" in fixed
    fixed, _, _ = fix_source(SRC, "proj/other/model.py", profile="auto")
    assert "torch.accelerator.current_accelerator()" in fixed and "vllm" not in fixed


def test_torch_profile_forms_run_without_an_accelerator():
    fixed, remaining, failures = fix_source(SRC, "m.py", profile="torch", unsafe=True)
    assert failures == [] and remaining == []
    ns: dict = {}
    import torch  # the test extra installs the CPU build

    exec(compile(fixed, "m.py", "exec"), ns)
    assert ns["DEVICE"] == ("cpu" if not torch.accelerator.is_available()
                            else torch.accelerator.current_accelerator().type)
    assert ns["x"].device.type == ns["DEVICE"]


def test_custom_profile_from_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nprofile = "mine"\n\n'
        '[tool.devlint.profiles.mine]\n'
        'device = { expr = "get_device()", import = "from mylib.devices import get_device" }\n'
        'device-type = { expr = "get_device().type", import = "from mylib.devices import get_device" }\n')
    (tmp_path / "m.py").write_text(SRC)
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "--fix", "m.py"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    out = (tmp_path / "m.py").read_text()
    assert out == ('import torch\nfrom mylib.devices import get_device\n\n'
                   'DEVICE = get_device().type\nx = torch.zeros(2, device=get_device())\n')


def test_custom_profile_inherits_roles_it_does_not_set(tmp_path):
    (tmp_path / "devlint.toml").write_text(
        'profile = "mine"\n[profiles.mine]\nextends = "vllm"\n'
        'device-type = { expr = "MY_DEVICE_TYPE", import = "from mylib import MY_DEVICE_TYPE" }\n')
    (tmp_path / "m.py").write_text("import torch.distributed as dist\n"
                                   'dist.init_process_group("nccl")\nDEVICE = "cuda"\n')
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "--output-format", "json",
                        "m.py"], capture_output=True, text=True, cwd=tmp_path)
    data = json.loads(p.stdout)
    contents = {d["code"]: d["fix"]["edits"][0]["content"] for d in data}
    assert contents["DL104"] == "MY_DEVICE_TYPE"
    assert contents["DL501"] == "current_platform.dist_backend"


def test_custom_profile_derives_the_device_roles_it_does_not_name(tmp_path):
    """A project's `device` gives its device object and type too, on any target torch (the
    torch profile's own forms need 2.6 or later)."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nprofile = "mine"\ntarget-torch = "2.2"\n\n'
        '[tool.devlint.profiles.mine]\n'
        'device = { expr = "current_device()", import = "from mylib import current_device" }\n')
    (tmp_path / "m.py").write_text(
        "import torch as th\n\n\ndef f(d: th.device = th.device('cuda')):\n"
        "    with th.autocast('cuda'):\n        return th.zeros(1, device='cuda', out=d)\n")
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "--fix", "--unsafe-fixes",
                        "m.py"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    out = (tmp_path / "m.py").read_text()
    assert "d: th.device = th.device(current_device())" in out
    assert "th.autocast(th.device(current_device()).type)" in out
    assert "device=current_device()" in out
    assert "from mylib import current_device" in out


def test_bad_custom_profile_is_a_config_error(tmp_path):
    (tmp_path / "devlint.toml").write_text('[profiles.mine]\ndevise = "x"\n')
    (tmp_path / "m.py").write_text(SRC)
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "m.py"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert p.returncode == 2
    assert "devlint.toml" in p.stderr and "devise" in p.stderr


def test_vllm_profile_adds_the_import_once():
    src = 'import torch\nA = "cuda"\nB = "cuda"\nx = torch.ones(1).to("cuda")\n'
    fixed, _, _ = fix_source(src, "m.py", profile="vllm")
    assert fixed.count("from vllm.platforms import current_platform") == 1


def test_check_source_api_returns_fixes():
    [d] = check_source('import torch\nx = torch.ones(2).cuda()\n', "m.py")
    assert d.code == "DL102" and d.fix is not None and d.location == (2, 19)


def test_device_module_role_takes_manual_seed_not_manual_seed_all(tmp_path):
    """`manual_seed` is in every backend's device module (cuda, xpu, mps): the project's module
    stands for it; `manual_seed_all` is not in torch.mps, so DL404's own forms keep it."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nprofile = "mine"\ntarget-torch = "2.6"\n\n'
        '[tool.devlint.profiles.mine]\n'
        'device-module = { expr = "get_torch_device()", import = "from mylib import get_torch_device" }\n')
    (tmp_path / "m.py").write_text("import torch\n\n\ndef seed(s):\n    torch.cuda.manual_seed(s)\n"
                                   "\n\ndef seed_all(s):\n    torch.cuda.manual_seed_all(s)\n")
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "--fix", "--unsafe-fixes",
                        "m.py"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    out = (tmp_path / "m.py").read_text()
    assert "    get_torch_device().manual_seed(s)\n" in out
    assert "get_torch_device().manual_seed_all" not in out and "torch.cuda" not in out


def test_device_module_role_is_not_asked_whether_an_accelerator_is_there(tmp_path):
    """A project's device module is `torch.cpu` without an accelerator, which says it is
    available with one device: `torch.cuda.is_available()` and `device_count()` keep torch's
    forms, the rest goes through the module."""
    torch = pytest.importorskip("torch")
    assert torch.cpu.is_available() and torch.cpu.device_count() == 1  # why
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nprofile = "mine"\ntarget-torch = "2.6"\n\n'
        '[tool.devlint.profiles.mine]\n'
        'device-module = { expr = "get_torch_device()", import = "from mylib import get_torch_device" }\n')
    (tmp_path / "m.py").write_text("import torch\n\n\ndef f():\n    n = torch.cuda.device_count()\n"
                                   "    torch.cuda.synchronize()\n    return n, torch.cuda.is_available()\n")
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "--fix", "--unsafe-fixes",
                        "m.py"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    out = (tmp_path / "m.py").read_text()
    assert "n = torch.accelerator.device_count()" in out
    assert "get_torch_device().synchronize()" in out
    assert "return n, torch.accelerator.is_available()" in out


def test_the_profile_names_the_command_line_accepts_unread_are_built_in():
    # `check` reads profiles.toml only for a profile outside settings.PROFILES (cli
    # `_check_profile`): every other name there must be a built-in profile
    from devlint.profiles import builtin_profiles
    from devlint.settings import PROFILES

    assert set(PROFILES) - {"auto"} <= set(builtin_profiles())


@pytest.mark.parametrize("own_backend,reported", [(False, False), (True, True)])
def test_gloo_is_a_device_choice_only_where_the_profile_names_its_backend(
        tmp_path, own_backend, reported):
    # a custom profile that only extends torch has torch's dist-backend: gloo stays the CPU
    # backend there, as under --profile torch; one that names its platform's is asked for it
    role = ('dist-backend = { expr = "get_accelerator().backend_name()", '
            'import = "from mylib import get_accelerator" }\n') if own_backend else ""
    (tmp_path / "devlint.toml").write_text(
        f'profile = "mine"\n[profiles.mine]\nextends = "torch"\n{role}')
    (tmp_path / "m.py").write_text("import torch.distributed as dist\n"
                                   'dist.init_process_group(backend="gloo")\n')
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "--output-format", "json",
                        "--exit-zero", "m.py"], capture_output=True, text=True, cwd=tmp_path)
    assert [d["code"] for d in json.loads(p.stdout)] == (["DL501"] if reported else [])
