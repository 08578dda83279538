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
from functools import lru_cache

from devlint.engine.prefilter import TRIGGER_TOKEN
from devlint.source import Locator

DEVICE_STRING = re.compile(r"cuda(?::\d+)?")
# string constants some rule looks at: CUDA devices, distributed backends, the CUDA
# visibility variable
INTERESTING_STRING = re.compile(r"cuda(?::\d+)?|nccl|gloo|hccl|xccl|CUDA_VISIBLE_DEVICES")
# Only a test that establishes NVIDIA CUDA itself exempts the code under it. `is_cuda_alike()`
# and `is_rocm()` cover ROCm too, where upstream still derives devices from the platform
# (vLLM fixed `device="cuda"` under `if current_platform.is_rocm():`).
_PLATFORM_CUDA_QUERIES = {"is_cuda"}
# A platform dispatch: an if/elif chain in which one arm tests for CUDA (`is_cuda_alike()`,
# `is_cuda()`, `torch.cuda.is_available()`) and another names a non-CUDA platform gives each
# platform its own code; the CUDA arm's literals are that platform's own (SPEC 3, dispatch).
_CUDA_ARM_QUERIES = {"is_cuda", "is_cuda_alike", "torch.cuda.is_available"}
# platforms other than CUDA and ROCm, as `current_platform.is_<name>()` asks for them
OTHER_PLATFORMS = frozenset({"xpu", "tpu", "cpu", "hpu", "npu", "mps", "neuron", "out_of_tree"})
_OTHER_PLATFORM_QUERIES = {f"is_{p}" for p in OTHER_PLATFORMS}
_OTHER_PLATFORM_MODULES = ("torch.xpu", "torch.mps", "torch.npu", "torch.hpu", "torch.backends.mps")
# `torch.cuda.is_available()` is not among the guards: code uses it to ask "is there a GPU?",
# and upstream fixes rewrite the literals under it (vLLM PR #38901 keeps the test and changes
# `device = "cuda:0"` below it); it is itself a DL401 finding.
_TORCH_CUDA_QUERIES = {"torch.cuda.is_initialized"}

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
                self._scope_memo[key] = (_scope_reason(scope, self.source(scope))
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
                    return f"it is an argument of `{callee[1]}` from `{callee[0]}`"
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
                    return f"`{scope.name}` calls `{callee[1]}` from `{callee[0]}`"
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
                       or _runtime_reason(tree, text))
    facts.cuda_alike = (facts.cuda_only or _cuda_only_reason(path, tree, alike=True)
                        or _vendor_family_reason(path))
    _leading_rows(facts)
    hot = _hot_rows(facts)
    if hot:
        _Descent(facts, hot).run()
    return facts


@lru_cache(maxsize=None)
def _cuda_only_data() -> dict:
    from devlint.profiles import _load_toml_bytes

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "cuda_only.toml")
    with open(path, "rb") as f:
        return _load_toml_bytes(f.read())


@lru_cache(maxsize=None)
def _cuda_only_defaults():
    data = _cuda_only_data()

    def compile_(table):
        stems = tuple(table["stems"])
        stem_re = re.compile(r"(?:^|_)(?:%s)(?:_|$)" % "|".join(map(re.escape, stems)))
        return frozenset(table["folders"]), stem_re, tuple(table["imports"])

    return compile_(data), compile_(data["cuda_alike"]), data.get("profile_folders", {})


@lru_cache(maxsize=None)
def _runtime_markers():
    """(exact names, prefixes, keywords) of CUDA IPC / runtime use (cuda_only.toml `runtime`)."""
    data = _cuda_only_data()
    names = data.get("runtime", [])
    exact = frozenset(n for n in names if not n.endswith("*"))
    prefixes = tuple(n[:-1] for n in names if n.endswith("*"))
    return exact, prefixes, frozenset(data.get("runtime_keywords", []))


