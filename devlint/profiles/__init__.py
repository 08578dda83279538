"""Profiles: which expressions fixes are written in (data in devlint/data/profiles.toml)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

ROLES = ("device", "device-object", "device-type", "dist-backend", "visibility-env",
         "accelerator-tensor-test")


@dataclass(frozen=True)
class RoleExpr:
    expr: str
    imports: tuple[str, ...] = ()


@dataclass(frozen=True)
class Profile:
    name: str
    roles: dict

    def role(self, role: str) -> RoleExpr | None:
        return self.roles.get(role)


def _load_toml_bytes(data: bytes) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(data.decode("utf-8"))


def _role_from(value, where: str) -> RoleExpr:
    from devlint.errors import ConfigError

    if isinstance(value, str):
        return RoleExpr(value)
    if not isinstance(value, dict) or not isinstance(value.get("expr"), str):
        raise ConfigError(f"{where}: expected a string or a table with `expr` (and optional `import`)")
    unknown = set(value) - {"expr", "import"}
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; expected `expr`, `import`")
    imp = value.get("import", ())
    if isinstance(imp, str):
        imp = (imp,)
    if not all(isinstance(i, str) for i in imp):
        raise ConfigError(f"{where}.import: expected a string or a list of strings")
    return RoleExpr(value["expr"], tuple(imp))


def _profile_from_table(name: str, table: dict, where: str) -> Profile:
    from devlint.errors import ConfigError

    roles = {}
    for key, value in table.items():
        if key == "description":
            continue
        if key not in ROLES:
            raise ConfigError(f"{where}: unknown role {key!r} (roles: {', '.join(ROLES)})")
        roles[key] = _role_from(value, f"{where}.{key}")
    return Profile(name, roles)


@lru_cache(maxsize=None)
def builtin_profiles() -> dict:
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "profiles.toml")
    with open(path, "rb") as f:
        data = _load_toml_bytes(f.read())
    return {name: _profile_from_table(name, table, f"profiles.toml [{name}]")
            for name, table in data.items()}


def validate_custom_profiles(value, path: str):
    """`[tool.devlint.profiles.NAME]` tables -> a hashable tuple kept in Settings."""
    from devlint.errors import ConfigError

    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [tool.devlint.profiles]: expected tables of roles")
    out = []
    for name, table in value.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.devlint.profiles.{name}]: expected a table of roles")
        base = table.get("extends", "torch")
        if base not in builtin_profiles():
            raise ConfigError(f"{path}: [tool.devlint.profiles.{name}] extends: expected torch or vllm")
        rest = {k: v for k, v in table.items() if k != "extends"}
        prof = _profile_from_table(name, rest, f"{path}: [tool.devlint.profiles.{name}]")
        items = tuple((role, (r.expr, r.imports)) for role, r in prof.roles.items())
        out.append((name, (("extends", (base, ())),) + items))
    return tuple(out)


def get_profile(name: str, settings=None) -> Profile:
    builtins = builtin_profiles()
    if name in builtins:
        return builtins[name]
    for cname, items in getattr(settings, "profiles", ()) or ():
        if cname == name:
            data = dict(items)
            base = builtins[data.pop("extends")[0]]
            roles = dict(base.roles)
            roles.update({role: RoleExpr(expr, imps) for role, (expr, imps) in data.items()})
            return Profile(name, roles)
    raise KeyError(name)


_IMPORT_BINDS = re.compile(r"^\s*(?:from\s+(\S+)\s+import\s+(\w+)(?:\s+as\s+(\w+))?|import\s+(\S+?)(?:\s+as\s+(\w+))?)\s*$")


def import_binding(stmt: str) -> tuple[str, str] | None:
    """`from a.b import c as d` -> ("d", "a.b.c"); `import torch` -> ("torch", "torch")."""
    m = _IMPORT_BINDS.match(stmt)
    if not m:
        return None
    if m.group(1):
        return (m.group(3) or m.group(2), f"{m.group(1)}.{m.group(2)}")
    mod = m.group(4)
    if m.group(5):
        return (m.group(5), mod)
    return (mod.split(".")[0], mod.split(".")[0])
