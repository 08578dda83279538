"""Principle: a benchmark of a CUDA-only kernel is CUDA's own.

```python
# benchmarks/moe/bench_unpad_token_groups.py
from pkg.kernels.mxfp8 import fused_unpad_token_groups_cuda, torch_unpad_token_groups

device = torch.device("cuda")
```
A benchmark exists to time the kernels it imports. When it imports, unconditionally at its
top, a kernel named for a CUDA-only stack (a CuTe DSL, CUTLASS, DeepGEMM, FlashInfer, NVFP4 ...
kernel, or one of AMD's: FlyDSL, aiter, whose torch device type is "cuda" too), or one named
for its CUDA implementation (`fused_unpad_token_groups_cuda`, `mxfp8_quantize_cuda_3d`,
`_mxfp8_cuda_kernels_available`), its device, synchronisations, CUDA events and NCCL group
serve that kernel, which runs on no other accelerator; a generic baseline timed beside it
(`torch_unpad_token_groups`) is the reference it is measured against.
Evidence (a `Reason("kernel-benchmark", ...)`, file:line of the import): a benchmark module
(in a `benchmarks`/`benchmark`/`bench` folder among its five nearest, or named `bench*`, `benchmark*`, `*_bench`,
`*roofline*`; never a test module) whose unconditional top-level `import`/`from ... import`
names such a kernel: the module's last part or an imported name holding a word of
cuda_only.toml's `stems` (or its `[cuda_alike]` stems) as a `_`-separated part, or an
imported name whose `cuda` part is its implementation's qualifier: not its first part, and
followed only by shape, kernel or availability words (`_3d`, `_kernels_available`); or, in
such a module, a provider it compares (a string of `triton.testing.Benchmark(line_vals=[...])`,
or one a `provider == "..."` test compares with) that names a kernel's CUDA implementation
(`cuda_rms_layernorm`, `vllm_cuda_func`: `cuda` as one of its words) beside a provider that
does not (its Triton or torch baseline): file:line of that provider.
Limits: a test module is never CUDA-only by its imports (they gate some tests); an import
under `try`/`if` is optional; `cuda` about the device rather than the kernel is no kernel
(`benchmark_cuda_function_in_microseconds`, `to_cuda`, `cuda_device_count`,
`model_parallel_cuda_manual_seed`), nor are CUDA graphs (torch.xpu.XPUGraph); a Triton kernel
(`triton_mxfp8_dequant`) is no CUDA-only stack, nor is a name that also names a portable
kernel (`triton_deep_gemm_moe`: a dispatch between the two; vLLM's benchmark_moe.py importing
it was made device-generic upstream, dev corpus 064); a provider list that names only CUDA
implementations, CUDA graphs (`cuda_graph`) or devices (`"cuda"`, `"xpu"`) compares no kernel
implementations; a library module importing such a kernel
dispatches among backends and is judged by `cuda-only-module` and `cuda-only-scope`.
"""
from __future__ import annotations

import ast
import os
import re

from devlint.evidence import Reason
from devlint.evidence.vocabulary import (
    _AVAILABILITY_PREFIXES, _cuda_only_defaults, _names_cuda_stem, is_test_path,
)

_P = "kernel-benchmark"
_BENCH_FOLDERS = frozenset({"benchmarks", "benchmark", "bench", "benches"})
_BENCH_STEM = re.compile(r"(?i)^(?:bench|benchmark)|_bench(?:mark)?$|roofline")
# what may follow a kernel's `cuda` qualifier: its shape or layout (`_3d`, `_1x32`, `_M`),
# that it is a kernel, an op, its pass, or an availability check of such kernels
_AFTER_CUDA = re.compile(r"(?i)^(?:\d+d|\d+x\d+|[a-z]|kernels?|ops?|impl|ext|fwd|bwd|forward"
                         r"|backward|available|enabled|v\d+)$")
# stems that name no kernel: an environment report (`collect_env`) describes CUDA, it times
# nothing
# nothing, and a number format (`nvfp4_tensor`) is emulated on any device
_NOT_KERNELS = re.compile(r"(?:^|_)(?:collect_env|nvfp4)(?:_|$)")
# backends of other platforms (a CPU collective, another accelerator's): a benchmark that also
# imports one compares platforms (`NVSHMEMCopyService` beside `GlooCopyService`)
_OTHER_PLATFORM = frozenset({"gloo", "cpu", "xpu", "npu", "hpu", "mps", "musa", "mlu", "hccl",
                             "xccl", "ccl", "oneccl", "habana", "ascend", "neuron", "tpu"})
# kernels that run on other accelerators too: a name that also names one of them is a
# dispatch between it and the CUDA-only stack (vLLM's `triton_deep_gemm_moe`: its benchmark
# was made device-generic upstream, dev corpus 064)
_PORTABLE = frozenset({"triton", "torch", "native", "ref", "reference", "generic", "eager"})
_DEVICE_VERBS = frozenset({"to", "get", "set", "move", "is", "has", "use", "on", "with"})


