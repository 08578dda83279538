"""The calls-cuda-only principle (devlint/evidence/calls_cuda_only.py, applied by the project
stage, devlint/engine/project/callees.py): a test, benchmark or helper that always calls a
project function which cannot run without CUDA. Each exempt case stands beside the nearest
form that stays a finding."""
from __future__ import annotations

import ast
import json
import os
import textwrap

import pytest

from devlint.evidence import calls_cuda_only
from _cli import run


def write(root, files: dict, packages=("pkg",)):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if rel.split("/")[0] in packages:
            for d in [p.parent, *p.parent.parents]:
                if d == root:
                    break
                (d / "__init__.py").touch()
        p.write_text(textwrap.dedent(text))


def findings(root, *paths):
    r = run("check", "--no-cache", "--output-format", "json", *paths, cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                  for f in json.loads(r.stdout))


KERNELS = {
    "pkg/__init__.py": "",
    "pkg/quant/__init__.py": "from .api import quantize, generic, dual\n",
    "pkg/quant/api.py": """\
        import torch


        def quantize(w):
            w = w.view(-1)
            assert w.device.type == "cuda", "only CUDA for now"
            return w


        def generic(w):
            return w * 2


        def dual(w):
            assert w.is_cuda or w.is_xpu
            return w
        """,
    "pkg/kernels.py": """\
        import torch
        import triton
        import triton.language as tl
        from torch.utils._triton import has_triton

        from pkg.utils import is_sm_at_least_100


        @triton.jit
        def _barrier(x):
            return tl.inline_asm_elementwise("bar.sync 0;", "=r", [x], dtype=tl.int32,
                                             is_pure=False, pack=1)


        @triton.jit
        def _copy_kernel(x_ptr, y_ptr):
            _barrier(0)


        def ptx_copy(x):
            y = torch.empty_like(x)
            _copy_kernel[(1,)](x, y)
            return y


        if has_triton():
            @triton.jit
            def _plain_kernel(x_ptr):
                pass

            def plain_copy(x):
                _plain_kernel[(1,)](x)
                return x

        if is_sm_at_least_100():
            def sm100_quant(x):
                return x
        else:
            def sm100_quant(x):
                raise NotImplementedError("needs SM100")


        def checked(x):
            if torch.cuda.get_device_capability() < (9, 0):
                raise RuntimeError("needs SM90")
            return x
        """,
    "pkg/utils.py": "def is_sm_at_least_100():\n    return False\n",
}


@pytest.fixture
def project(tmp_path):
    write(tmp_path, KERNELS)
    return tmp_path


def test_a_test_of_a_function_that_asserts_cuda_is_cuda_only(project):
    # the test, outside any package, imports the function through the package's re-export
    write(project, {"tests/test_quant.py": """\
        import pytest
        import torch
        from pkg.quant import quantize, generic, dual


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
        def test_quantize():
            x = torch.randn(4, device="cuda")
            quantize(x)


        def test_generic():
            x = torch.randn(4, device="cuda")
            generic(x)


        def test_dual():
            x = torch.randn(4, device="cuda")
            dual(x)


        def test_sometimes(flag):
            x = torch.randn(4, device="cuda")
            if flag:
                quantize(x)
        """})
    # the gate and the body of test_quantize are not findings; the tests of the generic
    # function, of the one that also takes XPU and the conditional call keep theirs; so does
    # the callee's own assert
    assert findings(project, "tests", "pkg") == [
        ("pkg/quant/api.py", 6, "DL201"),
        ("tests/test_quant.py", 13, "DL103"),
        ("tests/test_quant.py", 18, "DL103"),
        ("tests/test_quant.py", 23, "DL103")]