def _runtime_reason(tree: ast.Module, text: str) -> str | None:
    """A module that uses CUDA IPC or the CUDA runtime's memory calls (a name, attribute or
    import of one, or `interprocess=True`). Text-gated: the tree is walked only when the
    source mentions a marker."""
    exact, prefixes, keywords = _runtime_markers()
    if not any(m in text for m in exact) and not any(p in text for p in prefixes) \
            and not any(k + "=" in text for k in keywords):
        return None

    def marker(name):
        return name in exact or name.startswith(prefixes)

    for n in _outside_platform_tests(tree):
        t = type(n)
        if t is ast.Name and marker(n.id):
            return f"it uses CUDA IPC, the CUDA runtime or toolkit (`{n.id}`)"
        if t is ast.Attribute and marker(n.attr):
            return f"it uses CUDA IPC, the CUDA runtime or toolkit (`.{n.attr}`)"
        if t is ast.alias and marker(n.name.rsplit(".", 1)[-1]):
            return f"it uses CUDA IPC, the CUDA runtime or toolkit (imports `{n.name}`)"
        if t is ast.keyword and n.arg in keywords and not (
                isinstance(n.value, ast.Constant) and not n.value.value):
            return f"it uses CUDA IPC (`{n.arg}=`)"
    return None


_PLATFORM_TEST_NAMES = {"is_cuda", "is_cuda_alike", "is_rocm"} | _OTHER_PLATFORM_QUERIES


def _is_platform_test(test) -> bool:
    """A test that names a platform (`current_platform.is_cuda_alike()`, `not is_rocm()`,
    `torch.cuda.is_available()`, and `and`/`or` of them)."""
    if isinstance(test, ast.UnaryOp):
        return _is_platform_test(test.operand)
    if isinstance(test, ast.BoolOp):
        return any(_is_platform_test(v) for v in test.values)
    if isinstance(test, ast.Call):
        f = test.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name in _PLATFORM_TEST_NAMES or (
            name == "is_available" and isinstance(f, ast.Attribute)
            and getattr(f.value, "attr", None) in ("cuda", "xpu", "mps", "npu"))
    return False


def _outside_platform_tests(tree):
    """The nodes of a module outside `if <platform test>:` blocks: code that dispatches on the
    platform uses the CUDA runtime where it is CUDA (kv_offload's `host_register`)."""
    stack = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.If) and _is_platform_test(n.test):
            stack.append(n.test)
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


def _profile_folder_reason(path: str, profile: str) -> str | None:
    folders = _cuda_only_defaults()[2].get(profile, ())
    for part in os.path.abspath(path).replace(os.sep, "/").split("/")[:-1]:
        if part in folders:
            return f"a platform module (`{part}/`, {profile} profile)"
    return None


def _cuda_only_reason(path: str, tree: ast.Module, alike: bool = False) -> str | None:
    """Why a file is CUDA-only by construction (devlint/data/cuda_only.toml): its folder, its
    name, or an unconditional top-level import of a CUDA-only stack (an import inside
    try/except or an `if` is optional)."""
    folders, stem_re, imports = _cuda_only_defaults()[1 if alike else 0]
    parts = os.path.abspath(path).replace(os.sep, "/").split("/")
    for folder in parts[:-1]:
        if folder in folders:
            return f"in a `{folder}/` folder"
    stem = parts[-1].rsplit(".", 1)[0]
    if _names_cuda_stem(stem_re, stem):
        return f"its name `{parts[-1]}` says it is CUDA-specific"
    if is_test_path(parts):
        # a test module importing a CUDA-only stack gates those tests; its device constants
        # and tensors are still meant to follow the platform (vLLM PR #38901)
        return None
    def is_cuda_module(qual):
        return _names_cuda_module(qual, imports)

    for stmt in tree.body:
        for qual in _imported_modules(stmt):
            if is_cuda_module(qual):
                return f"imports `{qual}`"
        if isinstance(stmt, ast.Try):
            # `try: import cuda.x  except ImportError: import cuda.y` (or re-raise): every
            # branch needs a CUDA-only stack
            tried = [q for st in stmt.body for q in _imported_modules(st)]
            if tried and all(is_cuda_module(q) for q in tried) and all(
                    all(isinstance(st, ast.Raise) or (_imported_modules(st) and all(
                        is_cuda_module(q) for q in _imported_modules(st))) for st in h.body)
                    for h in stmt.handlers):
                return f"imports `{tried[0]}` (every fallback is CUDA-only too)"
    return None


