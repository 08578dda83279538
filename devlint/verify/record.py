"""Records of verify runs, and comparing records made on different machines.

``devlint verify --record DIR`` writes, next to its usual report:

* ``DIR/tensors.safetensors``: every fixed-code result tensor of every case on every device, on
  the CPU, keyed ``<case>/<device>/<n>``;
* ``DIR/manifest.json``: the format and devlint version, a label for the machine, the environment
  (python, platform, torch, triton, CUDA/HIP runtimes, device names), the devices and reference,
  the comparison tolerances, and per case: its name, target, the sha256 of its sources, its
  tolerance, and per device the fixed run's status, message, location, in-case checks and notes,
  the structure of its result (leaves pointing at tensors), and the original's outcome there.

``devlint verify --compare DIR [DIR...]`` loads records and compares every machine's device
results with the reference column (the first record's reference device, or ``--reference
LABEL/DEVICE``), with the tolerances recorded (which must be this devlint's), through the same
code as a local run: the same device x case table, with ``machine/device`` columns. Records from
another devlint version, of another format, holding other cases or other case sources are
refused (:class:`RecordError`, exit 2) rather than compared.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .case import Case, Check
from .compare import _FALLBACK, DEFAULT_TOLERANCES, Comparison, Tolerance
from .runner import CaseResult, OriginalResult, RunOutcome, VerifyRun, assemble, attach_original

FORMAT = "devlint-verify-record"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
TENSORS = "tensors.safetensors"


class RecordError(ValueError):
    """A record cannot be written, read or compared (exit 2)."""


# --------------------------------------------------------------------------- values <-> JSON + tensors


class Opaque:
    """A result leaf that is neither a tensor nor a JSON value, kept as its type name and repr."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __eq__(self, other):
        return isinstance(other, Opaque) and (self.type_name, self.text) == (other.type_name, other.text)

    def __repr__(self):
        return self.text