def test_kernels_with_inline_ptx_capability_gates_and_checks(project):
    write(project, {"benchmarks/bench.py": """\
        import torch
        from pkg.kernels import ptx_copy, plain_copy, sm100_quant, checked


        def bench_ptx():
            x = torch.randn(4, device="cuda")
            ptx_copy(x)
            torch.cuda.synchronize()


        def bench_plain():
            x = torch.randn(4, device="cuda")
            plain_copy(x)


        def bench_sm100():
            x = torch.randn(4, device="cuda")
            return sm100_quant(x)


        def bench_checked():
            return checked(torch.randn(4, device="cuda"))
        """})
    # a plain Triton kernel (under `if has_triton():` only) is generic: its benchmark keeps
    # its finding
    assert findings(project, "benchmarks") == [("benchmarks/bench.py", 12, "DL103")]


def test_a_helper_of_the_test_module_that_always_calls_one(project):
    write(project, {"tests/test_helper.py": """\
        import torch
        from pkg.quant import quantize


        def _make(n):
            x = torch.randn(n, device="cuda")
            return quantize(x)


        def _other(n):
            return torch.randn(n, device="cuda")


        class TestQuant:
            def test_a(self):
                w = torch.ones(2, device="cuda")
                _make(3)

            def test_b(self):
                w = torch.ones(2, device="cuda")
                _other(3)
        """})
    assert findings(project, "tests") == [("tests/test_helper.py", 11, "DL103"),
                                          ("tests/test_helper.py", 20, "DL103")]


def test_show_exempt_names_the_callee_requirement(project):
    write(project, {"tests/test_q.py": """\
        import torch
        from pkg.quant import quantize


        def test_q():
            quantize(torch.randn(4, device="cuda"))
        """})
    r = run("check", "--no-cache", "--show-exempt", "--output-format", "json", "tests",
            cwd=project)
    data = json.loads(r.stdout)
    [e] = data["exempt"]
    assert e["principle"] == "calls-cuda-only"
    assert e["evidence"] == "pkg/quant/api.py:6"
    assert "`test_q` always calls `quantize`" in e["message"]


def requirements(src: str) -> dict:
    src = textwrap.dedent(src)
    return {n: r.line for n, r in calls_cuda_only.requirements(ast.parse(src), src,
                                                                 "m.py").items()}


def test_requirements_read_from_the_function_itself():
    assert requirements("""\
        import torch

        def a(x):
            assert x.is_cuda
        def b(x):
            if not x.is_cuda:
                raise ValueError("CUDA only")
        def c(x):
            assert x.is_cuda or x.is_xpu
        def d(x):
            if x.is_cuda:
                assert x.is_contiguous()
        def e(x):
            return a(x)
        def f(x):
            if x.is_cuda:
                return a(x)
        class K:
            def __init__(self, device):
                assert device.type == "cuda"
        def g(x):
            assert torch.cuda.get_device_capability() >= (9, 0)
        def h(x):
            if torch.cuda.is_available() and not is_sm_at_least_100():
                raise NotImplementedError("needs SM100")
        def i(x, use_fp4):
            if use_fp4 and not is_sm_at_least_100():
                raise ValueError("fp4 needs SM100")
        """) == {"a": 4, "b": 6, "e": 4, "K": 20, "g": 22, "h": 24}


def test_a_test_helper_counts_by_its_skips_not_its_asserts():
    src = textwrap.dedent("""\
        import unittest
        import torch

        def check_output(out):
            assert out.device.type == "cuda"
        def needs_cuda():
            if not torch.cuda.is_available():
                raise unittest.SkipTest("needs CUDA")
        """)
    found = calls_cuda_only.requirements(ast.parse(src), src, "tests/helpers.py",
                                         test_module=True)
    assert {n: r.line for n, r in found.items()} == {"needs_cuda": 7}
    assert found["needs_cuda"].text == "`needs_cuda` skips unless CUDA"


