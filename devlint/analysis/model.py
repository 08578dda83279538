"""What the triage knows about one file: `FileFacts` (its text, tree, imports, profile,
candidate nodes and where each stands) and `Where`; the import/alias resolution they use.

Analysis layer: below the rules (which read these facts) and above the evidence layer (whose
principles `FileFacts` asks about its scopes)."""
from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass, field

from devlint.evidence import Reason
from devlint.evidence.cuda_graph_capture import platform_layer
from devlint.evidence.cuda_graph_capture import scope_reason as graph_scope
from devlint.evidence.cuda_kernel_source import builders as kernel_builders
from devlint.evidence.cuda_kernel_source import scope_reason as kernel_source_scope
from devlint.evidence.flash_attention_impl import scope_reason as fa_impl_scope
from devlint.evidence.gated_benchmark import scope_reason as gated_benchmark_scope
from devlint.evidence.library_subject import subject_reason as library_subject
from devlint.evidence.nvidia_tool import scope_reason as nvidia_tool_scope
from devlint.evidence.cuda_only_scope import _scope_reason
from devlint.evidence.cuda_twin import (
    api_stand_ins, defined_functions, stand_in_reason, twin_reason,
)
from devlint.evidence.dead_default import default_of
from devlint.evidence.stated_requirement import scope_reason as stated_scope_reason
from devlint.evidence.stated_gate import scope_reason as stated_gate_scope
from devlint.evidence.not_a_device import (
    never_runs_reason, only_skipped_reason, skipped_uses,
)
from devlint.evidence.vocabulary import (
    _AVAILABILITY_PREFIXES, _unconditional_nodes, in_test_file, is_cuda_only_module,
)
from devlint.analysis.walk import (
    STATEMENT_LIKE, child_statements, first_row, own_parents, parents, spans, statement_parents,
    statements,
)
from devlint.source import Locator

DEVICE_STRING = re.compile(r"cuda(?::\d+)?")
# string constants some rule looks at: CUDA devices, distributed backends, the CUDA
# visibility variable
INTERESTING_STRING = re.compile(r"cuda(?::\d+)?|nccl|gloo|hccl|xccl|CUDA_VISIBLE_DEVICES")
# a string that starts a shell command with the CUDA visibility variable:
# "CUDA_VISIBLE_DEVICES=0 python x.py", f"export CUDA_VISIBLE_DEVICES={gpus}"
VISIBILITY_PREFIX = re.compile(r"\s*(?:export\s+|set\s+)?CUDA_VISIBLE_DEVICES=")

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# `.skip` as an attribute (whitespace or a line continuation may follow the dot):
# `not_a_device.never_runs_reason`
_SKIP_ATTR = re.compile(r"\.[\s\\]*skip(?![A-Za-z0-9_])")


