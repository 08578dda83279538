"""Skip gates that read a capability or GPU-library flag imported from another project module
(`devlint.evidence.imported_flag`): `@skipIf(SKIP_REASON is not None)` with `SKIP_REASON =
imported_reason_helper(...)`, `@skipif(not IMPORTED_FLAG)`, `@skipif(not local_helper())`
whose helper returns a name it imports from a project module.

Per file with findings: a text check first (a skip mark and a `from ... import`), then the
parse, the imported names the file's skip marks read, each resolved to its definition and
judged in its module (`_judged`, stored per defining module in the fact store), then the
file's own names re-read with those known (`capability.module_names(tree, seed)`). A
`pytestmark` covers the tests' bodies and the helpers only they name (`_test_bodies`), not
what runs at collection. The answer per package is stored beside the stage's own
(`xgates.per_package`)."""
from __future__ import annotations

import ast
import os
import re

from devlint.engine.project.package import absolute, package_of
from devlint.engine.project.xgates import (_locate, _stat, findings_in_spans, imported_names,
                                            per_package)
from devlint.evidence import Reason
from devlint.evidence.imported_flag import flag_reason

_NEVER = frozenset({"DL900", "DL902", "DL999", "DL000"})
_SKIP_TEXT = re.compile(r"skip(?:if|If|Unless)\(")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SKIPS = frozenset({"skipif", "skipIf", "skipUnless"})
_MAX_HOPS = 3


def flag_gated_findings(project, results, key_of) -> dict:
    """{absolute path: {(start, code): Reason}} of the findings under a gate that reads an
    imported capability or GPU-library flag."""
    return per_package(project, results, key_of, _NEVER, "xflags", "gated", _file_gated)


def _called(call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _mark_names(tree) -> set:
    """The plain names read by the module's skip marks (decorators, `pytestmark`, marks
    bound at module level)."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and _called(n) in _SKIPS and n.args:
            for x in ast.walk(n.args[0]):
                if isinstance(x, ast.Name):
                    out.add(x.id)
    return out


def _module_skip_names(tree) -> set:
    """The plain names read by the tests of module-level skips (`if r := reason(...):
    pytest.skip(r, allow_module_level=True)`)."""
    from devlint.evidence.capability import _skips_module

    out = set()
    for st in tree.body:
        if isinstance(st, ast.If) and st.body and _skips_module(st.body[-1]):
            out.update(x.id for x in ast.walk(st.test) if isinstance(x, ast.Name))
    return out


def _returned_import(fn, modname: str, is_package: bool):
    """(module, name) of a helper whose body only imports a name and returns it (`def
    is_x_available(): from pkg.m import HAVE_X; return HAVE_X`), else None."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr)
                                       and isinstance(s.value, ast.Constant))]
    if len(body) < 2 or not isinstance(body[-1], ast.Return) \
            or not isinstance(body[-1].value, ast.Name):
        return None
    got = {}
    for st in body[:-1]:
        if not isinstance(st, ast.ImportFrom):
            return None
        mod = absolute(st.module, st.level, modname, is_package)
        for a in st.names:
            if mod:
                got[a.asname or a.name] = (mod, a.name)
    return got.get(body[-1].value.id)


