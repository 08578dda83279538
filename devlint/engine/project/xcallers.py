"""Functions whose every caller in the package runs on CUDA only, across modules
(`devlint.evidence.cuda_callers`, the `only-called-on-cuda` principle): a helper of a generic
utils module that only CUDA-only modules, CUDA guards, CUDA dispatch arms or other such
functions call.

Per file with findings left by the other passes: the module-level function (or the method
of a module-level class: called as `self._m(...)` if private, else through its class's
constructions) around each finding is the target; its call sites are read
through the package's importers index (`Project.importers`, the same one `index` uses) and a
walk of each calling file's statements on the rows naming it (`walker._CudaWalker`, extended
here to say which function or method holds each use and whether it is a call). A site counts
when its module is CUDA-only (`Project.cuda_only`), it stands under a CUDA test or in a scope
CUDA-only by its name or imports, in a block that always runs a CUDA-only kernel, in a CUDA
dispatch arm (`xtwins`), or in a function or method that is itself only called on CUDA by
this rule (a fixpoint, at most `_MAX_DEPTH` callers deep). Answers are memoized per run (the
walks per file and name), and the answer of each package is stored like `xgates`'."""
from __future__ import annotations

import ast
import os
import re

from devlint.analysis.method_uses import _reported_test
from devlint.analysis.model import _EXITS
from devlint.analysis.walk import nodes
from devlint.engine.project.package import _spans, package_of, rows_naming, through_a_parent
from devlint.engine.project.walker import _CudaWalker
import devlint.engine.project.xchoice as xchoice
from devlint.evidence import cuda_callers, cuda_choice
from devlint.evidence.cuda_choice import Choice

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MAX_DEPTH = 3  # callers of callers followed, at most
_INERT = "inert"  # a use that neither calls nor hands on (an annotation, `isinstance`)


def _file_callers(state, project, path: str, diags) -> dict:
    pkg = state.module(path)
    tree = project.tree(path) if pkg else None
    if tree is None:
        return {}
    found = {}
    for d in diags:
        target = _target(tree, d.location[0])
        if target is None:
            continue
        got = state.established(path, pkg[1], pkg[0], target, 0, ())
        if got is None:
            continue
        why, by_test = got
        if by_test and d.table_api:
            continue  # a table API selected by a platform test: as under an in-file guard
        found[(d.start, d.code)] = why
    return found


def _first_row(stmt) -> int:
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])


def _in_body(fn, row: int) -> bool:
    return bool(fn.body) and fn.body[0].lineno <= row <= (fn.end_lineno or fn.lineno)


def _target(tree, row: int):
    """("f", name) of the module-level function whose body holds `row`, ("m", class, name)
    of the method of a module-level class, else None (module-level code, a class body, a
    header that runs at import)."""
    for st in tree.body:
        if not _first_row(st) <= row <= (st.end_lineno or st.lineno):
            continue
        if isinstance(st, _FUNCS):
            return ("f", st.name) if _in_body(st, row) else None
        if isinstance(st, ast.ClassDef):
            for m in st.body:
                if isinstance(m, _FUNCS) and _first_row(m) <= row <= (m.end_lineno or m.lineno):
                    return ("m", st.name, m.name) if _in_body(m, row) else None
        return None
    return None


