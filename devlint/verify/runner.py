"""Loading targets and running their cases on every device."""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .case import Case, Check, CheckFailed, NotApplicable, _registered_since, _registry_mark, recording_checks
from .compare import Comparison, compare, to_cpu
from .devices import import_torch


class VerifyUsageError(ValueError):
    """A target cannot be loaded, holds no case, or options are inconsistent (exit 2)."""


# --------------------------------------------------------------------------- targets


def default_targets() -> list[str]:
    """The built-in targets: modules of :mod:`devlint.verify.cases`, shipped in the package."""
    from .cases import BUILTIN_TARGETS

    return list(BUILTIN_TARGETS)


def _module_name_for(path: Path) -> str:
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = "".join(ch if ch.isalnum() else "_" for ch in path.stem)
    return f"devlint_verify_target_{stem}_{digest}"


def _load_file(path: Path):
    name = _module_name_for(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise VerifyUsageError(f"{path}: cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise VerifyUsageError(f"{path}: error while loading: {type(exc).__name__}: {exc}") from exc
    return module


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_target(target: str) -> list[Case]:
    """The cases a target declares. A target is a ``.py`` file, a folder of them, or a dotted
    module path (``pkg.verify_cases``)."""
    path = Path(target)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        cases = [c for f in files for c in load_target(str(f))]
        if not cases:
            raise VerifyUsageError(f"{target}: no verification cases found in this folder")
        return cases
    mark = _registry_mark()
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise VerifyUsageError(f"{target}: no such file")
        module = _load_file(path.resolve())
        shown = _display_path(path)
    else:
        try:
            if target in sys.modules:
                module = importlib.reload(sys.modules[target])
            else:
                module = importlib.import_module(target)
        except ImportError as exc:
            raise VerifyUsageError(f"{target}: not a file and not an importable module ({exc})") from exc
        except Exception as exc:
            raise VerifyUsageError(f"{target}: error while importing: {type(exc).__name__}: {exc}") from exc
        shown = target
    cases = [c for c in _registered_since(mark) if c.target == module.__name__]
    if not cases:
        raise VerifyUsageError(f"{target}: no verification cases found (declare them with @devlint.verify.case)")
    for c in cases:
        c.target = shown
    return cases


def load_targets(targets: list[str] | None) -> list[Case]:
    cases: list[Case] = []
    for target in targets or default_targets():
        cases.extend(load_target(target))
    seen: dict[str, Case] = {}
    for c in cases:
        if c.name in seen:
            raise VerifyUsageError(f"two cases are named {c.name!r} ({seen[c.name].target}, {c.target})")
        seen[c.name] = c
    return cases


# --------------------------------------------------------------------------- results


@dataclass
class RunOutcome:
    """One run of a case's fixed or original code on one device."""

    status: str  # "ok", "error", "n/a", "check-failed"
    value: Any = None
    message: str | None = None
    where: str | None = None
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class OriginalResult:
    status: str  # "ok" (ran, agrees), "fails" (raised: expected), "mismatch", "n/a"
    message: str | None = None
    where: str | None = None
    comparisons: list[Comparison] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class DeviceResult:
    device: str
    status: str  # "ok", "mismatch", "error", "n/a"
    message: str | None = None
    where: str | None = None
    is_reference: bool = False
    compared_with: str | None = None
    comparisons: list[Comparison] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    original: OriginalResult | None = None


@dataclass
class CaseResult:
    case: Case
    status: str  # "ok", "mismatch", "error", "n/a"
    devices: dict[str, DeviceResult]
    reference: str | None  # the device whose result the others were compared with
    values: dict[str, Any] = field(default_factory=dict, repr=False)  # fixed results, on the CPU
    outcomes: dict[str, RunOutcome] = field(default_factory=dict, repr=False)  # the fixed runs


@dataclass
class VerifyRun:
    devices: list[str]  # the columns: device types, or "machine/device" in a comparison of records
    reference: str
    results: list[CaseResult]
    environment: dict
    records: list[dict] | None = None  # the records compared (``--compare``, ``--ray``), else None

    @property
    def exit_code(self) -> int:
        return 1 if any(r.status in ("mismatch", "error") for r in self.results) else 0


# --------------------------------------------------------------------------- running

_SKIP_PARTS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep,
               os.sep + "torch" + os.sep, os.sep + "triton" + os.sep)
_OWN_DIR = str(Path(__file__).resolve().parent) + os.sep
_CASES_DIR = _OWN_DIR + "cases" + os.sep
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2]) + os.sep


