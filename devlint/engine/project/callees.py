"""The `calls-cuda-only` principle across modules (`devlint.evidence.calls_cuda_only`): the
findings of a function that always calls a project function which cannot run without CUDA.

Per file with findings: its imports (any depth, read from the text) are resolved into the
project's modules (the directory holding the imported top-level package, found up from the
file, so tests and benchmarks outside a package count too; re-exports through a package's
`__init__` followed); each such module's CUDA-requiring functions are read once (parsed only
when its text may hold one, kept in the stage's store by stat). Only a file that imports one
is parsed, and each finding is exempt when a function around it (its method or function, with
the decorators, or one enclosing it) calls an imported CUDA-requiring function, or a function
of its own module that always does, outside `if`/`try`."""
from __future__ import annotations

import ast
import os
import re

from devlint.engine.project.lazy_exports import lazy_exports
from devlint.engine.project.package import imports_of, package_of
from devlint.engine.project.xgates import _stat, per_package
from devlint.evidence import Reason, default_option, vocabulary
from devlint.evidence import calls_cuda_only as principle

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_IMPORTED_TOP = re.compile(r"^[ \t]*from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b", re.M)
_MAX_HOPS = 4
_FACT = "cuda-requirements"  # the stage's store key of `module_facts`
_OWN_ONLY = 1  # `Project.cuda_only` at this depth gives the module's own reason only
# a module's reasons from its CUDA runtime use (`evidence.cuda_only_module._runtime_reason`)
_RUNTIME_REASONS = ("it is built on CUDA IPC", "its top-level code uses CUDA IPC")
_BENCH = re.compile(r"(?i)bench")


def _root_of(directory: str, top: str, memo: dict) -> str | None:
    """The directory above `directory` (or itself) that holds the package `top`."""
    key = (directory, top)
    if key not in memo:
        d, found = directory, None
        for _ in range(12):
            if os.path.isfile(os.path.join(d, top, "__init__.py")):
                found = d
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        memo[key] = found
    return memo[key]


def _imports(project, path: str, text: str, memo: dict) -> dict:
    """{local name: (root, module, name)} of the names the file imports (at any depth) from
    packages found on disk above it (its own package's relative imports resolved)."""
    tops = set(_IMPORTED_TOP.findall(text))
    pkg = package_of(path)
    if pkg is not None:
        tops.add(pkg[1].split(".")[0])
    data = text.encode("utf-8", "surrogateescape")
    out: dict = {}
    for top in sorted(tops):
        root = _root_of(os.path.dirname(path), top, memo)
        if root is None:
            continue
        for mod, names in imports_of(path, data, top):
            for name, local in names:
                if name != "*":
                    out[local] = (root, mod, name)
    return out


def module_facts(path: str, modname: str, text: str, tree) -> dict:
    """{"cuda": {name: Reason dict}, "exports": {name: [module, name]}} of a project module:
    its CUDA-requiring functions, and the names its `__init__` re-exports. `tree`: the parsed
    module, or a function that parses it (called only when the text may hold one). The
    workers record it of every file they parse (`records.parsed_facts`)."""
    exports = {}
    parsed: list = []

    def parse():
        if not parsed:
            parsed.append(tree() if callable(tree) else tree)
        return parsed[0]

    if os.path.basename(path) == "__init__.py":
        for mod, names in imports_of(path, text.encode("utf-8", "surrogateescape"),
                                     modname.split(".")[0]):
            for name, local in names:
                if name != "*":
                    exports[local] = [mod, name]
        for local, where in lazy_exports(text, modname, parse).items():
            exports.setdefault(local, where)
    cuda, unless = {}, {}
    if principle.mentions(text):
        if parse() is not None:
            cuda = {n: r.to_dict() for n, r in principle.requirements(
                parse(), text, path, vocabulary.is_test_module(path), unless).items()}
    facts = {"cuda": cuda, "exports": exports}
    if unless:  # requirements only at a parameter's default (`default_option`)
        facts["unless"] = {n: list(c) for n, c in unless.items()}
    return facts


def _module_facts(project, path: str, modname: str) -> dict:
    return project.fact(path, _FACT, lambda: module_facts(
        path, modname, project.text(path) or "", lambda: project.tree(path)))


