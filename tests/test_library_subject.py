"""library-subject: a test whose subject is a library of NVIDIA/AMD GPU kernels."""
from __future__ import annotations

import ast

from devlint.api import check_source
from devlint.evidence.library_subject import libraries, names_library, subject_reason, words


def test_words_split_names_and_camel_case():
    assert words("TestTEParallelSequentialMLP") == ["test", "te", "parallel", "sequential", "mlp"]
    assert words("test_fa3_decode") == ["test", "fa", "3", "decode"]
    assert words("DeepGEMM bf16 kernels") == ["deep", "gemm", "bf", "16", "kernels"]


def test_names_library_by_name_joined_words_or_initials():
    assert names_library(words("TransformerEngine FusedAdam")) == "transformer_engine"
    assert names_library(words("test_te_grouped_linear")) == "transformer_engine"
    assert names_library(words("test_fa3_varlen")) == "flash_attn"
    assert names_library(words("requires DeepGEMM")) == "deep_gemm"
    assert names_library(words("test_flashinfer_decode")) == "flashinfer"
    # initials only where asked for (a module's imported names need the full name)
    assert names_library(words("fa4_sparse_block_sizes"), initials=False) is None
    # no word of the name is the library (`test` is not `te`; `memorize` holds `mori`)
    assert names_library(words("test_memorize_attention")) is None


def test_the_platform_and_a_collection_are_no_library():
    assert "cuda" not in libraries() and "nvidia" not in libraries()
    assert "nemo" not in libraries()  # `nemo.collections.nlp` is one collection of NeMo
    assert {"transformer_engine", "flash_attn", "apex", "deep_gemm", "flashinfer"} <= set(
        libraries())


def _reason(src, name):
    tree = ast.parse(src)
    scope = next(n for n in ast.walk(tree) if getattr(n, "name", None) == name)
    return subject_reason(scope, tree, "tests/test_x.py", True)


def test_reason_names_principle_and_line():
    src = ('import pytest, torch\nfrom pkg.extensions.transformer_engine import TELinear\n\n\n'
           '@pytest.mark.skipif(not HAVE, reason="TE fused router ops not available")\n'
           'def test_router():\n    torch.randn(4).cuda()\n')
    why = _reason(src, "test_router")
    assert why.principle == "library-subject" and why.line == 5
    assert "fused router ops" in why
    # not a test module: nothing
    tree = ast.parse(src)
    scope = next(n for n in ast.walk(tree) if getattr(n, "name", None) == "test_router")
    assert subject_reason(scope, tree, "pkg/router.py", False) is None


def test_module_wide_skip_covers_the_functions_using_the_library_api():
    # the module takes only some of the library's names: only the functions using them
    src = ('import pytest, torch\nfrom pkg.api import HAVE_GTP\n\nif not HAVE_GTP:\n'
           '    pytest.skip("GTP requires TransformerEngine >= 2.19", allow_module_level=True)\n\n'
           'from transformer_engine.pytorch import Linear\n\n\n'
           'def _layer():\n    return Linear(2, 2, device="cuda")\n\n\n'
           'def test_bias():\n    return torch.zeros(2, device="cuda")\n')
    assert _reason(src, "_layer").line == 5
    assert _reason(src, "test_bias") is None
    rows = [d.location[0] for d in check_source(src, "tests/test_gtp.py", profile="torch")
             if d.code == "DL103"]
    assert rows == [15]


_PACKAGE = ('import pytest, torch\nfrom pkg.api import HAVE_GTP\n\nif not HAVE_GTP:\n'
            '    pytest.skip("GTP requires TransformerEngine >= 2.19", allow_module_level=True)\n'
            '\nimport transformer_engine.pytorch as te\nfrom pkg.utils import make_layer\n\n\n'
            'def _worker():\n    x = torch.zeros(2, device="cuda")\n    make_layer()(x)\n\n\n'
            'class TestFallback:\n    @staticmethod\n    def _param():\n'
            '        p = torch.zeros(2, device="cuda")\n        p.event = torch.cuda.Event()\n'
            '        return p\n\n'
            '    @pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA required")\n'
            '    def test_fallback(self):\n        self._param()\n\n\n'
            'def test_layer():\n    te.Linear(2, 2)\n')


def test_module_importing_the_library_package_is_the_library_s_throughout():
    # every function and class of the module, whether or not it uses the library itself
    for name in ("_worker", "TestFallback", "_param", "test_fallback", "test_layer"):
        why = _reason(_PACKAGE, name)
        assert why.principle == "library-subject" and why.line == 5, name
        assert "package" in why
    assert not [d for d in check_source(_PACKAGE, "tests/test_gtp.py", profile="torch")
                if d.code.startswith(("DL1", "DL2", "DL4"))]


def test_module_package_signal_needs_the_skip_the_import_and_a_test_module():
    # no module-wide skip: the module merely builds with the library
    no_skip = _PACKAGE.replace('if not HAVE_GTP:\n    pytest.skip("GTP requires TransformerEngine'
                               ' >= 2.19", allow_module_level=True)\n', '')
    assert _reason(no_skip, "_worker") is None
    # a skip whose reason names no library (a CUDA check) says nothing of the library
    cuda = _PACKAGE.replace("GTP requires TransformerEngine >= 2.19", "requires CUDA")
    assert _reason(cuda, "_worker") is None
    # the library imported only where it is there (`try`): optional, no requirement
    optional = _PACKAGE.replace("\nimport transformer_engine.pytorch as te\n",
                                "\ntry:\n    import transformer_engine.pytorch as te\n"
                                "except ImportError:\n    te = None\n")
    assert _reason(optional, "_worker") is None
    # not a test module
    tree = ast.parse(_PACKAGE)
    scope = next(n for n in ast.walk(tree) if getattr(n, "name", None) == "_worker")
    assert subject_reason(scope, tree, "pkg/gtp.py", False) is None
    assert [d.location[0] for d in check_source(no_skip, "tests/test_gtp.py", profile="torch")
            if d.code == "DL103"] == [10, 17]
