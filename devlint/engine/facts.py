"""Stage 2: stdlib-`ast` triage.

One parse with `ast`, import/alias resolution, and a single descent that only enters the
statements whose lines hold a trigger token. It collects the candidate nodes every rule looks at
(calls, device strings, `torch.cuda` references, asserts, constants) together with where they
stand (function, class, enclosing CUDA guards), so rules never walk the tree themselves.
"""
from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass, field

from devlint.engine.prefilter import TRIGGER_TOKEN
from devlint.evidence import Reason
from devlint.evidence.cuda_guard import (
    _PLATFORM_CUDA_QUERIES, _TORCH_CUDA_QUERIES, _alike_polarity, _is_type_checking,
)
from devlint.evidence.cuda_only_module import (
    _cuda_only_reason, _profile_folder_reason, _runtime_reason, _vendor_family_reason,
)
from devlint.evidence.cuda_only_scope import _scope_reason
from devlint.evidence.platform_ladder import (
    _CUDA_ARM_QUERIES, _OTHER_PLATFORM_MODULES, _OTHER_PLATFORM_QUERIES,
)
from devlint.evidence.vocabulary import (
    _AVAILABILITY_PREFIXES, _unconditional_nodes, is_cuda_only_module,
)
from devlint.source import Locator

DEVICE_STRING = re.compile(r"cuda(?::\d+)?")
# string constants some rule looks at: CUDA devices, distributed backends, the CUDA
# visibility variable
INTERESTING_STRING = re.compile(r"cuda(?::\d+)?|nccl|gloo|hccl|xccl|CUDA_VISIBLE_DEVICES")

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


@dataclass
class Where:
    """Where a candidate node stands."""

    function: ast.AST | None
    klass: ast.ClassDef | None
    guarded: bool  # under a guard that already established CUDA
    tensor_guard: ast.expr | None  # `t` of an enclosing `if t.is_cuda:`
    statement: ast.stmt | None
    level: str  # "module" | "class" | "function"
    annotation: bool = False


