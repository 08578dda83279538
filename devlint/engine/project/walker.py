"""The exemption walker: which uses of a module-level function stand on CUDA only (under a
test that selects CUDA, in a CUDA-only scope), and the test-double / unconditional-call
readers the package-level principles use."""
from __future__ import annotations

import ast
import re

from devlint.analysis.descent import Descent
from devlint.analysis.model import _EXITS, FileFacts, collect_imports
from devlint.engine.project.package import _spans, absolute, rows_naming, statements_at
from devlint.evidence import cuda_only_scope, platform_ladder, vocabulary
from devlint.evidence.cuda_callers import strong_scope

# platforms other than CUDA and ROCm (an exclusion must name one of them, not CPU alone)
_NON_CUDA_ALIKE = platform_ladder.OTHER_PLATFORMS


_CUDA_CONTEXT = re.compile(
    r"\bis_(?:%s)\b" % "|".join(sorted(_NON_CUDA_ALIKE | {"cuda", "cuda_alike", "rocm",
                                                         "available"}))
    + r"|\.type\s*[!=]=|[\"']cuda[\"']|TYPE_CHECKING|cuda_stream|cudart|MemPool|DeviceType|CUstream"
    + r"|cupy|^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w*(?i:%s)"
    % cuda_only_scope._VENDOR_NAME.pattern,
    re.M)
_DOUBLE = re.compile(r"(?:\b|_)(?:mock|fake|stub|dummy)(?:\b|_)", re.I)
_DOUBLE_IMPORT = re.compile(r"^[ \t]+from[ \t]+[\w.]*?(?:\b|_)(?:mock|fake|stub|dummy)(?:\b|_)",
                            re.I | re.M)


def _aliases(body) -> dict:
    """`Name = Other` assignments of a block: {Name: Other}."""
    return {st.targets[0].id: st.value.id for st in body
            if isinstance(st, ast.Assign) and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name) and isinstance(st.value, ast.Name)}


def _with_double_fallback(stmt: ast.Try, modname: str, is_package: bool) -> set:
    """The names a `try:` imports (and aliases) whose every `except` imports them from a test
    double (`from .utils.hf3fs_mock_client import Hf3fsClient`); else empty."""
    names = {(a.asname or a.name) for st in stmt.body if isinstance(st, ast.ImportFrom)
             for a in st.names}
    names |= {n for n, alias in _aliases(stmt.body).items() if alias in names}
    if not names or not stmt.handlers:
        return set()
    for h in stmt.handlers:
        doubles = [st for st in h.body if isinstance(st, ast.ImportFrom)
                   and _DOUBLE.search((absolute(st.module, st.level, modname, is_package)
                                       or "").rsplit(".", 1)[-1])]
        if not doubles:
            return set()
    return names


def _unconditional_calls(tree, text: str, names: dict, scoped: bool = False) -> list:
    """The names of `names` called outside `if`s, `except` handlers and conditional
    expressions, in a function, a method or the module body, in the order first met.
    `scoped`: [name, scope] pairs instead, the scope [its name, first row, last row] of the
    module-level function or class that holds the call (None: the module body), each once."""
    found: list = []
    if not names:
        return found
    rows = rows_naming(text, names)
    for stmt, outer in statements_at(tree.body, rows):
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.If, ast.Try, ast.FunctionDef,
                             ast.AsyncFunctionDef, ast.ClassDef)) \
                or type(stmt).__name__ in ("Match", "TryStar"):
            continue  # imports, and headers whose calls are in a test or decorators
        # the statement runs whenever its function does: no `if`/`try` between them
        chain = outer + (stmt,)
        fn = max((i for i, s in enumerate(chain)
                  if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))), default=None)
        if fn is None and any(not isinstance(s, ast.ClassDef) for s in chain[:-1]):
            continue
        # a `try:` body runs too (its `except` handlers do not: they are in the chain)
        if any(not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                  ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                                  ast.Try))
               for s in chain[(0 if fn is None else fn + 1):-1]):
            continue
        top = _top_scope(chain[0]) if scoped else None
        for n in vocabulary.unconditional_in([stmt]):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                    and n.func.id in names:
                item = [n.func.id, top] if scoped else n.func.id
                if item not in found:
                    found.append(item)
    return found


