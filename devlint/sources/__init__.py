"""Files that hold Python or shell code inside another format: Jupyter notebooks
(`notebook`), CI workflow YAML (`ci-yaml`: GitHub Actions, GitLab CI, Buildkite) and
Dockerfiles/Containerfiles (`dockerfile`).

Each kind turns its file into what the rules read (the Python of the code cells, the shell
scripts of `run:` / `script:` / `command:` / `RUN`), maps the findings back to the file, and
applies fixes to the file only where the result stays valid. Cheap to import: each kind's
module (and its parser: json, ruamel.yaml, the Dockerfile parser) loads only when a file of
that kind is linted.

Entry point for the runner: `lint_or_fix(kind, path, text, settings, mode, unsafe)`.
"""
from __future__ import annotations

import os

EMBEDDED_KINDS = ("notebook", "ci-yaml", "dockerfile")


def kind_of_name(path: str) -> str | None:
    """The embedded kind a path names, from its name and folder alone (no read)."""
    base = os.path.basename(path)
    low = base.lower()
    if low.endswith(".ipynb"):
        return "notebook"
    from devlint.sources.names import ci_yaml_name, dockerfile_name

    if dockerfile_name(base):
        return "dockerfile"
    if ci_yaml_name(path):
        return "ci-yaml"
    return None


def lint_or_fix(kind: str, path: str, text: str, settings, mode: str, unsafe: bool):
    """Lint (mode "check") or fix ("fix", "diff") one file of an embedded kind: an
    `embedded.Outcome`."""
    if kind == "notebook":
        from devlint.sources.notebook_run import run_notebook

        return run_notebook(path, text, settings, mode, unsafe)
    if kind == "ci-yaml":
        from devlint.sources.ci_yaml import run_ci_yaml

        return run_ci_yaml(path, text, settings, mode, unsafe)
    if kind == "dockerfile":
        from devlint.sources.dockerfile import run_dockerfile

        return run_dockerfile(path, text, settings, mode, unsafe)
    raise ValueError(f"unknown source kind {kind!r}")
