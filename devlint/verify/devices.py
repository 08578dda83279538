"""Which torch devices this machine has.

torch is imported inside the functions, never at module import: ``devlint check`` must not pay
for it, and a machine without torch gets a clear error from :func:`import_torch`.
"""
from __future__ import annotations

import importlib
import importlib.util

#: Device types the verifier knows, in the order they are listed.
KNOWN_DEVICE_TYPES = ("cpu", "cuda", "xpu", "mps", "npu")


class VerifyEnvironmentError(RuntimeError):
    """The environment cannot run the verifier (torch missing, a device asked for is absent)."""


def import_torch():
    """Import torch or raise :class:`VerifyEnvironmentError` with an install hint."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - exercised in a torch-less interpreter
        raise VerifyEnvironmentError(
            "devlint verify needs PyTorch, which is not installed "
            f"({exc}). Install it with: pip install 'devlint[verify]'"
        ) from exc
    return torch


def _accelerator_type(torch) -> str | None:
    acc = getattr(torch, "accelerator", None)
    if acc is None:
        return None
    try:
        if not acc.is_available():
            return None
        current = acc.current_accelerator()
    except Exception:  # noqa: BLE001 - a broken backend must not stop discovery
        return None
    return None if current is None else current.type


def _module_available(torch, name: str) -> bool:
    if name == "npu" and not hasattr(torch, "npu"):
        # torch.npu only exists once the Ascend plugin is imported.
        if importlib.util.find_spec("torch_npu") is None:
            return False
        try:
            importlib.import_module("torch_npu")
        except Exception:  # noqa: BLE001
            return False
    if name == "mps":
        backend = getattr(getattr(torch, "backends", None), "mps", None)
        try:
            return bool(backend is not None and backend.is_available())
        except Exception:  # noqa: BLE001
            return False
    module = getattr(torch, name, None)
    if module is None or not hasattr(module, "is_available"):
        return False
    try:
        return bool(module.is_available())
    except Exception:  # noqa: BLE001
        return False


def available_devices() -> list[str]:
    """Device types usable here, ``cpu`` first: cpu, then cuda, xpu, mps, npu when present.

    Found through ``torch.accelerator`` (torch >= 2.6) and each device module, so a machine whose
    accelerator torch reports through only one of the two is still seen.
    """
    torch = import_torch()
    found = {"cpu"}
    acc = _accelerator_type(torch)
    if acc is not None:
        found.add(acc)
    for name in KNOWN_DEVICE_TYPES[1:]:
        if name not in found and _module_available(torch, name):
            found.add(name)
    ordered = [d for d in KNOWN_DEVICE_TYPES if d in found]
    ordered += sorted(found - set(KNOWN_DEVICE_TYPES))
    return ordered


def select_devices(requested: list[str] | None) -> list[str]:
    """The devices to run on: all available ones, or the requested ones (which must exist here)."""
    available = available_devices()
    if not requested:
        return available
    chosen: list[str] = []
    for name in requested:
        name = name.strip().lower()
        if not name:
            continue
        if name not in available:
            hint = "" if name in KNOWN_DEVICE_TYPES else f" (known: {', '.join(KNOWN_DEVICE_TYPES)})"
            raise VerifyEnvironmentError(
                f"device {name!r} is not available here{hint}; available: {', '.join(available)}"
            )
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise VerifyEnvironmentError("--devices named no device")
    return chosen


def device_description(name: str) -> str:
    """A human description of a device type, e.g. ``cuda: NVIDIA H200``."""
    torch = import_torch()
    if name == "cpu":
        model = _cpu_model()
        return f"cpu: {model}" if model else "cpu"
    module = getattr(torch, name, None)
    get_name = getattr(module, "get_device_name", None)
    if get_name is not None:
        try:
            return f"{name}: {get_name()}"
        except Exception:  # noqa: BLE001
            pass
    return name


def _cpu_model() -> str | None:
    """The processor's model name (``/proc/cpuinfo`` on Linux, ``platform.processor()`` elsewhere)."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip() or None
    except OSError:
        pass
    return platform.processor() or None


def environment_info(devices: list[str]) -> dict:
    """Versions worth recording next to a verification run."""
    torch = import_torch()
    info = {
        "torch": torch.__version__,
        "cuda_runtime": getattr(torch.version, "cuda", None),
        "hip_runtime": getattr(torch.version, "hip", None),
        "triton": None,
        "devices": {d: device_description(d) for d in devices},
    }
    if importlib.util.find_spec("triton") is not None:
        try:
            info["triton"] = importlib.import_module("triton").__version__
        except Exception:  # noqa: BLE001
            info["triton"] = "present (import failed)"
    return info
