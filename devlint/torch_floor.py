"""The oldest torch a project declares it supports, read from its own packaging files.

With no `target-torch` configured, the fixes may use what the project's own torch floor has, the
way ruff reads `requires-python`. The floor is the lower bound of the nearest torch requirement
declared up from a file (stopping at a repository root):

1. the core requirements: `[project] dependencies`, Poetry's `[tool.poetry.dependencies]`,
   `setup.cfg`'s `install_requires`, and string literals naming torch in `setup.py` (read with
   `ast`, never executed);
2. else `requirements*.txt` (and `requirements/*.txt`) of that directory;
3. else the optional dependencies (`[project.optional-dependencies]`, `extras_require`).

Within the first of these that names torch, the lowest lower bound wins (the fixed code must run
on every torch the project admits). A declaration without a lower bound (`torch`, `torch<3`)
gives no floor: the default stays, and `--show-settings` says so. Configuration layer: reads
files, imports nothing of the engine.
"""
from __future__ import annotations

import ast
import configparser
import glob
import os
import re
from dataclasses import dataclass
from functools import lru_cache

# `torch`, optionally with extras, then its version specifiers up to a marker or the end
_REQUIREMENT = re.compile(
    r"""^\s*torch\s*(?:\[[^\]]*\])?\s*(?P<spec>(?:\(\s*)?(?:[<>=!~^]=?=?\s*[\w.*+!-]+\s*,?\s*)*\)?)
        \s*(?:;.*)?$""", re.X | re.I)
_CLAUSE = re.compile(r"(===|==|~=|>=|<=|!=|>|<|\^|~)?\s*([0-9][\w.*+!-]*)")
_PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")


@dataclass(frozen=True)
class TorchFloor:
    version: str | None  # "MAJOR.MINOR", or None when the declaration has no lower bound
    source: str  # where it was read, for --show-settings: "pyproject.toml [project] dependencies: torch>=2.8"


def lower_bound(requirement: str) -> tuple[bool, tuple[int, int] | None]:
    """(names torch, its lower bound as (major, minor) or None) for one requirement string."""
    m = _REQUIREMENT.match(requirement.strip())
    if not m:
        return False, None
    spec = m.group("spec").strip().strip("()")
    best = None
    for op, version in _CLAUSE.findall(spec):
        if op in ("<", "<=", "!="):
            continue
        if not op:  # Poetry's bare "2.8" means ==2.8
            op = "=="
        v = re.match(r"(\d+)(?:\.(\d+))?", version)
        if not v:
            continue
        bound = (int(v.group(1)), int(v.group(2) or 0))
        best = bound if best is None else max(best, bound)
    return True, best


def _poetry_spec(value) -> str | None:
    if isinstance(value, str):
        return "torch" + ("" if value.strip() == "*" else value if value[:1] in "<>=!~^" else f"=={value}")
    if isinstance(value, dict) and isinstance(value.get("version"), str):
        return _poetry_spec(value["version"])
    return None


def _toml(path: str) -> dict:
    """The file's table, or {} when it cannot be read: a broken pyproject.toml is not this
    module's to report (the config loader reports it where it holds [tool.devlint])."""
    from devlint.profiles import _load_toml_bytes

    try:
        with open(path, "rb") as f:
            return _load_toml_bytes(f.read())
    except (OSError, ValueError):
        return {}


def _lines(value) -> list[str]:
    if isinstance(value, str):
        return [ln for ln in value.splitlines() if ln.strip()]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _declarations(directory: str) -> tuple[list, list, list]:
    """(core, requirements files, optional): lists of (where, requirement string)."""
    core: list = []
    reqs: list = []
    optional: list = []
    pyproject = os.path.join(directory, "pyproject.toml")
    if os.path.isfile(pyproject):
        data = _toml(pyproject)
        project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
        for r in _lines(project.get("dependencies")):
            core.append(("pyproject.toml [project] dependencies", r))
        extras = project.get("optional-dependencies", {})
        if isinstance(extras, dict):
            for name, items in extras.items():
                for r in _lines(items):
                    optional.append((f"pyproject.toml [project.optional-dependencies] {name}", r))
        poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        deps = poetry.get("dependencies", {}) if isinstance(poetry, dict) else {}
        if isinstance(deps, dict) and "torch" in deps:
            spec = _poetry_spec(deps["torch"])
            if spec:
                core.append(("pyproject.toml [tool.poetry.dependencies]", spec))
    setup_cfg = os.path.join(directory, "setup.cfg")
    if os.path.isfile(setup_cfg):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(setup_cfg, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            parser = configparser.ConfigParser()
        if parser.has_option("options", "install_requires"):
            for r in _lines(parser.get("options", "install_requires")):
                core.append(("setup.cfg [options] install_requires", r))
        if parser.has_section("options.extras_require"):
            for name, value in parser.items("options.extras_require"):
                for r in _lines(value):
                    optional.append((f"setup.cfg [options.extras_require] {name}", r))
    setup_py = os.path.join(directory, "setup.py")
    if os.path.isfile(setup_py):
        core.extend(("setup.py", r) for r in _setup_py_requirements(setup_py))
    names = sorted(glob.glob(os.path.join(directory, "requirements*.txt"))
                   + glob.glob(os.path.join(directory, "requirements", "*.txt")))
    for name in names:
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                for line in f:
                    line = line.split("#", 1)[0].strip()
                    if line and not line.startswith("-"):
                        reqs.append((os.path.relpath(name, directory), line))
        except OSError:
            continue
    return core, reqs, optional


def _setup_py_requirements(path: str) -> list[str]:
    """String literals of setup.py that are torch requirements with a version (install_requires
    is often a list built in a variable; the file is parsed, never run). A bare `"torch"` there
    is as often a key of an extras table as a requirement, so it says nothing."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return []
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and len(n.value) < 200 and lower_bound(n.value)[1] is not None]


def floor_in(directory: str) -> TorchFloor | None:
    """The floor declared by the packaging files of `directory` itself, or None if they name
    no torch requirement."""
    for level in _declarations(directory):
        found = [(where, req, lower_bound(req)[1]) for where, req in level if lower_bound(req)[0]]
        if not found:
            continue
        if any(bound is None for _, _, bound in found):
            where, req, _ = next(f for f in found if f[2] is None)
            return TorchFloor(None, f"{where}: {req.strip()} (no lower bound)")
        where, req, bound = min(found, key=lambda f: f[2])
        return TorchFloor(f"{bound[0]}.{bound[1]}", f"{where}: {req.strip()}")
    return None


@lru_cache(maxsize=None)
def project_floor(directory: str) -> TorchFloor | None:
    """The nearest declared torch floor from `directory` up, stopping at a repository root."""
    d = os.path.abspath(directory)
    found = floor_in(d) if _has_declarations(d) else None
    if found is not None:
        return TorchFloor(found.version, f"{os.path.join(d, '')}{found.source}")
    if os.path.exists(os.path.join(d, ".git")):
        return None
    parent = os.path.dirname(d)
    return None if parent == d else project_floor(parent)


def _has_declarations(d: str) -> bool:
    # one directory listing instead of a stat per packaging file and a glob (this runs once
    # per folder of the linted tree: it was 15-20 % of a warm run)
    try:
        names = os.listdir(d)
    except OSError:
        return False
    for n in names:
        if n in _PROJECT_FILES:
            if os.path.isfile(os.path.join(d, n)):
                return True
        elif n == "requirements":
            if os.path.isdir(os.path.join(d, n)):
                return True
        elif n.startswith("requirements") and n.endswith(".txt"):
            return True
    return False