def _top_scope(stmt):
    """[name, first row (its decorators'), last row] of a module-level def or class; None
    for any other statement (the module body)."""
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    return [stmt.name, min([stmt.lineno] + [d.lineno for d in stmt.decorator_list]),
            stmt.end_lineno]


def _header(stmt) -> list:
    """The expressions of a def or class statement that run when the statement runs."""
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)]
    a = stmt.args
    return [*stmt.decorator_list, *a.defaults, *(d for d in a.kw_defaults if d is not None),
            *(x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
              if x is not None and x.annotation is not None),
            *([stmt.returns] if stmt.returns is not None else [])]


class _CudaWalker:
    """Walks a module's statements knowing whether CUDA is established (a platform test, or a
    function or class CUDA-only by its name or runtime use), recording each load of the
    watched names: on CUDA, or else which module-level function holds it (None: module-level
    code). Only statements on rows naming them are entered, and the `if`s that may guard
    them."""

    def __init__(self, path, text, tree, names, skip: str | None = None):
        aliases: dict = {}
        collect_imports(tree.body, aliases)
        self.facts = FileFacts(path, text, "torch", None, None, tree, aliases)
        self.tests = Descent(self.facts, [])
        self.names = names
        self.skip = skip  # a module-level function not to enter (the one asked about)
        self.rows = rows_naming(text, names)
        self.sites: list = []  # (row, how): uses on CUDA
        self.holders: set = set()  # module-level functions holding other uses (None: none)
        self.holder = None
        self.depth = 0  # enclosing functions and classes

    def polarity(self, test) -> int:
        """+1: true selects CUDA; -1: false selects CUDA; 0: neither. A test that only rules
        platforms out (`is_xpu() or is_rocm()`, `is_cpu()`) selects nothing: out-of-tree
        platforms exist, and ruling out the CPU leaves every other accelerator in (SPEC 3,
        "not exempt")."""
        p, _ = self.tests.cuda_test(test)
        return p

    def run(self) -> None:
        self.block(self.facts.tree.body, None)

    def block(self, body, why) -> None:
        for stmt in body:
            if _spans(stmt, self.rows):
                self.statement(stmt, why)
            if why is None and isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                    and isinstance(stmt.body[-1], _EXITS) and self.polarity(stmt.test) < 0:
                why = "test"  # `if not <cuda>: return` guards the rest of the block

    def statement(self, stmt, why) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # decorators, defaults, annotations and bases run where the statement runs
            for node in _header(stmt):
                self.expr(node, why)
            top = self.depth == 0 and not isinstance(stmt, ast.ClassDef)
            if top and stmt.name == self.skip:
                return
            if why is None:
                reason = cuda_only_scope._scope_reason(stmt, self.facts.source(stmt))
                if reason and strong_scope(reason):
                    # (a scope CUDA-only by what its body uses somewhere, `main` starting the
                    # CUDA profiler under `if args.profile:`, does not vouch for its calls)
                    why = reason
            holder = self.holder
            self.depth += 1
            if top:
                self.holder = stmt.name
            try:
                self.block(stmt.body, why)
            finally:
                self.depth -= 1
                self.holder = holder
            return
        if isinstance(stmt, ast.If):
            self.expr(stmt.test, why)
            p = self.polarity(stmt.test)
            self.block(stmt.body, why or ("test" if p > 0 else None))
            self.block(stmt.orelse, why or ("test" if p < 0 else None))
            return
        self._fields(stmt, why)

    def _fields(self, stmt, why) -> None:
        for value in (getattr(stmt, f) for f in stmt._fields):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.block(value, why)
            elif isinstance(value, list):
                for v in value:
                    if isinstance(v, (ast.excepthandler,)) or type(v).__name__ == "match_case":
                        self.block(v.body, why)
                    elif isinstance(v, ast.AST):
                        self.expr(v, why)
            elif isinstance(value, ast.AST):
                self.expr(value, why)

    def expr(self, node, why) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.names and isinstance(n.ctx, ast.Load):
                if why:
                    self.sites.append((n.lineno, why))
                else:
                    self.holders.add(self.holder)