def test_a_cuda_only_module_counts_for_tests_not_for_library_code(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/gemm_ops.py": "import cutlass\n\n\ndef gemm(a, b):\n    return a @ b\n",
        "pkg/model.py": """\
            import torch
            from pkg.gemm_ops import gemm

            XPU = torch.xpu.is_available()

            def forward(x):
                y = x.to("cuda")
                return gemm(y, x)
            """,
        "tests/test_gemm.py": """\
            import torch
            from pkg.gemm_ops import gemm


            def test_gemm():
                gemm(torch.ones(2, device="cuda"), None)
            """})
    # the module is CUDA-only by its import of CUTLASS; library code that calls it keeps its
    # finding (model.py names another platform: the module-level cuda-only-module principle
    # leaves it too)
    assert findings(tmp_path, "pkg", "tests") == [("pkg/model.py", 7, "DL101")]


def test_a_module_value_read_only_by_cuda_only_functions(project):
    write(project, {"benchmarks/bench_values.py": """\
        import torch
        from pkg.quant import quantize, generic

        device = torch.device("cuda")
        DEVICE = "cuda"


        def bench_quantize():
            x = torch.randn(4, device=device)
            return quantize(x)


        def bench_both():
            quantize(torch.randn(4, device=DEVICE))
            generic(torch.randn(4, device=DEVICE))


        def bench_generic():
            return generic(torch.randn(4, device=DEVICE))
        """,
        "tests/test_class.py": """\
        import unittest
        import torch
        from pkg.quant import quantize, generic


        @unittest.skipIf(not torch.cuda.is_available(), "CUDA")
        class TestQuant(unittest.TestCase):
            def test_a(self):
                quantize(torch.ones(2, device="cuda"))

            def test_b(self):
                quantize(torch.ones(2, device="cuda"))


        @unittest.skipIf(not torch.cuda.is_available(), "CUDA")
        class TestMixed(unittest.TestCase):
            def test_a(self):
                quantize(torch.ones(2, device="cuda"))

            def test_b(self):
                generic(torch.ones(2, device="cuda"))
        """})
    # `device` is read only by a function that always calls `quantize`; `DEVICE` also by one
    # that does not; a class's gate goes with its tests when all of them are CUDA-only
    assert findings(project, "benchmarks", "tests") == [
        ("benchmarks/bench_values.py", 5, "DL104"),
        ("tests/test_class.py", 15, "DL203")]


def test_a_namespace_module_the_workers_parsed_is_not_parsed_again(tmp_path, monkeypatch):
    """A module of a namespace package (no `__init__.py`) that a worker linted: the stage
    takes the CUDA requirements the worker read from its tree (`records.parsed_facts`), the
    same as it computes itself, and does not parse it again."""
    from devlint.engine.project import callees
    from devlint.engine.project.index import Project
    from devlint.engine.runner import process_source
    from devlint.settings import Settings

    write(tmp_path, {"ns/ops.py": KERNELS["pkg/quant/api.py"] + 'DEVICE = "cuda"\n'},
          packages=())
    path = str(tmp_path / "ns" / "ops.py")
    res = process_source(path, "python", (tmp_path / "ns" / "ops.py").read_bytes(),
                         Settings(), "check", False, index=True)
    assert "quantize" in res.facts[callees._FACT]["cuda"]
    st = os.stat(path)
    res.stat = (st.st_mtime_ns, st.st_size, st.st_ino, 0.0)
    computed = callees._module_facts(Project(), path, "ns.ops")
    project = Project()
    project.seed([res])
    monkeypatch.setattr(Project, "tree", lambda self, p: pytest.fail(f"parsed {p}"))
    assert callees._module_facts(project, path, "ns.ops") == computed


def test_every_arm_of_an_if_else_calls_a_requirement():
    # `apply` picks a backend or checks the one given: each arm raises unless CUDA
    assert requirements("""\
        import torch

        def pick():
            if not torch.cuda.is_available():
                raise RuntimeError("requires CUDA")
        def check(b):
            if not torch.cuda.is_available():
                raise RuntimeError(f"{b} requires CUDA")
        def apply(m, b=None):
            if b is None:
                b = pick()
            else:
                check(b)
            return m
        def only_one_arm(m, b=None):
            if b is None:
                pick()
            return m
        def other_arm_generic(m, b=None):
            if b is None:
                pick()
            else:
                print(b)
            return m
        """) == {"pick": 4, "check": 7, "apply": 4}


