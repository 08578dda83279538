"""Per-platform dispatch arms whose generic twin lives in a base class of another module
(`devlint.evidence.cuda_twin`): `forward_cuda` of a class derived from a project class that
defines `forward_native` / `forward_xpu` ... is the CUDA arm of that dispatch, and a private
method the file calls only as `self._m(...)` from such arms (or from methods so established)
runs only there.

Per file with findings: a text check first (a `def <name>_cuda` / `def cuda_<name>` line),
then the parse, the class's bases resolved through the file's `from M import Base` into the
project's modules (re-exports and the base's own bases followed a few hops), each base's
method names read once per defining module (kept in the stage's store, keyed by its stat)."""
from __future__ import annotations

import ast
import os
import re

from devlint.engine.project.callees import _root_of
from devlint.engine.project.package import package_of
from devlint.engine.project.xgates import _locate, _stat, imported_names, per_package
from devlint.evidence import Reason
from devlint.evidence.cuda_twin import twin_names

_NOT_EXEMPT = frozenset({"DL900", "DL902", "DL999", "DL000"})
_ARM = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+\w*(?:_cuda|cuda_)\w*[ \t]*\(", re.M)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MAX_HOPS = 4  # base classes and re-exports followed, in all
_ROOTS: dict = {}  # (directory, top-level package) -> the directory above holding it


def twin_arm_findings(project, results, key_of=None) -> dict:
    """{absolute path: {(start, code): Reason}} of the findings in CUDA arms whose generic
    twin a base class of another module (or of the file) defines, and in the private methods
    called only from them. key_of(root, top) -> (hash, fresh): the stage's package key; with
    it, a package's answer is stored (`xgates.per_package`: keyed by the package's files, the
    findings' places and the stat of every module a base class was read from), so a warm
    re-run parses nothing; a namespace package's modules are answered every run."""
    out = {}
    if key_of is not None:
        out = per_package(project, results, key_of, _NOT_EXEMPT, "xtwins", "twins",
                          _file_twins)
    for res in results:
        if not res.diagnostics or not res.path.endswith(".py") or (
                key_of is not None and package_of(res.path) is not None):
            continue  # nothing to answer, or answered (or read back) per package above
        found = _file_twins(project, os.path.abspath(res.path), res, {})
        if found:
            out[os.path.abspath(res.path)] = found
    return out


def _file_twins(project, path: str, res, deps: dict) -> dict:
    """{(start, code): Reason} of one file's findings in CUDA arms; `deps` gets the stat of
    each module a base class was read from."""
    diags = [d for d in res.diagnostics if d.code not in _NOT_EXEMPT]
    if not diags or not res.path.endswith(".py"):
        return {}
    text = project.text(path)
    if not text or not _ARM.search(text):
        return {}
    tree = project.tree(path)
    pkg = package_of(path) or _namespace_module(path, tree)
    if pkg is None or tree is None:
        return {}
    spans = _cuda_spans(project, path, pkg, tree, deps)
    found = {}
    for d in diags:
        row = d.location[0]
        for first, last, why in spans:
            if first <= row <= last:
                found[(d.start, d.code)] = why
                break
    return found


def _namespace_module(path, tree):
    """(root, dotted module) of a file in a namespace package (no `__init__.py` around it):
    the module named by its path below the directory that holds the top-level package of one
    of its absolute imports (`pkg/srt/layers/x.py` importing `pkg.srt...`), or None."""
    if tree is None:
        return None
    for st in tree.body:
        if isinstance(st, ast.ImportFrom) and st.level == 0 and st.module:
            root = _root_of(os.path.dirname(path), st.module.split(".")[0], _ROOTS)
            if root and path.startswith(os.path.join(root, st.module.split(".")[0]) + os.sep):
                rel = os.path.splitext(os.path.relpath(path, root))[0]
                return root, ".".join(rel.split(os.sep))
    return None


def _cuda_spans(project, path, pkg, tree, deps=None) -> list:
    """[(first body row, last row, Reason)] of the CUDA arms and the private methods called
    only from them, in the module-level classes of the file."""
    root, modname = pkg
    is_package = os.path.basename(path) == "__init__.py"
    imported = None
    classes = {st.name: st for st in tree.body if isinstance(st, ast.ClassDef)}
    spans = []
    for klass in classes.values():
        arms = {}  # method -> Reason
        own = {s.name for s in klass.body if isinstance(s, _FUNCS)}
        for m in klass.body:
            if not isinstance(m, _FUNCS) or not m.body:
                continue
            twins = twin_names(m.name)
            if not twins:
                continue
            here = next((t for t in twins if t in own), None)
            if here:  # the in-file principle exempts the arm; its private callees are ours
                arms[m] = Reason("cuda-twin", f"`{klass.name}.{m.name}` is the CUDA twin of "
                                 f"the generic `{here}` defined next to it", path,
                                 _defines(klass, {here}))
                continue
            if imported is None:
                imported = imported_names(tree, modname, is_package)
            hit = _base_twin(project, root, path, tree, klass, set(twins), imported, 0, deps)
            if hit:
                base, where, line = hit
                arms[m] = Reason("cuda-twin", f"`{klass.name}.{m.name}` is the CUDA arm of the "
                                 f"per-platform dispatch of `{base}`, which defines its generic "
                                 "twin", where, line)
        if not arms:
            continue
        for m, why in _closure(tree, klass, arms).items():
            spans.append((m.body[0].lineno, m.end_lineno or m.body[-1].lineno, why))
    return spans


def _base_twin(project, root, path, tree, klass, twins, imported, hops, deps=None):
    """(base name, file, line) of a base class of `klass` that defines one of `twins` (in the
    file, or resolved through `imported` into a project module), or None."""
    if hops > _MAX_HOPS:
        return None
    for b in klass.bases:
        if not isinstance(b, ast.Name):
            continue
        local = next((st for st in tree.body if isinstance(st, ast.ClassDef)
                      and st.name == b.id), None)
        if local is not None and local is not klass:
            hit = _defines(local, twins)
            if hit:
                return b.id, path, hit
            found = _base_twin(project, root, path, tree, local, twins, imported, hops + 1, deps)
            if found:
                return found
            continue
        if b.id not in imported:
            continue
        mod, name = imported[b.id]
        found = _imported_twin(project, root, mod, name, twins, hops + 1, deps)
        if found:
            return found
    return None


def _imported_twin(project, root, mod, name, twins, hops, deps=None):
    """The base class `name` of project module `mod`: (name, file, line) where it, or one of
    its bases, defines one of `twins`."""
    if hops > _MAX_HOPS:
        return None
    # the directory holding the imported top-level package: above a namespace package too
    # (`pkg/srt/` without an `__init__.py` under `pkg/`)
    top_root = _root_of(root, mod.split(".")[0], _ROOTS) if os.path.isdir(root) else None
    target = _locate(project, top_root or root, mod)
    if target is None:
        return None
    if deps is not None:
        deps[target] = _stat(target)
    tree = project.tree(target)
    pkg = package_of(target) or _namespace_module(target, tree)
    if pkg is None or tree is None:
        return None
    klass = next((st for st in tree.body if isinstance(st, ast.ClassDef) and st.name == name),
                 None)
    imported = imported_names(tree, pkg[1], os.path.basename(target) == "__init__.py")
    if klass is None:
        if name in imported:  # a re-export
            sub, orig = imported[name]
            return _imported_twin(project, pkg[0], sub, orig, twins, hops + 1, deps)
        return None
    hit = _defines(klass, twins)
    if hit:
        return name, target, hit
    return _base_twin(project, pkg[0], target, tree, klass, twins, imported, hops + 1, deps)


def _defines(klass, twins):
    return next((s.lineno for s in klass.body if isinstance(s, _FUNCS) and s.name in twins),
                None)


def _closure(tree, klass, arms: dict) -> dict:
    """`arms` and the private methods of `klass` (not dunders) that the file mentions only as
    `self._m(...)` calls inside methods already established, to a fixed point."""
    established = dict(arms)
    roots = {m: (m.name, why) for m, why in arms.items()}  # method -> (its arm, arm's reason)
    methods = {s.name: s for s in klass.body if isinstance(s, _FUNCS)}
    refs = _self_calls(tree, klass)
    changed = True
    while changed:
        changed = False
        for name, m in methods.items():
            if m in established or not name.startswith("_") or name.startswith("__") \
                    or sum(1 for s in klass.body if getattr(s, "name", None) == name) != 1:
                continue
            sites = refs.get(name)
            if not sites or any(fn is None or (fn not in established and fn is not m)
                                for fn in sites):
                continue
            callers = [fn for fn in sites if fn is not m]
            if not callers:
                continue
            arm, why = roots[callers[0]]
            established[m] = Reason(why.principle, f"`{klass.name}.{name}` is private and "
                                    f"called only from the CUDA arm `{arm}` (or methods only "
                                    f"it calls): {why.text}", why.path, why.line)
            roots[m] = (arm, why)
            changed = True
    return established


def _self_calls(tree, klass) -> dict:
    """name -> [the method of `klass` holding each mention, None where a mention is no
    `self.name(...)` call in a method of `klass` (or is anywhere else in the file)]."""
    out: dict = {}
    calls = set()
    in_class = set()
    for m in klass.body:
        if isinstance(m, _FUNCS):
            for n in ast.walk(m):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                        and isinstance(n.func.value, ast.Name) and n.func.value.id == "self":
                    calls.add(id(n.func))
            for n in ast.walk(m):
                in_class.add(id(n))
                if isinstance(n, ast.Attribute):
                    out.setdefault(n.attr, []).append(m if id(n) in calls else None)
    # every other mention of a name in the file (another class, module level, a string, a
    # bare name, a nested def counted as its method's above) keeps it
    for n in ast.walk(tree):
        if id(n) in in_class:
            continue
        name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) \
            else n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else None
        if name is not None:
            out.setdefault(name, []).append(None)
    for m in klass.body:  # strings and bare names inside the methods
        if isinstance(m, _FUNCS):
            for n in ast.walk(m):
                if isinstance(n, ast.Name) or (isinstance(n, ast.Constant)
                                               and isinstance(n.value, str)):
                    out.setdefault(n.id if isinstance(n, ast.Name) else n.value, []).append(None)
    return out
