"""Guards through values made in another module (`devlint.evidence.imported_guard`): the
findings under a test of a value that a function imported from a project module makes only on
CUDA (else None).

Per file with findings: its `from M import name` names that it calls, each resolved to a
module-level function of the project and judged there by the producer rule of
`devlint.analysis.flow` (the verdict stored per defining module in the fact store, keyed by
its stat); where one is a producer, the file's analysis runs again knowing it
(`devlint.analysis.imported`), and the findings that run no longer makes are the ones its
tests guard. The per-package answer is stored like `xgates`' (same key, the defining
modules' stats)."""
from __future__ import annotations

import ast
import os

from devlint.analysis.walk import nodes
from devlint.engine.project.package import package_of
from devlint.engine.project.xgates import (
    _MAX_HOPS, _locate, _stat, imported_names, per_package,
)
from devlint.evidence.imported_guard import flag_reason, producer_reason

_NEVER = frozenset({"DL900", "DL902", "DL999", "DL000"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
VALUED = "valued-imports"  # the fact store's key of `valued_imports`


def guarded_findings(project, results, key_of) -> dict:
    """{absolute path: {(start, code): Reason}} of the findings under a test of a value an
    imported producer makes only on CUDA."""
    return per_package(project, results, key_of, _NEVER, "xguards", "guarded", _file_guarded)


def _file_guarded(project, path: str, res, deps: dict) -> dict:
    text = project.text(path)
    if not text or "None" not in text and "assert" not in text and "if " not in text:
        return {}
    valued = project.fact(path, VALUED, lambda: valued_imports(path, project.tree(path)))
    root = package_of(path)[0]
    producers = {}  # local -> (level, Reason)
    flags = {}  # local -> (sides, Reason)
    for local, (mod, name) in sorted(valued.items()):
        found, where = producer_of(project, root, mod, name, deps=deps)
        if found and found[0] == "flag":
            _, line, sides = found
            flags[local] = (sides, flag_reason(local, mod, where, line))
        elif found:
            level, line = found
            producers[local] = (level, producer_reason(local, mod, level, where, line))
    if not producers and not flags:
        return {}
    from devlint.analysis.imported import FLAGS, PRODUCERS
    from devlint.engine.linter import lint_text
    from devlint.settings import Settings

    settings = Settings()
    wanted = {(d.start, d.code) for d in res.diagnostics if d.code not in _NEVER}

    def places(oracle, flagged=None):
        token = PRODUCERS.set(oracle)
        token2 = FLAGS.set(flagged or {})
        try:
            return {(d.start, d.code) for d in lint_text(path, text, settings)}
        except Exception:  # a file the linter cannot run on: no answer
            return None
        finally:
            PRODUCERS.reset(token)
            FLAGS.reset(token2)

    before = places({})
    if before is None:
        return {}
    out = {}
    for local, (sides, why) in flags.items():
        after = places({}, {local: sides})
        if after is None:
            continue
        for place in (before - after) & wanted:
            out.setdefault(place, why)
    for local, (level, why) in producers.items():
        after = places({local: level})
        if after is None:
            continue
        for place in (before - after) & wanted:
            out.setdefault(place, why)
    return out


def valued_imports(path: str, tree) -> dict:
    """{local name: [module, name]} of the names the module at `path` imports from project
    modules (`from M import name`) and calls or tests where the value is followed
    (`_followed_names`), its own module-level definitions aside: the names whose producer
    or flag verdict its findings can depend on. The workers record it of each file with findings
    (`records.linted_facts`, from the linter's tree): the main process parses such a file
    again only when one of them is a producer."""
    pkg = package_of(path)
    if tree is None or pkg is None:
        return {}
    imported = imported_names(tree, pkg[1], os.path.basename(path) == "__init__.py")
    if not imported:
        return {}
    own = {st.name for st in tree.body if isinstance(st, (*_FUNCS, ast.ClassDef))}
    return {local: list(imported[local])
            for local in sorted(set().union(*_followed_names(tree, imported)) - own)}


def _valued_calls(tree, imported) -> set:
    """The names of `imported` that the file calls where the call's value can be followed
    (the first half of `_followed_names`)."""
    return _followed_names(tree, imported)[0]


def _followed_names(tree, imported) -> tuple:
    """(called, tested): the names of `imported` whose value the file's analysis follows,
    found in one walk: a call of one whose value can be followed (`devlint.analysis.flow`): assigned (`=`,
    annotated, `:=`), returned, compared with None (`f() is None`), passed to a call, or an
    arm of a conditional expression in one of these places (the flow asks the producer oracle
    about a call only there, so a name only called elsewhere, a statement of its own, `f().x`,
    `f()[0]`, `not f()`, needs no verdict and its defining module is not judged); and a name
    the file tests as a flag: an `if`/`while`/`assert`/conditional expression's test, an
    operand of `and`/`or`/`not` (`_is_cuda and x`, a flag made from it: `use_fused = _is_cuda
    and ok`)."""
    out, tested = set(), set()
    for parent in nodes(tree):  # `ast.walk`'s nodes (the order does not matter here)
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests = [parent.test]
        elif isinstance(parent, ast.BoolOp):
            tests = parent.values
        elif isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            tests = [parent.operand]
        else:
            tests = ()
        tested.update(t.id for t in tests if isinstance(t, ast.Name) and t.id in imported)
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return)):
            values = [parent.value]
        elif isinstance(parent, ast.Call):
            values = parent.args + [k.value for k in parent.keywords]
        elif isinstance(parent, ast.Compare):
            values = [parent.left] if len(parent.ops) == 1 and isinstance(
                parent.comparators[0], ast.Constant) and parent.comparators[0].value is None \
                else []
        else:
            continue
        while values:
            v = values.pop()
            if isinstance(v, ast.IfExp):
                values += [v.body, v.orelse]
            elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) \
                    and v.func.id in imported:
                out.add(v.func.id)
    return out, tested


