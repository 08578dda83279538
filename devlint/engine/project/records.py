"""What the workers record of each file while they read it (its project imports, its own
CUDA-only reason, the facts the stage will ask of a file with findings), so that the main
process does not parse it again."""
from __future__ import annotations

import os

import devlint.engine.project.callees as callees
from devlint.engine.project.index import Project
from devlint.engine.project.package import imports_of, package_of
from devlint.engine.project.stage import _KEEP
from devlint.engine.project.xguards import VALUED, valued_imports


def worker_facts(path: str, data: bytes) -> dict | None:
    """What the workers record of each file of a package while they read it: its project
    imports (one pass over its import lines), which the importers index needs of every file.
    The rest is read in the main process for the few modules that matter."""
    if package_of(path) is None:
        # a module of a namespace package (no `__init__.py` above it), which the stage still
        # reads through imports (`callees`): the facts of its tree, for this run only
        return {} if path.endswith(".py") and os.path.basename(path) != "__init__.py" \
            else None
    return {"imports": imports_of(path, data)}


def parsed_facts(path: str, text: str, tree) -> dict:
    """What the workers record of every file they parse, from the linter's tree: why its
    imports or runtime use make it CUDA-only, and its CUDA-requiring functions (the project
    stage would otherwise parse the modules an import chain leads to)."""
    pkg = package_of(path)
    # the module name only matters to an `__init__.py` (its re-exports), which is never a
    # module of a namespace package
    modname = pkg[1] if pkg is not None else ""
    from devlint.engine.project.gates import _text_reason  # (not on a warm run's path)

    return {"own-text": _text_reason(path, text, tree),
            callees._FACT: callees.module_facts(os.path.abspath(path), modname, text, tree)}


def linted_facts(path: str, text: str, tree, diags) -> dict:
    """What the stage will ask of a file with findings, from the tree the linter already
    parsed (so the main process does not parse it again): the same facts, computed by the
    same code."""
    path = os.path.abspath(path)
    pkg = package_of(path)
    if pkg is None:
        return {}
    modname = pkg[1]
    project = Project()
    project._text[path] = text
    project._tree[path] = tree
    facts = {"top": project._top_project_imports(path, modname),
             "scoped-calls": project._calls(path, modname, modname.split(".")[0]),
             "doubled": project._double_fallbacks(path, modname),
             VALUED: valued_imports(path, tree)}
    for name in {d.scope for d in diags if d.code not in _KEEP} - {None}:
        facts["own-uses:" + name] = project._own_uses(path, name)
    return facts
