"""Principle: a package that ships CUDA C++ sources is a CUDA kernel package.

`pkg/kernels/jit/__init__.py` beside `pkg/kernels/jit/csrc/norm.cuh` and
`pkg/kernels/jit/include/utils.cuh`: the package's Python modules load, build, bind, launch
and benchmark those kernels (compiled by nvcc, or hipcc through hipify: a GPU of torch's
"cuda" device type either way), so their streams, events, devices and `torch.cuda` calls
serve code that exists on no other accelerator (the rubric's CUDA-only kernel wrapper).
Evidence: a `.cu` or `.cuh` file (its path) in the package's own folder or in one of its
folders that is no Python package (`csrc/`, `include/`); the modules of the package and of
the packages below it are the kernel package's.
Limits: only a regular package (a folder with `__init__.py`) below the top-level package: a
project that ships its kernel sources in its top-level package (`torchao/csrc/`) does not
thereby make every module CUDA's; a module that names Triton (`import triton`, a
`*_triton` function) may wrap a portable kernel that also runs on other accelerators and
keeps its findings; a CUDA source inside a subpackage belongs to that subpackage, not to the
packages above it. Applied by the project stage (`devlint.engine.project.index.Project
.kernel_package`), which sees the package's files.
"""
from __future__ import annotations

import os

from devlint.evidence import Reason

PRINCIPLE = "cuda-kernel-package"
SUFFIXES = (".cu", ".cuh")


def kernel_package_reason(package_dir: str, source: str) -> Reason:
    """The Reason of a module of the package at `package_dir`, which holds `source`."""
    name = os.path.basename(package_dir.rstrip(os.sep))
    return Reason(PRINCIPLE, f"its package `{name}` ships CUDA C++ sources "
                  f"(`{os.path.basename(source)}`): a CUDA kernel package", source, None)
