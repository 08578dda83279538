"""Principle: a file that is CUDA-only by construction is not reported.

Evidence (each a `Reason("cuda-only-module", ...)`): its folder (`nvidia/`, `cuda/`, a
vendored kernel tree), its name (`cuda_mem_ops.py`), an unconditional top-level import of a
CUDA-only stack (`cutlass`, `cuda.bindings`, `cupy`, `flashinfer`...: file:line of the
import), its use of CUDA IPC or the CUDA runtime outside platform tests by its top-level code
or by two or more of its functions and classes, not all through torch's tensor-sharing
reductions (file:line of the use; a use in one function or class makes only that scope
CUDA-only), a profile's platform folder (`platforms/` in the vllm profile), or a vendor family whose
only backends are NVIDIA/AMD folders (then only CUDA-alike: the torch.cuda API is right).
A module whose module-level gate (`pytestmark`, a module-level skip) requires an NVIDIA compute
capability (`devlint.evidence.capability`) is CUDA-only too.
The module of a CUDA-alike platform in a `platforms/` package (`platforms/rocm.py`) is that
platform's own (its device literals name ROCm's "cuda" device type).
A package (a folder with `__init__.py`) named like a CUDA-only file (`deep_gemm_wrapper/`,
`marlin_lora_temp/`: a `stems` word as a `_`-separated part) holds that stack's code.
An import under `try` whose `except` only binds the library's names to mocks
(`te = MagicMock()`: the module still imports, none of its code works) is required too.
Limits: one marker never makes a file CUDA-only; a folder that is no package is matched only
by its exact name (`folders`), never by a part of it, and so is a test package
(`nvfp4_training/` tests may test a plain Triton kernel of that format: their gates decide); an import under `try`/`if` is optional; a
test module importing a CUDA-only stack only gates its tests.
In a package (applied by the project stage, `Project.calls_cuda_only`): a module that imports,
at the top, a module of its own package that is CUDA-only on import (it imports a CUDA-only
stack at the top, or such a sibling) is CUDA-only on import too: the package is a subsystem
built on that stack (`dwdp/weight_manager.py` imports `dwdp/weight_buffer.py`, which imports
`dwdp/page_pool.py`, which imports `cuda.bindings`). Evidence: the sibling (its reason). Not
across packages (a generic module importing the subsystem keeps its findings), not through
an import under `try`/`if` or inside a function, and not through a sibling CUDA-only by its
name or folder only.
"""
from __future__ import annotations

import ast
import os
from functools import lru_cache

from devlint.evidence import Reason
from devlint.evidence.capability import module_gate
from devlint.evidence.cuda_only_scope import own_nodes, runtime_marker
from devlint.evidence.platform_ladder import _outside_platform_tests
from devlint.evidence.vocabulary import (
    _cuda_only_defaults, _imported_modules, _names_cuda_module, _names_cuda_stem,
    _runtime_markers, is_test_path,
)

_P = "cuda-only-module"


def _runtime_reason(tree: ast.Module, text: str, path: str | None = None) -> Reason | None:
    """A module built on CUDA IPC or the CUDA runtime's memory calls (a name or attribute of
    one, or `interprocess=True`): used by its top-level code, or by two or more of its
    top-level functions and classes. A use in one function or class makes only that scope
    CUDA-only (`cuda_only_scope`): one IPC helper in a 700-line trainer says nothing of the
    trainer. An import alone is no use. Text-gated: the tree is walked only when the source
    mentions a marker."""
    exact, prefixes, keywords = _runtime_markers()
    if not any(m in text for m in exact) and not any(p in text for p in prefixes) \
            and not any(k + "=" in text for k in keywords):
        return None
    first = None  # (line, marker) of the first unit's use
    for unit in tree.body:
        if isinstance(unit, (ast.Import, ast.ImportFrom)):
            continue
        # a unit's nested functions count for it; code under a platform test dispatches
        nodes = _outside_platform_tests(unit) if isinstance(unit, _UNITS) else own_nodes([unit])
        for n in nodes:
            marker = runtime_marker(n, exact, prefixes, keywords)
            if not marker:
                continue
            line = getattr(n, "lineno", None)
            if not isinstance(unit, _UNITS):
                return Reason(_P, "its top-level code uses CUDA IPC, the CUDA runtime or "
                              f"toolkit ({marker})", path, line)
            if first is None:
                first = (line, marker)
                break
            if first[1].strip("`.") in _TORCH_SHARING and marker.strip("`.") in _TORCH_SHARING:
                break  # torch's tensor sharing alone: see _TORCH_SHARING
            return Reason(_P, f"it is built on CUDA IPC, the CUDA runtime or toolkit ({first[1]} "
                          f"and {marker}, in two of its functions or classes)", path, first[0])
    return None


_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# torch's own tensor-sharing reductions: torch shares other devices' tensors the same way, so
# a module that only uses these in several places is not thereby built on CUDA (vLLM's
# sharded_rdt_trainer.py: its weight-transfer engine is generic around them); they still make
# the function or class using them CUDA-only. The CUDA driver calls (`cudaIpc*`, `cuMem*`,
# `cudaHostRegister`) are CUDA by nature.
_TORCH_SHARING = frozenset({"reduce_tensor", "rebuild_cuda_tensor"})