def _file_gated(project, path: str, res, deps: dict) -> dict:
    text = project.text(path)
    if not text or not (_SKIP_TEXT.search(text) or "allow_module_level" in text) \
            or "import" not in text:
        return {}
    tree = project.tree(path)
    if tree is None:
        return {}
    root, modname = package_of(path)
    is_pkg = os.path.basename(path) == "__init__.py"
    imported = imported_names(tree, modname, is_pkg)
    read = _mark_names(tree) | _module_skip_names(tree)
    # the module's helpers that return an imported name, and the names they are called by
    helpers = {}
    for st in tree.body:
        if isinstance(st, _FUNCS) and st.name in read:
            got = _returned_import(st, modname, is_pkg)
            if got:
                helpers[st.name] = got
    # module-level assignments from an imported call (`R = imported_reason_helper(...)`)
    for st in tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) \
                and isinstance(st.value.func, ast.Name) and any(
                    isinstance(t, ast.Name) and t.id in read for t in st.targets):
            read.add(st.value.func.id)
    from devlint.evidence.capability import (ModuleNames, module_gate, module_names,
                                             requiring_mark)

    seed = ModuleNames()
    known: dict = {}  # local name -> Reason
    for local in sorted(read):
        if local in helpers:
            mod, name = helpers[local]
            kind = "helper"
        elif local in imported:
            mod, name = imported[local]
            kind = None
        else:
            continue
        verdict, _ = definition_of(project, root, mod, name, deps=deps)
        if not verdict and "." not in mod:  # a sibling module (`from _test_utils import f`)
            verdict, _ = definition_of(project, os.path.dirname(path), mod, name, deps=deps)
        if not verdict:
            continue
        what, why = verdict
        known[local] = flag_reason(local, mod, why)
        if kind == "helper":
            if what in ("flag", "helper"):
                seed.helpers.add(local)  # `def is_x(): from m import FLAG; return FLAG`
        elif what == "flag":
            seed.flags.add(local)
        elif what == "helper":
            seed.helpers.add(local)
        elif what == "reason_func":
            seed.reason_funcs.add(local)
        elif what == "reason":
            seed.reasons.add(local)
    if not known:
        return {}
    names = module_names(tree, seed)

    def gate_of(decorators):
        for d in decorators:
            mark = names.marks.get(d.id) if isinstance(d, ast.Name) else d
            if mark is None or not requiring_mark(mark, names):
                continue
            for x in ast.walk(mark):
                if isinstance(x, ast.Name) and x.id in known:
                    return known[x.id]
            for x in ast.walk(mark):  # through a local name bound to the mark or the reason
                if isinstance(x, ast.Name):
                    for st in tree.body:
                        if isinstance(st, ast.Assign) and any(
                                isinstance(t, ast.Name) and t.id == x.id for t in st.targets):
                            for y in ast.walk(st.value):
                                if isinstance(y, ast.Name) and y.id in known:
                                    return known[y.id]
        return None

    spans = []  # (first row of the gated statement with its decorators, last row, Reason)

    def visit(body):
        for st in body:
            if isinstance(st, (*_FUNCS, ast.ClassDef)) and st.body:
                why = gate_of(st.decorator_list)
                first = min([st.lineno] + [d.lineno for d in st.decorator_list])
                if why:
                    spans.append((first, st.end_lineno or st.body[-1].lineno, why))
                elif isinstance(st, ast.ClassDef):
                    visit(st.body)

    visit(tree.body)
    gate = module_gate(tree, names)
    if isinstance(gate, ast.If):  # `if r := imported_reason(): pytest.skip(allow_module_level)`
        why = next((known[x.id] for x in ast.walk(gate.test)
                    if isinstance(x, ast.Name) and x.id in known), None)
        if why is not None:
            last = max((st.end_lineno or st.lineno) for st in tree.body)
            spans.append((gate.end_lineno + 1, last, why))
    for st in tree.body:
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                              for t in st.targets):
            marks = st.value.elts if isinstance(st.value, (ast.List, ast.Tuple)) else [st.value]
            why = gate_of(marks)
            if why:
                spans.extend((*span, why) for span in _test_bodies(tree))
    return findings_in_spans(res, spans, _NEVER)


def _body(node) -> tuple:
    return node.body[0].lineno, node.end_lineno or node.body[-1].lineno