@dataclass
class FileFacts:
    path: str
    text: str
    profile: str  # resolved: "torch" | "vllm" | a custom profile name
    settings: object
    _locator: Locator | None = None
    tree: ast.Module | None = None
    aliases: dict = field(default_factory=dict)  # local name -> qualified name
    cuda_only: str | None = None  # why the whole file is CUDA-only, if it is
    cuda_alike: str | None = None  # why it is CUDA-alike only (ROCm): the torch.cuda API is right
    calls: list = field(default_factory=list)
    strings: list = field(default_factory=list)  # str Constants: devices, backends, env vars
    fstrings: list = field(default_factory=list)  # JoinedStr / BinOp building "cuda:<i>"
    api_strings: list = field(default_factory=list)  # "torch.cuda.x" dotted names in strings
    torch_refs: list = field(default_factory=list)  # (node, qualname) of torch.cuda.* references
    asserts: list = field(default_factory=list)
    assigns: list = field(default_factory=list)  # Assign/AnnAssign statements (any level)
    ifs: list = field(default_factory=list)  # If statements
    ifexps: list = field(default_factory=list)  # IfExp expressions
    joined: list = field(default_factory=list)  # every f-string (a fix inside one must requote)
    where: dict = field(default_factory=dict)  # id(node) -> Where
    parent: dict = field(default_factory=dict)  # id(node) -> parent node
    import_end_row: int = 0  # last row of the leading import block (0: none)
    _scope_memo: dict = field(default_factory=dict)
    docstring_end_row: int = 0
    future_end_row: int = 0

    # --- positions -------------------------------------------------------------------
    @property
    def locator(self) -> Locator:
        if self._locator is None:
            self._locator = Locator(self.text)
        return self._locator

    def offset(self, row: int, col: int) -> int:
        return self.locator.offset(row, col)

    def span(self, node) -> tuple[int, int]:
        return (self.locator.offset(node.lineno, node.col_offset),
                self.locator.offset(node.end_lineno, node.end_col_offset))

    def source(self, node) -> str:
        s, e = self.span(node)
        return self.text[s:e]

    # --- names -----------------------------------------------------------------------
    def qualname(self, node) -> str | None:
        """`th.cuda.synchronize` -> `torch.cuda.synchronize` through the file's imports."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.aliases.get(node.id)
        if base is None:
            return None
        parts.append(base)
        return ".".join(reversed(parts))

    def torch_name(self) -> str | None:
        """The local name bound to the torch module, if the file imports it."""
        for local, qual in self.aliases.items():
            if qual == "torch":
                return local
        return None

    def cuda_only_scope(self, node) -> str | None:
        """Why the function or class around `node` is CUDA-only: its name names a CUDA-only
        stack (`_cuda_graph_capture`, `FlashInferBackend`), or it uses the CUDA runtime
        directly (`.cuda_stream`, `cudart`, CUDA IPC handles). Memoized per scope."""
        w = self.where_of(node)
        if w is None:
            return None
        for scope in (w.function, w.klass):
            if scope is None:
                continue
            key = id(scope)
            if key not in self._scope_memo:
                self._scope_memo[key] = (_scope_reason(scope, self.source(scope), self.path)
                                         or self._calls_cuda_only(scope))
            if self._scope_memo[key]:
                return self._scope_memo[key]
        return None

    def cuda_only_callee(self, node) -> str | None:
        """`_flash_attn_fwd_combine(torch.empty(..., device="cuda"))`: `node` is (inside) an
        argument of a call to a function imported from a CUDA-only module, so the value has to
        be what that kernel takes."""
        cur, par = node, self.get_parent(node)
        while par is not None and not isinstance(par, ast.stmt):
            if isinstance(par, ast.Call) and par.func is not cur:
                callee = self._callee(par.func)
                if callee and is_cuda_only_module(callee[0]):
                    return Reason("cuda-only-scope",
                                  f"it is an argument of `{callee[1]}` from `{callee[0]}`",
                                  self.path, par.lineno)
            cur, par = par, self.get_parent(par)
        return None

    def _calls_cuda_only(self, scope) -> str | None:
        """A function that always calls into a CUDA-only module
        (`nccl_common.create_communicator`, `cuda_mem_ops.copy_blocks`) works with that
        module's CUDA objects. Only unconditional calls count: one under an `if` or `try`
        picks a backend among others. Availability checks, getters and setters
        (`has_flashinfer()`, `set_graph_pool_id()`) do not count either: they ask or
        configure, they take no CUDA data. Classes do not count through their methods."""
        if isinstance(scope, ast.ClassDef):
            return None
        for n in _unconditional_nodes(scope):
            if isinstance(n, ast.Call):
                callee = self._callee(n.func)
                if callee and not callee[1].startswith(_AVAILABILITY_PREFIXES) \
                        and is_cuda_only_module(callee[0], wrappers=False):
                    return Reason("cuda-only-scope",
                                  f"`{scope.name}` calls `{callee[1]}` from `{callee[0]}`",
                                  self.path, n.lineno)
        return None

    def _callee(self, func) -> tuple[str, str] | None:
        """(module, name) of a called function imported from a module other than torch; also
        for imports nested in blocks (`if ...: from m import f`), which the alias table of
        the descent does not hold."""
        q = self.qualname(func)
        if q is None and isinstance(func, ast.Name):
            q = self.memo("nested_imports", self._all_imports).get(func.id)
        if not q or q.startswith("torch.") or "." not in q:
            return None
        module, name = q.rsplit(".", 1)
        return module, name

    def _all_imports(self) -> dict:
        out: dict = {}
        collect_imports([n for n in ast.walk(self.tree)
                         if isinstance(n, (ast.Import, ast.ImportFrom))], out)
        return out

    def tree_parent(self, node):
        """The parent of any node of the tree (`get_parent` knows only the nodes the descent
        visited); the map is built once, on first use."""
        def build():
            return {id(c): n for n in ast.walk(self.tree) for c in ast.iter_child_nodes(n)}

        return self.memo("tree_parents", build).get(id(node))

    def memo(self, key, compute):
        """A per-file value computed once, on first use (most files never need it)."""
        if key not in self._scope_memo:
            self._scope_memo[key] = compute()
        return self._scope_memo[key]

    def get_parent(self, node):
        return self.parent.get(id(node))

    def where_of(self, node) -> Where | None:
        return self.where.get(id(node))


def simple_name(expr) -> str | None:
    """`x` or `x.attr` (a local or an attribute of one), else None."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        return f"{expr.value.id}.{expr.attr}"
    return None


