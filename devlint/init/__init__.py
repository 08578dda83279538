"""`devlint init`: find the device layer a project already uses, and write `[tool.devlint]`.

Only stdlib `ast` reads the project: nothing is imported or run. The layer is found from the
code itself, never from a list of projects:

1. a *dispatcher* is a module-level function, class or constant whose own code names two or
   more accelerator backends (`torch.cuda` and `torch.npu`, `"cuda"` and `"xpu"`,
   `is_torch_npu_available()`), directly or through a module-level table, class or constant of
   the project it references (`BACKEND_EMPTY_CACHE = {"cuda": torch.cuda.empty_cache, ...}`,
   `OrderedDict(cuda=CudaAccelerator, npu=NpuAccelerator)`); a short function that only
   returns or calls one (`return get_accelerator().get_current_device()`) is one too;
2. what it stands for comes from what it returns: a device module (`torch.cuda`, `getattr(torch,
   name)`, an accelerator object whose class offers the `torch.cuda` functions) stands where
   `torch.cuda` stood (`device-module`); a device-type string (`"cuda"`, `"npu"`) is a
   `device-type`; a `torch.device` or `"type:index"` string a `device`; a function named after
   a `torch.cuda` function that it dispatches (`empty_cache`, `backend_empty_cache(device)`)
   is that function's wrapper (`api`);
3. the project's own call sites decide: for each role the candidate most used (outside its
   own module) wins, with at least MIN_USES uses; candidates used mostly by test modules
   fill the profile's `tests` table (a test suite's `torch_device`).
"""
from __future__ import annotations