class _SiteWalker(_CudaWalker):
    """`_CudaWalker` recording every use of the watched names, on CUDA or not, with the
    function or method of a module-level class that holds it (None: module-level code or a
    class body) and whether it is called. attrs: also watch `self.<name>` / `cls.<name>`."""

    def __init__(self, path, text, tree, names, skip=None, attrs=False, shared=None):
        super().__init__(path, text, tree, set(names))
        self.shared = {} if shared is None else shared  # path -> inert Names' positions
        self.skip_target = skip  # ("f", name) | ("m", class, name): its own body is not walked
        self.attrs = attrs
        self._inert = None
        self.uses: list = []  # (row, why, holder, called, node)
        self.klass = None

    def polarity(self, test) -> int:
        # a test that is a finding itself (`x.is_cuda`, `device.type == "cuda"`) establishes
        # nothing: its fix sends the other accelerators to what it guards
        if _reported_test(test):
            return 0
        return super().polarity(test) or xchoice.polarity(self, test)  # cuda-choice

    def block(self, body, why) -> None:
        """The base walk, and in a function's block: a site in a block that always runs a
        CUDA-only kernel (before the site, or after it with no exit between) runs on CUDA."""
        if why is not None or self.depth == 0:
            return super().block(body, why)
        kernels = None
        for i, stmt in enumerate(body):
            if _spans(stmt, self.rows):
                here = why
                if here is None:
                    if kernels is None:
                        kernels = [cuda_callers.kernel_call(s) for s in body]
                    here = _kernel_near(body, kernels, i, self.facts.path)
                self.statement(stmt, here)
            if why is None and isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                    and isinstance(stmt.body[-1], _EXITS) and self.polarity(stmt.test) < 0:
                why = "test"  # `if not <cuda>: return` guards the rest of the block
        return None

    def statement(self, stmt, why) -> None:
        if isinstance(stmt, ast.If) and why is None and not super().polarity(stmt.test) \
                and not _reported_test(stmt.test) and xchoice.walk_if(self, stmt):
            return None  # `if <flag chosen by a CUDA test>:` (cuda-choice)
        if not isinstance(stmt, (*_FUNCS, ast.ClassDef)):
            return super().statement(stmt, why)
        me = None
        if self.depth == 0:
            me = ("c" if isinstance(stmt, ast.ClassDef) else "f", stmt.name)
        elif self.depth == 1 and self.klass and isinstance(stmt, _FUNCS):
            me = ("m", self.klass, stmt.name)
        # decorators, defaults, annotations and bases run where the statement runs: at import
        # for a module-level def or a method, in the enclosing function for a nested one
        holder = self.holder
        if me is not None:
            self.holder = None
        try:
            for node in _header(stmt):
                self.expr(node, why)
        finally:
            self.holder = holder
        if me is not None and me == self.skip_target:
            return  # its own body (a class's methods run only once it exists)
        if why is None:
            from devlint.evidence.cuda_only_scope import _scope_reason

            found = _scope_reason(stmt, self.facts.source(stmt))
            if found and cuda_callers.strong_scope(found):
                why = found
        klass = self.klass
        if me is not None and me[0] in "fm":
            self.holder = me
        # the methods of a module-level class are targets; a function's body is no class body
        self.klass = stmt.name if me is not None and me[0] == "c" else None
        self.depth += 1
        try:
            self.block(stmt.body, why)
        finally:
            self.depth -= 1
            self.holder = holder
            self.klass = klass
        return None

    def inert(self) -> set:
        """(row, column) of the Names that neither call nor hand on what they name:
        annotations, the class operand of `isinstance` / `issubclass`. Once per file
        (`shared`, by path): a position names the same Name in every parse of the text, so
        the answer outlives the tree (the project parses a file again once its tree has left
        the few it keeps; keyed by the tree, sglang's callers walk recomputed it 2,700 times)."""
        if self._inert is None:
            hit = self.shared.get(self.facts.path)
            if hit is None:
                roots = []
                for n in nodes(self.facts.tree):
                    if isinstance(n, ast.arg) and n.annotation is not None:
                        roots.append(n.annotation)
                    elif isinstance(n, _FUNCS) and n.returns is not None:
                        roots.append(n.returns)
                    elif isinstance(n, ast.AnnAssign):
                        roots.append(n.annotation)
                    elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                            and n.func.id in ("isinstance", "issubclass") and len(n.args) == 2:
                        roots.append(n.args[1])
                hit = frozenset((x.lineno, x.col_offset) for r in roots for x in nodes(r)
                                if isinstance(x, ast.Name))
                self.shared[self.facts.path] = hit
            self._inert = hit
        return self._inert

    def expr(self, node, why) -> None:
        walked = nodes(node)  # `ast.walk`'s order, the context singletons aside
        calls = {id(n.func) for n in walked if isinstance(n, ast.Call)}
        for n in walked:
            if isinstance(n, ast.Name) and n.id in self.names and isinstance(n.ctx, ast.Load):
                if (n.lineno, n.col_offset) in self.inert():
                    self.uses.append((n.lineno, _INERT, self.holder, False, n))
                    continue
                self.uses.append((n.lineno, why, self.holder, id(n) in calls, n))
            elif self.attrs and isinstance(n, ast.Attribute) and n.attr in self.names:
                own = isinstance(n.value, ast.Name) and n.value.id in ("self", "cls") \
                    and isinstance(n.ctx, ast.Load)
                self.uses.append((n.lineno, why, self.holder, own and id(n) in calls, n))


def _kernel_near(body, kernels, i, path):
    """The Reason of a CUDA-only kernel call that runs whenever `body[i]` does: a statement
    of the block before it, or after it with no exit (`return`, `raise`, `break`,
    `continue`) in between."""
    for j in range(i):
        if kernels[j] is not None:
            return cuda_callers.kernel_reason(kernels[j], path)
    for j in range(i, len(body)):
        if kernels[j] is not None and j > i:
            return cuda_callers.kernel_reason(kernels[j], path)
        if _exits(body[j]):
            return None
    return None


def _exits(stmt) -> bool:
    stack = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, _EXITS):
            return True
        if isinstance(n, (*_FUNCS, ast.ClassDef, ast.Lambda)) and n is not stmt:
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


def _header(stmt) -> list:
    from devlint.engine.project.walker import _header as header

    return header(stmt)


