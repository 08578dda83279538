"""Gates that live in another module (`devlint.evidence.imported_gate`): the findings in the
bodies of tests gated by a skip mark or gate helper imported from a project module, where
that definition requires CUDA by the predicate an in-file gate is judged by.

Per file with findings: a text check first (a bare `@name` decorator line or a
`pytestmark`), then the parse, the file's `from M import name` statements, and each gate name
resolved to its definition (`gate_of`, stored per defining module in the fact store, keyed by
its stat). The answer per package is stored beside the stage's own, keyed by the package's
files, the defining modules' stats and the findings' places."""
from __future__ import annotations

import ast
import json
import os
import re

from devlint.engine.project.package import absolute, package_of
from devlint.evidence import Reason
from devlint.evidence.imported_gate import gate_reason, twin_gate_reason

# findings an in-file gate leaves: the skip gates themselves (DL203 ignores guards) and the
# findings about the file itself
_NOT_GATED = frozenset({"DL203", "DL900", "DL902", "DL999", "DL000"})
_DECORATOR = re.compile(r"^[ \t]*@([A-Za-z_]\w*)[ \t]*(?:#.*)?$", re.M)
_MARK = re.compile(r"^pytestmark\s*=", re.M)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SKIPS = frozenset({"skipif", "skipIf", "skipUnless", "skip_if", "skip_unless"})
_MAX_HOPS = 3  # re-exports followed (`from .testing import require_cuda` in an `__init__`)


def gated_findings(project, results, key_of) -> dict:
    """{absolute path: {(start, code): Reason}} of the findings in bodies that an imported
    CUDA gate covers. key_of(root, top) -> (hash, fresh): the package key of the stage."""
    return per_package(project, results, key_of, _NOT_GATED, "xgates", "gated", _file_gated)


def per_package(project, results, key_of, never, suffix: str, field: str, file_answer) -> dict:
    """{absolute path: {(start, code): Reason}}: `file_answer(project, path, result, deps)`
    for each Python file with a finding whose code is not in `never`, grouped by package; the
    answer per package is stored in the stage's memo directory (`<memo>.<suffix>.json`, under
    `field`), keyed by the package key, the findings' places and the stats of the modules the
    answers read (`deps`: path -> stat)."""
    packages: dict = {}
    for res in results:
        if res.diagnostics and res.path.endswith(".py") and any(
                d.code not in never for d in res.diagnostics):
            pkg = package_of(res.path)
            if pkg is not None:
                packages.setdefault((pkg[0], pkg[1].split(".")[0]), []).append(res)
    out = {}
    seen: dict = {}  # path -> stat, this call's: packages below one namespace share deps
    for (root, top), found in packages.items():
        h, fresh = key_of(root, top)
        h.update(json.dumps([[r.path, sorted((d.start, d.code) for d in r.diagnostics)]
                             for r in found]).encode("utf-8", "surrogateescape"))
        memo = project.memo_file(root, top)
        memo = memo and memo[:-len(".exempt.json")] + f".{suffix}.json"
        stored = _read(memo) if memo and fresh else None
        if isinstance(stored, dict) and stored.get("key") == h.hexdigest() \
                and isinstance(stored.get(field), dict) \
                and _deps_unchanged(stored.get("deps", []), seen):
            for path, places in stored[field].items():
                out[path] = {(start, code): Reason.from_dict(r) for start, code, r in places}
            continue
        deps: dict = {}
        answer = {}
        for res in found:
            path = os.path.abspath(res.path)
            places = file_answer(project, path, res, deps)
            if places:
                answer[path] = places
        if memo and fresh:
            from devlint.engine.project.store import _write_json

            _write_json(memo, {"key": h.hexdigest(), "deps": sorted(deps.items()), field: {
                p: [[s, c, r.to_dict()] for (s, c), r in g.items()]
                for p, g in answer.items()}})
        out.update(answer)
    return out


def _read(memo):
    from devlint.engine.project.store import _read_json

    return _read_json(memo)


def _stat(path: str) -> list | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _deps_unchanged(deps, seen=None) -> bool:
    """The defining modules (often in another top-level package) are as they were; `seen`
    holds the stats already taken in this pass."""
    if seen is None:
        return all(_stat(p) == st for p, st in deps)
    for p, st in deps:
        now = seen[p] if p in seen else seen.setdefault(p, _stat(p))
        if now != st:
            return False
    return True


