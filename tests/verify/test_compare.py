"""The comparison metric: exact integers/bools, relative RMS with per-dtype thresholds, and precise
messages for shape, dtype, structure, NaN and Inf disagreements."""
import math

import pytest

torch = pytest.importorskip("torch")

from devlint.verify.compare import (  # noqa: E402
    DEFAULT_TOLERANCES,
    EXACT,
    Tolerance,
    compare,
    resolve_tolerance,
    worst,
)


def one(ref, got, tolerance=None):
    result = compare(ref, got, tolerance)
    assert len(result) == 1
    return result[0]


def test_integers_equal_and_first_difference_reported():
    a = torch.tensor([[1, 2, 3], [4, 5, 6]])
    assert one(a, a.clone()).ok
    b = a.clone()
    b[1, 1] = 50
    b[1, 2] = 60
    c = one(a, b)
    assert not c.ok and c.kind == "exact"
    assert c.message == "2 of 6 elements differ (int64, compared exactly); first at [1, 1]: reference=5, got=50"


def test_integers_are_never_compared_with_a_tolerance():
    a = torch.arange(1000, dtype=torch.int32)
    b = a.clone()
    b[999] += 1  # relative RMS would be tiny
    assert not one(a, b, tolerance=0.5).ok


def test_bool_exact():
    a = torch.tensor([True, False, True])
    assert one(a, a.clone()).ok
    c = one(a, torch.tensor([True, True, True]))
    assert not c.ok and "first at [1]: reference=False, got=True" in c.message


def test_relative_rms_is_fla_metric():
    ref = torch.tensor([3.0, 4.0], dtype=torch.float64)
    got = torch.tensor([3.0, 4.5], dtype=torch.float64)
    c = one(ref, got, tolerance=1.0)
    expected = math.sqrt(0.25 / 2) / (math.sqrt((9 + 16) / 2) + 1e-8)
    assert c.rel_rms == pytest.approx(expected, rel=1e-12)
    assert c.max_abs == pytest.approx(0.5)
    assert c.ok


def test_float32_default_threshold():
    gen = torch.Generator().manual_seed(0)
    ref = torch.randn(1000, generator=gen)
    assert one(ref, ref * (1 + 1e-7)).ok
    c = one(ref, ref * (1 + 1e-3))
    assert not c.ok
    assert c.threshold == DEFAULT_TOLERANCES["float32"].rel_rms
    assert c.message.startswith("relative RMS error 1.000e-03 exceeds 1.0e-05 (float32); max abs diff")


def test_per_dtype_thresholds_differ():
    gen = torch.Generator().manual_seed(1)
    ref = torch.randn(4096, generator=gen)
    got = ref * (1 + 3e-3)
    assert not one(ref, got).ok  # float32: 1e-5
    c = one(ref.bfloat16(), got.bfloat16())  # bfloat16: 1e-2
    assert c.ok and 1e-3 < c.rel_rms < 1e-2
    assert resolve_tolerance(torch.bfloat16, None).rel_rms > resolve_tolerance(torch.float32, None).rel_rms
    assert resolve_tolerance(torch.float64, None).rel_rms < resolve_tolerance(torch.float32, None).rel_rms


def test_tolerance_forms():
    assert resolve_tolerance(torch.float32, 1e-3).rel_rms == 1e-3
    assert resolve_tolerance(torch.float32, {"float32": 1e-4}).rel_rms == 1e-4
    assert resolve_tolerance(torch.float16, {"float32": 1e-4}) == DEFAULT_TOLERANCES["float16"]
    assert resolve_tolerance(torch.float32, Tolerance(0.1, 0.0)) == Tolerance(0.1, 0.0)
    assert resolve_tolerance(torch.float32, "exact") == EXACT
    with pytest.raises(ValueError):
        resolve_tolerance(torch.float32, "loose")


def test_atol_short_circuit_for_tiny_values():
    ref = torch.tensor([1e-9, 0.0])
    got = torch.tensor([2e-9, 1e-8])  # relative error huge, absolute error below 1e-6
    assert one(ref, got).ok


def test_exact_floats_demand_bit_identity():
    ref = torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16)
    assert one(ref, ref.clone(), EXACT).ok
    got = ref.clone()
    got[2] = 3.015625
    c = one(ref, got, EXACT)
    assert not c.ok
    assert c.message.startswith("not bit-identical: 1 of 3 elements differ")
    assert "first at [2]: reference=3, got=3.01562" in c.message


def test_shape_mismatch():
    c = one(torch.zeros(2, 3), torch.zeros(3, 2))
    assert not c.ok and c.message == "shape mismatch: reference [2, 3] vs got [3, 2]"


def test_dtype_mismatch():
    c = one(torch.zeros(2), torch.zeros(2, dtype=torch.float64))
    assert not c.ok and c.message == "dtype mismatch: reference float32 vs got float64"


def test_nan_positions_must_match():
    ref = torch.tensor([1.0, float("nan"), 3.0])
    assert one(ref, ref.clone()).ok  # same NaN positions agree
    got = torch.tensor([1.0, 2.0, float("nan")])
    c = one(ref, got)
    assert not c.ok
    assert c.message == "NaN mismatch: reference has 1 NaN, got has 1; first at [1]: reference=nan, got=2"


def test_inf_must_match_including_sign():
    ref = torch.tensor([1.0, float("inf")])
    assert one(ref, ref.clone()).ok
    c = one(ref, torch.tensor([1.0, float("-inf")]))
    assert not c.ok and c.message.startswith("Inf mismatch: reference has 1 Inf, got has 1; first at [1]")
    c = one(torch.tensor([1.0, 2.0]), torch.tensor([1.0, float("inf")]))
    assert not c.ok and "reference=2, got=inf" in c.message


def test_nested_structures_and_paths():
    ref = {"o": torch.ones(2), "states": [torch.zeros(1), torch.tensor([1])]}
    got = {"o": torch.ones(2), "states": [torch.zeros(1), torch.tensor([2])]}
    result = compare(ref, got)
    assert [c.path for c in result] == ["o", "states[0]", "states[1]"]
    assert [c.ok for c in result] == [True, True, False]
    w = worst(result)
    assert w["leaves"] == 3 and w["failed"] == 1


def test_structure_mismatches():
    c = compare({"a": torch.ones(1)}, {"b": torch.ones(1)})
    assert not c[0].ok and c[0].message == "key mismatch: missing keys ['a'], extra keys ['b']"
    c = compare([torch.ones(1)], [torch.ones(1), torch.ones(1)])
    assert not c[0].ok and c[0].message == "length mismatch: reference 1 vs got 2"
    c = compare(torch.ones(1), [torch.ones(1)])
    assert not c[0].ok and c[0].message == "type mismatch: reference Tensor vs got list"


def test_python_values():
    assert all(c.ok for c in compare({"n": 3, "s": "x", "none": None}, {"n": 3, "s": "x", "none": None}))
    c = compare(3, 4)[0]
    assert not c.ok and c.message == "value mismatch: reference 3 vs got 4"
    assert compare(0.5, 0.5 + 1e-13)[0].ok
    assert not compare(0.5, 0.6)[0].ok


def test_complex_tensors():
    ref = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    assert one(ref, ref.clone()).ok
    assert not one(ref, ref * 1j).ok


def test_empty_tensors_agree():
    assert one(torch.zeros(0, 3), torch.zeros(0, 3)).ok
