"""The KDA test module's pytest parametrisations are expanded the way pytest does when the verify
case runs its test functions."""
import importlib.util
import os

import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parametrizations_match_pytest():
    cases = _load(os.path.join(ROOT, "fixtures", "verify", "kda_cases.py"), "kda_cases_for_expansion")

    @pytest.mark.parametrize("seqlens", [(64,), (37, 100, 83)])
    @pytest.mark.parametrize(("a", "b"), [(1, 2), pytest.param(3, 4, id="x")])
    @pytest.mark.parametrize("dtype", [torch.float32])
    def fn(seqlens, a, b, dtype):
        pass

    combos = cases._parametrizations(fn)
    assert len(combos) == 4
    assert {c["seqlens"] for c in combos} == {(64,), (37, 100, 83)}
    assert {(c["a"], c["b"]) for c in combos} == {(1, 2), (3, 4)}
    assert all(c["dtype"] is torch.float32 for c in combos)
    assert cases._parametrizations(lambda: None) == [{}]