def is_test_path(parts) -> bool:
    """A test module, from its path's parts: under `tests/`, `test_*.py` or `conftest.py`."""
    stem = parts[-1].rsplit(".", 1)[0]
    return "tests" in parts[:-1] or stem.startswith("test_") or stem == "conftest"


_AVAILABILITY_PREFIXES = ("has_", "is_", "supports", "check_", "get_", "set_")


@lru_cache(maxsize=1024)
def is_cuda_only_module(module: str, wrappers: bool = True) -> bool:
    """A dotted module path whose module is CUDA-only by the same vocabulary as files: a
    CUDA-only stack (`imports`), a package part named like a CUDA-only folder
    (`vllm.vllm_flash_attn.cute.interface`), or a last part named like a CUDA-only file
    (`...simple_kv_offload.cuda_mem_ops`). With `wrappers=False`, a project's module named
    exactly after a stack (`vllm.utils.flashinfer`: availability checks and dispatch) and a
    platform module (`vllm.platforms.cuda`) do not count."""
    folders, stem_re, imports = _cuda_only_defaults()[0]
    if _names_cuda_module(module, imports):
        return True
    parts = module.split(".")
    if not wrappers and (parts[-1] in imports or "platforms" in parts[:-1]):
        return False
    # a vendored tree is exempt as a file, but vendoring says nothing about what it runs on
    return any(p in folders and p not in VENDORED for p in parts[1:]) \
        or _names_cuda_stem(stem_re, parts[-1])


VENDORED = frozenset({"third_party", "vendor", "vendored", "_vendor"})


def _names_cuda_stem(stem_re, stem: str) -> bool:
    """A file or module name from the `stems` list. CUDA graphs have generic forms
    (torch.xpu.XPUGraph): `cuda_graph` names no CUDA-only stack."""
    return bool(stem_re.search(_CUDA_GRAPH.sub("", stem)))


_CONDITIONAL = (ast.If, ast.Try, ast.IfExp, ast.BoolOp, ast.Lambda, ast.FunctionDef,
                ast.AsyncFunctionDef) + tuple(
    getattr(ast, n) for n in ("Match", "TryStar") if hasattr(ast, n))


def _unconditional_nodes(function):
    """The nodes of a function outside `if`/`try`/`match` blocks, conditional expressions
    and nested functions (which run when called, not with the function)."""
    stack = list(function.body)
    while stack:
        n = stack.pop()
        if isinstance(n, _CONDITIONAL):
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


_CUDA_GRAPH = re.compile(r"_?cuda_?graphs?")


def _names_cuda_module(qual: str, modules) -> bool:
    """`cupy`, `cuda.bindings.driver`, and a CUDA-only package anywhere in a dotted path
    (`vllm.vllm_flash_attn.cute.interface`, `pkg.models.x.nvidia.ops`). `cuda` itself only
    counts as the top-level cuda-python package: `torch.cuda` is no CUDA-only stack."""
    parts = qual.split(".")
    for mod in modules:
        if qual == mod or qual.startswith(mod + "."):
            return True
        if mod in _VENDOR_PACKAGES and mod in parts[1:]:
            return True
    return False


# packages that hold only NVIDIA code wherever they sit in a dotted path (a library's name
# inside a path, `vllm.utils.deep_gemm`, is usually a wrapper that checks availability)
_VENDOR_PACKAGES = ("nvidia", "cute", "cutlass")


def _imported_modules(stmt) -> list:
    if isinstance(stmt, ast.Import):
        return [a.name for a in stmt.names]
    if isinstance(stmt, ast.ImportFrom) and stmt.module:
        if stmt.level == 0:
            return [stmt.module]
        return [stmt.module.rsplit(".", 1)[-1]]  # `from .cute import x`: judge by the last part
    return []


