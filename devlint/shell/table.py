"""DL302's data: the rule's code and name, and the table of visibility variables per device
type (`devlint/data/visibility_env.toml`)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path


CODE = "DL302"
NAME = "shell-cuda-visible-devices"

_DATA = Path(__file__).resolve().parent.parent / "data" / "visibility_env.toml"


# ── data ────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class VisibilityTable:
    default: str
    devices: tuple[tuple[str, str], ...]  # (device type, env var), in table order
    flagged: tuple[str, ...]

    @property
    def env_names(self) -> frozenset[str]:
        return frozenset(env for _, env in self.devices)

    def default_env(self) -> str:
        return dict(self.devices)[self.default]


@cache
def visibility_table() -> VisibilityTable:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    with open(_DATA, "rb") as f:
        data = tomllib.load(f)
    devices = tuple((d["type"], d["env"]) for d in data["device"])
    table = VisibilityTable(data["default"], devices, tuple(data["flagged"]))
    if table.default not in dict(devices):
        raise ValueError(f"{_DATA}: default {table.default!r} is not a device type")
    return table
