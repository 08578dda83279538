"""The project stage (devlint/engine/project.py): findings explained by the package around a
file, read through real `devlint check` runs over small packages. Each case pairs the exempt
form with the nearest form that stays a finding."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from _cli import run, write_package


def write(root, files: dict):
    write_package(root, files, dedent=False)


def findings(root, *paths, extra=("--no-cache",)):
    r = run("check", "--output-format", "json", *extra, *(paths or ["pkg"]), cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                  for f in json.loads(r.stdout))


KERNEL = textwrap.dedent("""\
    import torch


    def swap(addrs):
        return addrs.to("cuda", non_blocking=True)


    def swap_table(addrs):
        torch.cuda.synchronize()
        return addrs.to("cuda")
    """)

GUARDED_CALLER = textwrap.dedent("""\
    from vllm.platforms import current_platform

    from pkg.kernels import swap, swap_table


    def select(fast):
        if not current_platform.is_cuda():
            return None
        return swap if fast else swap_table
    """)


@pytest.fixture
def pkg(tmp_path):
    write(tmp_path, {"pkg/kernels.py": KERNEL, "pkg/worker.py": GUARDED_CALLER})
    return tmp_path


def test_a_function_called_only_under_a_platform_test(pkg):
    # the literals of both functions are exempt, like literals under an in-file CUDA guard;
    # a table API stays a finding there too (the same call on CUDA)
    assert findings(pkg) == [("pkg/kernels.py", 9, "DL401")]


def test_one_unguarded_caller_keeps_the_findings(pkg):
    write(pkg, {"pkg/other.py": "from pkg.kernels import swap\n\nswap(None)\n"})
    # `swap_table` is still only called under the test
    assert findings(pkg) == [("pkg/kernels.py", 5, "DL101"), ("pkg/kernels.py", 9, "DL401")]


def test_a_caller_through_the_module_object_is_not_followed(pkg):
    write(pkg, {"pkg/other.py": "import pkg.kernels\n\npkg.kernels.swap(None)\n"})
    assert ("pkg/kernels.py", 5, "DL101") in findings(pkg)


def test_a_function_its_own_module_calls_elsewhere_keeps_its_findings(pkg):
    write(pkg, {"pkg/kernels.py": KERNEL + "\n\nDEFAULT = swap(None)\n"})
    assert ("pkg/kernels.py", 5, "DL101") in findings(pkg)


def test_in_module_callers_that_run_on_cuda_only_count(tmp_path):
    write(tmp_path, {k: textwrap.dedent(v) for k, v in {
        "pkg/warm.py": """\
            import torch


            def _state(t):
                if t.is_cuda:
                    return 1
                return 0


            def warmup(t):
                return _state(t)
            """,
        "pkg/tune.py": """\
            from pkg.warm import warmup


            def flashinfer_autotune(t):
                warmup(t)
            """,
    }.items()})
    assert findings(tmp_path) == []
    write(tmp_path, {"pkg/tune.py": "from pkg.warm import warmup\n\n\ndef autotune(t):\n"
                                    "    warmup(t)\n"})
    assert findings(tmp_path) == [("pkg/warm.py", 5, "DL202")]


def test_a_pre_commit_run_over_one_file_judges_it_like_the_whole_tree(pkg):
    assert findings(pkg, "pkg/kernels.py") == findings(pkg)


CUDA_ONLY_CHAIN = {k: textwrap.dedent(v) for k, v in {
    "pkg/offload/cuda_mem_ops.py": """\
        def copy_blocks(src, dst):
            return src, dst
        """,
    "pkg/offload/copy_backend.py": """\
        from pkg.offload.cuda_mem_ops import copy_blocks


        class DmaBackend:
            def copy(self, src, dst):
                return copy_blocks(src, dst)
        """,
    "pkg/offload/worker.py": """\
        import torch

        from pkg.offload.copy_backend import DmaBackend


        class Worker:
            def setup(self):
                self.stream = torch.cuda.Stream()
                self.backend = DmaBackend()
        """,
}.items()}


def test_a_module_that_always_calls_a_cuda_only_module_is_cuda_only(tmp_path):
    write(tmp_path, CUDA_ONLY_CHAIN)
    assert findings(tmp_path) == []


def test_a_conditional_call_does_not_make_a_module_cuda_only(tmp_path):
    write(tmp_path, CUDA_ONLY_CHAIN)
    write(tmp_path, {"pkg/offload/worker.py": CUDA_ONLY_CHAIN["pkg/offload/worker.py"].replace(
        "        self.backend = DmaBackend()",
        "        if self.fast:\n            self.backend = DmaBackend()")})
    assert findings(tmp_path) == [("pkg/offload/worker.py", 8, "DL402")]


def test_a_module_that_names_another_platform_is_not_cuda_only(tmp_path):
    write(tmp_path, CUDA_ONLY_CHAIN)
    write(tmp_path, {"pkg/offload/worker.py": CUDA_ONLY_CHAIN["pkg/offload/worker.py"]
                     + "\n\ndef on_xpu(p):\n    return p.is_xpu()\n"})
    assert findings(tmp_path) == [("pkg/offload/worker.py", 8, "DL402")]


def test_chains_longer_than_two_calls_do_not_count(tmp_path):
    write(tmp_path, CUDA_ONLY_CHAIN)
    write(tmp_path, {
        "pkg/offload/worker.py": CUDA_ONLY_CHAIN["pkg/offload/worker.py"].replace(
            "import torch\n", "import torch\n\nfrom pkg.offload.runner import run\n"),
        "pkg/offload/runner.py": "from pkg.offload.worker import Worker\n\n\n"
                                 "def run():\n    return Worker()\n",
        "pkg/engine.py": "import torch\n\nfrom pkg.offload.runner import run\n\n\n"
                         "def start():\n    run()\n    return torch.cuda.Stream()\n",
    })
    # engine -> runner -> worker -> copy_backend -> cuda_mem_ops: too far to follow
    assert findings(tmp_path) == [("pkg/engine.py", 8, "DL402")]


def test_one_scope_calling_a_cuda_only_module_exempts_that_scope_alone(tmp_path):
    # a generic model whose one class enters a CUDA-only helper: that class is the stack's
    # user, the rest of the module is not (one weak signal never exempts a whole file)
    write(tmp_path, CUDA_ONLY_CHAIN)
    write(tmp_path, {"pkg/offload/worker.py": CUDA_ONLY_CHAIN["pkg/offload/worker.py"]
                     + "\n\nclass Model:\n    def load(self):\n"
                       "        torch.cuda.empty_cache()\n"})
    assert findings(tmp_path) == [("pkg/offload/worker.py", 14, "DL401")]
    r = run("check", "--no-cache", "--show-exempt", "--exit-zero", "pkg", cwd=tmp_path)
    assert "worker.py:8:23: DL402 [cuda-only-module] it calls `DmaBackend`" in r.stdout
    # two scopes that call it: the module is that stack's code
    write(tmp_path, {"pkg/offload/worker.py": CUDA_ONLY_CHAIN["pkg/offload/worker.py"]
                     + "\n\nclass Model:\n    def load(self):\n"
                       "        DmaBackend()\n        torch.cuda.empty_cache()\n"})
    assert findings(tmp_path) == []
    # one class that calls it, and another function that imports a CUDA-only stack itself:
    # two scopes bound to CUDA-only stacks, the module is that stack's code
    write(tmp_path, {"pkg/offload/worker.py": CUDA_ONLY_CHAIN["pkg/offload/worker.py"]
                     + "\n\ndef pinned(n):\n    import cupy\n    return cupy.empty(n)\n"
                       "\n\nclass Model:\n    def load(self):\n"
                       "        torch.cuda.empty_cache()\n"})
    assert findings(tmp_path) == []
    # one class that builds a client of a module CUDA-only on import (it imports `cupy`):
    # the module cannot work without it, so all of it is that stack's code
    write(tmp_path, {"pkg/offload/blocks.py": "import cupy\n\n\n"
                     + CUDA_ONLY_CHAIN["pkg/offload/cuda_mem_ops.py"],
                     "pkg/offload/worker.py": CUDA_ONLY_CHAIN["pkg/offload/worker.py"].replace(
                         "copy_backend import DmaBackend", "blocks import copy_blocks"
                     ).replace("DmaBackend()", "copy_blocks(1, 2)")
                     + "\n\nclass Model:\n    def load(self):\n"
                       "        torch.cuda.empty_cache()\n"})
    assert findings(tmp_path) == []


def test_a_sibling_cuda_only_on_import_makes_its_importer_cuda_only_in_its_package(tmp_path):
    # `pool` imports a CUDA-only stack at the top; `buffer` imports `pool`, `manager` imports
    # `buffer`, each at the top: the package is a subsystem built on that stack. A module of
    # another package that imports it keeps its findings (a generic importer of a subsystem)
    stream = "\n\ndef make():\n    return torch.cuda.Stream()\n"
    write(tmp_path, {
        "pkg/vmm/pool.py": "import torch\nfrom cuda.bindings import driver\n" + stream,
        "pkg/vmm/buffer.py": "import torch\n\nfrom pkg.vmm.pool import make\n" + stream,
        "pkg/vmm/manager.py": "import torch\n\nfrom pkg.vmm.buffer import Buffer\n" + stream,
        "pkg/layers/moe.py": "import torch\n\nfrom pkg.vmm.manager import Manager\n" + stream,
        "pkg/layers/lazy.py": "import torch\n\n\ndef make():\n"
                              "    from pkg.vmm.pool import make as m\n"
                              "    return torch.cuda.Stream()\n",
    })
    assert findings(tmp_path) == [("pkg/layers/lazy.py", 6, "DL402"),
                                  ("pkg/layers/moe.py", 7, "DL402")]
    r = run("check", "--no-cache", "--show-exempt", "pkg/vmm/manager.py", cwd=tmp_path)
    assert "imports `pkg.vmm.buffer` at the top, a module of its own package" in r.stdout


def test_a_namespace_folder_inside_a_package_is_part_of_it(tmp_path):
    # PEP 420: `pkg/srt/` without `__init__.py` under `pkg/__init__.py` imports as
    # `pkg.srt`, so its modules reach the package's CUDA-only modules by their full names
    files = {k.replace("pkg/offload/", "pkg/srt/offload/"): v.replace("pkg.offload.", "pkg.srt.offload.")
             for k, v in CUDA_ONLY_CHAIN.items()}
    write_package(tmp_path, files, namespace=("pkg/srt",))
    assert not (tmp_path / "pkg/srt/__init__.py").exists()
    assert findings(tmp_path) == []
    (tmp_path / "pkg/__init__.py").unlink()  # no regular package above: no package at all
    assert findings(tmp_path) == [("pkg/srt/offload/worker.py", 8, "DL402")]


def test_a_test_double_of_a_cuda_only_module(tmp_path):
    write(tmp_path, {k: textwrap.dedent(v) for k, v in {
        "pkg/fs/client.py": """\
            import os

            import torch.utils.cpp_extension

            INCLUDE = os.path.join(torch.utils.cpp_extension.CUDA_HOME, "include")


            class Client:
                pass
            """,
        "pkg/fs/utils/mock_client.py": """\
            import torch


            class Client:
                def wait(self, event):
                    torch.cuda.current_stream().wait_event(event)
            """,
        "pkg/fs/connector.py": """\
            import torch

            try:
                from pkg.fs.client import Client as _Real

                Client = _Real
            except ImportError:
                from pkg.fs.utils.mock_client import Client as _Mock

                Client = _Mock


            class Connector:
                def __init__(self):
                    self.client = Client()
                    self.event = torch.cuda.Event()
            """,
    }.items()})
    assert findings(tmp_path) == []
    # a fallback that is not a test double is another implementation: both stay findings
    (tmp_path / "pkg/fs/utils/mock_client.py").rename(tmp_path / "pkg/fs/utils/py_client.py")
    conn = tmp_path / "pkg/fs/connector.py"
    conn.write_text(conn.read_text().replace("mock_client", "py_client"))
    assert findings(tmp_path) == [("pkg/fs/connector.py", 16, "DL402"),
                                  ("pkg/fs/utils/py_client.py", 6, "DL401")]


def test_fix_leaves_exempt_code_alone_and_is_idempotent(pkg):
    write(pkg, {"pkg/model.py": 'import torch\n\nx = torch.zeros(2, device="cuda")\n'})
    r = run("check", "--fix", "--no-cache", "pkg", cwd=pkg)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "2 fixed, 0 remaining" in r.stdout
    assert 'device="cuda"' not in (pkg / "pkg/model.py").read_text()
    assert (pkg / "pkg/kernels.py").read_text() == textwrap.dedent(KERNEL).replace(
        "torch.cuda.synchronize()",
        "if torch.accelerator.is_available():\n        torch.accelerator.synchronize()")
    before = {p: p.read_text() for p in (pkg / "pkg").rglob("*.py")}
    run("check", "--fix", "--no-cache", "pkg", cwd=pkg)
    assert {p: p.read_text() for p in (pkg / "pkg").rglob("*.py")} == before


def test_the_stage_store_gives_the_same_answer_warm_and_after_a_change(pkg):
    cache = ["--cache-dir", str(pkg / ".cache")]
    cold = findings(pkg, extra=cache)
    assert findings(pkg, extra=cache) == cold == findings(pkg)
    # an unguarded caller appears: the stored answer must not be reused
    write(pkg, {"pkg/other.py": "from pkg.kernels import swap\n\nswap(None)\n"})
    st = os.stat(pkg / "pkg/other.py")
    os.utime(pkg / "pkg/other.py", ns=(st.st_atime_ns, st.st_mtime_ns - 10**10))
    assert findings(pkg, extra=cache) == findings(pkg) != cold


def test_rocm_files_and_tests_are_not_cuda_only_by_what_they_call(tmp_path):
    body = ("import torch\n\nfrom pkg.offload.copy_backend import DmaBackend\n\n\n"
            "def setup():\n    DmaBackend()\n    return torch.zeros(2, device=\"cuda\")\n")
    write(tmp_path, CUDA_ONLY_CHAIN)
    write(tmp_path, {"pkg/offload/rocm_worker.py": body, "pkg/tests/test_worker.py": body,
                     "pkg/offload/plain.py": body})
    # (the ROCm file's "cuda" literal names the AMD GPU there: evidence.hip_device)
    assert findings(tmp_path) == [("pkg/tests/test_worker.py", 8, "DL103")]


# --- uses that are not followed, or not on CUDA, keep the findings (review of afe31e5) ------

@pytest.mark.parametrize("other", [
    "from pkg import kernels\n\nkernels.swap(None)\n",
    "from . import kernels\n\nkernels.swap(None)\n",
    "import pkg\n\npkg.kernels.swap(None)\n",
    "from pkg.kernels import *\n\nswap(None)\n",
    "from pkg.kernels import \\\n    swap\n\nswap(None)\n",
    "import os, pkg.kernels\n\npkg.kernels.swap(os)\n",
    "import os; from pkg.kernels import swap\n\nswap(os)\n",
    "from pkg.kernels import (  # a comment with a )\n    swap,\n)\n\nswap(None)\n",
    "class Wrapper:\n    def swap(self, a):\n        from pkg.kernels import swap\n"
    "        return swap(a)\n",
    "from pkg.kernels import swap\n\n\ndef on(fn):\n    return fn\n\n\n@on(swap(None))\ndef g():\n"
    "    pass\n",
])
def test_uses_the_stage_cannot_prove_on_cuda_keep_the_findings(pkg, other):
    write(pkg, {"pkg/other.py": other})
    assert ("pkg/kernels.py", 5, "DL101") in findings(pkg)


def test_a_re_export_is_not_followed(pkg):
    write(pkg, {"pkg/__init__.py": "from typing import TYPE_CHECKING\n\n"
                                   "from .kernels import swap\n",
                "pkg/user.py": "from pkg import swap\n\nswap(None)\n"})
    assert ("pkg/kernels.py", 5, "DL101") in findings(pkg)


@pytest.mark.parametrize("exclusion", [
    "current_platform.is_cpu()",
    # ruling out the platforms a module names leaves out-of-tree ones in (SPEC 3)
    "current_platform.is_xpu() or current_platform.is_rocm()",
    "device == \"cpu\"",
])
def test_ruling_platforms_out_is_not_cuda(pkg, exclusion):
    write(pkg, {"pkg/worker.py": GUARDED_CALLER.replace(
        "not current_platform.is_cuda()", exclusion).replace("def select(fast)",
                                                             "def select(fast, device=None)")})
    assert ("pkg/kernels.py", 5, "DL101") in findings(pkg)


def test_a_decorator_runs_at_import_not_with_the_function(tmp_path):
    write(tmp_path, {
        "pkg/kernels.py": "import functools\n\nimport torch\n\n\n"
                          "@functools.lru_cache(maxsize=torch.cuda.device_count())\n"
                          "def swap(x):\n    return x\n",
        "pkg/tune.py": "from pkg.kernels import swap\n\n\ndef flashinfer_autotune(x):\n"
                       "    return swap(x)\n"})
    assert findings(tmp_path) == [("pkg/kernels.py", 6, "DL401")]


def test_vendored_code_is_not_cuda_only_for_its_callers(tmp_path):
    write(tmp_path, {
        "pkg/_vendor/tabulate.py": "def tabulate(rows):\n    return rows\n",
        "pkg/report.py": "import torch\n\nfrom pkg._vendor.tabulate import tabulate\n\n\n"
                         "def show(rows):\n    tabulate(rows)\n"
                         "    return torch.zeros(2, device=\"cuda\")\n"})
    assert findings(tmp_path) == [("pkg/report.py", 8, "DL103")]


def test_a_module_that_asks_for_cuda_has_a_path_without_it(tmp_path):
    write(tmp_path, CUDA_ONLY_CHAIN)
    write(tmp_path, {"pkg/offload/worker.py": CUDA_ONLY_CHAIN["pkg/offload/worker.py"]
                     + "\n\ndef usable():\n    return torch.cuda.is_available()\n"})
    assert ("pkg/offload/worker.py", 8, "DL402") in findings(tmp_path)


def test_odd_files_in_the_package_do_not_break_the_stage(pkg):
    write(pkg, {"pkg/deep.py": "from pkg.kernels import swap\n\nX = f" + "()" * 50000 + "\n",
                "pkg/latin.py": "# -*- coding: latin-1 -*-\nfrom pkg.kernels import swap\n"})
    (pkg / "pkg/latin.py").write_bytes((pkg / "pkg/latin.py").read_bytes() + b"S = '\xe9'\n")
    r = run("check", "--no-cache", "pkg", cwd=pkg)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr


def _age(root, seconds=10):
    for p in root.rglob("*.py"):
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))


def test_warm_runs_reuse_the_store_and_agree_with_cold_ones(tmp_path):
    # enough files for the workers to index them, all older than the racy window, so the
    # fact store and the stage's answer are written and then read back
    write(tmp_path, CUDA_ONLY_CHAIN)
    write(tmp_path, {"pkg/kernels.py": KERNEL, "pkg/worker2.py": GUARDED_CALLER,
                     "pkg/bom.py": "\ufeffimport torch\n\nx = torch.zeros(2, device='cuda')\n"})
    for i in range(6):
        write(tmp_path, {f"pkg/extra{i}.py": "import torch\n\nY = 1\n"})
    _age(tmp_path)
    cache = ["--cache-dir", str(tmp_path / ".cache")]
    cold = findings(tmp_path)
    assert findings(tmp_path, extra=cache) == cold
    stores = list((tmp_path / ".cache").rglob("project/*.json"))
    assert stores and all(p.stat().st_size > 2 for p in stores)
    assert findings(tmp_path, extra=cache) == cold  # warm: the stored answer
    assert findings(tmp_path, "pkg/bom.py", "pkg/offload/worker.py") == [
        f for f in cold if f[0] in ("pkg/bom.py", "pkg/offload/worker.py")]
    # a new unguarded caller: the stored answer is not reused
    write(tmp_path, {"pkg/other.py": "from pkg.kernels import swap\n\nswap(None)\n"})
    _age(tmp_path)
    assert findings(tmp_path, extra=cache) == findings(tmp_path) != cold


# --- dead defaults: every call in the package passes the parameter ---------------------

DEFAULTS = textwrap.dedent("""\
    import torch


    def init_dist(rank, backend: str = "nccl"):
        torch.distributed.init_process_group(backend, rank=rank)


    class Proposer:
        def __init__(self, cfg, device="cuda"):
            self.buf = torch.zeros(4, device=device)
    """)


def test_a_default_every_call_in_the_package_overrides_is_dead(tmp_path):
    write(tmp_path, {"pkg/dist.py": DEFAULTS,
                     "pkg/worker.py": "from pkg.dist import Proposer, init_dist\n\n\n"
                                      "def start(rank, dev, be):\n"
                                      "    init_dist(rank, backend=be)\n"
                                      "    return Proposer(None, device=dev)\n",
                     "pkg/other.py": "from pkg import dist\n\n\n"
                                     "def go(be):\n    dist.init_dist(0, be)\n"})
    assert findings(tmp_path) == []
    r = run("check", "--no-cache", "--show-exempt", "pkg", cwd=tmp_path)
    assert "[dead-default] every call of `init_dist` in the package passes `backend` (2 calls)" \
        in r.stdout
    assert "[dead-default] every call of `Proposer` in the package passes `device` (1 call)" \
        in r.stdout


@pytest.mark.parametrize("caller", [
    "    init_dist(rank)\n    return Proposer(None, device=dev)\n",  # one call uses it
    "    init_dist(rank, backend=be)\n    return Proposer(None, **kw)\n",  # cannot be seen
    "    init_dist(rank, backend=be)\n    return make(Proposer)\n",  # a use that is no call
    # a caller's own default forwarded: the default stays live through it
    "    init_dist(rank, backend=be)\n    return Proposer(None, device=dflt)\n",
])
def test_a_default_one_use_may_reach_stays_a_finding(tmp_path, caller):
    write(tmp_path, {"pkg/dist.py": DEFAULTS,
                     "pkg/worker.py": "from pkg.dist import Proposer, init_dist\n\n\n"
                                      "def start(rank, dev, be, kw, dflt=DEFAULT):\n" + caller})
    assert len(findings(tmp_path)) == 1


def test_a_default_the_package_never_calls_stays_a_finding(tmp_path):
    write(tmp_path, {"pkg/dist.py": DEFAULTS})
    assert sorted(c for _, _, c in findings(tmp_path)) == ["DL103", "DL501"]


def test_a_default_one_call_uses_is_live_beside_a_dead_one(tmp_path):
    """dead-default: a library function's default that no call in the package uses."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "quant.py").write_text(
        'import torch\n\n\ndef replace(model, device: str = "cuda:0"):\n'
        '    return model.to(device)\n\n\ndef public(model, device="cuda"):\n'
        '    return model.to(device)\n')
    (pkg / "use.py").write_text(
        "from pkg.quant import public, replace\n\n\ndef load(m, d):\n"
        "    return replace(m, device=d), public(m, d), public(m)\n")
    r = subprocess.run([sys.executable, "-m", "devlint", "check", "--no-cache",
                        "--output-format", "json", "--show-exempt", "pkg"],
                       cwd=tmp_path, capture_output=True, text=True)
    data = json.loads(r.stdout)
    assert [(f["filename"], f["location"]["row"]) for f in data["findings"]] == [
        ("pkg/quant.py", 8)]  # `public(m)` uses the default
    [dead] = [e for e in data["exempt"] if e["principle"] == "dead-default"]
    assert (dead["filename"], dead["location"]["row"], dead["evidence"]) == (
        "pkg/quant.py", 4, "pkg/quant.py:4")