_NON_CUDA_VENDORS = {"xpu", "cpu", "tpu", "npu", "hpu", "intel", "ascend", "mps", "neuron",
                     "generic", "torch", "reference"}


@lru_cache(maxsize=4096)
def _vendor_dirs(directory: str) -> frozenset:
    try:
        return frozenset(e.name for e in os.scandir(directory) if e.is_dir())
    except OSError:
        return frozenset()


def _vendor_family_reason(path: str) -> str | None:
    """Shared code of a family whose only backends are NVIDIA and AMD folders
    (`models/x/{nvidia,amd,common}`): it only ever runs on CUDA-alike devices."""
    d = os.path.dirname(os.path.abspath(path))
    for _ in range(2):
        subdirs = _vendor_dirs(d)
        vendors = subdirs & {"nvidia", "amd", "rocm", "cuda"}
        if vendors and not subdirs & _NON_CUDA_VENDORS:
            return f"its family `{os.path.basename(d)}` has only {'/'.join(sorted(vendors))} backends"
        d = os.path.dirname(d)
    return None


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


_VENDOR_NAME = re.compile(r"cuda(?!_?graph)|nccl|cutlass|cutedsl|flashinfer|deepep|deep_gemm"
                          r"|nvshmem|nvfp4|cublas|cudnn|nvtx|nvml|nvls|nixl_?ep")
# direct use of the CUDA runtime (raw stream handles, CUDA IPC, cudart); CUDA graphs are not
# among them: torch.xpu.XPUGraph and friends give them a generic form
# (CUDA IPC makes the whole module CUDA-only: cuda_only.toml `runtime`)
_RUNTIME_ATTRS = {"cuda_stream", "cudart", "cudaStream_t", "MemPool"}
_RUNTIME_NAMES = {"CUstream", "CudaRTLibrary", "cudart", "cuda_rt", "cupy"}
_RUNTIME_MARKERS = tuple(_RUNTIME_ATTRS | _RUNTIME_NAMES | {"DeviceType.CUDA"})


def _scope_reason(scope, text: str) -> str | None:
    name = scope.name.lower()
    m = _VENDOR_NAME.search(name)
    if m and not name.startswith("test"):
        return f"`{scope.name}` names `{m.group(0)}`"
    if not isinstance(scope, ast.ClassDef):
        # an unconditional import at the function's top level (one under an `if` picks a
        # backend, it does not make the function CUDA-only)
        imports = _cuda_only_defaults()[0][2]
        for st in scope.body:
            for qual in _imported_modules(st):
                if _names_cuda_module(qual, imports):
                    return f"`{scope.name}` imports `{qual}`"
    if not any(marker in text for marker in _RUNTIME_MARKERS):
        return None  # the source says it cheaply; walk the tree only to confirm
    for n in ast.walk(scope):
        if isinstance(n, ast.Attribute) and n.attr in _RUNTIME_ATTRS:
            return f"`{scope.name}` uses the CUDA runtime (`.{n.attr}`)"
        if isinstance(n, ast.Attribute) and n.attr == "CUDA" and (
                getattr(n.value, "attr", None) == "DeviceType"
                or getattr(n.value, "id", None) == "DeviceType"):
            return f"`{scope.name}` names the CUDA device type explicitly (`DeviceType.CUDA`)"
        if isinstance(n, ast.Name) and n.id in _RUNTIME_NAMES:
            return f"`{scope.name}` uses the CUDA runtime (`{n.id}`)"
    return None


def _alike_polarity(test) -> int:
    """+1 for `is_cuda_alike()` / `current_platform.is_cuda_alike()` (also as one operand of
    `and`), -1 for its negation, 0 otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -_alike_polarity(test.operand)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return 1 if any(_alike_polarity(v) > 0 for v in test.values) else 0
    if isinstance(test, ast.Call):
        test = test.func
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return 1 if name == "is_cuda_alike" else 0


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


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