def resolve_profile(requested: str, path: str, aliases: dict) -> str:
    if requested != "auto":
        return requested
    if any(q == "vllm" or q.startswith("vllm.") for q in aliases.values()):
        return "vllm"
    parts = os.path.abspath(path).replace(os.sep, "/").split("/")
    if "vllm" in parts[:-1]:
        return "vllm"
    return "torch"


def collect_imports(body, aliases: dict) -> None:
    for stmt in body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    aliases.setdefault(top, top)
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
            for a in stmt.names:
                if a.name != "*":
                    aliases[a.asname or a.name] = f"{stmt.module}.{a.name}"
        elif isinstance(stmt, (ast.If, ast.Try)) or type(stmt).__name__ == "TryStar":
            collect_imports(stmt.body, aliases)
            for h in getattr(stmt, "handlers", ()):
                collect_imports(h.body, aliases)
            collect_imports(stmt.orelse, aliases)
            collect_imports(getattr(stmt, "finalbody", ()), aliases)


def build_facts(path: str, text: str, settings, tree: ast.Module | None = None) -> FileFacts:
    """Parse (unless given a tree) and collect the candidates. Raises SyntaxError."""
    if tree is None:
        tree = ast.parse(text, filename=path)
    aliases: dict = {}
    collect_imports(tree.body, aliases)
    profile = resolve_profile(getattr(settings, "profile", "auto"), path, aliases)
    facts = FileFacts(path, text, profile, settings, None, tree, aliases)
    facts.cuda_only = (_cuda_only_reason(path, tree) or _profile_folder_reason(path, profile)
                       or _runtime_reason(tree, text, path))
    facts.cuda_alike = (facts.cuda_only or _cuda_only_reason(path, tree, alike=True)
                        or _vendor_family_reason(path))
    _leading_rows(facts)
    hot = _hot_rows(facts)
    if hot:
        _Descent(facts, hot).run()
    return facts


def _leading_rows(facts: FileFacts) -> None:
    body = facts.tree.body
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        facts.docstring_end_row = body[0].end_lineno
        i = 1
    last_import = 0
    for stmt in body[i:]:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            facts.future_end_row = stmt.end_lineno
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            last_import = stmt.end_lineno
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
    facts.import_end_row = last_import


def _hot_rows(facts: FileFacts) -> list[int]:
    """Rows holding a trigger token, or a name imported from torch.cuda under another name."""
    text = facts.text
    starts = facts.locator._starts
    rows = set(_token_rows(TRIGGER_TOKEN, text, starts))
    extra = [name for name, qual in facts.aliases.items()
             if qual.startswith("torch.cuda") and "cuda" not in name.lower()]
    if extra:
        pat = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, extra)))
        rows.update(_token_rows(pat, text, starts))
    return sorted(rows)


def _token_rows(pattern, text: str, starts: list):
    """1-based rows holding a match: one search per such row, skipping to the next line."""
    search = pattern.search
    end = len(text)
    pos = 0
    while True:
        m = search(text, pos)
        if m is None:
            return
        row = bisect.bisect_right(starts, m.start())
        yield row
        pos = starts[row] if row < len(starts) else end