def _where(exc: BaseException, depth: int = 3) -> str | None:
    """file:line of the innermost frames in the code under test (not torch, not the runner),
    innermost first: ``a.py:3 in f <- b.py:9 in g``. The built-in cases and their fixtures are
    code under test wherever devlint is installed, shown as ``devlint/verify/cases/...``."""
    cwd = os.getcwd() + os.sep
    found = []
    for fr in reversed(traceback.extract_tb(exc.__traceback__)):
        fname = fr.filename
        if fname.startswith(_CASES_DIR):
            fname = fname[len(_PACKAGE_PARENT):]
        elif fname.startswith(_OWN_DIR) or any(p in fname for p in _SKIP_PARTS) or fname.startswith("<"):
            continue
        elif fname.startswith(cwd):
            fname = fname[len(cwd):]
        found.append(f"{fname}:{fr.lineno} in {fr.name}")
        if len(found) == depth:
            break
    return " <- ".join(found) or None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if len(first) > 300:
        first = first[:297] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _run_one(fn, device_name: str, seed: int) -> RunOutcome:
    torch = import_torch()
    device = torch.device(device_name)
    with recording_checks() as (checks, notes):
        try:
            torch.manual_seed(seed)
            value = to_cpu(fn(device))
        except NotApplicable as exc:
            outcome = RunOutcome("n/a", message=str(exc))
        except CheckFailed as exc:
            outcome = RunOutcome("check-failed", message=str(exc), where=_where(exc))
        except Exception as exc:  # noqa: BLE001 - any failure of the code under test is a result
            outcome = RunOutcome("error", message=_describe(exc), where=_where(exc))
        else:
            outcome = RunOutcome("ok", value=value)
        outcome.checks, outcome.notes = list(checks), list(notes)
    return outcome


def _first_failure(comparisons: list[Comparison]) -> str | None:
    for c in comparisons:
        if not c.ok:
            return f"{c.path}: {c.message}"
    return None


def assemble(case: Case, fixed: dict[str, RunOutcome], columns: list[str], reference: str) -> CaseResult:
    """Compare the fixed code's outcomes (one per column: a device here, a machine's device in
    ``--compare``) with the reference column's, or, where that one is n/a, with the first column
    that ran the case. Originals are attached afterwards with :func:`attach_original`."""
    base = reference if reference in fixed and fixed[reference].status == "ok" else None
    if base is None and not (reference in fixed and fixed[reference].status in ("error", "check-failed")):
        # reference is n/a (or not selected): compare with the first column that ran the case.
        base = next((d for d in columns if fixed[d].status == "ok"), None)

    out: dict[str, DeviceResult] = {}
    for d in columns:
        run = fixed[d]
        if run.status == "ok":
            res = DeviceResult(d, "ok", is_reference=(d == base), checks=run.checks, notes=run.notes)
            if base is not None and d != base:
                res.compared_with = base
                res.comparisons = compare(fixed[base].value, run.value, case.tolerance)
                failure = _first_failure(res.comparisons)
                if failure:
                    res.status, res.message = "mismatch", f"differs from {base}: {failure}"
            elif base is None and reference in fixed:
                res.message = f"not compared: reference {reference} failed"
        elif run.status == "check-failed":
            res = DeviceResult(d, "mismatch", run.message, run.where, checks=run.checks, notes=run.notes)
        else:
            res = DeviceResult(d, run.status, run.message, run.where, checks=run.checks, notes=run.notes)
        out[d] = res
    values = {d: run.value for d, run in fixed.items() if run.status == "ok"}
    result = CaseResult(case, "ok", out, base, values, outcomes=dict(fixed))
    result.status = case_status(out)
    return result


