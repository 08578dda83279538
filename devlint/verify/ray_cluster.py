"""``devlint verify --ray [ADDRESS]``: run the cases on one node of every accelerator kind of a Ray
cluster, gather the records and compare them (the same report as ``--compare``).

Ray is imported here only (``pip install "devlint[ray]"``); every node needs devlint (the same
version: records of another version are refused), torch and what the cases import.

An accelerator kind is what Ray reports for a node: its ``accelerator_type:<name>`` resources
(Ray sets them from the hardware: ``accelerator_type:H100``, ``accelerator_type:A10G``, an AMD,
Intel, Ascend or TPU model; an administrator can add such a label to any node by hand), else the
accelerator resource it has (``GPU``, ``NPU``, ``HPU``, ``TPU``, ``neuron_cores``), else ``cpu``.
One alive node of each kind runs one task, holding one unit of the node's accelerator resources so
that Ray makes the device visible to it, pinned to the node by node affinity. The task runs the
cases on every device that node has (or ``--devices``), writes a record there and returns it; the
driver writes the records into ``--record DIR`` (one folder per kind) or a temporary folder and
compares them (kinds in order: ``cpu`` first, then by name; the first one's reference device is
the reference column, or ``--reference KIND/DEVICE``).

File targets are sent to the nodes as their contents (module targets by name): a case file that
imports its own helpers needs them installed on the nodes.
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from .devices import VerifyEnvironmentError
from .runner import VerifyRun, VerifyUsageError

#: Ray's resource names for accelerators (each node is given one unit of those it has).
ACCELERATOR_RESOURCES = ("GPU", "NPU", "HPU", "TPU", "neuron_cores")
_TYPE_PREFIX = "accelerator_type:"


def import_ray():
    try:
        import ray
    except ImportError as exc:
        raise VerifyEnvironmentError(
            f"--ray needs Ray, which is not installed ({exc}). Install it with: pip install 'devlint[ray]'"
        ) from exc
    return ray


def node_kind(resources: dict) -> str:
    """The accelerator kind of a node, from its Ray resources (see the module's docstring)."""
    types = sorted(k[len(_TYPE_PREFIX):] for k, v in resources.items() if k.startswith(_TYPE_PREFIX) and v)
    if types:
        return "+".join(types)
    for name in ACCELERATOR_RESOURCES:
        if resources.get(name, 0) > 0:
            return name
    return "cpu"


def nodes_by_kind(nodes: list[dict]) -> dict[str, dict]:
    """One alive node per kind (the lowest node id, so that reruns pick the same one), ``cpu``
    first (its cpu device is the reference, as in a local run), then the kinds by name."""
    chosen: dict[str, dict] = {}
    for node in sorted(nodes, key=lambda n: str(n.get("NodeID", ""))):
        if not node.get("Alive", node.get("alive", False)):
            continue
        chosen.setdefault(node_kind(node.get("Resources", {})), node)
    return {kind: chosen[kind] for kind in sorted(chosen, key=lambda k: (k != "cpu", k))}


def _safe_label(kind: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", kind) or "node"


def _payload(targets: list[str] | None) -> list[tuple[str, str | None, str | None]]:
    """What each node needs to load the targets: ``(name, file name, contents)`` for files (a
    folder becomes its files), ``(module, None, None)`` for module paths."""
    if not targets:
        return []
    out: list[tuple[str, str | None, str | None]] = []
    for target in targets:
        path = Path(target)
        if path.is_dir():
            files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
            if not files:
                raise VerifyUsageError(f"{target}: no verification cases found in this folder")
            out.extend((str(p), p.name, p.read_text(encoding="utf-8")) for p in files)
        elif path.suffix == ".py" or path.exists():
            if not path.is_file():
                raise VerifyUsageError(f"{target}: no such file")
            out.append((target, path.name, path.read_text(encoding="utf-8")))
        else:
            out.append((target, None, None))
    return out


def record_on_node(payload, devices: list[str] | None, label: str) -> dict:
    """Runs on a node (a Ray task): the cases on its devices, returned as a record's files."""
    from .devices import available_devices
    from .record import MANIFEST, TENSORS, write_record
    from .runner import load_targets, run_cases

    available = available_devices()
    chosen = [d for d in devices if d in available] if devices else available
    if not chosen:
        return {"label": label, "skipped": f"none of {', '.join(devices or [])} here (has {', '.join(available)})"}
    with tempfile.TemporaryDirectory(prefix="devlint-ray-") as tmp:
        targets = []
        for i, (name, filename, text) in enumerate(payload):
            if filename is None:
                targets.append(name)
                continue
            folder = Path(tmp) / "targets" / str(i)
            folder.mkdir(parents=True)
            (folder / filename).write_text(text, encoding="utf-8")
            targets.append(str(folder / filename))
        run = run_cases(load_targets(targets or None), chosen)
        folder = write_record(run, Path(tmp) / "record", label)
        return {"label": label, "manifest": (folder / MANIFEST).read_bytes(),
                "tensors": (folder / TENSORS).read_bytes()}


def run_on_ray(targets: list[str] | None, address: str | None = None, devices: list[str] | None = None,
               reference: str | None = None, record_dir: str | None = None) -> VerifyRun:
    """Run ``targets`` (the built-in cases when None) on one node of every accelerator kind of the
    Ray cluster at ``address`` (None: RAY_ADDRESS, a cluster started on this machine, or a new
    local instance) and compare the records."""
    ray = import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    payload = _payload(targets)
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=address, log_to_driver=False, include_dashboard=False)
        except Exception as exc:  # noqa: BLE001 - any failure to connect is an environment error
            raise VerifyEnvironmentError(f"cannot connect to Ray at {address or 'the default address'}: {exc}") from exc
    try:
        kinds = nodes_by_kind(ray.nodes())
        if not kinds:
            raise VerifyEnvironmentError("the Ray cluster reports no alive node")
        task = ray.remote(record_on_node)
        pending = []
        for kind, node in kinds.items():
            resources = node.get("Resources", {})
            held = {name: 1 for name in ACCELERATOR_RESOURCES if resources.get(name, 0) >= 1}
            options = {
                "num_cpus": min(1, resources.get("CPU", 0)),
                "num_gpus": held.pop("GPU", 0),
                "resources": held,
                "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False),
                "max_retries": 0,
            }
            pending.append(task.options(**options).remote(payload, devices, _safe_label(kind)))
        try:
            gathered = ray.get(pending)
        except ray.exceptions.RayError as exc:
            raise VerifyEnvironmentError(f"a Ray task failed (is the same devlint installed on every node?): {exc}") from exc
    finally:
        if started_here:
            ray.shutdown()

    if record_dir:
        return _compare_gathered(gathered, Path(record_dir), reference)
    with tempfile.TemporaryDirectory(prefix="devlint-ray-records-") as tmp:
        run = _compare_gathered(gathered, Path(tmp), reference)
    for info in run.records or []:
        info["path"] = None  # gone with the temporary folder (--record DIR keeps the records)
    return run


def _compare_gathered(gathered: list[dict], root: Path, reference: str | None) -> VerifyRun:
    from .record import MANIFEST, TENSORS, RecordError, compare_records

    folders = []
    skipped = []
    for item in gathered:
        if "skipped" in item:
            skipped.append(f"{item['label']}: {item['skipped']}")
            continue
        folder = root / item["label"]
        folder.mkdir(parents=True, exist_ok=True)
        for name in (MANIFEST, TENSORS):
            stale = folder / name
            if stale.exists():
                stale.unlink()
        strangers = list(folder.iterdir())
        if strangers:
            raise RecordError(f"{folder}: not empty ({strangers[0].name}); record into an empty folder")
        (folder / TENSORS).write_bytes(item["tensors"])
        (folder / MANIFEST).write_bytes(item["manifest"])
        folders.append(str(folder))
    if not folders:
        raise VerifyEnvironmentError("no node could run the cases: " + "; ".join(skipped))
    for line in skipped:
        sys.stderr.write(f"devlint verify: skipped Ray node kind {line}\n")
    return compare_records(folders, reference)