class _State:
    """One run's answers: which targets are only called on CUDA, and the walks behind them."""

    def __init__(self, project):
        self.project = project
        self.memo: dict = {}  # (path, target, depth) -> (Reason, by_test) | None
        self.walks: dict = {}  # (path, names, skip, attrs) -> [uses] | None
        self.spans: dict = {}  # path -> [(first, last, Reason)] of CUDA dispatch arms
        self.modules: dict = {}  # path -> why the module is CUDA-only | None
        self.names: dict = project.module_names  # path -> (root, dotted module) | None
        # path -> its inert Names' positions (`_SiteWalker.inert`), shared by the run's states
        self.inert: dict = project.__dict__.setdefault("_inert_names", {})

    # --- what one file says ---------------------------------------------------------------
    def uses(self, path, names, skip=None, attrs=False):
        key = (path, tuple(sorted(names)), skip, attrs)
        if key not in self.walks:
            text = self.project.text(path)
            # a text naming none of the names is not parsed: its answer, [] here, was None
            # where it does not parse, and the callers treat both alike (an importer's
            # uses are only tested for truth; a target's own file is parsed already)
            named = bool(text) and bool(rows_naming(text, names))
            tree = self.project.tree(path) if named else None
            if not text or (named and tree is None):
                self.walks[key] = None
            elif not named:
                self.walks[key] = []
            else:
                w = _SiteWalker(path, text, tree, names, skip, attrs, self.inert)
                w.project, w.package = self.project, self.module(path)  # cuda-choice
                try:
                    w.run()
                    self.walks[key] = w.uses
                except RecursionError:
                    self.walks[key] = None
        return self.walks[key]

    def module(self, path):
        """(root, dotted module) of a file of a package, also of a namespace package (a
        folder without `__init__.py`, named through the file's own absolute imports)."""
        if path not in self.names:
            pkg = package_of(path)
            if pkg is None:
                from devlint.engine.project.xtwins import _namespace_module

                # it reads the module's `from <absolute> import` statements: a text without
                # `from` has none and is not parsed (a large generated module: 1.1 MB parsed
                # only to learn that)
                text = self.project.text(path)
                tree = self.project.tree(path) if text and "from" in text else None
                pkg = _namespace_module(path, tree) or _below_package(path)
            self.names[path] = pkg
        return self.names[path]

    def module_reason(self, path, root):
        """Why the module at `path` is CUDA-only, as the stage judges it: in a package, by
        itself or the CUDA-only modules it always calls; in a namespace package (which the
        stage does not judge as a whole), by its own name, folder or imports only."""
        if path not in self.modules:
            why = None
            if package_of(path) is not None:
                why = self.project.cuda_only(path, package_of(path)[1], root)
            elif self.module(path) is not None:
                from devlint.engine.project.callees import _OWN_ONLY, _RUNTIME_REASONS

                why = self.project.cuda_only(path, self.module(path)[1], root, depth=_OWN_ONLY)
                if why and str(why).startswith(_RUNTIME_REASONS):
                    why = None  # one function of the module may be the one using CUDA IPC
            self.modules[path] = why or None
        return self.modules[path]

    def arm(self, path, row):
        """The Reason of the CUDA dispatch arm (or private method only such arms call) of
        the file holding `row` (`xtwins`), or None."""
        if path not in self.spans:
            from devlint.engine.project.xtwins import _ARM, _cuda_spans

            text = self.project.text(path)
            spans = []
            if text and _ARM.search(text):
                tree = self.project.tree(path)
                pkg = self.module(path)
                if tree is not None and pkg is not None:
                    try:
                        spans = _cuda_spans(self.project, path, pkg, tree)
                    except RecursionError:
                        spans = []
            self.spans[path] = spans
        return next((why for first, last, why in self.spans[path] if first <= row <= last),
                    None)

    # --- the principle --------------------------------------------------------------------
    def established(self, path, modname, root, target, depth, stack):
        """(Reason, whether a platform test is what selects CUDA somewhere) when every call
        of `target` in the package runs on CUDA only, else None."""
        key = (path, target, depth)
        if key in self.memo:
            return self.memo[key]
        if depth > _MAX_DEPTH or (path, target) in stack:
            return None
        stack = stack + ((path, target),)
        self.memo[key] = None  # while deciding
        if target[0] in "fc":
            sites = self._function_sites(path, modname, root, target[1], target[0])
        else:
            sites = self._method_sites(path, target[1], target[2])
        found = None
        if sites:
            found = self._judge(sites, root, depth, stack, target)
        if found is None and target[0] == "m":
            # a method runs only where an instance exists: its class constructed on CUDA only
            up = self.established(path, modname, root, ("c", target[1]), depth, stack)
            if up is not None:
                found = cuda_callers.constructed(_name(target), up[0]), up[1]
        self.memo[key] = found
        return found

    def _judge(self, sites, root, depth, stack, target):
        first, by_test, choice = None, False, None
        for p, row, why, holder, called in sites:
            ev = None
            module = self.module_reason(p, root)
            if module:
                ev = cuda_callers.site(p, row, f"its module is CUDA-only ({module})")
            elif why:
                by_test = by_test or why == "test"
                if isinstance(why, Choice):  # a flag chosen elsewhere (cuda-choice)
                    ev, choice = xchoice.site(self.project, stack[-1][0], p, row, why, choice)
                else:
                    ev = cuda_callers.site(p, row, "under a test that establishes CUDA"
                                           if why == "test" else str(why))
            else:
                arm = self.arm(p, row)
                if arm is not None:
                    ev = cuda_callers.site(p, row, str(arm))
                elif holder is not None and called:
                    pkg = self.module(p)
                    up = pkg and self.established(p, pkg[1], root, holder, depth + 1, stack)
                    up, choice = xchoice.through(self.project, stack[-1][0], up, choice)
                    if up:
                        by_test = by_test or up[1]
                        ev = cuda_callers.site(p, row, f"in `{_name(holder)}`, itself only "
                                               f"called on CUDA ({up[0].location})")
            if ev is None:
                return None
            first = first or ev
        if choice is not None:  # a flag chosen elsewhere selected a site (cuda-choice)
            return cuda_choice.reason(_name(target), first, choice), by_test
        return cuda_callers.reason(_name(target), first), by_test

    def _function_sites(self, path, modname, root, name, kind="f"):
        """[(path, row, why, holder, called)] of every use of the module-level function
        (kind "f") or class ("c") `name` of `path` in the package, none in the class's own
        body; None when one cannot be followed."""
        project = self.project
        if not name.startswith("_") and cuda_callers.exported(project.text(path) or "", name):
            return None  # listed in `__all__`: public API, callers outside are not seen
        top = modname.split(".")[0]
        index = project.importers(root, top)
        if through_a_parent(project, index, modname, path, name, named=True):
            return None  # `from pkg import mod; mod.name(...)`: not followed
        sites = []
        own = self.uses(path, {name}, skip=(kind, name))
        if own is None:
            return None
        sites.extend((path, *u[:4]) for u in own if u[1] != _INERT)
        for p in sorted(index.get(modname, {})):
            locals_ = sorted({local for n, local in index[modname][p] if n in (name, "*")})
            if p == path or not locals_:
                continue
            if "*" in locals_:
                return None  # `import pkg.mod` / a star import: not followed
            uses = self.uses(p, set(locals_))
            if not uses:
                return None  # imported and never used: a re-export, not followed
            if os.path.basename(p) == "__init__.py" or cuda_callers.exported(
                    project.text(p) or "", *locals_):
                return None  # re-exported by a package: public API
            sites.extend((p, *u[:4]) for u in uses if u[1] != _INERT)
        return sites

    def _method_sites(self, path, klass, name):
        """Sites of the private method `klass.name`, every mention of which in its file is a
        `self.name(...)` call in a method of its class; None otherwise."""
        if not name.startswith("_") or name.startswith("__"):
            return None
        tree = self.project.tree(path)
        cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == klass),
                   None) if tree is not None else None
        if cls is None or sum(1 for s in cls.body if getattr(s, "name", None) == name) != 1:
            return None
        uses = self.uses(path, {name}, skip=("m", klass, name), attrs=True)
        if not uses:
            return None
        sites = []
        for row, why, holder, called, node in uses:
            if not (called and holder and holder[0] == "m" and holder[1] == klass):
                return None  # a bare name, another object's attribute, a value
            sites.append((path, row, why, holder, called))
        # every other mention of the name in the text (a string, `getattr(self, "_m")`, a
        # comment, a row the walk did not enter) keeps the findings: its `def` and the calls
        # found must be all
        text = self.project.text(path) or ""
        if len(re.findall(r"\b%s\b" % re.escape(name), text)) != len(uses) + 1:
            return None
        return sites


def _below_package(path: str):
    """(root, dotted module) of a file in a folder without `__init__.py` below a package
    (`pkg/srt/x.py` under `pkg/__init__.py`), found from the nearest package above it."""
    d = os.path.dirname(path)
    for _ in range(8):
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up
        if os.path.isfile(os.path.join(d, "__init__.py")):
            pkg = package_of(os.path.join(d, "__init__.py"))
            if pkg is None:
                return None
            rel = os.path.splitext(os.path.relpath(path, d))[0].split(os.sep)
            return pkg[0], ".".join([pkg[1], *rel])
    return None


def _name(target) -> str:
    return target[1] if target[0] in "fc" else f"{target[1]}.{target[2]}"
