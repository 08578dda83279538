"""The cuda-by-default principle (devlint/evidence/default_option.py, applied with
calls-cuda-only by devlint/engine/project/callees.py): a kernel wrapper that requires CUDA at
its option's default, for a call that keeps the default. Each exempt case stands beside the
nearest form that stays a finding."""
from __future__ import annotations

import ast
import textwrap

from devlint.evidence import calls_cuda_only, default_option
from test_calls_cuda_only import findings, write

LIBRARY = {
    "pkg/__init__.py": "",
    "pkg/flags.py": "_KERNELS = False\n",
    "pkg/gmm.py": """\
        import enum

        import torch

        from pkg.flags import _KERNELS

        _SM100_KERNELS_AVAILABLE = _KERNELS


        class Pref(enum.Enum):
            AUTO = "auto"
            EMULATED = "emulated"


        class _GroupedMM(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, pref: Pref = Pref.AUTO):
                if pref != Pref.EMULATED:
                    assert _SM100_KERNELS_AVAILABLE, "needs SM100 kernels"
                return a @ b


        def grouped_mm(a, b, pref: Pref = Pref.AUTO):
            return _GroupedMM.apply(a, b, pref)


        def grouped_mm_emulated_by_default(a, b, pref: Pref = Pref.EMULATED):
            return _GroupedMM.apply(a, b, pref)


        grouped_mm_op = _GroupedMM.apply


        def fused(x, use_kernel=True):
            if use_kernel:
                assert x.is_cuda, "the fused kernel is CUDA-only"
            return x
        """,
}


def test_a_call_that_keeps_the_default_option_calls_the_cuda_kernel(tmp_path):
    write(tmp_path, {**LIBRARY, "bench/bench_gmm.py": """\
        import torch
        from pkg.gmm import Pref, fused, grouped_mm, grouped_mm_op, grouped_mm_emulated_by_default


        def bench_default():
            a = torch.randn(4, 4, device="cuda")
            grouped_mm(a, a)


        def bench_alias():
            a = torch.randn(4, 4, device="cuda")
            grouped_mm_op(a, a)


        def bench_nested():
            def fwd(x):
                return grouped_mm(x, x)
            torch.cuda.synchronize()
            fwd(torch.ones(2))


        def bench_flag():
            x = torch.ones(2, device="cuda")
            fused(x)


        def bench_emulated():
            a = torch.randn(4, 4, device="cuda")
            grouped_mm(a, a, pref=Pref.EMULATED)


        def bench_positional():
            a = torch.randn(4, 4, device="cuda")
            grouped_mm(a, a, Pref.EMULATED)


        def bench_kwargs(**kw):
            a = torch.randn(4, 4, device="cuda")
            grouped_mm(a, a, **kw)


        def bench_other_default():
            a = torch.randn(4, 4, device="cuda")
            grouped_mm_emulated_by_default(a, a)


        def bench_flag_off():
            x = torch.ones(2, device="cuda")
            fused(x, use_kernel=False)


        def bench_nested_not_called():
            def fwd(x):
                return grouped_mm(x, x)
            torch.cuda.synchronize()
            return fwd
        """})
    # exempt: the default kept (directly, through the `Fn.apply` alias, through a nested
    # function always called, a truthy flag); kept: an option passed by keyword or position,
    # `**kwargs`, a wrapper whose own default opts out, a nested function never called
    assert findings(tmp_path, "bench") == [
        ("bench/bench_gmm.py", 28, "DL103"),
        ("bench/bench_gmm.py", 33, "DL103"),
        ("bench/bench_gmm.py", 38, "DL103"),
        ("bench/bench_gmm.py", 43, "DL103"),
        ("bench/bench_gmm.py", 48, "DL103"),
        ("bench/bench_gmm.py", 55, "DL401")]


def test_show_exempt_names_the_option_and_its_default(tmp_path):
    from _cli import run
    write(tmp_path, {**LIBRARY, "bench/bench_gmm.py": """\
        import torch
        from pkg.gmm import grouped_mm


        def bench_default():
            a = torch.randn(4, 4, device="cuda")
            grouped_mm(a, a)
        """})
    r = run("check", "--no-cache", "--show-exempt", "bench", cwd=tmp_path)
    assert "[cuda-by-default]" in r.stdout
    assert "`pref` is left at its default `Pref.AUTO` (pkg/gmm.py:19)" in r.stdout


def _requirements(src):
    unless: dict = {}
    found = calls_cuda_only.requirements(ast.parse(textwrap.dedent(src)), src, "m.py",
                                         unless=unless)
    return found, unless


def test_the_requirement_is_read_at_the_default_only():
    found, unless = _requirements(textwrap.dedent(LIBRARY["pkg/gmm.py"]))
    assert unless == {
        "_GroupedMM.apply": ("pref", 2, "Pref.AUTO"),
        "grouped_mm": ("pref", 2, "Pref.AUTO"),  # passes its own same-default option through
        "grouped_mm_op": ("pref", 2, "Pref.AUTO"),
        "fused": ("use_kernel", 1, "True")}
    assert "grouped_mm_emulated_by_default" not in found  # its default opts out
    assert found["_GroupedMM.apply"].principle == default_option.PRINCIPLE
    # tests of an option that are not taken at its default, or that ask something else
    found, _ = _requirements("""\
        import torch

        def a(x, mode="emulated"):
            if mode != "emulated":
                assert x.is_cuda
            return x

        def b(x, use_kernel=False):
            if use_kernel:
                assert x.is_cuda
            return x

        def c(x, mode="auto"):
            if mode == "auto" and x.numel() > 4:
                assert x.is_cuda
            return x

        def d(x, mode="auto"):
            if mode != "emulated":
                assert x.dtype == torch.float8_e4m3fn
            return x
        """)
    assert found == {}


def test_an_assert_on_a_flag_named_for_a_capability_is_a_requirement():
    found, unless = _requirements("""\
        from k import ok
        _SM90_OK = ok
        _KERNELS_OK = ok

        def hopper_only(x):
            assert _SM90_OK, "needs SM90"
            return x

        def plain(x):
            assert _KERNELS_OK
            return x
        """)
    assert set(found) == {"hopper_only"} and unless == {}
