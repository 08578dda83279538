"""A package that ships CUDA C++ sources is a CUDA kernel package
(`devlint.evidence.cuda_kernel_package`, applied by the project stage): its modules' CUDA
calls serve those kernels and are not reported, through real `devlint check` runs over small
packages; the nearest forms (the top-level package, a Triton module, a sibling package) stay
findings."""
from __future__ import annotations

import json
import os
import time

from _cli import run, write_package

BENCH = "import torch\n\n\ndef timer():\n    return torch.cuda.Event(enable_timing=True)\n"
SOURCE = "__global__ void k() {}\n"


def findings(root, *paths):
    r = run("check", "--output-format", "json", "--no-cache", *paths, cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted(f["filename"].replace(os.sep, "/") for f in json.loads(r.stdout))


def kernel_tree(tmp_path, namespace=("pkg/kernels/jit/csrc", "pkg/kernels/jit/bench")):
    write_package(tmp_path, {
        "pkg/kernels/jit/csrc/norm.cuh": SOURCE,
        "pkg/kernels/jit/bench/marker.py": BENCH,  # a folder without __init__.py: the package's
        "pkg/kernels/jit/utils/common.py": BENCH,  # a subpackage
        "pkg/kernels/jit/tri.py": "import triton\n" + BENCH,  # may wrap a portable kernel
        "pkg/kernels/ops.py": BENCH,  # the package above: not the kernel package
        "pkg/layers.py": BENCH,
    }, namespace=namespace)
    return tmp_path


def test_modules_of_a_package_that_ships_cuda_sources_are_not_reported(tmp_path):
    root = kernel_tree(tmp_path)
    assert findings(root, "pkg") == ["pkg/kernels/jit/tri.py", "pkg/kernels/ops.py",
                                     "pkg/layers.py"]
    r = run("check", "--no-cache", "--show-exempt", "pkg/kernels/jit/utils/common.py", cwd=root)
    assert "[cuda-kernel-package]" in r.stdout and "norm.cuh" in r.stdout


def test_sources_in_the_top_level_package_make_nothing_cuda_only(tmp_path):
    write_package(tmp_path, {"pkg/csrc/cuda/k.cu": SOURCE, "pkg/layers.py": BENCH},
                  namespace=("pkg/csrc", "pkg/csrc/cuda"))
    assert findings(tmp_path, "pkg") == ["pkg/layers.py"]


def test_a_source_in_a_subpackage_is_that_subpackages(tmp_path):
    write_package(tmp_path, {"pkg/kernels/ext/k.cu": SOURCE, "pkg/kernels/ops.py": BENCH,
                             "pkg/kernels/ext/load.py": BENCH})
    assert findings(tmp_path, "pkg") == ["pkg/kernels/ops.py"]


def test_a_warm_run_sees_a_source_added_later(tmp_path):
    write_package(tmp_path, {"pkg/kernels/jit/load.py": BENCH, "pkg/layers.py": BENCH})
    check = ("check", "--output-format", "json", "pkg")
    first = run(*check, cwd=tmp_path)
    assert sorted(f["filename"] for f in json.loads(first.stdout)) == [
        "pkg/kernels/jit/load.py", "pkg/layers.py"]
    time.sleep(0.05)
    (tmp_path / "pkg/kernels/jit/csrc").mkdir()
    (tmp_path / "pkg/kernels/jit/csrc/k.cuh").write_text(SOURCE)
    second = run(*check, cwd=tmp_path)
    assert [f["filename"] for f in json.loads(second.stdout)] == ["pkg/layers.py"]
