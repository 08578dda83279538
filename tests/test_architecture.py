"""The package's architecture (docs/architecture.md): one-way layers, no import cycles, no
module over ~500 lines without a stated reason.

Every module of devlint/ is parsed with `ast`; every import counts, also those inside
functions (devlint imports lazily to start fast) and under `if TYPE_CHECKING:`.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "devlint"

# Bottom to top: a module may import its own layer and the layers below it, never above.
# A module belongs to the layer of its longest matching prefix.
LAYERS = (
    ("base", ("devlint._version", "devlint.errors", "devlint.source", "devlint.diagnostics")),
    ("configuration", ("devlint.settings", "devlint.profiles", "devlint.torch_floor",
                       "devlint.line_length")),
    ("evidence", ("devlint.evidence",)),
    ("analysis", ("devlint.analysis",)),
    ("rules", ("devlint.rules", "devlint.shell")),
    ("engine", ("devlint.engine", "devlint.discovery", "devlint.sources")),
    ("reporters", ("devlint.reporters",)),
    ("api", ("devlint.api", "devlint.config")),
    ("cli", ("devlint.cli", "devlint.__main__", "devlint")),
)
# The runtime verifier stands beside the linter: it imports only itself and the base layer,
# and only the CLI imports it.
VERIFIER = "devlint.verify"
VERIFIER_MAY_IMPORT = ("base",)
VERIFIER_IMPORTED_BY = ("cli",)

MAX_LINES = 500
SIZE_REASON = "Size:"


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict:
    """{dotted name: path} of every module of the package."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if "__pycache__" not in p.parts}


def _target(name: str, modules) -> str | None:
    """The module an import of `name` loads last: the longest prefix that is a module."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in modules:
            return candidate
    return None


def imports_of(name: str, path: Path, modules) -> list:
    """[(imported module, line)] of every devlint import in a module, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _target(alias.name, modules)
                if target:
                    out.append((target, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                keep = len(base) - node.level + (1 if is_package else 0)
                module = ".".join(base[:keep] + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                # `from devlint.x import y`: y may be a submodule
                target = _target(f"{module}.{alias.name}", modules) if alias.name != "*" \
                    else None
                if target is None or target == module and f"{module}.{alias.name}" not in \
                        modules:
                    target = _target(module, modules)
                if target:
                    out.append((target, node.lineno))
    return [(t, line) for t, line in out if t != name]


def layer_of(module: str) -> str:
    if module == VERIFIER or module.startswith(VERIFIER + "."):
        return "verifier"
    best, best_len = None, -1
    for layer, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = layer, len(prefix)
    assert best is not None, f"{module} belongs to no layer: add it to LAYERS"
    return best


RANK = {layer: i for i, (layer, _) in enumerate(LAYERS)}


def graph() -> dict:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def violations(edges: dict) -> list:
    """Imports that run against the layer order, as readable lines."""
    out = []
    for module, imports in edges.items():
        mine = layer_of(module)
        for target, line in imports:
            theirs = layer_of(target)
            if mine == "verifier":
                ok = theirs == "verifier" or theirs in VERIFIER_MAY_IMPORT
            elif theirs == "verifier":
                ok = mine in VERIFIER_IMPORTED_BY
            else:
                ok = RANK[theirs] <= RANK[mine]
            if not ok:
                out.append(f"{module} ({mine}) imports {target} ({theirs}) at line {line}")
    return out


def cycles(edges: dict) -> list:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]
    adjacency = {m: sorted({t for t, _ in imps}) for m, imps in edges.items()}

    def strongconnect(root):
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter[0]
                counter[0] += 1
                stack.append(node)
                on_stack.add(node)
            succ = adjacency.get(node, [])
            if i < len(succ):
                work.append((node, i + 1))
                nxt = succ[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])

    for module in sorted(adjacency):
        if module not in index:
            strongconnect(module)
    return found


def test_every_module_has_a_layer():
    for module in all_modules():
        layer_of(module)


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_imports_follow_the_layer_order():
    assert violations(graph()) == []


def test_big_modules_state_why():
    too_big = []
    for module, path in all_modules().items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_LINES:
            doc = ast.get_docstring(ast.parse(text)) or ""
            if SIZE_REASON not in doc:
                too_big.append(f"{module}: {text.count(chr(10))} lines, no '{SIZE_REASON}' "
                               f"line in its docstring")
    assert too_big == []


# --- the checker itself -------------------------------------------------------------------

def test_checker_sees_lazy_and_relative_imports(tmp_path):
    modules = {"devlint.a": None, "devlint.b": None, "devlint.b.c": None}
    src = tmp_path / "a.py"
    src.write_text("def f():\n    from devlint.b import c\n    from . import b\n"
                   "import devlint.b.c as x\n")
    found = sorted(imports_of("devlint.a", src, modules))
    assert found == [("devlint.b", 3), ("devlint.b.c", 2), ("devlint.b.c", 4)]


def test_checker_finds_a_cycle_and_an_upward_import():
    edges = {"devlint.settings": [("devlint.engine.x", 3)],
             "devlint.engine.x": [("devlint.settings", 1)]}
    assert cycles(edges) == [["devlint.engine.x", "devlint.settings"]]
    assert violations(edges) == [
        "devlint.settings (configuration) imports devlint.engine.x (engine) at line 3"]


@pytest.mark.parametrize("importer, imported, ok", [
    ("devlint.verify.cli", "devlint.engine.runner", False),
    ("devlint.engine.runner", "devlint.verify", False),
    ("devlint.cli", "devlint.verify.cli", True),
    ("devlint.verify.report", "devlint._version", True),
])
def test_the_verifier_stands_beside_the_linter(importer, imported, ok):
    assert (violations({importer: [(imported, 1)]}) == []) is ok