@dataclass
class Where:
    """Where a candidate node stands."""

    function: ast.AST | None
    klass: ast.ClassDef | None
    # under a guard that already established CUDA: the innermost guard's Reason, else False
    guarded: object
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
    env_prefixes: list = field(default_factory=list)  # "CUDA_VISIBLE_DEVICES=..." command text
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
    # `--show-exempt`: [(rule, node, Reason)] that `rules._device.skipped` records while the
    # rule `rule` runs (None: not collecting)
    exempt: list | None = None
    rule: object = None
    # guard row -> the furthest end offset of the candidates a CUDA guard on that row exempts
    # (`rules._device.skipped` records them; `engine.linter` extends the guard's finding)
    guard_extent: dict = field(default_factory=dict)

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
        # a parameter's default belongs to its function's signature (evaluated where the
        # `def` stands, so `w` does not hold that function)
        found = default_of(self, node) if w.level != "function" or w.function else None
        for scope in (found[0] if found else None, w.function, w.klass):
            if scope is None:
                continue
            why = self.scope_reason(scope, w.klass)
            if why:
                return why
        return None

    def scope_reason(self, scope, klass=None) -> str | None:
        """Why the function or class `scope` (a method of `klass`) is CUDA-only, by the
        principles `cuda_only_scope` applies; memoized per scope and class (the twin and
        stand-in principles read the class)."""
        key = (id(scope), None if klass is None else id(klass))
        if key not in self._scope_memo:
            self._scope_memo[key] = (_scope_reason(scope, self.source(scope), self.path)
                                     or stated_scope_reason(scope, self.path)
                                     or graph_scope(scope, self.source(scope), self.path,
                                                    self.memo("platform-layer", lambda:
                                                              platform_layer(self.tree)))
                                     or nvidia_tool_scope(scope, self.source(scope), self.path)
                                     or fa_impl_scope(scope, self.source(scope), self.path)
                                     or gated_benchmark_scope(scope, self.tree, self.text,
                                                              self.path)
                                     or kernel_source_scope(scope, self.memo(
                                         "kernel-builders", lambda: kernel_builders(
                                             self.tree, self.text)), self.path)
                                     or self._calls_cuda_only(scope)
                                     or library_subject(scope, self.tree, self.path,
                                                        in_test_file(self))
                                     or stated_gate_scope(scope, self.tree, self.path)
                                     or never_runs_reason(scope, self.path)
                                     or (only_skipped_reason(scope, lambda: self.memo(
                                         "skipped-uses", lambda: skipped_uses(self.tree)),
                                         self.path) if self._top_level(scope)
                                         and self._may_skip() else None)
                                     or self._twin(scope, klass)
                                     or stand_in_reason(scope, self.memo(
                                         "stand-ins", lambda: api_stand_ins(
                                             self.tree, self.statements())),
                                         self.path, klass))
        return self._scope_memo[key]

    def _may_skip(self) -> bool:
        """The text may hold an unconditional skip decorator (`@pytest.mark.skip`,
        `@unittest.skip`: an attribute `skip`, spelt after a dot): without one no test is
        always skipped, and `skipped_uses` need not walk the module."""
        return self.memo("may-skip", lambda: _SKIP_ATTR.search(self.text or "") is not None)

    def _top_level(self, scope) -> bool:
        """`scope in self.tree.body` by identity, through a set (`in` on the list is linear:
        quadratic over a module of thousands of functions)."""
        return id(scope) in self.memo(("ids", id(self.tree.body)), lambda: {
            id(s) for s in self.tree.body})

    def _twin(self, scope, klass) -> str | None:
        """The deliberate CUDA twin of a generic function defined next to it (same module or
        class): `devlint.evidence.cuda_twin`."""
        # membership by identity, through a set per body (`in` on the list compares nodes
        # one by one: quadratic in a module of thousands of functions)
        if klass is not None and id(scope) in self.memo(("ids", id(klass.body)), lambda: {
                id(s) for s in klass.body}):
            body = klass.body
        elif self._top_level(scope):
            body = self.tree.body
        else:
            return None
        siblings = self.memo(("defs", id(body)), lambda: defined_functions(body))
        return twin_reason(scope, siblings, self.path)

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
        configure, they take no CUDA data. A small class (four methods at most) counts
        through its constructor alone (a wrapper holding that module's object:
        `self.mem = nccl_allocator.nccl_mem(pool)`), never through its other methods."""
        if isinstance(scope, ast.ClassDef):
            methods = [m for m in scope.body if isinstance(m, (ast.FunctionDef,
                                                               ast.AsyncFunctionDef))]
            init = next((m for m in methods if m.name == "__init__"), None)
            # a wrapper is small: one adapter in a large class's constructor says nothing of
            # the rest (a graph runner that other platforms' runners subclass)
            why = self._calls_cuda_only(init) if init is not None and len(methods) <= 4 \
                else None
            if why is None:
                return None
            return Reason("cuda-only-scope", f"`{scope.name}` is built on a CUDA-only module "
                          f"(its constructor: {why})", why.path, why.line)
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
        collect_imports([n for n in self.statements()
                         if isinstance(n, (ast.Import, ast.ImportFrom))], out)
        return out

    def statements(self) -> list:
        """Every statement of the tree in `ast.walk` order (and the except handlers and match
        cases holding some), found without visiting expressions; computed once."""
        return self.memo("statements", lambda: statements(self.tree))

    def tree_parent(self, node):
        """The parent of any node of the tree (`get_parent` knows only the nodes the descent
        visited). A statement's comes from the statement walk; another node's from the
        innermost statement around its line (descending from the module by rows; a map of
        each statement's own expressions is built on first use); what has no line
        (contexts, operators, `arguments`) from a map of the whole tree."""
        full = self._scope_memo.get("tree_parents")
        if full is not None:
            return full.get(id(node))
        if node is self.tree:  # the module: no parent (asked by the walks up to it)
            return None
        if isinstance(node, STATEMENT_LIKE):
            return self.memo("statement_parents",
                             lambda: statement_parents(self.tree)).get(id(node))
        row = getattr(node, "lineno", None)
        if row is not None and self.tree is not None:
            body = self.tree.body
            firsts = self.memo("top_firsts", lambda: [first_row(s) for s in body])
            j = bisect.bisect_right(firsts, row) - 1
            while j >= 0 and (body[j].end_lineno or body[j].lineno) >= row:
                found = self._parent_within(body[j], node, row)
                if found is not None:
                    return found
                j -= 1
        return self.memo("tree_parents", lambda: parents(self.tree)).get(id(node))

    def _parent_within(self, stmt, node, row: int):
        """The parent of `node` (on `row`) if `stmt` holds it: among the statement's own
        expressions, else in the nested statement(s) spanning the row."""
        found = self.memo(("own_parents", id(stmt)), lambda: own_parents(stmt)).get(id(node))
        if found is not None:
            return found
        for child in self.memo(("child_statements", id(stmt)), lambda: child_statements(stmt)):
            if spans(child, row):
                found = self._parent_within(child, node, row)
                if found is not None:
                    return found
        return None

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