def encode_value(value: Any, key: str, tensors: dict) -> Any:
    """The JSON form of a result (tensors go into ``tensors`` under keys starting with ``key``)."""
    import torch

    if isinstance(value, torch.Tensor):
        name = f"{key}/{len(tensors)}"
        tensors[name] = value.detach().to("cpu").contiguous().clone()
        return {"tensor": name}
    if isinstance(value, dict):
        return {"dict": [[encode_value(k, key, tensors), encode_value(v, key, tensors)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [encode_value(v, key, tensors) for v in value]}
    if isinstance(value, list):
        return {"list": [encode_value(v, key, tensors) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    return {"opaque": repr(value), "type": type(value).__name__}


def decode_value(node: Any, tensors: dict) -> Any:
    if "tensor" in node:
        try:
            return tensors[node["tensor"]]
        except KeyError:
            raise RecordError(f"tensor {node['tensor']!r} is missing from {TENSORS}") from None
    if "dict" in node:
        return {decode_value(k, tensors): decode_value(v, tensors) for k, v in node["dict"]}
    if "tuple" in node:
        return tuple(decode_value(v, tensors) for v in node["tuple"])
    if "list" in node:
        return [decode_value(v, tensors) for v in node["list"]]
    if "value" in node:
        return node["value"]
    return Opaque(node.get("type", "?"), node.get("opaque", "?"))


def encode_tolerance(tolerance: Any) -> Any:
    if tolerance is None or isinstance(tolerance, (str, int, float)):
        return tolerance
    if isinstance(tolerance, Tolerance):
        return {"rel_rms": tolerance.rel_rms, "atol": tolerance.atol}
    return {str(k): encode_tolerance(v) for k, v in dict(tolerance).items()}


def decode_tolerance(data: Any) -> Any:
    if isinstance(data, dict):
        if set(data) == {"rel_rms", "atol"}:
            return Tolerance(float(data["rel_rms"]), float(data["atol"]))
        return {k: decode_tolerance(v) for k, v in data.items()}
    return data


def tolerance_table() -> dict:
    """The per-dtype defaults every comparison uses (recorded, and checked on --compare)."""
    return {"defaults": {k: encode_tolerance(v) for k, v in DEFAULT_TOLERANCES.items()},
            "fallback": encode_tolerance(_FALLBACK)}


def _check_dict(check: Check) -> dict:
    return {"name": check.name, "ok": check.ok, "comparisons": [c.to_dict() for c in check.comparisons]}


def _check_from(data: dict) -> Check:
    return Check(data["name"], data["ok"], [Comparison(**c) for c in data["comparisons"]])


def _original_dict(o: OriginalResult | None) -> dict | None:
    if o is None:
        return None
    return {"status": o.status, "message": o.message, "where": o.where,
            "comparisons": [c.to_dict() for c in o.comparisons],
            "checks": [_check_dict(c) for c in o.checks], "notes": list(o.notes)}


def _original_from(data: dict | None) -> OriginalResult | None:
    if data is None:
        return None
    return OriginalResult(data["status"], data.get("message"), data.get("where"),
                          [Comparison(**c) for c in data.get("comparisons", [])],
                          [_check_from(c) for c in data.get("checks", [])], list(data.get("notes", [])))


# --------------------------------------------------------------------------- writing


def _shown_sources(files: list[str]) -> list[str]:
    """The case's source files for people: relative to the folder of the file defining the case
    (the first), where they are inside it; else by name."""
    if not files:
        return []
    base = Path(files[0]).resolve().parent
    shown = []
    for path in files:
        try:
            shown.append(Path(path).resolve().relative_to(base).as_posix())
        except ValueError:
            shown.append(os.path.basename(path))
    return shown


def default_label() -> str:
    return socket.gethostname() or "machine"


def _devlint_version() -> str:
    from devlint._version import __version__

    return __version__


def build_record(run: VerifyRun, label: str | None = None) -> tuple[dict, dict]:
    """The manifest and the tensors of a local run."""
    tensors: dict = {}
    cases = []
    for r in run.results:
        results = {}
        for d in run.devices:
            outcome = r.outcomes.get(d)
            res = r.devices[d]
            if outcome is None:
                continue
            results[d] = {
                "status": outcome.status,
                "message": outcome.message,
                "where": outcome.where,
                "value": encode_value(outcome.value, f"{r.case.name}/{d}", tensors) if outcome.status == "ok" else None,
                "checks": [_check_dict(c) for c in outcome.checks],
                "notes": list(outcome.notes),
                "original": _original_dict(res.original),
            }
        cases.append({
            "name": r.case.name,
            "target": r.case.target,
            "description": r.case.description,
            "source_sha256": r.case.source_hash(),
            "sources": _shown_sources(r.case.source_files()),
            "tolerance": encode_tolerance(r.case.tolerance),
            "has_original": r.case.original is not None,
            "status": r.status,
            "results": results,
        })
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "devlint_version": _devlint_version(),
        "label": label or default_label(),
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "environment": run.environment,
        "devices": list(run.devices),
        "reference": run.reference,
        "tolerances": tolerance_table(),
        "tensors": TENSORS,
        "cases": cases,
    }
    return manifest, tensors


def write_record(run: VerifyRun, directory: str | os.PathLike, label: str | None = None) -> Path:
    """Write ``run`` as a record into ``directory`` (created; a previous record there is replaced,
    anything else there is refused)."""
    try:
        from safetensors.torch import save_file
    except ImportError as exc:
        raise RecordError(f"--record needs safetensors ({exc}): pip install 'devlint[verify]'") from exc

    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise RecordError(f"{folder}: exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    strangers = sorted(p.name for p in folder.iterdir() if p.name not in (MANIFEST, TENSORS))
    if strangers:
        raise RecordError(f"{folder}: not empty ({', '.join(strangers[:5])}); record into an empty folder")
    manifest, tensors = build_record(run, label)
    tmp = folder / (TENSORS + ".tmp")
    try:
        save_file(tensors, str(tmp), metadata={"format": FORMAT, "devlint_version": manifest["devlint_version"]})
    except ImportError as exc:  # safetensors' torch API writes through numpy
        raise RecordError(f"--record cannot write {TENSORS} ({exc}): pip install 'devlint[verify]'") from exc
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # safetensors creates it private; a record is meant to be shared
    manifest["tensors_sha256"] = _sha256(tmp)
    os.replace(tmp, folder / TENSORS)
    text = json.dumps(manifest, indent=1, sort_keys=False) + "\n"
    (folder / (MANIFEST + ".tmp")).write_text(text, encoding="utf-8")
    os.replace(folder / (MANIFEST + ".tmp"), folder / MANIFEST)
    return folder


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --------------------------------------------------------------------------- reading


@dataclass
class Record:
    path: Path
    manifest: dict
    tensors: dict

    @property
    def label(self) -> str:
        return self.manifest["label"]


def read_record(directory: str | os.PathLike) -> Record:
    folder = Path(directory)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise RecordError(f"{folder}: not a devlint verify record (no {MANIFEST}; write one with "
                          "`devlint verify --record DIR`)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordError(f"{manifest_path}: unreadable: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise RecordError(f"{manifest_path}: not a devlint verify record manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise RecordError(f"{folder}: record format {manifest.get('format_version')}, this devlint reads "
                          f"format {FORMAT_VERSION}")
    version = manifest.get("devlint_version")
    if version != _devlint_version():
        raise RecordError(f"{folder}: recorded by devlint {version}, this is devlint {_devlint_version()}: "
                          "record again with the same devlint version on every machine")
    if manifest.get("tolerances") != tolerance_table():
        raise RecordError(f"{folder}: recorded with other default tolerances than this devlint's: "
                          "record again with the same devlint on every machine")
    tensor_path = folder / manifest.get("tensors", TENSORS)
    if not tensor_path.is_file():
        raise RecordError(f"{folder}: {tensor_path.name} is missing")
    if manifest.get("tensors_sha256") and manifest["tensors_sha256"] != _sha256(tensor_path):
        raise RecordError(f"{tensor_path}: does not match the manifest's sha256 (a partial copy?)")
    try:
        from safetensors.torch import load_file
    except ImportError as exc:
        raise RecordError(f"--compare needs safetensors ({exc}): pip install 'devlint[verify]'") from exc

    return Record(folder, manifest, load_file(str(tensor_path)))


def _check_same_cases(records: list[Record]) -> None:
    first = records[0]
    names = [c["name"] for c in first.manifest["cases"]]
    hashes = {c["name"]: c["source_sha256"] for c in first.manifest["cases"]}
    tols = {c["name"]: c.get("tolerance") for c in first.manifest["cases"]}
    for other in records[1:]:
        other_names = [c["name"] for c in other.manifest["cases"]]
        if set(other_names) != set(names):
            only_first = sorted(set(names) - set(other_names))
            only_other = sorted(set(other_names) - set(names))
            parts = []
            if only_first:
                parts.append(f"only {first.path} has {', '.join(only_first)}")
            if only_other:
                parts.append(f"only {other.path} has {', '.join(only_other)}")
            raise RecordError("the records hold different cases (" + "; ".join(parts)
                              + "): record the same targets on every machine")
        for c in other.manifest["cases"]:
            if c["source_sha256"] != hashes[c["name"]]:
                raise RecordError(
                    f"case {c['name']!r} was recorded from different sources in {first.path} and {other.path} "
                    f"(sha256 {hashes[c['name']][:12]} vs {c['source_sha256'][:12]}): record the same code "
                    "on every machine")
            if c.get("tolerance") != tols[c["name"]]:
                raise RecordError(f"case {c['name']!r} has different tolerances in {first.path} and {other.path}")


def _labels(records: list[Record]) -> list[str]:
    labels, seen = [], {}
    for rec in records:
        label = rec.label
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return labels


def record_info(record: Record, label: str) -> dict:
    m = record.manifest
    return {"label": label, "path": str(record.path), "created": m.get("created"), "host": m.get("host"),
            "python": m.get("python"), "platform": m.get("platform"), "environment": m.get("environment"),
            "devices": m.get("devices"), "reference": m.get("reference")}


def compare_records(directories: list[str], reference: str | None = None) -> VerifyRun:
    """Compare the records in ``directories`` (see the module's docstring)."""
    if not directories:
        raise RecordError("--compare needs at least one record folder")
    records = [read_record(d) for d in directories]
    _check_same_cases(records)
    labels = _labels(records)
    columns: list[str] = []
    where: dict[str, tuple[Record, str]] = {}
    for rec, label in zip(records, labels):
        for device in rec.manifest["devices"]:
            column = f"{label}/{device}"
            columns.append(column)
            where[column] = (rec, device)
    if reference is None:
        reference = f"{labels[0]}/{records[0].manifest['reference']}"
    elif reference not in where:
        raise RecordError(f"reference {reference!r} is not a column of these records: {', '.join(columns)}")

    results: list[CaseResult] = []
    for entry in records[0].manifest["cases"]:
        name = entry["name"]
        one = Case(name=name, fn=_not_runnable, tolerance=decode_tolerance(entry.get("tolerance")),
                   description=entry.get("description") or "", target=entry.get("target"),
                   original=_not_runnable if entry.get("has_original") else None)
        fixed: dict[str, RunOutcome] = {}
        originals: dict[str, OriginalResult | None] = {}
        for column in columns:
            rec, device = where[column]
            data = next(c for c in rec.manifest["cases"] if c["name"] == name)["results"].get(device)
            if data is None:
                fixed[column] = RunOutcome("n/a", message="not recorded on this device")
                originals[column] = None
                continue
            value = decode_value(data["value"], rec.tensors) if data["status"] == "ok" else None
            fixed[column] = RunOutcome(data["status"], value, data.get("message"), data.get("where"),
                                       [_check_from(c) for c in data.get("checks", [])], list(data.get("notes", [])))
            originals[column] = _original_from(data.get("original"))
        result = assemble(one, fixed, columns, reference)
        for column, original in originals.items():
            if original is not None:
                attach_original(result, column, original)
        results.append(result)
    return VerifyRun(devices=columns, reference=reference, results=results, environment={},
                     records=[record_info(r, label) for r, label in zip(records, labels)])


def _not_runnable(device):  # pragma: no cover - a recorded case is compared, never run
    raise RuntimeError("a case loaded from a record cannot be run")
