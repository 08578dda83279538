"""The words that name CUDA-only code, shared by the principles (data:
`devlint/data/cuda_only.toml`): CUDA-only stacks, folders and file stems, CUDA runtime
markers, vendored trees, test paths, availability-check prefixes.

Limits: a name is a weak signal; the principles decide how much of it counts (a whole file
only by its folder, its name or an unconditional import, never by one local name)."""
from __future__ import annotations

import ast
import os
import re
from functools import lru_cache


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


def is_test_path(parts) -> bool:
    """A test module, from its path's parts: under `tests/`, `test_*.py` or `conftest.py`."""
    stem = parts[-1].rsplit(".", 1)[0]
    return "tests" in parts[:-1] or stem.startswith("test_") or stem == "conftest"


# not `testing/`: a shipped package of test utilities (`torch.testing`, `numpy.testing`) is
# product code that other code imports
_TEST_DIRS = frozenset({"test", "tests", "unittests"})


def is_test_module(path: str) -> bool:
    """Test code, from its path: a test module (`test_*.py`, pytest's other default file
    pattern `*_test.py`, `conftest.py`) or a test helper (any file under `test/`, `tests/`,
    `unittests/`; not `testing/`, a shipped package like `torch.testing`). The project stage's one question (`xreach`: tests exercise
    what they name wherever they run, they are not the product code that reaches a module;
    `callees`: a test or helper may count a CUDA-only module's function as requiring CUDA).
    `is_test_path`, which the per-file evidence and `Project.calls_cuda_only` ask, is
    narrower: no `*_test.py`, and of the folders only `tests/`."""
    parts = path.replace(os.sep, "/").split("/")
    return is_test_path(parts) or parts[-1].endswith("_test.py") or not _TEST_DIRS.isdisjoint(
        parts[:-1])


def absolute_parts(facts) -> list:
    """The parts of the file's absolute path (`/` separated), computed once per file: every
    candidate's evidence asks (`os.path.abspath` per candidate was a few percent of a large
    file's lint). Callers only read the list."""
    return facts.memo("absolute-parts", lambda: os.path.abspath(facts.path).replace(
        os.sep, "/").split("/"))


def in_test_file(facts) -> bool:
    """`is_test_path` of the file's absolute path, once per file."""
    return facts.memo("in-test-file", lambda: is_test_path(absolute_parts(facts)))


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


def unconditional_in(body, conditional=_CONDITIONAL):
    """The nodes of a statement list outside `if`/`try`/`match` blocks, conditional
    expressions and nested functions (which run when called, not with the list), or outside
    whatever node types `conditional` names."""
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, conditional):
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


def _unconditional_nodes(function):
    """The nodes that run whenever `function` runs (see `unconditional_in`)."""
    return unconditional_in(function.body)


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


@lru_cache(maxsize=None)
def gate_stacks() -> frozenset:
    """The libraries whose availability a test gate may ask for, each CUDA-only (or
    CUDA-alike): cuda_only.toml's `gate_stacks` and `imports` (their top-level names)."""
    data = _cuda_only_data()
    return frozenset(n.split(".")[0].lower() for n in (*data.get("gate_stacks", ()),
                                                         *data.get("imports", ())))


_LIBRARY_CHECK = re.compile(r"(?:is_)?(?:torch_)?(\w+?)_available")


def cuda_library_check(node) -> str | None:
    """The CUDA-only library a call asks for, else None: `is_xformers_available()`,
    `_is_mslk_available()`, `importlib.util.find_spec("flash_attn")`."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    name = (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")).lower()
    m = _LIBRARY_CHECK.fullmatch(name.lstrip("_"))
    if m and m.group(1) in gate_stacks():
        return m.group(1)
    if name == "find_spec" and node.args and isinstance(node.args[0], ast.Constant) \
            and str(node.args[0].value).split(".")[0].lower() in gate_stacks():
        return str(node.args[0].value).split(".")[0].lower()
    return None