def is_benchmark_path(path: str) -> bool:
    """A benchmark module by its path: a benchmark folder or a benchmark's file name, and not
    a test module."""
    parts = os.path.abspath(path).replace(os.sep, "/").split("/")
    if is_test_path(parts):
        return False
    stem = parts[-1].rsplit(".", 1)[0]
    # the folder among the file's nearest ones: a checkout under `~/benchmarks/` makes no
    # file of the project a benchmark
    return bool(_BENCH_STEM.search(stem)) or any(p in _BENCH_FOLDERS for p in parts[-6:-1])


def _cuda_qualified(name: str) -> bool:
    """A kernel named for its CUDA implementation: `cuda` after another part (not a device
    verb: `to_cuda`), followed only by shape, kernel or availability words."""
    parts = [p for p in name.lower().split("_") if p]
    for i, p in enumerate(parts):
        if p != "cuda" or i == 0 or parts[i - 1] in _DEVICE_VERBS:
            continue
        if all(_AFTER_CUDA.match(q) for q in parts[i + 1:]):
            return True
    return False


def _kernel_word(name: str) -> bool:
    """`name` (a module's last part or an imported name) names a CUDA-only kernel: a stem
    word of either table, or a `cuda` implementation qualifier (`cuda` alone, as the stems
    list has it for file names, is judged by `_cuda_qualified` here: a function name with it
    often says where something moves)."""
    if name.lstrip("_").lower().startswith(_AVAILABILITY_PREFIXES):
        return False  # `is_ROCM`, `has_cutlass`: a query that picks among platforms
    parts = [p for p in name.lower().split("_") if p]
    if _PORTABLE & set(parts):
        return False  # `triton_deep_gemm_moe`: a dispatch that also has a portable kernel
    rest = "_".join(p for p in parts if p != "cuda")
    if rest and not _NOT_KERNELS.search(rest) and any(_names_cuda_stem(stem_re, rest)
                    for _, stem_re, _ in _cuda_only_defaults()[:2]):
        return True
    return _cuda_qualified(name)


def module_reason(tree: ast.Module, path: str | None) -> Reason | None:
    """The Reason for a benchmark module that imports a CUDA-only kernel (see the module
    docstring), else None."""
    if not path or not is_benchmark_path(path):
        return None
    found = None
    for st in tree.body:
        if isinstance(st, ast.Import):
            names = [a.name.rsplit(".", 1)[-1] for a in st.names]
        elif isinstance(st, ast.ImportFrom) and st.module:
            names = [st.module.rsplit(".", 1)[-1]] + [a.name for a in st.names]
        else:
            continue
        for name in names:
            if _OTHER_PLATFORM & set(_parts(name)):
                return None  # it compares with another platform's backend
            if found is None and _kernel_word(name):
                found = (name, st.lineno)
    if found is None:
        provider = _cuda_provider(tree)
        if provider is not None:
            return Reason(_P, "a benchmark that times a kernel's CUDA implementation against "
                          f"others: its provider `{provider.value}`", path, provider.lineno)
        return None
    return Reason(_P, f"a benchmark of a CUDA-only kernel: it imports `{found[0]}`",
                  path, found[1])


# the names under which a benchmark lists the implementations it compares
# (`triton.testing.Benchmark(line_vals=[...])`) and the variable it dispatches on
_PROVIDER_KEYWORDS = frozenset({"line_vals", "providers"})
_PROVIDER_NAMES = frozenset({"provider", "impl", "backend"})


def _cuda_provider(tree: ast.Module):
    """The first provider a benchmark compares (a string of a `line_vals=` list, or one a
    `provider == "..."` test compares with) that names a CUDA implementation
    (`cuda_rms_layernorm`, `vllm_cuda_func`: `cuda` as one of its `_`-separated words, not
    CUDA graphs), where the providers also name another implementation (a Triton or torch
    baseline beside it: the benchmark compares implementations, not devices)."""
    providers = []
    for n in ast.walk(tree):
        if isinstance(n, ast.keyword) and n.arg in _PROVIDER_KEYWORDS \
                and isinstance(n.value, (ast.List, ast.Tuple)):
            providers.extend(e for e in n.value.elts
                             if isinstance(e, ast.Constant) and isinstance(e.value, str))
        elif isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq) \
                and isinstance(n.left, ast.Name) and n.left.id in _PROVIDER_NAMES \
                and isinstance(n.comparators[0], ast.Constant) \
                and isinstance(n.comparators[0].value, str):
            providers.append(n.comparators[0])
    cuda = [p for p in providers if _cuda_implementation(p.value)]
    if not cuda or all(_cuda_implementation(p.value) for p in providers):
        return None
    return min(cuda, key=lambda p: p.lineno)


def _cuda_implementation(name: str) -> bool:
    parts = [p for p in re.split(r"[_\-\s]+", name.lower()) if p]
    return "cuda" in parts and len(parts) > 1 and not {"graph", "graphs"} & set(parts) \
        and not _OTHER_PLATFORM & set(parts)


def _parts(name: str) -> list:
    """The lower-case words of a name: `_`-separated, and CamelCase split
    (`GlooCopyService`: gloo, copy, service)."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [p for p in words.lower().split("_") if p]
