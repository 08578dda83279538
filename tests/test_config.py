"""Configuration: `[tool.devlint]` / `devlint.toml`, per-file ignores, excludes, nearest config,
--config, --show-settings, and the errors a bad config gives. The sample project (see
_sample_project.py) must give the same findings through every entry point."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from _sample_project import EXPECTED, FILES, HARDCODED, PYTHON_FILES, findings, git, \
    make_sample_project


def run(*args, cwd, input=None, env=None):
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd, env=e, input=input)


def json_findings(*args, cwd):
    p = run("--output-format", "json", *args, cwd=cwd)
    assert p.returncode in (0, 1), p.stderr
    return findings(json.loads(p.stdout))


@pytest.fixture
def sample(tmp_path):
    return make_sample_project(tmp_path)


# --- one project, every entry point --------------------------------------------------------

def test_sample_project_by_directory(sample):
    assert json_findings(".", cwd=sample) == EXPECTED
    assert json_findings(sample.name, cwd=sample.parent) == {
        (f"{sample.name}/{p}", r, c) for p, r, c in EXPECTED}


def test_sample_project_by_explicit_files_with_force_exclude(sample):
    assert json_findings("--force-exclude", *PYTHON_FILES, cwd=sample) == EXPECTED
    # without --force-exclude an explicitly named file is always linted (ruff's rule)
    assert ("external/kernels/launch.py", 3, "DL103") in json_findings(*PYTHON_FILES,
                                                                       cwd=sample)


def test_sample_project_through_stdin(sample):
    got = set()
    for rel in PYTHON_FILES:
        p = run("--output-format", "json", "--force-exclude", "--stdin-filename", rel, "-",
                cwd=sample, input=FILES[rel])
        assert p.returncode in (0, 1), p.stderr
        got |= findings(json.loads(p.stdout))
    assert got == EXPECTED


def test_sample_project_through_the_api(sample, monkeypatch):
    import devlint
    from devlint.api import settings_for
    from devlint.settings import is_excluded

    monkeypatch.chdir(sample)
    got = set()
    for rel in PYTHON_FILES:
        settings = settings_for(rel)
        if is_excluded(settings, rel):
            continue
        got |= {(rel, d.location[0], d.code) for d in
                devlint.check_source(FILES[rel], path=rel, settings=settings)}
    assert got == EXPECTED


# --- per-file-ignores, excludes -------------------------------------------------------------

def _project(tmp_path, config, files):
    (tmp_path / "pyproject.toml").write_text(config)
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(HARDCODED)
    return tmp_path


def test_per_file_ignores_negation_and_braces(tmp_path):
    _project(tmp_path, '[tool.devlint]\nselect = ["DL103", "DL401"]\n'
             '[tool.devlint.per-file-ignores]\n'
             '"!src/**" = ["DL401"]\n'                 # outside src/: no DL401
             '"**/{tests,benchmarks}/*" = ["DL103"]\n'  # no DL103 in tests or benchmarks
             '"__init__.py" = ["ALL"]\n',
             ["src/a.py", "src/__init__.py", "src/tests/t.py", "benchmarks/b.py", "tools/x.py"])
    assert json_findings(".", cwd=tmp_path) == {
        ("src/a.py", 3, "DL103"), ("src/a.py", 4, "DL401"),
        ("src/tests/t.py", 4, "DL401"),
        ("tools/x.py", 3, "DL103"),
    }


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(tmp_path):
    _project(tmp_path, '[tool.devlint]\nselect = ["DL103"]\nexclude = ["gen_*.py"]\n',
             ["build/a.py", "gen_x.py", "src/ok.py"])
    assert {f[0] for f in json_findings(".", cwd=tmp_path)} == {"build/a.py", "src/ok.py"}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nselect = ["DL103"]\nextend-exclude = ["src/ok.py"]\n')
    assert json_findings(".", cwd=tmp_path) == {("gen_x.py", 3, "DL103")}


def test_extend_select_in_config(tmp_path):
    _project(tmp_path, '[tool.devlint]\nselect = ["DL1"]\nextend-select = ["DL401"]\n',
             ["a.py"])
    assert {c for _, _, c in json_findings(".", cwd=tmp_path)} == {"DL103", "DL401"}


def test_nearest_config_wins_and_stops_at_the_repository_root(tmp_path):
    outer = tmp_path / "outer"
    repo = outer / "repo"
    repo.mkdir(parents=True)
    (outer / "pyproject.toml").write_text('[tool.devlint]\nselect = ["DL401"]\n')
    git(repo, "init", "-q")
    (repo / "a.py").write_text(HARDCODED)
    (repo / "sub").mkdir()
    (repo / "sub" / "devlint.toml").write_text('select = ["DL401"]\n')
    (repo / "sub" / "b.py").write_text(HARDCODED)
    got = json_findings(".", cwd=repo)
    # a.py: the config above the repository root is not used, so every rule applies
    assert {c for p, _, c in got if p == "a.py"} == {"DL103", "DL401"}
    assert {c for p, _, c in got if p == "sub/b.py"} == {"DL401"}


def test_config_option_overrides_discovery(tmp_path):
    _project(tmp_path, '[tool.devlint]\nselect = ["DL401"]\n', ["a.py"])
    (tmp_path / "other.toml").write_text('select = ["DL103"]\n')
    assert json_findings("--config", "other.toml", ".", cwd=tmp_path) == {("a.py", 3, "DL103")}
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "b.py").write_text(HARDCODED)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "pyproject.toml").write_text(
        '[tool.devlint]\nselect = ["DL103"]\nper-file-ignores = { "src/b.py" = ["DL103"] }\n')
    # globs of a --config file are anchored at its directory: conf/src/b.py, not ./src/b.py
    assert json_findings("--config", "conf/pyproject.toml", "src", cwd=tmp_path) == \
        {("src/b.py", 3, "DL103")}
    (tmp_path / "pyproject.toml").write_text((tmp_path / "conf" / "pyproject.toml").read_text())
    assert json_findings("--config", "pyproject.toml", "src", cwd=tmp_path) == set()


def test_show_settings(sample):
    p = run("check", "--show-settings", "pkg/platforms/nv_platform.py", cwd=sample)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert f"# Config file: {sample / 'pyproject.toml'}" in out
    assert 'select = ["DL1"]' in out
    assert 'per-file-ignores = { "pkg/platforms/*" = ["ALL"] }' in out
    assert '# Matched per-file-ignores: ["ALL"]' in out
    assert "# Enabled rules: []" in out
    assert 'profile = "auto"  # for this file: torch' in out
    # the printed table is valid TOML that reads back to the same settings
    import tomllib

    table = tomllib.loads(out)["tool"]["devlint"]
    assert table["select"] == ["DL1"] and table["extend-exclude"] == ["external"]
    p = run("check", "--show-settings", "--select", "DL4", "pkg/model.py", cwd=sample)
    assert 'select = ["DL4"]' in p.stdout and '"DL401"' in p.stdout
    p = run("--show-settings", "external/kernels/launch.py", cwd=sample)
    assert "excluded = true" in p.stdout


# --- errors: the file, the key, what was expected, exit 2 -----------------------------------

@pytest.mark.parametrize("body,key,expected", [
    ('select = "DL1"', "select", "a list of strings"),
    ('select = ["DL7"]', "select", "unknown rule selector 'DL7'"),
    ('unsafe-fixes = "yes"', "unsafe-fixes", "true or false"),
    ('target-torch = 2.6', "target-torch", 'a version string like "2.6"'),
    ('profile = "rocm"', "profile", "expected one of auto, torch, vllm"),
    ('output-format = "xml"', "output-format", "one of concise, full, json"),
    ('per-file-ignores = { "a.py" = "DL1" }', "per-file-ignores.a.py", "a list of rule codes"),
    ('per-file-ignores = { "a.py" = ["XX1"] }', "per-file-ignores.a.py",
     "unknown rule selector 'XX1'"),
    ('selct = ["DL1"]', "selct", "did you mean 'select'?"),
    ('select = ["DL1"', "", "invalid TOML"),
])
def test_bad_config_names_file_key_and_expectation(tmp_path, body, key, expected):
    (tmp_path / "pyproject.toml").write_text(f"[tool.devlint]\n{body}\n")
    (tmp_path / "a.py").write_text(HARDCODED)
    p = run("a.py", cwd=tmp_path)
    assert p.returncode == 2
    assert "pyproject.toml" in p.stderr and key in p.stderr and expected in p.stderr, p.stderr
    assert p.stdout == ""


def test_bad_custom_profile_is_reported(tmp_path):
    (tmp_path / "devlint.toml").write_text('[profiles.mine]\nextends = "jax"\n')
    (tmp_path / "a.py").write_text(HARDCODED)
    p = run("a.py", cwd=tmp_path)
    assert p.returncode == 2 and "devlint.toml" in p.stderr and "extends" in p.stderr


# --- custom profiles are checked as the config is read --------------------------------------

@pytest.mark.parametrize("role,expected", [
    ('device = "get_device("', "is not a Python expression"),
    ('device = "mydev()"', "uses 'mydev', which nothing binds"),
    ('device = "torch.device(0)"', "use `{torch}` for torch"),
    ('device = { expr = "d()", import = "d = 1" }', "expected one import statement"),
    ('device = { expr = "d()", import = "from lib import *" }', "a star import"),
    ('device = { expr = "d()", import = "from lib import (" }', "does not parse"),
    ('device = "{x}.device"', "`{x}` stands for a tensor only in accelerator-tensor-test"),
    ('accelerator-tensor-test = "True"', "expected an expression testing the tensor `{x}`"),
    ('extends = ["torch"]', "extends: expected torch or vllm"),
])
def test_a_custom_profile_that_cannot_work_is_a_config_error(tmp_path, role, expected):
    """Before, an expression that does not parse was accepted and every fix it wrote was then
    reverted as 'a devlint bug'; one naming an unbound name broke the fixed code."""
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.devlint]\nprofile = "mine"\n\n[tool.devlint.profiles.mine]\n{role}\n')
    (tmp_path / "a.py").write_text(HARDCODED)
    p = run("a.py", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith(f"devlint: error: {tmp_path / 'pyproject.toml'}: "
                               "[tool.devlint.profiles.mine]"), p.stderr
    assert expected in p.stderr and p.stdout == ""
    assert "This is a devlint bug" not in p.stderr


def test_a_valid_custom_profile_is_accepted_with_imports_builtins_and_placeholders(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nprofile = "mine"\n\n[tool.devlint.profiles.mine]\n'
        'device = { expr = "lib.dev(str(0))", import = ["import lib.sub", "import os"] }\n'
        'device-type = { expr = "T", import = "from lib import TYPE as T" }\n'
        "device-object = '{torch}.device([d for d in [\"cpu\"]][0])'\n"
        "accelerator-tensor-test = '{x}.device.type != \"cpu\"'\n")
    (tmp_path / "a.py").write_text(HARDCODED)
    p = run("--output-format", "json", "a.py", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert any(d["fix"] and "lib.dev(str(0))" in json.dumps(d["fix"])
               for d in json.loads(p.stdout))


@pytest.mark.parametrize("name", ["torch", "vllm", "auto"])
def test_redefining_a_built_in_profile_is_a_config_error(tmp_path, name):
    """[tool.devlint.profiles.torch] used to be ignored without a word."""
    (tmp_path / "devlint.toml").write_text(f'[profiles.{name}]\ndevice = "0"\n')
    (tmp_path / "a.py").write_text(HARDCODED)
    p = run("a.py", cwd=tmp_path)
    assert p.returncode == 2
    assert f"[tool.devlint.profiles.{name}]: '{name}' is a built-in profile" in p.stderr
    assert "devlint.toml" in p.stderr


def test_target_backends_is_rejected_with_the_reason(tmp_path):
    """It was documented, accepted any value ("banana") and changed nothing."""
    (tmp_path / "pyproject.toml").write_text('[tool.devlint]\ntarget-backends = ["banana"]\n')
    (tmp_path / "a.py").write_text(HARDCODED)
    p = run("a.py", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert "pyproject.toml: unknown key [tool.devlint] 'target-backends'" in p.stderr
    assert "accelerator-tensor-test" in p.stderr


# --- every key does something ---------------------------------------------------------------

SHELL = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python train.py\n"
APIS = "import torch\n" + "".join(
    f"torch.cuda.{f}()\n" for f in ("synchronize", "device_count", "current_device",
                                    "empty_cache", "memory_allocated", "max_memory_allocated",
                                    "reset_peak_memory_stats", "current_stream"))
# key -> (the config without it, the config with it, file, source, extra arguments, what the
# output holds with the key set)
EFFECTS = {
    "select": ("", 'select = ["DL4"]', "a.py", HARDCODED, (), None),
    "extend-select": ('select = ["DL4"]', 'select = ["DL4"]\nextend-select = ["DL103"]',
                      "a.py", HARDCODED, (), "DL103"),
    "ignore": ("", 'ignore = ["DL103"]', "a.py", HARDCODED, (), None),
    "per-file-ignores": ("", 'per-file-ignores = { "a.py" = ["DL103"] }', "a.py", HARDCODED,
                         (), None),
    "extend-per-file-ignores": ('per-file-ignores = { "b.py" = ["ALL"] }',
                                'per-file-ignores = { "b.py" = ["ALL"] }\n'
                                'extend-per-file-ignores = { "a.py" = ["DL103"] }', "a.py",
                                HARDCODED, (), None),
    # the finding stays, its fix goes (ruff's fixable / unfixable)
    "fixable": ("", 'fixable = ["DL4"]', "a.py", HARDCODED, (), '"fix": null'),
    "unfixable": ("", 'unfixable = ["device-literal-argument"]', "a.py", HARDCODED, (),
                  '"fix": null'),
    "extension": ("", 'extension = { ipy = "python" }', "a.ipy", HARDCODED, (), "DL103"),
    "exclude": ("", 'exclude = ["a.py"]', "a.py", HARDCODED, (), None),
    "extend-exclude": ("", 'extend-exclude = ["a.py"]', "a.py", HARDCODED, (), None),
    "profile": ("", 'profile = "vllm"', "a.py", HARDCODED, (), "current_platform"),
    "target-torch": ('target-torch = "2.6"', 'target-torch = "2.9"', "a.py", APIS, (), None),
    "unsafe-fixes": ("", "unsafe-fixes = true", "a.py",
                     "import torch\n\ndef f(t, device):\n    return t.to('cuda')\n",
                     ("--output-format", "concise"), "--unsafe-fixes` option."),
    "output-format": ("", 'output-format = "json-lines"', "a.py", HARDCODED,
                      ("--exit-zero",), '"code": "DL103"'),
    "shell-device-type-var": ("", 'shell-device-type-var = "MY_TYPE"', "run.sh", SHELL, (),
                              "MY_TYPE"),
    "shell-visibility-var": ("", 'shell-visibility-var = "MY_VIS"', "run.sh", SHELL, (),
                             "MY_VIS"),
    "skip-cuda-only-paths": ("", "skip-cuda-only-paths = false", "cuda_utils.py", HARDCODED, (),
                             "DL103"),
    # a note on stderr (the --diff output itself is the same)
    "line-length": ("line-length = 200", "line-length = 20", "a.py",
                    "import torch\ntorch.cuda.synchronize()\n", ("--diff",), "longer than 20"),
    "profiles": ('profile = "mine"\n[tool.devlint.profiles.mine]\n',
                 'profile = "mine"\n[tool.devlint.profiles.mine]\n'
                 'device = { expr = "my_device()", import = "from lib import my_device" }\n',
                 "a.py", HARDCODED, (), "my_device()"),
}


def test_every_key_has_an_effect_test():
    from devlint.config import _KEYS

    assert set(EFFECTS) == set(_KEYS)


@pytest.mark.parametrize("key", sorted(EFFECTS))
def test_every_documented_key_changes_what_devlint_does(tmp_path, key):
    without, with_, name, source, extra, shows = EFFECTS[key]
    (tmp_path / name).write_text(source)
    outputs = []
    for body in (without, with_):
        (tmp_path / "pyproject.toml").write_text(f"[tool.devlint]\n{body}\n")
        args = extra if {"--output-format", "--diff"} & set(extra) or key == "output-format" else (
            "--output-format", "json")
        p = run("--no-cache", *args, ".", cwd=tmp_path)
        assert p.returncode in (0, 1), p.stderr
        outputs.append(p.stdout + (p.stderr if "--diff" in extra else ""))
    assert outputs[0] != outputs[1], key
    if shows is not None:
        assert shows in outputs[1] and shows not in outputs[0], outputs


def test_every_key_in_the_reference_exists():
    """The reverse of test_docs' check: a key the reference documents is a key devlint reads."""
    import re

    from devlint.config import _KEYS

    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "docs", "configuration.md"), encoding="utf-8") as f:
        text = f.read()
    table = text.split("## Keys", 1)[1].split("\n\n", 2)[1]
    documented = set(re.findall(r"^\| `([a-z-]+)(?:\.NAME)?` \|", table, flags=re.M))
    assert documented == set(_KEYS)
