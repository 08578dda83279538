"""Comparing a case's results across devices.

A result is a tensor, a Python scalar/string/None, or a nested tuple/list/dict of those. Integer
and bool tensors must be equal; floating tensors are compared with fla's ``assert_close`` metric,
the relative RMS error ``sqrt(mean((a - b)^2)) / (sqrt(mean(b^2)) + 1e-8)`` (``b`` the reference),
against a per-dtype threshold; a maximum absolute difference under ``atol`` passes outright, as
in fla. Shape, dtype, structure, NaN and Inf disagreements are reported with the first position
where they occur.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from .devices import import_torch

#: Name of the "tolerance" that demands bit-identical floating results.
EXACT = "exact"


@dataclass(frozen=True)
class Tolerance:
    """Relative RMS threshold, and the max-abs difference under which any result passes."""

    rel_rms: float
    atol: float = 0.0


#: Default thresholds by dtype name (``str(dtype)`` without ``torch.``). Cross-device float32
#: results differ by reduction order only: ~1e-7 relative; 1e-5 leaves room for long recurrences.
DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance(1e-10, 1e-12),
    "float32": Tolerance(1e-5, 1e-6),
    "float16": Tolerance(2e-3, 1e-5),
    "bfloat16": Tolerance(1e-2, 1e-5),
    "float8_e4m3fn": Tolerance(1e-1, 1e-3),
    "float8_e5m2": Tolerance(2e-1, 1e-3),
}
_FALLBACK = Tolerance(1e-2, 1e-6)


@dataclass
class Comparison:
    """The comparison of one leaf of a result against the reference's leaf."""

    path: str
    kind: str  # "float", "exact" (integer/bool, or float compared bit for bit), "value", "structure"
    ok: bool
    message: str | None = None
    dtype: str | None = None
    shape: list[int] | None = None
    max_abs: float | None = None
    rel_rms: float | None = None
    threshold: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def resolve_tolerance(dtype, tolerance) -> Tolerance | str:
    """``tolerance`` is None (defaults), ``"exact"``, a float (relative RMS for every float dtype),
    a Tolerance, or a mapping from dtype name to float/Tolerance (others keep their defaults)."""
    name = dtype_name(dtype)
    if tolerance is None:
        return DEFAULT_TOLERANCES.get(name, _FALLBACK)
    if isinstance(tolerance, str):
        if tolerance != EXACT:
            raise ValueError(f"unknown tolerance {tolerance!r}: use a number, a mapping or 'exact'")
        return EXACT
    if isinstance(tolerance, Tolerance):
        return tolerance
    if isinstance(tolerance, (int, float)):
        base = DEFAULT_TOLERANCES.get(name, _FALLBACK)
        return Tolerance(float(tolerance), base.atol)
    if isinstance(tolerance, Mapping):
        if name in tolerance:
            return resolve_tolerance(dtype, tolerance[name])
        return DEFAULT_TOLERANCES.get(name, _FALLBACK)
    raise TypeError(f"bad tolerance: {tolerance!r}")