def _test_bodies(tree) -> list:
    """[(first row, last row)] of what a module's `pytestmark` skips: the bodies of its tests
    (`test*` functions, the methods of `Test*` classes) and of the functions and classes only
    they name, directly or through such helpers; not what runs at collection even when every
    test is skipped (module-level code, decorators, defaults, class bodies, and a helper that
    code or another unskipped helper names)."""
    units = {st.name: st for st in tree.body if isinstance(st, (*_FUNCS, ast.ClassDef))
             and st.body}
    # unit name -> the names of the units whose code (method or function bodies) names it;
    # "" for code that runs at import
    named_by: dict = {}

    def note(node, where: str):
        for x in ast.walk(node):
            if isinstance(x, ast.Name) and x.id in units and x.id != where:
                named_by.setdefault(x.id, set()).add(where)

    def import_time(node, where: str):
        """The parts of a def or class that run at import; its function bodies run later."""
        if isinstance(node, _FUNCS):
            for part in (*node.decorator_list, node.args, node.returns):
                if part is not None:
                    note(part, "")
            for st in node.body:
                note(st, where)
        elif isinstance(node, ast.ClassDef):
            for part in (*node.decorator_list, *node.bases, *node.keywords):
                note(part, "")
            for st in node.body:
                if isinstance(st, (*_FUNCS, ast.ClassDef)):
                    import_time(st, where)
                else:
                    note(st, "")
        else:
            note(node, "")

    for st in tree.body:
        import_time(st, getattr(st, "name", ""))
    covered = {n for n, u in units.items() if n.startswith("test") and isinstance(u, _FUNCS)
               or n.startswith("Test") and isinstance(u, ast.ClassDef)}
    grew = True
    while grew:
        grew = False
        for n in units:
            if n not in covered and named_by.get(n) and named_by[n] <= covered:
                covered.add(n)
                grew = True
    spans = []

    def methods(cls):
        for m in cls.body:
            if isinstance(m, _FUNCS) and m.body:
                spans.append(_body(m))
            elif isinstance(m, ast.ClassDef):
                methods(m)

    for n in sorted(covered):
        u = units[n]
        if isinstance(u, _FUNCS):
            spans.append(_body(u))
        else:
            methods(u)
    return spans


# --- the definition of a name, judged in its own module ---------------------------------

def definition_of(project, root: str, mod: str, name: str, hops: int = 0, deps=None):
    """((kind, Reason) for which `name` of module `mod` requires a compute capability or a
    library of GPU kernels, or None; the file that decided it, or None). `deps` gets the stat
    of every module read on the way, each re-exporting module of a chain too."""
    path = _locate(project, root, mod)
    if path is None:
        return None, None
    if deps is not None:
        deps[path] = _stat(path)
    stored = project.fact(path, "flag:" + name, lambda: _judged(project, path, name))
    if isinstance(stored, list) and len(stored) == 2 and stored[0] == "export":
        if hops >= _MAX_HOPS:
            return None, path
        pkg = package_of(path)
        m, n = stored[1]
        return definition_of(project, pkg[0] if pkg else root, m, n, hops + 1, deps)
    if isinstance(stored, list) and len(stored) == 2:
        return (stored[0], Reason.from_dict(stored[1])), path
    return None, path


def _line_of(tree, name: str) -> int | None:
    for st in tree.body:
        if isinstance(st, (*_FUNCS, ast.ClassDef)) and st.name == name:
            return st.lineno
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return st.lineno
    return None


def _judged(project, path: str, name: str):
    """The stored verdict: [kind, Reason dict], ["export", [module, name]], or None."""
    tree = project.tree(path)
    if tree is None:
        return None
    from devlint.evidence.capability import module_names
    from devlint.evidence.library_gate import library_flags

    names = module_names(tree)
    lib = library_flags(tree)
    line = _line_of(tree, name)
    if name in lib:
        text, line = lib[name]
        return ["flag", Reason("imported-flag", text, path, line).to_dict()]
    for kind, held, what in (("flag", names.flags, "true only past a compute-capability test"),
                             ("helper", names.helpers,
                              "returns true only past a compute-capability test"),
                             ("reason_func", names.reason_funcs,
                              "returns a skip reason unless a compute capability is met"),
                             ("reason", names.reasons,
                              "a skip reason unless a compute capability is met")):
        if name in held and line is not None:
            return [kind, Reason("imported-flag", f"`{name}` {what}", path, line).to_dict()]
    if line is None:
        pkg = package_of(path)
        if pkg is not None:
            found = imported_names(tree, pkg[1], os.path.basename(path) == "__init__.py")
            if name in found:
                return ["export", list(found[name])]
    return None
