"""Which file names are Dockerfiles and CI workflow files (no parser here: cheap to import)."""
from __future__ import annotations

import os
import re

# Dockerfile, Containerfile, Dockerfile.cuda, Dockerfile-dev, cuda.Dockerfile, x.dockerfile
_DOCKERFILE = re.compile(r"(?i)(?:docker|container)file(?:[.-][\w.-]+)?|[\w.-]+\.(?:docker|container)file")
# a name like Dockerfile.yml or Dockerfile.sh is that other kind of file
_NOT_DOCKERFILE = (".py", ".sh", ".bash", ".md", ".rst", ".txt", ".json", ".yml", ".yaml",
                   ".toml", ".dockerignore", ".j2", ".jinja", ".tpl", ".template", ".in",
                   ".bak", ".orig", ".swp")


def dockerfile_name(base: str) -> bool:
    return _DOCKERFILE.fullmatch(base) is not None and not base.lower().endswith(_NOT_DOCKERFILE)


def ci_yaml_name(path: str) -> str | None:
    """"github" (a workflow under .github/workflows/, or a composite action's action.yml),
    "gitlab" (.gitlab-ci.yml, or YAML under a .gitlab/ folder), "buildkite" (YAML under a
    .buildkite/ folder), else None."""
    norm = path.replace(os.sep, "/")
    parts = norm.lower().split("/")
    base = parts[-1]
    if not base.endswith((".yml", ".yaml")):
        return None
    if len(parts) >= 3 and parts[-3] == ".github" and parts[-2] == "workflows":
        return "github"
    if base in ("action.yml", "action.yaml"):
        return "github"
    if base in (".gitlab-ci.yml", ".gitlab-ci.yaml") or ".gitlab" in parts[:-1]:
        return "gitlab"
    if ".buildkite" in parts[:-1]:
        return "buildkite"
    return None
