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
    src = ('import pytest, torch\nfrom pkg.api import HAVE_GTP\n\nif not HAVE_GTP:\n'
           '    pytest.skip("GTP requires TransformerEngine >= 2.19", allow_module_level=True)\n\n'
           'import transformer_engine.pytorch as te\n\n\n'
           'def _layer():\n    return te.Linear(2, 2, device="cuda")\n\n\n'
           'def test_bias():\n    return torch.zeros(2, device="cuda")\n')
    assert _reason(src, "_layer").line == 5
    assert _reason(src, "test_bias") is None
    rows = [d.location[0] for d in check_source(src, "tests/test_gtp.py", profile="torch")
             if d.code == "DL103"]
    assert rows == [15]
