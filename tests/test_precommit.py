"""devlint under a real pre-commit (from PyPI), against temporary git repositories.

The hook comes from this checkout's `.pre-commit-hooks.yaml`, through a `file://` clone of a
temporary commit of the package: pre-commit builds its own virtualenv and pip-installs devlint
into it (from the package index, as a user's machine would), once per test session
(PRE_COMMIT_HOME is a shared temporary directory)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from _sample_project import EXPECTED, HARDCODED, git, make_sample_project

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_FILES = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "devlint")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A git repository holding this checkout's package and hook file, committed."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in PACKAGE_FILES:
        src = os.path.join(ROOT, name)
        if os.path.isdir(src):
            shutil.copytree(src, repo / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(src, repo / name)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "devlint")
    rev = git(repo, "rev-parse", "HEAD").stdout.strip()
    return repo.as_uri(), rev


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


def _config(repo_uri, rev, args=()):
    line = f"        args: [{', '.join(args)}]\n" if args else ""
    return (f"repos:\n  - repo: {repo_uri}\n    rev: {rev}\n    hooks:\n"
            f"      - id: devlint\n{line}")


def pre_commit(cwd, home, *args):
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("DEVLINT_OUTPUT_FORMAT", None)
    from _sample_project import GIT_ENV

    env.update(GIT_ENV)
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture
def consumer(tmp_path, hook_repo):
    """An empty project using the devlint hook; `setup(args)` writes its config."""
    uri, rev = hook_repo
    git(tmp_path, "init", "-q", "-b", "main")

    def setup(args=()):
        (tmp_path / ".pre-commit-config.yaml").write_text(_config(uri, rev, args))
        git(tmp_path, "add", ".pre-commit-config.yaml")
        return tmp_path
    return setup


def test_fails_on_a_hardcoded_file_with_the_finding(consumer, pre_commit_home):
    repo = consumer()
    (repo / "bad.py").write_text(HARDCODED)
    git(repo, "add", "bad.py")
    p = pre_commit(repo, pre_commit_home, "run")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "devlint" in p.stdout and "Failed" in p.stdout
    assert "bad.py:3:27: DL103" in p.stdout
    assert "bad.py:4:1: DL401" in p.stdout


def test_passes_on_a_clean_file(consumer, pre_commit_home):
    repo = consumer()
    (repo / "good.py").write_text("import torch\n\nx = torch.zeros(2)\n")
    git(repo, "add", "good.py")
    p = pre_commit(repo, pre_commit_home, "run")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Passed" in p.stdout


def test_fix_rewrites_the_file_and_the_next_run_passes(consumer, pre_commit_home):
    repo = consumer(args=("--fix",))
    (repo / "bad.py").write_text(HARDCODED)
    git(repo, "add", "bad.py")
    p = pre_commit(repo, pre_commit_home, "run")
    assert p.returncode == 1, p.stdout + p.stderr  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in p.stdout
    fixed = (repo / "bad.py").read_text()
    assert 'device="cuda"' not in fixed and "torch.accelerator.synchronize()" in fixed
    git(repo, "add", "bad.py")
    p = pre_commit(repo, pre_commit_home, "run")
    assert p.returncode == 0, p.stdout + p.stderr


def test_no_python_files_staged(consumer, pre_commit_home):
    repo = consumer()
    (repo / "notes.md").write_text("x.to('cuda')\n")
    git(repo, "add", "notes.md")
    p = pre_commit(repo, pre_commit_home, "run")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "(no files to check)Skipped" in p.stdout


def test_shell_scripts_are_checked(consumer, pre_commit_home):
    repo = consumer()
    (repo / "run.sh").write_text("#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n")
    git(repo, "add", "run.sh")
    p = pre_commit(repo, pre_commit_home, "run")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "run.sh:2:1: DL302" in p.stdout


def test_sample_project_reports_only_the_expected_findings(tmp_path, hook_repo,
                                                            pre_commit_home):
    """select = ["DL1"], a per-file-ignored platform folder and an excluded vendored tree:
    pre-commit passes every file explicitly, `--force-exclude` keeps the excludes."""
    uri, rev = hook_repo
    make_sample_project(tmp_path)
    (tmp_path / ".pre-commit-config.yaml").write_text(_config(uri, rev))
    git(tmp_path, "add", "-A")
    p = pre_commit(tmp_path, pre_commit_home, "run", "--all-files")
    assert p.returncode == 1, p.stdout + p.stderr
    reported = {(line.split(":")[0], int(line.split(":")[1]), line.split(": ")[1].split()[0])
                for line in p.stdout.splitlines() if ": DL" in line}
    assert reported == EXPECTED


def test_notebooks_dockerfiles_and_ci_workflows_are_checked(tmp_path, hook_repo,
                                                            pre_commit_home):
    """The `devlint` hook takes notebooks and Dockerfiles; `devlint-ci-yaml` the workflows
    (and no other YAML: the config file itself is not handed to it)."""
    import nbformat

    uri, rev = hook_repo
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / ".pre-commit-config.yaml").write_text(
        _config(uri, rev) + "      - id: devlint-ci-yaml\n")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x.to("cuda")')]),
                   str(tmp_path / "nb.ipynb"))
    (tmp_path / "Dockerfile").write_text("FROM python:3.12\nENV CUDA_VISIBLE_DEVICES=0\n")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(
        "jobs:\n  t:\n    steps:\n      - run: CUDA_VISIBLE_DEVICES=0 pytest\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    git(tmp_path, "add", ".")
    p = pre_commit(tmp_path, pre_commit_home, "run")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "nb.ipynb:cell 1:1:6: DL101" in p.stdout
    assert "Dockerfile:2:5: DL302" in p.stdout
    assert ".github/workflows/ci.yml:4:14: DL302" in p.stdout
    assert "mkdocs.yml" not in p.stdout
