"""Stage 5: what one file cannot tell about itself, read from the package around it.

The per-file stages (and the cache, keyed by content) see one file. Some code is CUDA-only
because of its neighbours, so this stage runs in the main process after them, over the files
that have findings, and only drops findings; it never adds one:

- **CUDA-only through a project module.** A module that calls, outside any `if` or `except`,
  a function or class it imports at top level from a project module that is CUDA-only (by its
  name or folder, its imports, its CUDA runtime or toolkit use, or by this same rule one step
  further) is CUDA-only too: the M2N trainer calls `m2n_common.to_placements` (which sets up
  `vllm.utils.nccl`), the CPU-offload worker builds the `cuMemcpyBatchAsync` copy backend.
  Not a module that names another platform itself (`is_rocm()`, `torch.xpu` ...): that call
  is its CUDA path. Availability checks, getters and setters (`has_`, `is_`, `get_`, `set_`
  ...), a project's wrappers named exactly after a stack (`vllm.utils.flashinfer`) and its
  platform modules do not count. ROCm files and test modules are never CUDA-only this way.
  One weak signal never exempts a whole file: the calls must stand in the module body or in
  two of its module-level functions or classes; where one function or class holds them, only
  that function or class is CUDA-only (a generic model whose decoder layer enters
  `use_symmetric_memory()` keeps its other findings), and it passes that on to the modules
  that call it by name (`DmaBackend`, the class of `copy_backend` that calls `cuda_mem_ops`).
- **A test double of a CUDA-only module** (`hf3fs_mock_client`, imported in place of the
  CUDA-only `hf3fs_client` when that import fails) is CUDA-only, and so is the importer.
- **A function that only runs on CUDA.** A module-level function whose every use, in the
  package and in its own module, stands under a test that selects CUDA (inside
  `if current_platform.is_cuda():`, or after an exit that rules out every other platform the
  module names, `if current_platform.is_xpu() or current_platform.is_rocm(): return`), in a
  function or class CUDA-only by its name, in a CUDA-only module, or in another module-level
  function that only runs on CUDA: `swap_blocks_triton`'s kernel, which
  `gpu_worker._select_swap_blocks_fn` returns only when `not is_xpu() and not is_rocm()`. Its
  table-API uses stay findings when a platform test is what selects CUDA, as under an in-file
  guard. Uses it cannot follow (through the module object, a star import, a re-export) keep
  the findings; uses outside the package are not seen.
- **A dead default** (`defaults`, `devlint.evidence.package_dead_default`): a finding in a
  parameter default whose every use in the package is a call that passes the parameter.
- **A skip gate imported from a project module** (`xgates`, `devlint.evidence.imported_gate`):
  `@require_torch_gpu` from the project's testing utils covers its test's body as the same
  gate written in the file would, where its definition requires CUDA.
- **A value an imported function makes only on CUDA** (`xguards`,
  `devlint.evidence.imported_guard`): `self._stream = aux_stream()` then `assert self._stream
  is not None`, with `aux_stream` of another module returning a stream only on CUDA.
- **A test module's worker entry launched under a CUDA guard** (`xworkers`,
  `devlint.evidence.launched_worker`): the `_worker` its `__main__` block runs under
  `--worker`, where its test launches `__file__` only after `if not is_cuda(): skipTest()`.
- **A function every call of which runs on CUDA only, across modules** (`xcallers`,
  `devlint.evidence.cuda_callers`): a helper of a generic utils module called only from
  CUDA-only modules, CUDA dispatch arms, blocks that always run a CUDA-only kernel, or
  functions (private methods) that are themselves only called on CUDA, a few callers deep.
- **A function that always calls a CUDA-only function** (`callees`,
  `devlint.evidence.calls_cuda_only`): a test, benchmark or helper whose body calls, outside
  any `if`/`try`, a project function that asserts or raises unless CUDA or a compute
  capability, emits inline PTX, builds CUDA C++ or is defined only under a capability gate
  (`gptq_quantize` asserts `device.type == "cuda"`: its benchmark's `run` is CUDA's own).

The package is found from the file (the directories holding `__init__.py` above it; a folder
without one inside a regular package is a namespace portion of it, PEP 420: sglang's
`sglang/srt/` under `sglang/__init__.py` imports as `sglang.srt`), so a
pre-commit run over a few staged files judges them as a run over the whole tree does. What
the stage learns of each file is stored in the cache directory, keyed by the file's stat; the
workers record each file's project imports while they read it; only the statements whose
lines name what is looked for are walked; and a module is parsed only when its text says it
may matter.

Modules: `package` (module names, imports), `store` (per-file facts in the cache),
`gates` (what a text says before a parse), `walker` (uses that stand on CUDA only), `index`
(the `Project` and its principles), `defaults` (dead parameter defaults), `xgates` (imported skip gates), `xguards` (imported producers), `xworkers` (launched workers), `stage` (the driver: exemptions, keep/filter/apply)
`records` (what the workers record for it), `callees` (calls into CUDA-requiring functions),
`xcallers` (functions only CUDA code calls, across modules).
"""
from __future__ import annotations

from devlint.engine.project.index import Project
from devlint.engine.project.package import imports_of, package_of
from devlint.engine.project.records import linted_facts, parsed_facts, worker_facts
from devlint.engine.project.stage import Exemption, apply, exemptions, filtered, keep

__all__ = ["Exemption", "Project", "apply", "exemptions", "filtered", "imports_of", "keep",
           "linted_facts", "package_of", "parsed_facts", "worker_facts"]