def _requirement(project, root: str, mod: str, name: str, in_tests: bool, hops: int = 0,
                 deps=None, unless=None, seeded: bool = False):
    """Why the project function `mod.name` cannot run without CUDA (a Reason), or None.
    in_tests: the caller is a test or a benchmark, for which a function of a module CUDA-only
    by its own name, folder or imports counts too. unless: a list that gets the requirement's
    (param, position, default) where it holds only at that parameter's default. seeded: the
    module is also read with its own imports' requirements (`_seeded`: a benchmark's callee)."""
    path = project.resolve(root, mod)
    if path is None or hops > _MAX_HOPS:
        return None
    if deps is not None:
        deps[path] = _stat(path)
    facts = _module_facts(project, path, mod)
    if name in facts["cuda"]:
        cond = facts.get("unless", {}).get(name)
        if cond is not None and unless is not None:
            unless.append(tuple(cond))
        return Reason.from_dict(facts["cuda"][name])
    if name in facts["exports"]:
        sub, orig = facts["exports"][name]
        return _requirement(project, root, sub, orig, in_tests, hops + 1, deps, unless, seeded)
    if seeded:  # a benchmark's callee: read with its own imports' requirements
        found, conds = _seeded(project, path, mod, deps)
        if name in found:
            if name in conds and unless is not None:
                unless.append(tuple(conds[name]))
            return found[name]
    if not in_tests or name.startswith(vocabulary._AVAILABILITY_PREFIXES + ("_", "maybe_")):
        return None
    # the module's own reason (depth-limited: not through the modules it calls), and not its
    # use of the CUDA runtime, which one function of an otherwise generic module may make
    why = project.cuda_only(path, mod, root, depth=_OWN_ONLY)
    if why and not str(why).startswith(_RUNTIME_REASONS) and _defines(project, path, name):
        return Reason(principle.PRINCIPLE, f"`{name}` is in `{mod}`, which is CUDA-only "
                      f"({why})", getattr(why, "path", None) or path,
                      getattr(why, "line", None))
    return None


def _seeded(project, path: str, mod: str, deps) -> tuple:
    """({name: Reason}, {name: condition}) of the functions of a project module that always
    call a project function it imports which cannot run without CUDA (its facts read with
    those imported requirements as a seed: `requirements(seed=)`); one import deep (the
    imported names' own facts and re-exports), once per module and run, for the callees of
    benchmarks only (a benchmark exists to run what it imports; tests have their own gates,
    and library callers are many: their own module's facts serve them)."""
    memo = project.__dict__.setdefault("_callees_seeded", {})
    held = memo.get(path)
    if held is None:
        memo[path] = ({}, {}, {})  # in progress: an import cycle sees nothing
        held = memo[path] = _seed(project, path, mod)
    if deps is not None:
        deps.update(held[2])
    return held[0], held[1]


def _seed(project, path: str, mod: str) -> tuple:
    text = project.text(path) or ""
    read: dict = {}
    if not _IMPORTED_TOP.search(text):
        return {}, {}, read
    seed, conds = {}, {}
    for local, (root, m, n) in _imports(project, path, text, {}).items():
        cond: list = []
        # the imported name's own facts and re-exports, not seeded again
        why = _requirement(project, root, m, n, None, 1, read, cond)
        if why:
            seed[local] = why
            if cond:
                conds[local] = cond[0]
    # parsed only where the module calls one (its text names one before a call's parenthesis)
    if not seed or not re.search(r"\b(?:%s)\s*[\[(.]" % "|".join(map(re.escape, seed)), text):
        return {}, {}, read
    tree = project.tree(path)
    if tree is None:
        return {}, {}, read
    unless = dict(conds)
    found = principle.requirements(tree, text, path, vocabulary.is_test_module(path), unless, seed)
    return ({n: r for n, r in found.items() if n not in seed},
            {n: list(c) for n, c in unless.items() if n not in seed}, read)


def _defines(project, path: str, name: str) -> bool:
    text = project.text(path) or ""
    return re.search(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+%s\b" % re.escape(name),
                     text, re.M) is not None


def _scopes(tree, row: int) -> list:
    """The functions around `row`, outermost first (a function's decorators count as its)."""
    out = []
    body = tree.body
    while True:
        nxt = None
        for st in body:
            first = min([st.lineno] + [d.lineno for d in getattr(st, "decorator_list", ())])
            if first <= row <= (st.end_lineno or st.lineno):
                nxt = st
                break
        if nxt is None:
            return out
        if isinstance(nxt, _FUNCS):
            out.append(nxt)
        if isinstance(nxt, (*_FUNCS, ast.ClassDef)):
            body = nxt.body
        else:
            body = [c for f in ("body", "orelse", "finalbody") for c in getattr(nxt, f, ())
                    or () if isinstance(c, ast.stmt)]
            body += [c for h in getattr(nxt, "handlers", ()) or () for c in h.body]


