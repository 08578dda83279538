"""The sample project of issue 7's acceptance check: `select = ["DL1"]`, a platform folder
under per-file-ignores, a vendored tree excluded. Every entry point (CLI paths, explicit
file lists, stdin, the API, pre-commit) must report exactly EXPECTED on it."""
from __future__ import annotations

import os
import subprocess

PYPROJECT = """\
[project]
name = "sample"

[tool.devlint]
select = ["DL1"]
extend-exclude = ["external"]

[tool.devlint.per-file-ignores]
"pkg/platforms/*" = ["ALL"]
"""

HARDCODED = 'import torch\n\nx = torch.zeros(2, device="cuda")\ntorch.cuda.synchronize()\n'

FILES = {
    "pyproject.toml": PYPROJECT,
    # DL103 is reported; DL401 is not selected
    "pkg/model.py": HARDCODED,
    "pkg/__init__.py": "",
    # a platform module: CUDA on purpose (a name devlint does not already know as CUDA-only)
    "pkg/platforms/nv_platform.py": HARDCODED,
    "pkg/clean.py": "import torch\n\nx = torch.zeros(2)\n",
    "tests/test_model.py": "def test_it(t):\n    assert t.to(\"cuda\").sum() == 0\n",
    # someone else's code: excluded
    "external/kernels/launch.py": HARDCODED,
    "README.md": "sample\n",
}

EXPECTED = {("pkg/model.py", 3, "DL103"), ("tests/test_model.py", 2, "DL101")}
PYTHON_FILES = sorted(p for p in FILES if p.endswith(".py"))

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd, *args, check=True):
    env = dict(os.environ, **GIT_ENV)
    env["HOME"] = str(cwd)  # no user config leaks in
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=check, capture_output=True,
                          text=True)


def make_sample_project(root, files=FILES, init_git=True):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    if init_git:
        git(root, "init", "-q", "-b", "main")
    return root


def findings(rows):
    """{(relative path, row, code)} from json-format dicts."""
    return {(os.path.relpath(d["filename"]).replace(os.sep, "/") if os.path.isabs(d["filename"])
             else os.path.normpath(d["filename"]).replace(os.sep, "/"),
             d["location"]["row"], d["code"]) for d in rows}