SCRIPT_API = {
    "pkg/attn/__init__.py": "from .api import apply_attention, generic\n",
    "pkg/attn/api.py": """\
        import torch


        def _pick():
            if not torch.cuda.is_available():
                raise RuntimeError("Low-precision attention requires CUDA.")
            return "fa3"


        def _check(backend):
            if not torch.cuda.is_available():
                raise RuntimeError(f"{backend} requires CUDA.")


        def apply_attention(model, backend=None):
            if backend is None:
                backend = _pick()
            else:
                _check(backend)
            return model


        def generic(model):
            return model
        """,
}


def test_a_script_whose_top_level_code_always_calls_one(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", **SCRIPT_API,
                     "examples/attention.py": """\
        import torch
        from pkg.attn import apply_attention

        model = torch.nn.Linear(4, 4).to(device="cuda")
        model = apply_attention(model)
        """,
                     "examples/main_block.py": """\
        import torch
        from pkg.attn import apply_attention

        if __name__ == "__main__":
            torch.cuda.set_device(0)
            apply_attention(torch.nn.Linear(4, 4).cuda())
        """,
                     "examples/generic.py": """\
        import torch
        from pkg.attn import generic

        model = generic(torch.nn.Linear(4, 4).to(device="cuda"))
        """,
                     "examples/optional.py": """\
        import sys
        import torch
        from pkg.attn import apply_attention

        model = torch.nn.Linear(4, 4).to(device="cuda")
        if "--fp8" in sys.argv:
            model = apply_attention(model)
        """,
                     "examples/functions.py": """\
        import torch
        from pkg.attn import apply_attention

        apply_attention(None)


        def helper():
            return torch.ones(2, device="cuda")
        """})
    # the script that always calls the CUDA-only API, also in its `__main__` block, has
    # nothing to report; a generic API and a call under `if` keep theirs, and so does a
    # function of the module: only the top-level code is the script's own
    assert findings(tmp_path, "examples") == [
        ("examples/functions.py", 8, "DL103"),
        ("examples/generic.py", 4, "DL101"),
        ("examples/optional.py", 5, "DL101")]


def test_a_script_that_only_defines_a_call_does_not_always_make_it(tmp_path):
    # a generator expression's body runs only when it is consumed (its first iterable at
    # once), a lambda's or a function's when called: none is a call of the top-level code
    write(tmp_path, {"pkg/__init__.py": "", **SCRIPT_API,
                     "examples/lazy.py": """\
        import torch
        from pkg.attn import apply_attention

        model = torch.nn.Linear(4, 4).to(device="cuda")
        models = (apply_attention(m) for m in [model])
        again = lambda: apply_attention(model)


        def later():
            return apply_attention(model)
        """,
                     "examples/eager.py": """\
        import torch
        from pkg.attn import apply_attention

        model = torch.nn.Linear(4, 4).to(device="cuda")
        models = [apply_attention(m) for m in [model]]
        first = next(m for m in [apply_attention(model)])
        """})
    assert findings(tmp_path, "examples") == [("examples/lazy.py", 4, "DL101")]