def findings(project, results, keep=frozenset(), key_of=None) -> dict:
    """{absolute path: {finding start: Reason}} of the findings in functions that always call
    a project function which cannot run without CUDA (`keep`: codes never exempted).
    key_of(root, top) -> (hash, fresh): the stage's package key; with it, a package's answer
    is stored (`xgates.per_package`: keyed by the package's files, the findings' places and
    the stat of every module a requirement was read from), so a warm re-run parses nothing;
    a file outside a package is answered every run."""
    roots: dict = {}

    def answer(project, path, res, deps):  # per_package's places: (start, code) keys
        return {(start, ""): why for start, why in _file_findings(
            project, path, res, keep, roots, deps).items()}

    out: dict = {}
    if key_of is not None:
        for path, places in per_package(project, results, key_of, keep, "callees",
                                        "callers", answer).items():
            out[path] = {start: why for (start, _), why in places.items()}
    for res in results:
        if not res.diagnostics or not res.path.endswith(".py") or (
                key_of is not None and package_of(res.path) is not None):
            continue  # nothing to answer, or answered (or read back) per package above
        found = _file_findings(project, os.path.abspath(res.path), res, keep, roots, {})
        if found:
            out[os.path.abspath(res.path)] = found
    return out


def _file_findings(project, path: str, res, keep, roots: dict, deps: dict) -> dict:
    """{finding start: Reason} of one file; `deps` gets the stat of each module a
    requirement was read from."""
    diags = [d for d in res.diagnostics if d.code not in keep]
    if not diags or not res.path.endswith(".py"):
        return {}
    text = project.text(path)
    if not text:
        return {}
    bench = any(_BENCH.search(p) for p in path.replace(os.sep, "/").split("/")[-3:])
    in_tests = vocabulary.is_test_module(path) or bench
    seeded = bench and not vocabulary.is_test_module(path)
    cuda = {}  # local name -> Reason
    unless = {}  # local name -> (param, position, default): only at that default
    for local, (root, mod, name) in _imports(project, path, text, roots).items():
        for key, orig, tests in ((local, name, in_tests),  # `Op.apply`: its own facts only
                                 (local + ".apply", name + ".apply", None)):
            cond: list = []
            why = _requirement(project, root, mod, orig, tests, deps=deps, unless=cond,
                               seeded=seeded and tests is not None)
            if why:
                cuda[key] = why
                if cond:
                    unless[key] = cond[0]
    if not cuda:
        return {}
    tree = project.tree(path)
    if tree is None:
        return {}
    # the file's own module-level functions that always call one (its test helpers)
    own = {d.name: (principle.paths(principle.body_of(d)), d) for d in tree.body
           if isinstance(d, _FUNCS)}
    own.update((d.name, (principle.paths(principle.body_of(d)), d)) for d in tree.body
               if isinstance(d, ast.ClassDef))
    changed = True
    while changed:
        changed = False
        for name, (called, d) in own.items():
            if name in cuda:
                continue
            hit = principle.always_calls(called, cuda, name, unless)
            if hit is not None:
                cuda[name] = cuda[hit[0]]
                changed = True
    return _File(tree, cuda, unless).exempt(diags) or {}