class _Descent:
    """Walks only the statements that contain hot rows, keeping the context stack."""

    def __init__(self, facts: FileFacts, hot: list[int]):
        from devlint.profiles.torch_api import project_api_names

        self.f = facts
        self.hot = hot
        self.query_alias: dict = {}
        self.project_api = project_api_names()  # a project's own CUDA-only helpers
        self.dispatch_arms: set = set()  # ids of `if`s that are a dispatch's CUDA arm
        self.chained: set = set()  # ids of `if`s already seen as part of a chain

    def is_hot(self, node) -> bool:
        first = node.lineno
        for d in getattr(node, "decorator_list", ()):  # decorators stand above `def`/`class`
            first = min(first, d.lineno)
        i = bisect.bisect_left(self.hot, first)
        return i < len(self.hot) and self.hot[i] <= (node.end_lineno or node.lineno)

    def run(self):
        self.block(self.f.tree.body, Where(None, None, False, None, None, "module"))

    # --- statements ----------------------------------------------------------------
    def block(self, body, where: Where):
        for stmt in body:
            if not self.is_hot(stmt):
                # an early exit on "not CUDA" guards the rest of the block
                where = self._after_exit_guard(stmt, where)
                continue
            self.statement(stmt, where)
            where = self._after_exit_guard(stmt, where)

    def _after_exit_guard(self, stmt, where: Where) -> Where:
        """`if not <cuda>: return` and `assert <cuda>` guard the rest of the block."""
        polarity = 0
        if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                and self._exits(stmt.body[-1]):
            polarity = -self.cuda_test(stmt.test)[0]
        elif isinstance(stmt, ast.Assert):
            polarity, tensor = self.cuda_test(stmt.test)
            if tensor is not None:
                polarity = 0  # `assert t.is_cuda` is DL201's finding, not a platform guard
        if polarity > 0:
            return Where(where.function, where.klass, True, where.tensor_guard, None,
                         where.level)
        return where

    def _platform_query(self, test) -> str | None:
        """"cuda" or "other" for a bare platform query (`current_platform.is_xpu()`,
        `torch.cuda.is_available()`), else None."""
        if not isinstance(test, ast.Call):
            return None
        func = test.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        q = self.f.qualname(func) or ""
        if name in _OTHER_PLATFORM_QUERIES or (
                name == "is_available" and q.startswith(_OTHER_PLATFORM_MODULES)):
            return "other"
        if name in _CUDA_ARM_QUERIES or q in _CUDA_ARM_QUERIES:
            return "cuda"
        return None

    def _mark_dispatch(self, head: ast.If) -> None:
        """Record the CUDA arm of an if/elif chain that also has an arm for another platform
        (the chain is seen once, from its head)."""
        if id(head) in self.chained:
            return
        arms = []
        node = head
        while isinstance(node, ast.If):
            self.chained.add(id(node))
            arms.append(node)
            node = node.orelse[0] if len(node.orelse) == 1 else None
        kinds = [self._platform_query(a.test) for a in arms]
        if "other" in kinds:
            for arm, kind in zip(arms, kinds):
                if kind == "cuda":
                    self.dispatch_arms.add(id(arm))

    def _query_aliases(self, body):
        """`is_cuda = current_platform.is_cuda_alike()` makes `is_cuda` a guard too."""
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                    and isinstance(st.targets[0], ast.Name):
                p, _ = self.cuda_test(st.value)
                if p:
                    self.query_alias[st.targets[0].id] = p

    def _exits(self, stmt) -> bool:
        if isinstance(stmt, _EXITS):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            q = self.f.qualname(stmt.value.func) or ""
            return q in ("pytest.skip", "pytest.exit", "sys.exit", "unittest.SkipTest")
        return False

    def statement(self, stmt, where: Where):
        here = Where(where.function, where.klass, where.guarded, where.tensor_guard, stmt,
                     where.level)
        if isinstance(stmt, _FUNCS):
            collect_imports([s for s in stmt.body if isinstance(s, (ast.Import, ast.ImportFrom))],
                            self.f.aliases)
            self._query_aliases(stmt.body)
            for d in stmt.decorator_list:
                self.expr(d, stmt, here)
            self.arguments(stmt.args, stmt, here)
            if stmt.returns is not None:
                self.expr(stmt.returns, stmt, here, annotation=True)
            inner = Where(stmt, where.klass, where.guarded, where.tensor_guard, None, "function")
            self.block(stmt.body, inner)
        elif isinstance(stmt, ast.ClassDef):
            for e in (*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)):
                self.expr(e, stmt, here)
            self.block(stmt.body, Where(None, stmt, where.guarded, where.tensor_guard, None,
                                        "class"))
        elif isinstance(stmt, ast.If):
            self.f.ifs.append(stmt)
            self.f.where[id(stmt)] = here
            self.expr(stmt.test, stmt, here)
            polarity, tensor = self.cuda_test(stmt.test)
            if _is_type_checking(stmt.test):
                polarity, tensor = 1, None  # stubs for type checkers never run
            self._mark_dispatch(stmt)
            if id(stmt) in self.dispatch_arms:
                polarity, tensor = 1, None
            body_w = self._guarded(where, polarity > 0, tensor)
            else_w = self._guarded(where, polarity < 0, None)
            self.block(stmt.body, body_w)
            self.block(stmt.orelse, else_w)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.expr(stmt.target, stmt, here)
            self.expr(stmt.iter, stmt, here)
            self.block(stmt.body, where)
            self.block(stmt.orelse, where)
        elif isinstance(stmt, ast.While):
            self.expr(stmt.test, stmt, here)
            self.block(stmt.body, where)
            self.block(stmt.orelse, where)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.expr(item.context_expr, stmt, here)
                if item.optional_vars is not None:
                    self.expr(item.optional_vars, stmt, here)
            self.block(stmt.body, where)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.block(stmt.body, where)
            for h in stmt.handlers:
                if h.type is not None:
                    self.expr(h.type, h, here)
                self.block(h.body, where)
            self.block(stmt.orelse, where)
            self.block(stmt.finalbody, where)
        elif type(stmt).__name__ == "Match":
            self.expr(stmt.subject, stmt, here)
            for c in stmt.cases:
                if c.guard is not None:
                    self.expr(c.guard, c, here)
                self.block(c.body, where)
        else:
            if isinstance(stmt, ast.Assert):
                self.f.asserts.append(stmt)
                self.f.where[id(stmt)] = here
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self.f.assigns.append(stmt)
                self.f.where[id(stmt)] = here
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and where.level == "function":
                collect_imports([stmt], self.f.aliases)
            for child_field, child in ast.iter_fields(stmt):
                if isinstance(child, ast.AST):
                    self.expr(child, stmt, here, annotation=child_field == "annotation")
                elif isinstance(child, list):
                    for c in child:
                        if isinstance(c, ast.AST):
                            self.expr(c, stmt, here)

    def arguments(self, args: ast.arguments, owner, where: Where):
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                  *(x for x in (args.vararg, args.kwarg) if x is not None)):
            if a.annotation is not None:
                self.expr(a.annotation, owner, where, annotation=True)
        for d in (*args.defaults, *(d for d in args.kw_defaults if d is not None)):
            self.expr(d, owner, where)

    @staticmethod
    def _guarded(where: Where, on: bool, tensor) -> Where:
        if not on:
            return where
        return Where(where.function, where.klass, tensor is None or where.guarded,
                     tensor if tensor is not None else where.tensor_guard, None, where.level)

    # --- guards ----------------------------------------------------------------------
    def cuda_test(self, test) -> tuple[int, ast.expr | None]:
        """+1: the test establishes CUDA when true; -1: when false; 0: neither.
        Also returns `t` for `t.is_cuda` tests (a tensor guard, which gives the fix its device)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            p, _ = self.cuda_test(test.operand)
            return -p, None
        if isinstance(test, ast.BoolOp):
            results = [self.cuda_test(v) for v in test.values]
            if isinstance(test.op, ast.And):
                for p, t in results:
                    if p > 0:
                        return 1, t
                return 0, None
            if all(p < 0 for p, _ in results):
                return -1, None
            if all(p > 0 for p, _ in results):
                return 1, None
            return 0, None
        if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
            return 1, test.value
        if isinstance(test, ast.Name) and test.id in self.query_alias:
            return self.query_alias[test.id], None
        if isinstance(test, ast.Call):
            q = self.f.qualname(test.func)
            if q in _TORCH_CUDA_QUERIES:
                return 1, None
            func = test.func
            if isinstance(func, ast.Attribute) and func.attr in _PLATFORM_CUDA_QUERIES:
                return 1, None
            if isinstance(func, ast.Name) and func.id in _PLATFORM_CUDA_QUERIES:
                return 1, None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op = test.ops[0]
            sides = (test.left, test.comparators[0])
            if any(isinstance(s, ast.Constant) and s.value == "cuda" for s in sides):
                if isinstance(op, (ast.Eq, ast.Is)):
                    return 1, None
                if isinstance(op, (ast.NotEq, ast.IsNot)):
                    return -1, None
            if isinstance(op, ast.In) and isinstance(test.left, ast.Constant) \
                    and test.left.value == "cuda":
                return 1, None  # "cuda" in str(device)
        return 0, None

    # --- expressions -------------------------------------------------------------------
    def expr(self, root, parent, where: Where, annotation: bool = False):
        f = self.f
        parents = f.parent
        wmap = f.where
        w = Where(where.function, where.klass, where.guarded, where.tensor_guard,
                  where.statement, where.level, annotation) if annotation else where
        stack = [(root, parent, w)]
        while stack:
            node, par, w = stack.pop()
            parents[id(node)] = par
            t = type(node)
            if t is ast.Call:
                f.calls.append(node)
                wmap[id(node)] = w
            elif t is ast.Constant:
                v = node.value
                if isinstance(v, str) and len(v) <= 20 and INTERESTING_STRING.fullmatch(v):
                    f.strings.append(node)
                    wmap[id(node)] = w
                elif isinstance(v, str) and v.startswith("torch.cuda.") and len(v) < 64:
                    f.api_strings.append(node)
                    wmap[id(node)] = w
                continue
            elif t is ast.JoinedStr:
                f.joined.append(node)
                if node.values and isinstance(node.values[0], ast.Constant) \
                        and isinstance(node.values[0].value, str) \
                        and node.values[0].value.startswith("cuda:") \
                        and (node.values[0].value == "cuda:" or len(node.values) == 1):
                    f.fstrings.append(node)
                    wmap[id(node)] = w
            elif t is ast.BinOp:
                left = node.left
                if isinstance(node.op, (ast.Mod, ast.Add)) and isinstance(left, ast.Constant) \
                        and isinstance(left.value, str) and left.value.startswith("cuda:"):
                    f.fstrings.append(node)
                    wmap[id(node)] = w
            elif t is ast.Attribute or t is ast.Name:
                if not (type(par) is ast.Attribute and par.value is node):
                    q = f.qualname(node)
                    if q is not None and (q == "torch.cuda" or q.startswith("torch.cuda.")
                                          or q in self.project_api):
                        f.torch_refs.append((node, q))
                        wmap[id(node)] = w
                if t is ast.Name:
                    continue
            elif t is ast.IfExp:
                f.ifexps.append(node)
                wmap[id(node)] = w
                # the arms of `a if <cuda test> else b` are guarded like an if statement
                p, tensor = self.cuda_test(node.test)
                if not p:
                    # SPEC 3: a literal whose own expression tests for a CUDA-alike platform
                    # (`f"cuda:{i}" if is_cuda_alike() else "cpu"`) says "cuda" on purpose
                    p = _alike_polarity(node.test)
                stack.append((node.test, node, w))
                stack.append((node.body, node, self._guarded(w, p > 0, tensor)))
                stack.append((node.orelse, node, self._guarded(w, p < 0, None)))
                continue
            elif t is ast.Lambda:
                stack.append((node.body, node, w))
                continue
            for child in ast.iter_child_nodes(node):
                stack.append((child, node, w))