def test_a_lazily_re_exported_kernel_is_followed(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": """\
            from importlib import import_module

            _EXPORTS: dict[str, str] = {
                "fused_add": "jit.fused_add",
                "plain_add": "pkg.ops.jit.fused_add",
            }
            _UNREAD = {"other_add": "jit.fused_add"}


            def __getattr__(name):
                module = _EXPORTS.get(name)
                if module is None:
                    raise AttributeError(name)
                owner = module if module.startswith("pkg.") else f"{__name__}.{module}"
                return getattr(import_module(owner), name)
            """,
        "pkg/ops/jit/fused_add.py": """\
            import torch


            def fused_add(a, b):
                assert a.is_cuda, "CUDA kernel"
                return a + b


            def plain_add(a, b):
                return a + b


            def other_add(a, b):
                assert a.is_cuda
                return a + b
            """,
        "tests/test_add.py": """\
            import pytest
            import torch
            from pkg.ops import fused_add, plain_add, other_add


            @pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA kernel")
            def test_fused():
                fused_add(torch.ones(2, device="cuda"), 1)


            @pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")
            def test_plain():
                plain_add(torch.ones(2, device="cuda"), 1)


            def test_other():
                other_add(torch.ones(2, device="cuda"), 1)
            """})
    # the kernel reached through the `__getattr__` table is CUDA-only: its test's gate is
    # right; the generic one (named by an absolute module) and one in a table `__getattr__`
    # never reads are not (the gated body goes with its gate's finding)
    assert findings(tmp_path, "tests") == [
        ("tests/test_add.py", 11, "DL203"), ("tests/test_add.py", 17, "DL103")]


def test_lazy_exports_read_only_a_literal_table_the_getattr_reads():
    from devlint.engine.project.lazy_exports import lazy_exports
    src = textwrap.dedent("""\
        _EXPORTS = {"a": "sub.mod", "b": "pkg.other"}
        _COMPUTED = {"c": "sub." + "mod"}
        _ATTR = {"d": "sub.mod:d"}

        def __getattr__(name):
            module = _EXPORTS.get(name) or _COMPUTED.get(name) or _ATTR.get(name)
            return getattr(importlib.import_module(module), name)
        """)
    assert lazy_exports(src, "pkg.ops", ast.parse(src)) == {
        "a": ["pkg.ops.sub.mod", "a"], "b": ["pkg.other", "b"]}
    assert lazy_exports("X = {'a': 'm'}\n", "pkg", lambda: pytest.fail("parsed")) == {}


def test_a_library_wrapper_of_an_imported_kernel_is_followed(project):
    # `pkg/comms.py` wraps `ptx_copy`, imported from `pkg/kernels.py` (inline PTX): the
    # benchmark calls the wrapper, two modules away from the requirement
    write(project, {
        "pkg/comms.py": """\
            import torch
            from pkg.kernels import ptx_copy


            def all_to_all(x):
                y = x.contiguous()
                return ptx_copy(y)


            def maybe_all_to_all(x, fast):
                if fast:
                    return ptx_copy(x)
                return x
            """,
        "bench/bench_comms.py": """\
            import torch
            from pkg.comms import all_to_all, maybe_all_to_all


            def bench_wrapper():
                x = torch.ones(4, device="cuda")
                all_to_all(x)


            def bench_maybe():
                x = torch.ones(4, device="cuda")
                maybe_all_to_all(x, True)
            """})
    # the wrapper's benchmark is exempt; the one of a wrapper calling the kernel only under
    # an `if` keeps its finding
    assert findings(project, "bench") == [("bench/bench_comms.py", 11, "DL103")]


@pytest.mark.parametrize("getattr_body", [
    # the old names of renamed ones, resolved among the module's own names
    "return globals()[_DEPRECATED[name]]",
    # the same, by their new names bound at the top: no module is imported at all
    "new = _DEPRECATED[name]\n    warnings.warn(f'{name} is {new}')\n"
    "    return getattr(sys.modules[__name__], new)",
    # a table whose every value is a name the module binds is a rename table, also where the
    # `__getattr__` imports for another table
    "if name in _DEPRECATED:\n        return globals()[_DEPRECATED[name]]\n"
    "    return importlib.import_module(f'.{name}', __name__)",
])
def test_a_deprecated_name_table_is_no_lazy_export(getattr_body):
    from devlint.engine.project.lazy_exports import lazy_exports
    src = ("import importlib\nimport sys\nimport warnings\n\nfrom .fused import fused_norm\n\n"
           "_DEPRECATED = {'norm': 'fused_norm'}\n\n\ndef __getattr__(name):\n    "
           + getattr_body + "\n")
    assert lazy_exports(src, "pkg.ops", ast.parse(src)) == {}
