"""Shell where it hides: GitHub Actions `run:`, GitLab CI `script:`, Buildkite `command:`,
Dockerfile `RUN` / `ENV` / heredocs, end to end through the command line (docs/ci-files.md):
check, fix, check again."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from devlint.sources.names import ci_yaml_name, dockerfile_name


def _devlint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "devlint", *args], cwd=cwd,
                          capture_output=True, text=True)


def _lines(out: str, prefix: str) -> list:
    return [line for line in out.splitlines() if line.startswith(prefix)]


WORKFLOW = textwrap.dedent("""\
    name: gpu-tests  # a comment that stays
    on: [push, pull_request]
    env:
      PYTHONUNBUFFERED: "1"
    jobs:
      test:
        runs-on: [self-hosted, gpu]
        strategy:
          matrix:
            gpu: [0, 1]
        steps:
          - uses: actions/checkout@v4
          - run: CUDA_VISIBLE_DEVICES=0 pytest tests/
          - name: Train on two GPUs
            run: |
              echo "start"   # keep me
              CUDA_VISIBLE_DEVICES=${{ matrix.gpu }},2 torchrun --nproc-per-node 2 train.py

              echo done
          - run: CUDA_VISIBLE_DEVICES=1 pytest slow/  # noqa: DL302
          - shell: pwsh
            run: $env:CUDA_VISIBLE_DEVICES = "0"; python x.py
          - run: echo "CUDA_VISIBLE_DEVICES is not set here"
    """)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    return tmp_path


def test_workflow_positions_are_the_yaml_files(repo):
    r = _devlint("check", "--no-cache", ".", cwd=repo)
    assert r.returncode == 1, r.stderr
    assert _lines(r.stdout, ".github") == [
        ".github/workflows/ci.yml:13:14: DL302 Hardcoded `CUDA_VISIBLE_DEVICES` command "
        "prefix; Intel XPU, Ascend NPU and other devices ignore it",
        ".github/workflows/ci.yml:17:11: DL302 [*] Hardcoded `CUDA_VISIBLE_DEVICES` command "
        "prefix; Intel XPU, Ascend NPU and other devices ignore it",
    ]
    lines = WORKFLOW.splitlines()
    assert lines[12][13:33] == lines[16][10:30] == "CUDA_VISIBLE_DEVICES"


def test_workflow_fix_in_place(repo):
    path = repo / ".github" / "workflows" / "ci.yml"
    r = _devlint("check", "--no-cache", "--fix", ".", cwd=repo)
    assert r.returncode == 1  # the one-line `run:` is shown, not fixed
    new = path.read_text()
    old_lines, new_lines = WORKFLOW.splitlines(), new.splitlines()
    # everything outside the literal block is byte for byte the same
    assert new_lines[:15] == old_lines[:15] and new_lines[-6:] == old_lines[-6:]
    block = new_lines[15:-6]
    assert block[0] == "          # The variable that selects visible devices, from DEVICE_TYPE " \
                       "(devlint DL302)."
    assert all(line == "" or line.startswith("          ") for line in block)
    assert ('          env "$DEVICE_VISIBILITY_ENV=${{ matrix.gpu }},2" torchrun '
            '--nproc-per-node 2 train.py') in block
    from ruamel.yaml import YAML

    step = YAML(typ="safe").load(new)["jobs"]["test"]["steps"][2]
    script = step["run"]
    assert script.startswith("# The variable") and 'echo "start"   # keep me' in script
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
    r2 = _devlint("check", "--no-cache", "--fix", ".", cwd=repo)
    assert path.read_text() == new  # a second --fix changes nothing
    assert [line.split(": ")[0] for line in _lines(r2.stdout, ".github")] == [
        ".github/workflows/ci.yml:13:14"]


def test_one_line_run_is_display_only(repo):
    r = _devlint("check", "--no-cache", "--output-format", "json", ".", cwd=repo)
    found = json.loads(r.stdout)
    one_line = next(d for d in found if d["location"]["row"] == 13)
    assert one_line["fix"]["applicability"] == "display-only"
    assert "not applied in a one-line `run:`" in one_line["fix"]["message"]
    block = next(d for d in found if d["location"]["row"] == 17)
    assert block["fix"]["applicability"] == "safe"
    # the edits are positions of the YAML file: the selector block goes in at the block's
    # first line, after its indentation
    assert block["fix"]["edits"][0]["location"] == {"row": 16, "column": 11}


def test_gitlab_ci(tmp_path):
    (tmp_path / ".gitlab-ci.yml").write_text(textwrap.dedent("""\
        stages: [test]
        variables:
          GIT_DEPTH: "1"
        .gpu: &gpu
          tags: [gpu]
        test:
          <<: *gpu
          stage: test
          before_script:
            - pip install -e .
          script:
            - CUDA_VISIBLE_DEVICES=0 pytest
            - |
              export CUDA_VISIBLE_DEVICES=0,1
              python train.py
        """))
    r = _devlint("check", "--no-cache", ".", cwd=tmp_path)
    assert [line.split(" ")[0] for line in _lines(r.stdout, ".gitlab-ci.yml")] == [
        ".gitlab-ci.yml:12:7:", ".gitlab-ci.yml:14:14:"]
    _devlint("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    text = (tmp_path / ".gitlab-ci.yml").read_text()
    assert '      export "$DEVICE_VISIBILITY_ENV=0,1"\n      python train.py\n' in text
    assert "  <<: *gpu\n" in text and ".gpu: &gpu\n" in text  # anchors and merges kept
    r2 = _devlint("check", "--no-cache", ".", cwd=tmp_path)
    assert [line.split(" ")[0] for line in _lines(r2.stdout, ".gitlab-ci.yml")] == [
        ".gitlab-ci.yml:12:7:"]


def test_buildkite(tmp_path):
    (tmp_path / ".buildkite").mkdir()
    (tmp_path / ".buildkite" / "pipeline.yml").write_text(textwrap.dedent("""\
        steps:
          - label: unit
            command: "CUDA_VISIBLE_DEVICES=0 pytest"
          - group: gpu
            steps:
              - label: multi
                commands:
                  - echo hi
                  - CUDA_VISIBLE_DEVICES=1 python bench.py
              - label: env only
                env:
                  CUDA_VISIBLE_DEVICES: "0"
                command: python x.py
        """))
    r = _devlint("check", "--no-cache", ".", cwd=tmp_path)
    assert [line.split(" ")[0] for line in _lines(r.stdout, ".buildkite")] == [
        ".buildkite/pipeline.yml:3:15:", ".buildkite/pipeline.yml:9:13:"]


def test_a_yaml_file_named_on_the_command_line_is_read_by_its_keys(tmp_path):
    (tmp_path / "nightly.yml").write_text(
        "jobs:\n  a:\n    steps:\n      - run: CUDA_VISIBLE_DEVICES=0 make test\n")
    r = _devlint("check", "--no-cache", "nightly.yml", cwd=tmp_path)
    assert _lines(r.stdout, "nightly.yml") == [
        "nightly.yml:4:14: DL302 Hardcoded `CUDA_VISIBLE_DEVICES` command prefix; Intel XPU, "
        "Ascend NPU and other devices ignore it"]


def test_invalid_yaml_is_a_syntax_error(tmp_path):
    (tmp_path / ".gitlab-ci.yml").write_text("test:\n  script: [CUDA_VISIBLE_DEVICES=0 x\n")
    r = _devlint("check", "--no-cache", ".", cwd=tmp_path)
    assert r.returncode == 1 and "DL999 YAML:" in r.stdout


DOCKERFILE = textwrap.dedent("""\
    FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
    ENV CUDA_VISIBLE_DEVICES=0 PYTHONUNBUFFERED=1
    RUN apt-get update && \\
        # a comment Docker drops
        CUDA_VISIBLE_DEVICES=0 python -c "import torch"
    RUN ["python", "-c", "print('exec form: no shell')"]
    RUN <<EOF
    export CUDA_VISIBLE_DEVICES=0
    python setup.py
    EOF
    RUN python3 <<EOF
    print("CUDA_VISIBLE_DEVICES=0 is Python here")
    EOF
    CMD CUDA_VISIBLE_DEVICES=0 python serve.py
    """)


def test_dockerfile_check_fix_check(tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text(DOCKERFILE)
    r = _devlint("check", "--no-cache", ".", cwd=tmp_path)
    assert [line.split(" DL302")[0] for line in _lines(r.stdout, "Dockerfile")] == [
        "Dockerfile:2:5:", "Dockerfile:5:5:", "Dockerfile:8:8:", "Dockerfile:14:5:"]
    assert "Dockerfile:8:8: DL302 [*]" in r.stdout
    _devlint("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    new = path.read_text()
    assert new.startswith(DOCKERFILE[:DOCKERFILE.index("RUN <<EOF")] + "RUN <<EOF\n# The variable")
    assert 'export "$DEVICE_VISIBILITY_ENV=0"\npython setup.py\nEOF\n' in new
    assert new.endswith(DOCKERFILE[DOCKERFILE.index("RUN python3 <<EOF"):])
    r2 = _devlint("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    assert path.read_text() == new
    assert [line.split(" DL302")[0] for line in _lines(r2.stdout, "Dockerfile")] == [
        "Dockerfile:2:5:", "Dockerfile:5:5:", "Dockerfile:26:5:"]
    env = json.loads(_devlint("check", "--no-cache", "--output-format", "json", "Dockerfile",
                              cwd=tmp_path).stdout)[0]
    assert env["fix"]["applicability"] == "display-only"
    assert "docker run -e" in env["fix"]["message"]


@pytest.mark.parametrize("name, expected", [
    ("Dockerfile", True), ("Containerfile", True), ("Dockerfile.cuda", True),
    ("Dockerfile-dev", True), ("cuda.Dockerfile", True), ("build.containerfile", True),
    ("Dockerfile.yml", False), ("dockerfile.py", False), ("Dockerfile.j2", False),
    ("README.md", False), (".dockerignore", False),
])
def test_dockerfile_names(name, expected):
    assert dockerfile_name(name) is expected


@pytest.mark.parametrize("path, expected", [
    (".github/workflows/ci.yml", "github"), ("a/.github/workflows/x.yaml", "github"),
    ("action.yml", "github"), (".gitlab-ci.yml", "gitlab"), (".gitlab/ci/gpu.yml", "gitlab"),
    (".buildkite/pipeline.yml", "buildkite"), (".pre-commit-config.yaml", None),
    ("mkdocs.yml", None), (".github/dependabot.yml", None),
])
def test_ci_yaml_names(path, expected):
    assert ci_yaml_name(path) == expected


def test_startup_imports_no_parser():
    code = ("import sys, devlint.cli, devlint.discovery, devlint.engine.runner; "
            "print(sorted(m for m in ('ruamel.yaml', 'tree_sitter_dockerfile') if m in "
            "sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.stdout.strip() == "[]"


def test_gitlab_reference_tags_are_not_scripts(tmp_path):
    (tmp_path / ".gitlab-ci.yml").write_text(
        ".setup:\n  script:\n    - echo CUDA_VISIBLE_DEVICES is printed, not set\n"
        "test:\n  script:\n    - !reference [.setup, CUDA_VISIBLE_DEVICES]\n"
        "    - CUDA_VISIBLE_DEVICES=0 pytest\n")
    r = _devlint("check", "--no-cache", ".gitlab-ci.yml", cwd=tmp_path)
    assert [line.split(" ")[0] for line in _lines(r.stdout, ".gitlab-ci.yml")] == [
        ".gitlab-ci.yml:7:7:"]