def to_cpu(obj: Any) -> Any:
    """A copy of a result with every tensor detached and on the CPU (structure preserved)."""
    torch = import_torch()
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(to_cpu(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    return obj


def _fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _index(flat_index: int, shape) -> list[int]:
    out = []
    for size in reversed(list(shape)):
        out.append(flat_index % size if size else 0)
        flat_index //= size if size else 1
    return list(reversed(out))


def _first(mask, ref, got) -> str:
    """'at [i, j]: reference=..., got=...' for the first True in mask."""
    flat = mask.reshape(-1).nonzero()
    if flat.numel() == 0:
        return ""
    i = int(flat[0, 0])
    r = ref.reshape(-1)[i].item()
    g = got.reshape(-1)[i].item()
    return f"first at {_index(i, ref.shape)}: reference={_fmt(r)}, got={_fmt(g)}"


def _compare_tensors(path, ref, got, tolerance) -> Comparison:
    torch = import_torch()
    shape = list(ref.shape)
    dname = dtype_name(ref.dtype)
    if ref.shape != got.shape:
        return Comparison(path, "structure", False,
                          f"shape mismatch: reference {shape} vs got {list(got.shape)}",
                          dtype=dname, shape=shape)
    if ref.dtype != got.dtype:
        return Comparison(path, "structure", False,
                          f"dtype mismatch: reference {dname} vs got {dtype_name(got.dtype)}",
                          dtype=dname, shape=shape)
    if ref.is_complex():
        ref, got = torch.view_as_real(ref), torch.view_as_real(got)
    is_float = ref.is_floating_point()
    if not is_float:
        differ = ref != got
        n = int(differ.sum())
        if n == 0:
            return Comparison(path, "exact", True, dtype=dname, shape=shape, max_abs=0.0)
        return Comparison(path, "exact", False,
                          f"{n} of {ref.numel()} elements differ ({dname}, compared exactly); "
                          + _first(differ, ref, got), dtype=dname, shape=shape)

    tol = resolve_tolerance(ref.dtype, tolerance)
    threshold = 0.0 if tol == EXACT else tol.rel_rms
    kind = "exact" if tol == EXACT else "float"
    if ref.numel() == 0:
        return Comparison(path, kind, True, dtype=dname, shape=shape, max_abs=0.0, rel_rms=0.0,
                          threshold=threshold)
    rn, gn = torch.isnan(ref), torch.isnan(got)
    if not torch.equal(rn, gn):
        bad = rn != gn
        return Comparison(path, kind, False,
                          f"NaN mismatch: reference has {int(rn.sum())} NaN, got has {int(gn.sum())}; "
                          + _first(bad, ref, got), dtype=dname, shape=shape, threshold=threshold)
    ri, gi = torch.isinf(ref), torch.isinf(got)
    bad_inf = (ri | gi) & (ref != got)
    if bool(bad_inf.any()):
        return Comparison(path, kind, False,
                          f"Inf mismatch: reference has {int(ri.sum())} Inf, got has {int(gi.sum())}; "
                          + _first(bad_inf, ref, got), dtype=dname, shape=shape, threshold=threshold)
    finite = ~(rn | ri)
    r64 = torch.where(finite, ref, torch.zeros_like(ref)).to(torch.float64)
    g64 = torch.where(finite, got, torch.zeros_like(got)).to(torch.float64)
    diff = g64 - r64
    absdiff = diff.abs()
    n_finite = max(int(finite.sum()), 1)
    max_abs = float(absdiff.max())
    rms_err = math.sqrt(float(diff.square().sum()) / n_finite)
    rms_ref = math.sqrt(float(r64.square().sum()) / n_finite)
    rel = rms_err / (rms_ref + 1e-8)
    if tol == EXACT:
        ok = max_abs == 0.0
        if ok:
            return Comparison(path, kind, True, dtype=dname, shape=shape, max_abs=0.0, rel_rms=0.0,
                              threshold=0.0)
        n = int((absdiff > 0).sum())
        return Comparison(path, kind, False,
                          f"not bit-identical: {n} of {ref.numel()} elements differ, max abs diff "
                          f"{max_abs:.3g}; " + _first(absdiff == max_abs, ref, got),
                          dtype=dname, shape=shape, max_abs=max_abs, rel_rms=rel, threshold=0.0)
    ok = max_abs <= tol.atol or rel <= tol.rel_rms
    message = None
    if not ok:
        message = (f"relative RMS error {rel:.3e} exceeds {tol.rel_rms:.1e} ({dname}); "
                   f"max abs diff {max_abs:.3g} " + _first(absdiff == max_abs, ref, got))
    return Comparison(path, kind, ok, message, dtype=dname, shape=shape, max_abs=max_abs,
                      rel_rms=rel, threshold=tol.rel_rms)


def _join(path: str, key) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _type_name(x) -> str:
    return type(x).__name__


def compare(reference: Any, actual: Any, tolerance=None, path: str = "") -> list[Comparison]:
    """Compare two results leaf by leaf (both already on the CPU). Returns one Comparison per
    leaf; a structural difference (type, keys, length) is one failed Comparison for that node."""
    torch = import_torch()
    out: list[Comparison] = []
    shown = path or "<result>"
    if isinstance(reference, torch.Tensor) or isinstance(actual, torch.Tensor):
        if not (isinstance(reference, torch.Tensor) and isinstance(actual, torch.Tensor)):
            return [Comparison(shown, "structure", False,
                               f"type mismatch: reference {_type_name(reference)} vs got {_type_name(actual)}")]
        return [_compare_tensors(shown, reference, actual, tolerance)]
    if isinstance(reference, dict):
        if not isinstance(actual, dict):
            return [Comparison(shown, "structure", False,
                               f"type mismatch: reference dict vs got {_type_name(actual)}")]
        missing = [k for k in reference if k not in actual]
        extra = [k for k in actual if k not in reference]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing keys {missing}")
            if extra:
                parts.append(f"extra keys {extra}")
            out.append(Comparison(shown, "structure", False, "key mismatch: " + ", ".join(parts)))
        for key in reference:
            if key in actual:
                out.extend(compare(reference[key], actual[key], tolerance, _join(path, key)))
        return out
    if isinstance(reference, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            return [Comparison(shown, "structure", False,
                               f"type mismatch: reference {_type_name(reference)} vs got {_type_name(actual)}")]
        if len(reference) != len(actual):
            out.append(Comparison(shown, "structure", False,
                                  f"length mismatch: reference {len(reference)} vs got {len(actual)}"))
        for i, (r, a) in enumerate(zip(reference, actual)):
            out.extend(compare(r, a, tolerance, _join(path, i)))
        return out
    if isinstance(reference, float) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
        return [_compare_tensors(shown, torch.tensor([reference], dtype=torch.float64),
                                 torch.tensor([float(actual)], dtype=torch.float64), tolerance)]
    if _type_name(reference) != _type_name(actual) or reference != actual:
        return [Comparison(shown, "value", False,
                           f"value mismatch: reference {reference!r} vs got {actual!r}")]
    return [Comparison(shown, "value", True)]


def worst(comparisons: list[Comparison]) -> dict:
    """The largest relative RMS error and max-abs difference over a list of comparisons."""
    rels = [c.rel_rms for c in comparisons if c.rel_rms is not None]
    abss = [c.max_abs for c in comparisons if c.max_abs is not None]
    return {
        "rel_rms": max(rels) if rels else None,
        "max_abs": max(abss) if abss else None,
        "leaves": len(comparisons),
        "failed": sum(1 for c in comparisons if not c.ok),
    }