def _file_gated(project, path: str, res, deps: dict) -> dict:
    text = project.text(path)
    if not text:
        return {}
    names = set(_DECORATOR.findall(text))
    if not names and not _MARK.search(text):
        return {}
    if not any(text.count(n) > 1 for n in names) and not _MARK.search(text):
        return {}  # a decorator name that is never imported
    tree = project.tree(path)
    if tree is None:
        return {}
    root, modname = package_of(path)
    imported = imported_names(tree, modname, os.path.basename(path) == "__init__.py")
    memo: dict = {}

    def gate(local):
        if local not in imported:
            return None
        if local not in memo:
            mod, name = imported[local]
            why, _ = gate_of(project, root, mod, name, deps=deps)
            memo[local] = why and gate_reason(local, mod, why)
        return memo[local]

    return findings_in_spans(res, gated_spans(tree, gate), _NOT_GATED)


def findings_in_spans(res, spans, never) -> dict:
    """{(start, code): why} of the findings of `res` (not of a code in `never`) whose row lies
    in one of `spans` ((first, last, why) rows), the first span that holds it deciding."""
    out = {}
    if not spans:
        return out
    for d in res.diagnostics:
        if d.code in never:
            continue
        row = d.location[0]
        for first, last, why in spans:
            if first <= row <= last:
                out[(d.start, d.code)] = why
                break
    return out


def imported_names(tree, modname: str, is_package: bool) -> dict:
    """{local: (module, name)} of the module-level `from M import name [as local]` (also
    inside a top-level `try`/`if`)."""
    out = {}
    stack = list(tree.body)
    while stack:
        st = stack.pop()
        if isinstance(st, ast.ImportFrom):
            mod = absolute(st.module, st.level, modname, is_package)
            if mod:
                for a in st.names:
                    if a.name != "*":
                        out.setdefault(a.asname or a.name, (mod, a.name))
        elif isinstance(st, (ast.If, ast.Try)):
            stack.extend(st.body)
            stack.extend(st.orelse)
            stack.extend(getattr(st, "finalbody", ()))
            for h in getattr(st, "handlers", ()):
                stack.extend(h.body)
    return out


def _first_row(stmt) -> int:
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])


def _body_span(node):
    return _first_row(node.body[0]), node.end_lineno or node.body[-1].lineno


def gated_spans(tree, gate) -> list:
    """[(first row, last row, Reason)] of the bodies the imported gates cover, as an in-file
    gate covers them (`devlint.analysis.descent`): a decorated test's body, a decorated
    class's whole body, a decorated method's body; a `pytestmark` covers the bodies of the
    module's functions (but those it calls at import) and of its classes' methods.
    gate(local) -> the Reason of an imported gate, or None."""
    from devlint.evidence.capability import called_at_import

    spans = []

    def decorated(node):
        for d in node.decorator_list:
            if isinstance(d, ast.Name):
                why = gate(d.id)
                if why:
                    return why
        return None

    def visit(body):
        for st in body:
            if isinstance(st, (*_FUNCS, ast.ClassDef)) and st.body:
                why = decorated(st)
                if why:
                    spans.append((*_body_span(st), why))
                elif isinstance(st, ast.ClassDef):
                    visit(st.body)

    visit(tree.body)
    marked = None
    for st in tree.body:
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                              for t in st.targets):
            marks = st.value.elts if isinstance(st.value, (ast.List, ast.Tuple)) else [st.value]
            marked = next((w for w in (gate(m.id) for m in marks if isinstance(m, ast.Name))
                           if w), None) or marked
    if marked:
        at_import = called_at_import(tree)

        def methods(cls):
            for m in cls.body:
                if isinstance(m, _FUNCS) and m.body:
                    spans.append((*_body_span(m), marked))
                elif isinstance(m, ast.ClassDef):
                    methods(m)

        for st in tree.body:
            if isinstance(st, _FUNCS) and st.body and st.name not in at_import:
                spans.append((*_body_span(st), marked))
            elif isinstance(st, ast.ClassDef):
                methods(st)
    return spans


