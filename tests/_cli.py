"""Helpers shared by the tests that run `devlint` as a user does, over small packages written
to a temporary directory."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run(*args, cwd):
    """`python -m devlint ARGS` in `cwd`, with the user's output-format variable unset."""
    env = dict(os.environ)
    env.pop("DEVLINT_OUTPUT_FORMAT", None)
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd, env=env)


def write_package(root, files: dict, dedent: bool = False, namespace=()):
    """Write {relative path: text} under `root`, with an `__init__.py` in every directory
    between a file and `root` (so each is a package), except the directories named in
    `namespace` (relative, `/`-separated: namespace packages)."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        for d in [p.parent, *p.parent.parents]:
            if d == root:
                break
            if os.path.relpath(d, root).replace(os.sep, "/") not in namespace:
                (d / "__init__.py").touch()
        p.write_text(textwrap.dedent(text) if dedent else text)


def package_findings(root, target: str = "pkg", profile: str = "torch"):
    """Sorted (filename, row, code) of `devlint check --no-cache --profile PROFILE TARGET`
    in `root`, filenames `/`-separated."""
    import json

    r = run("check", "--output-format", "json", "--no-cache", "--profile", profile, target,
            cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                  for f in json.loads(r.stdout))