class _File:
    """One file's findings against the CUDA-requiring names it calls (`cuda`: local name ->
    Reason): by the functions around each finding; a module-level value (`DEVICE = "cuda"`)
    by the functions that read it; a test class's decorators by its tests."""

    def __init__(self, tree, cuda: dict, unless=None):
        self.tree = tree
        self.cuda = cuda
        self.unless = unless or {}
        self.memo: dict = {}
        self._loads = None  # see loads()

    def scope(self, scope):
        """(callee, Reason) when `scope` always calls a CUDA-requiring name, else None."""
        if id(scope) not in self.memo:
            hit = principle.always_calls(principle.paths(principle.body_of(scope)), self.cuda,
                                         scope.name, self.unless)
            self.memo[id(scope)] = (hit[0], self.cuda[hit[0]]) if hit else None
        return self.memo[id(scope)]

    def chain(self, scopes):
        for scope in scopes:
            hit = self.scope(scope)
            if hit:
                why = hit[1]
                return Reason(_named(why), f"`{scope.name}` always calls `{hit[0]}`: "
                              f"{why.text}", why.path, why.line)
        return None

    def exempt(self, diags) -> dict:
        found = {}
        for d in diags:
            row = d.location[0]
            why = self.chain(_scopes(self.tree, row)) or self.module_level(row)
            if why:
                found[d.start] = why
        return found

    def script(self, stmt):
        """A finding in the module's own top-level code (or its `if __name__ == "__main__":`
        block), where that code always calls a CUDA-requiring name: the module cannot be
        imported, or run as a script, without CUDA."""
        if "top" not in self.memo:
            self.memo["top"] = principle.always_calls(principle.paths(self.tree.body), self.cuda,
                                                      None, self.unless)
        hit = self.memo["top"]
        if hit is None and _is_main_block(stmt):
            hit = principle.always_calls(principle.paths(stmt.body), self.cuda, None,
                                         self.unless)
        if hit is None:
            return None
        why = self.cuda[hit[0]]
        return Reason(_named(why), f"the module's top-level code always calls "
                      f"`{hit[0]}` (line {hit[1].lineno}): {why.text}", why.path, why.line)

    def loads(self) -> dict:
        """{name: [(order, Name node, functions around it)]} of every load in the file, in
        the order `_loads` meets them: one walk per file, not one per module-level finding
        (torch's generated test tables have thousands)."""
        if self._loads is None:
            self._loads = {}
            for order, (node, chain) in enumerate(_loads(self.tree.body, None, ())):
                self._loads.setdefault(node.id, []).append((order, node, chain))
        return self._loads

    def module_level(self, row: int):
        """A finding outside any function: in a value assigned at module level that only
        functions always calling a CUDA-requiring name read, or in the decorators of a test
        class whose every test does."""
        stmt = next((st for st in self.tree.body
                     if min([st.lineno] + [x.lineno for x in getattr(st, "decorator_list", ())])
                     <= row <= (st.end_lineno or st.lineno)), None)
        if stmt is not None and not isinstance(stmt, (*_FUNCS, ast.ClassDef)):
            why = self.script(stmt)
            if why is not None:
                return why
        if isinstance(stmt, ast.ClassDef) and row < stmt.lineno:
            tests = [m for m in stmt.body if isinstance(m, _FUNCS)
                     and m.name.startswith("test")]
            whys = [self.chain([m]) for m in tests]
            if tests and all(whys):
                return Reason(_named(whys[0]), f"every test of `{stmt.name}` always calls "
                              f"a CUDA-requiring function ({whys[0].text})", whys[0].path,
                              whys[0].line)
            return None
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            return None
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if not all(isinstance(t, ast.Name) for t in targets):
            return None
        names = {t.id for t in targets}
        first = None
        for _, node, chain in sorted((hit for name in names for hit in self.loads().get(name, ())),
                                     key=lambda hit: hit[0]):
            why = self.chain(chain)
            if why is None:
                return None  # read at module level, or by a function that may run elsewhere
            first = first or why
        if first is None:
            return None
        return Reason(_named(first), f"`{', '.join(sorted(names))}` is read only by "
                      f"functions that always call a CUDA-requiring function ({first.text})",
                      first.path, first.line)


def _named(why) -> str:
    """The principle of an exemption through the callee `why`: `cuda-by-default` where the
    callee requires CUDA only at an option's default, else `calls-cuda-only`."""
    return why.principle if why.principle == default_option.PRINCIPLE else principle.PRINCIPLE


def _is_main_block(stmt) -> bool:
    """`if __name__ == "__main__":`"""
    t = getattr(stmt, "test", None)
    return isinstance(stmt, ast.If) and isinstance(t, ast.Compare) and len(t.ops) == 1 \
        and isinstance(t.ops[0], ast.Eq) and isinstance(t.left, ast.Name) \
        and t.left.id == "__name__" and isinstance(t.comparators[0], ast.Constant) \
        and t.comparators[0].value == "__main__"


def _loads(body, names, chain):
    """(Name node, the functions around it, outermost first) of each load of `names` (of
    every name when `names` is None)."""
    for st in body:
        if isinstance(st, _FUNCS):
            for x in _header(st):
                yield from _expr_loads(x, names, chain)
            yield from _loads(st.body, names, chain + (st,))
        elif isinstance(st, ast.ClassDef):
            for x in [*st.decorator_list, *st.bases, *(k.value for k in st.keywords)]:
                yield from _expr_loads(x, names, chain)
            yield from _loads(st.body, names, chain)
        else:
            for field in ast.iter_fields(st):
                value = field[1]
                items = value if isinstance(value, list) else [value]
                for v in items:
                    if isinstance(v, ast.stmt):
                        yield from _loads([v], names, chain)
                    elif isinstance(v, ast.excepthandler) or type(v).__name__ == "match_case":
                        yield from _loads(v.body, names, chain)
                    elif isinstance(v, ast.AST):
                        yield from _expr_loads(v, names, chain)


def _expr_loads(node, names, chain):
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and (names is None or n.id in names) \
                and isinstance(n.ctx, ast.Load):
            yield n, chain


def _header(fn) -> list:
    """The expressions of a def that run where the def statement runs."""
    a = fn.args
    return [*fn.decorator_list, *a.defaults, *(d for d in a.kw_defaults if d is not None)]