def _profile_folder_reason(path: str, profile: str) -> Reason | None:
    folders = _cuda_only_defaults()[2].get(profile, ())
    for part in os.path.abspath(path).replace(os.sep, "/").split("/")[:-1]:
        if part in folders:
            return Reason(_P, f"a platform module (`{part}/`, {profile} profile)", path)
    return None


def _cuda_only_reason(path: str, tree: ast.Module, alike: bool = False,
                      by_path: bool = True) -> Reason | None:
    """Why a file is CUDA-only by construction (devlint/data/cuda_only.toml): its folder, its
    name (unless `by_path` is false: the `skip-cuda-only-paths` setting), or an unconditional
    top-level import of a CUDA-only stack (an import inside try/except or an `if` is
    optional)."""
    folders, stem_re, imports = _cuda_only_defaults()[1 if alike else 0]
    parts = os.path.abspath(path).replace(os.sep, "/").split("/")
    test = is_test_path(parts)
    for i, folder in enumerate(parts[:-1] if by_path else ()):
        if folder in folders:
            return Reason(_P, f"in a `{folder}/` folder", path)
        if not test and _names_cuda_stem(stem_re, folder) \
                and _is_package("/".join(parts[:i + 1])):
            # a package named like a CUDA-only file (`deep_gemm_wrapper/`, `marlin_lora/`):
            # its modules are that stack's wrapper, as a file of that name would be
            return Reason(_P, f"in the `{folder}/` package, named for a CUDA-only stack", path)
    stem = parts[-1].rsplit(".", 1)[0]
    if by_path and _names_cuda_stem(stem_re, stem):
        return Reason(_P, f"its name `{parts[-1]}` says it is CUDA-specific", path)
    if by_path and not alike and len(parts) > 1 and parts[-2] == "platforms" \
            and stem in _ALIKE_PLATFORMS and _is_package("/".join(parts[:-1])):
        # `platforms/rocm.py` beside `platforms/cuda.py`: the ROCm platform's own module,
        # where "cuda" is the device type it names (not a file that only calls HIP kernels)
        return Reason(_P, f"the `{stem}` platform module of a `platforms/` package", path)
    gate = module_gate(tree)
    if gate is not None:
        return Reason(_P, "the whole module only runs on a CUDA build or a given NVIDIA compute capability "
                      "or AMD architecture",
                      path, gate.lineno)
    if test:
        # a test module importing a CUDA-only stack gates those tests; its device constants
        # and tensors are still meant to follow the platform (vLLM PR #38901)
        return None
    def is_cuda_module(qual):
        return _names_cuda_module(qual, imports)

    for stmt in tree.body:
        for qual in _imported_modules(stmt):
            if is_cuda_module(qual):
                return Reason(_P, f"imports `{qual}`", path, stmt.lineno)
        if isinstance(stmt, ast.Try):
            # `try: import cuda.x  except ImportError: import cuda.y` (or re-raise): every
            # branch needs a CUDA-only stack
            tried = [q for st in stmt.body for q in _imported_modules(st)]
            if tried and all(is_cuda_module(q) for q in tried) and all(
                    all(isinstance(st, ast.Raise) or (_imported_modules(st) and all(
                        is_cuda_module(q) for q in _imported_modules(st))) for st in h.body)
                    for h in stmt.handlers):
                return Reason(_P, f"imports `{tried[0]}` (every fallback is CUDA-only too)", path,
                              stmt.lineno)
            stack = next((q for q in tried if is_cuda_module(q)), None)
            if stack and stmt.handlers and all(_stubs(h) for h in stmt.handlers):
                return Reason(_P, f"imports `{stack}` (without it the module only stubs it "
                              "with mocks)", path, stmt.lineno)
    return None


_ALIKE_PLATFORMS = frozenset({"rocm", "hip", "amd"})
_MOCKS = frozenset({"MagicMock", "Mock", "NonCallableMagicMock"})


def _stubs(handler) -> bool:
    """`except ImportError: te = MagicMock()`: the fallback binds the library's names to mocks
    so that the module still imports; none of its code works without the library."""
    for n in ast.walk(handler):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            f = n.value.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in _MOCKS:
                return True
    return False


@lru_cache(maxsize=4096)
def _is_package(directory: str) -> bool:
    """A folder that is a Python package (an `__init__.py`): a folder named by the user's
    checkout (`~/cuda_work/`) is no package of the code."""
    return os.path.isfile(os.path.join(directory or "/", "__init__.py"))


_NON_CUDA_VENDORS = {"xpu", "cpu", "tpu", "npu", "hpu", "intel", "ascend", "mps", "neuron",
                     "generic", "torch", "reference"}


@lru_cache(maxsize=4096)
def _vendor_dirs(directory: str) -> frozenset:
    try:
        return frozenset(e.name for e in os.scandir(directory) if e.is_dir())
    except OSError:
        return frozenset()


def _vendor_family_reason(path: str) -> Reason | None:
    """Shared code of a family whose only backends are NVIDIA and AMD folders
    (`models/x/{nvidia,amd,common}`): it only ever runs on CUDA-alike devices."""
    d = os.path.dirname(os.path.abspath(path))
    for _ in range(2):
        subdirs = _vendor_dirs(d)
        vendors = subdirs & {"nvidia", "amd", "rocm", "cuda"}
        if vendors and not subdirs & _NON_CUDA_VENDORS:
            return Reason(_P, f"its family `{os.path.basename(d)}` has only "
                          f"{'/'.join(sorted(vendors))} backends", d)
        d = os.path.dirname(d)
    return None