# --- the definition of a gate, judged in its own module ---------------------------------

def _locate(project, root: str, mod: str) -> str | None:
    """The file of project module `mod`: under the package's root, or a `src/` layout
    beside it (`tests/` importing `pkg.testing_utils` from `src/pkg`)."""
    for base in (root, os.path.join(root, "src")):
        found = project.resolve(base, mod)
        if found:
            return os.path.abspath(found)
    return None


def gate_of(project, root: str, mod: str, name: str, hops: int = 0, deps=None):
    """(the Reason for which `name` of module `mod` is a gate that requires CUDA, or None;
    the file that decided it, or None where `mod` is no project module). `deps` gets the stat
    of every module read on the way, each re-exporting module of a chain too."""
    path = _locate(project, root, mod)
    if path is None:
        return None, None
    if deps is not None:
        deps[path] = _stat(path)
    stored = project.fact(path, "gate:" + name, lambda: _judged(project, path, name))
    if isinstance(stored, list):  # a re-export: [module, name] to follow
        if hops >= _MAX_HOPS:
            return None, path
        pkg = package_of(path)
        return gate_of(project, pkg[0] if pkg else root, stored[0], stored[1], hops + 1,
                       deps)
    return (Reason.from_dict(stored) if stored else None), path


def _judged(project, path: str, name: str):
    """The stored verdict: a Reason's dict, None, or [module, name] of a re-export."""
    tree = project.tree(path)
    if tree is None:
        return None
    defn = None
    for st in tree.body:
        if isinstance(st, _FUNCS) and st.name == name:
            defn = st
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 \
                and isinstance(st.targets[0], ast.Name) and st.targets[0].id == name:
            defn = st
    if defn is None:
        pkg = package_of(path)
        if pkg is not None:
            found = imported_names(tree, pkg[1], os.path.basename(path) == "__init__.py")
            if name in found:
                return list(found[name])
        return None
    why = judge(path, project.text(path) or "", tree, defn)
    return why.to_dict() if why else None


def _skip_call(node):
    """The skip mark a gate definition makes: `name = pytest.mark.skipif(...)`, or the
    `return unittest.skipUnless(...)(test)` of a helper."""
    if isinstance(node, ast.Assign):
        v = node.value
        return v if isinstance(v, ast.Call) and _called(v) in _SKIPS and v.args else None
    body = [s for s in node.body if not (isinstance(s, ast.Expr)
                                         and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    v = body[0].value
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Call) and _called(v.func) in _SKIPS \
            and v.func.args and len(v.args) == 1 and isinstance(v.args[0], ast.Name) \
            and node.args.args and v.args[0].id == node.args.args[0].arg:
        return v.func
    return None


def _called(call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def judge(path: str, text: str, tree, defn):
    """The Reason for which the gate `defn` (an assignment or a helper function) requires
    CUDA, judged as an in-file gate: the Descent's own predicate (`_gate_among`) over the
    module's names, or a device-name test of a helper with a generic twin next to it."""
    from devlint.analysis.descent import Descent
    from devlint.analysis.model import FileFacts, collect_imports
    from devlint.evidence.cuda_twin import defined_functions, twin_names
    from devlint.settings import Settings

    mark = _skip_call(defn)
    if mark is None:
        return None
    aliases: dict = {}
    collect_imports(tree.body, aliases)
    facts = FileFacts(path, text, "torch", Settings(), None, tree, aliases)
    desc = Descent(facts, [])
    desc._query_aliases(tree.body)
    desc._cuda_helpers(tree.body)
    desc._bound_marks(tree.body)
    gated = ast.Name(id=defn.targets[0].id) if isinstance(defn, ast.Assign) else mark
    why = desc._gate_among([gated])
    if why is not None:
        return why
    if isinstance(defn, ast.Assign):
        return None
    on_true, on_false, tensor = desc._sides(mark.args[0])
    if tensor is not None or not (on_false if _called(mark) in ("skipif", "skipIf", "skip_if")
                                  else on_true):
        return None
    siblings = defined_functions(tree.body)
    twin = next((t for t in twin_names(defn.name) if t in siblings), None)
    if twin is None:
        return None
    return twin_gate_reason(defn.name, twin, path, mark.lineno)