def run_original(case: Case, device: str, fixed: RunOutcome, base_value: Any, base: str | None) -> OriginalResult:
    """Run the case's original on ``device`` and compare it with the fixed code's result there
    (or, where the fixed code did not run, with the base column's)."""
    orig = _run_one(case.original, device, case.seed)
    if orig.status == "n/a":
        o = OriginalResult("n/a", orig.message)
    elif orig.status == "error":
        o = OriginalResult("fails", orig.message, orig.where)
    elif orig.status == "check-failed":
        o = OriginalResult("mismatch", orig.message, orig.where)
    else:
        against, value = (device, fixed.value) if fixed.status == "ok" else (base, base_value)
        o = OriginalResult("ok")
        if against is None:
            o.message = "ran; no fixed result to compare with"
        else:
            o.comparisons = compare(value, orig.value, case.tolerance)
            failure = _first_failure(o.comparisons)
            if failure:
                o.status = "mismatch"
                o.message = f"original differs from the fixed code on {against}: {failure}"
    o.checks, o.notes = orig.checks, orig.notes
    return o


def attach_original(result: CaseResult, column: str, original: OriginalResult) -> None:
    """Attach an original's outcome to a column; an original that ran and disagrees with the fixed
    code makes that column a mismatch."""
    res = result.devices[column]
    res.original = original
    if original.status == "mismatch" and res.status in ("ok", "n/a"):
        res.status = "mismatch"
        res.message = original.message
    result.status = case_status(result.devices)


def case_status(devices: dict[str, DeviceResult]) -> str:
    statuses = [r.status for r in devices.values()]
    if "error" in statuses:
        return "error"
    if "mismatch" in statuses:
        return "mismatch"
    if statuses and all(s == "n/a" for s in statuses):
        return "n/a"
    return "ok"


def run_case(case: Case, devices: list[str], reference: str = "cpu") -> CaseResult:
    fixed = {d: _run_one(case.fn, d, case.seed) for d in devices}
    result = assemble(case, fixed, devices, reference)
    if case.original is not None:
        base = result.reference
        base_value = fixed[base].value if base is not None else None
        for d in devices:
            attach_original(result, d, run_original(case, d, fixed[d], base_value, base))
    return result


def run_cases(cases: list[Case], devices: list[str], reference: str | None = None) -> VerifyRun:
    """Run every case on every device; ``reference`` defaults to cpu when selected, else the first
    device."""
    from .devices import environment_info

    if reference is None:
        reference = "cpu" if "cpu" in devices else devices[0]
    elif reference not in devices:
        raise VerifyUsageError(f"reference device {reference!r} is not among the devices run: {', '.join(devices)}")
    results = [run_case(c, devices, reference) for c in cases]
    return VerifyRun(devices=list(devices), reference=reference, results=results,
                     environment=environment_info(devices))


# --------------------------------------------------------------------------- in test suites


def same_on_all_devices(fn, *args, devices: list[str] | None = None, reference: str | None = None,
                        tolerance=None, **kwargs) -> dict[str, Any]:
    """Run ``fn(device, *args, **kwargs)`` on every available device (or ``devices``), compare each
    result on the CPU with the reference device's (cpu by default) and raise AssertionError listing
    every disagreement. Returns ``{device: result on the CPU}``. A device where ``fn`` calls
    :func:`not_applicable` is left out of the comparison."""
    from .devices import select_devices

    chosen = select_devices(devices)
    if reference is None:
        reference = "cpu" if "cpu" in chosen else chosen[0]
    name = getattr(fn, "__name__", "fn")
    one = Case(name=name, fn=lambda device: fn(device, *args, **kwargs), tolerance=tolerance)
    result = run_case(one, chosen, reference)
    problems = [f"{d}: {r.status}: {r.message}{f' (at {r.where})' if r.where else ''}"
                for d, r in result.devices.items() if r.status in ("mismatch", "error")]
    if problems:
        raise AssertionError(f"{name} does not give the same result on every device:\n  " + "\n  ".join(problems))
    return result.values