def test_a_default_forwarded_from_the_callers_signature_stays_live(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "enc.py").write_text(
        'class Inner:\n    def __init__(self, name, device="cuda"):\n        self.device = device\n\n\n'
        'class Outer:\n    def __init__(self, name, device="cuda"):\n'
        '        self.inner = Inner(name, device)\n')
    r = subprocess.run([sys.executable, "-m", "devlint", "check", "--no-cache",
                        "--output-format", "json", "pkg"],
                       cwd=tmp_path, capture_output=True, text=True)
    rows = sorted(f["location"]["row"] for f in json.loads(r.stdout))
    assert rows == [2, 7]  # Outer's default moves into Inner: both are live


def test_the_project_holds_a_bounded_number_of_trees(tmp_path):
    """The stage parses files on demand; it keeps only the recently used trees (memory grows
    with the project otherwise) and re-parses a dropped one to the same tree."""
    import ast

    from devlint.engine.project import index

    paths = []
    for i in range(index._TREES_KEPT + 10):
        p = tmp_path / f"m{i}.py"
        p.write_text(f"X{i} = {i}\n")
        paths.append(str(p))
    project = index.Project()
    first = ast.dump(project.tree(paths[0]))
    for p in paths:
        assert project.tree(p) is not None
    assert len(project._tree) == index._TREES_KEPT
    assert paths[0] not in project._tree
    assert ast.dump(project.tree(paths[0])) == first
    recent = project.tree(paths[-1])
    assert project.tree(paths[-1]) is recent