def producer_of(project, root: str, mod: str, name: str, hops: int = 0, deps=None):
    """([level, line] where `name` of project module `mod` is a producer of a value made only
    on CUDA ("cuda") or a CUDA-alike platform ("alike"), ["flag", line, sides] where it is a
    flag set from a platform query (`_judged_flag`), else None; the deciding file).
    `deps` gets the stat of every module read on the way, each re-exporting one too."""
    path = _locate(project, root, mod)
    if path is None:
        return None, None
    if deps is not None:
        deps[path] = _stat(path)
    if not _may_produce(project.text(path), name):
        return None, path
    stored = project.fact(path, "producer:" + name, lambda: _judged(project, path, name))
    if isinstance(stored, list) and stored[:1] == ["->"]:  # ["->", module, name]: a re-export
        if hops >= _MAX_HOPS:
            return None, path
        pkg = package_of(path)
        return producer_of(project, pkg[0] if pkg else root, stored[1], stored[2], hops + 1,
                           deps)
    return (stored or None), path


def _may_produce(text, name: str) -> bool:
    """What a module's text must say before its function `name` can make a value only on
    CUDA or a CUDA-alike platform: the producer rule tests the platform (`is_cuda()`,
    `torch.cuda`, `torch.version.hip`, `is_rocm()`). A module that does not define `name`
    may re-export it and is read on."""
    if not text:
        return False
    low = text.lower()
    return "cuda" in low or "hip" in low or "rocm" in low or f"def {name}" not in text


def _judged(project, path: str, name: str):
    tree = project.tree(path)
    if tree is None:
        return None
    defs = [st for st in tree.body if isinstance(st, _FUNCS) and st.name == name]
    sets = [st for st in tree.body if isinstance(st, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in st.targets)]
    if sets and not defs:
        return _judged_flag(project, path, tree, name, sets)
    if not defs:
        if any(isinstance(st, ast.ClassDef) and st.name == name for st in tree.body):
            return None
        pkg = package_of(path)
        if pkg is not None:
            found = imported_names(tree, pkg[1], os.path.basename(path) == "__init__.py")
            if name in found:
                return ["->", *found[name]]
        return None
    desc = _descent(project, path, tree)
    found = [desc.producer(d) for d in defs]
    if not found or any(f is None for f in found):
        return None
    level = "cuda" if all(f[0] == "cuda" for f in found) else "alike"
    return [level, getattr(found[0][1], "lineno", None)]


def _judged_flag(project, path: str, tree, name: str, sets):
    """["flag", line, [on_true, on_false]] where the module sets `name` once, at module
    level, from a test that establishes CUDA when true (or when false) by the module's own
    guard rules (`_is_cuda = is_cuda()`, `_use_fused = _is_cuda and ok`), and binds it nowhere
    else (a `global` store in a function, a loop target); else None. A test that asks
    `torch.cuda` whether a GPU is there (`torch.cuda.is_available()`, `device_count()`) is a
    finding of its own, whose fix makes the flag true on any accelerator: no such flag."""
    from devlint.evidence.cuda_guard import _TORCH_CUDA_COUNTS, _TORCH_CUDA_QUERIES

    if len(sets) != 1 or len(sets[0].targets) != 1:
        return None
    stores = 0
    for n in nodes(tree):  # one walk: the stores of the name, and no `global` of it
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores += 1
        elif isinstance(n, ast.Global) and name in n.names:
            return None
    if stores != 1:
        return None
    desc = _descent(project, path, tree)
    sides = desc.query_alias.get(name)
    if not sides or not any(sides):
        return None
    if any(isinstance(n, ast.Call) and (desc.f.qualname(n.func) or "") in (
            _TORCH_CUDA_QUERIES | _TORCH_CUDA_COUNTS) for n in ast.walk(sets[0].value)):
        return None
    return ["flag", sets[0].lineno, [bool(sides[0]), bool(sides[1])]]


def _descent(project, path: str, tree):
    """The triage descent of a defining module, prepared as for its own run (its query
    aliases and CUDA helpers), once per module and run: its producer verdicts are memoized."""
    memo = project.__dict__.setdefault("_xguards_descents", {})
    if path not in memo:
        if len(memo) >= 16:  # each holds its module's tree: bound them like Project.tree
            del memo[next(iter(memo))]
        from devlint.analysis.descent import Descent
        from devlint.analysis.model import FileFacts, collect_imports
        from devlint.settings import Settings

        aliases: dict = {}
        collect_imports(tree.body, aliases)
        facts = FileFacts(path, project.text(path) or "", "torch", Settings(), None, tree,
                          aliases)
        desc = Descent(facts, [])
        desc._query_aliases(tree.body)
        desc._cuda_helpers(tree.body)
        memo[path] = desc
    return memo[path]
