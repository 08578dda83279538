"""Profiles: which expressions fixes are written in (data in devlint/data/profiles.toml)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

ROLES = ("device", "device-object", "device-type", "dist-backend", "visibility-env",
         "accelerator-tensor-test", "device-module")
# custom-profile sub-tables: `tests` (roles for test modules only: a test suite's device
# constant) and `api` (a `torch.cuda` function -> the project's own wrapper of it)
SUBTABLES = ("tests", "api")


@dataclass(frozen=True)
class RoleExpr:
    expr: str
    imports: tuple[str, ...] = ()
    since: tuple[int, int] | None = None  # oldest torch release the form is right on
    # device-module only: the `torch.cuda` attributes the expression offers (empty: every
    # name of devlint/data/device_module_api.toml)
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Profile:
    name: str
    roles: dict  # role -> RoleExpr, or a tuple of RoleExpr variants (newest first)
    # test modules: roles that replace `roles` there (a test suite's device constant)
    test_roles: dict = None  # type: ignore[assignment]
    # `torch.cuda.X` -> the project's wrapper (RoleExpr; `{args}`: the call's arguments)
    api: dict = None  # type: ignore[assignment]
    test_api: dict = None  # type: ignore[assignment]

    def role(self, role: str, target: tuple[int, int] | None = None,
             test: bool = False) -> RoleExpr | None:
        """The role's form for the target torch: the first variant whose `since` <= target.
        None when the profile has no form for the role, or none that the target has. In a
        test module (`test`) the profile's `tests` roles come first."""
        r = self.roles.get(role)
        if test and self.test_roles and role in self.test_roles:
            r = self.test_roles[role]
        if r is None or isinstance(r, RoleExpr):
            return r
        for v in r:
            if v.since is None or target is None or v.since <= target:
                return v
        return None

    def api_wrapper(self, qual: str, test: bool = False) -> RoleExpr | None:
        if test and self.test_api and qual in self.test_api:
            return self.test_api[qual]
        return (self.api or {}).get(qual)

    def oldest(self, role: str) -> tuple[int, int] | None:
        """The oldest torch release any form of the role is offered for (None: any)."""
        r = self.roles.get(role)
        if r is None or isinstance(r, RoleExpr):
            return None
        sinces = [v.since for v in r]
        return None if None in sinces else min(sinces)


def _load_toml_bytes(data: bytes) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(data.decode("utf-8"))


def _role_from(value, where: str):
    from devlint.errors import ConfigError

    if isinstance(value, list):
        variants = []
        for i, v in enumerate(value):
            if not isinstance(v, dict) or not isinstance(v.get("since"), str):
                raise ConfigError(f"{where}[{i}]: expected a table with `expr` and `since`")
            since = v["since"]
            try:
                major, minor = (int(p) for p in since.split(".")[:2])
            except ValueError:
                raise ConfigError(f"{where}[{i}].since: expected a version such as 2.7") from None
            base = _role_from({k: x for k, x in v.items() if k != "since"}, f"{where}[{i}]")
            variants.append(RoleExpr(base.expr, base.imports, (major, minor)))
        if not variants:
            raise ConfigError(f"{where}: expected at least one form")
        return tuple(sorted(variants, key=lambda r: r.since, reverse=True))
    if isinstance(value, str):
        return RoleExpr(value)
    if not isinstance(value, dict) or not isinstance(value.get("expr"), str):
        raise ConfigError(f"{where}: expected a string or a table with `expr` (and optional `import`)")
    allowed = {"expr", "import", "names"} if where.endswith(".device-module") else {"expr", "import"}
    unknown = set(value) - allowed
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; expected "
                          + ", ".join(f"`{k}`" for k in sorted(allowed)))
    imp = value.get("import", ())
    if isinstance(imp, str):
        imp = (imp,)
    if not all(isinstance(i, str) for i in imp):
        raise ConfigError(f"{where}.import: expected a string or a list of strings")
    names = value.get("names", ())
    if not isinstance(names, (list, tuple)) or not all(
            isinstance(n, str) and n.isidentifier() for n in names):
        raise ConfigError(f"{where}.names: expected a list of attribute names")
    return RoleExpr(value["expr"], tuple(imp), None, tuple(names))


def _profile_from_table(name: str, table: dict, where: str, subtables: bool = False) -> Profile:
    from devlint.errors import ConfigError

    roles, test_roles, api, test_api = {}, {}, {}, {}
    for key, value in table.items():
        if key == "description":
            continue
        if subtables and key in SUBTABLES:
            if not isinstance(value, dict):
                raise ConfigError(f"{where}.{key}: expected a table")
            if key == "api":
                api.update(_api_from(value, f"{where}.api"))
                continue
            for role, rv in value.items():
                if role == "api":
                    if not isinstance(rv, dict):
                        raise ConfigError(f"{where}.tests.api: expected a table")
                    test_api.update(_api_from(rv, f"{where}.tests.api"))
                elif role not in ROLES:
                    raise ConfigError(f"{where}.tests: unknown role {role!r} (roles: "
                                      f"{', '.join(ROLES)})")
                else:
                    test_roles[role] = _role_from(rv, f"{where}.tests.{role}")
            continue
        if key not in ROLES:
            extra = f", sub-tables: {', '.join(SUBTABLES)}" if subtables else ""
            raise ConfigError(f"{where}: unknown role {key!r} (roles: {', '.join(ROLES)}{extra})")
        roles[key] = _role_from(value, f"{where}.{key}")
    return Profile(name, roles, test_roles, api, test_api)


def _api_from(table: dict, where: str) -> dict:
    """`"torch.cuda.empty_cache" = { expr = "empty_cache()", import = "..." }`."""
    from devlint.errors import ConfigError

    out = {}
    for qual, value in table.items():
        if not qual.startswith("torch.cuda.") or not all(
                p.isidentifier() for p in qual.split(".")):
            raise ConfigError(f"{where}: {qual!r}: expected a `torch.cuda.NAME` API")
        out[qual] = _role_from(value, f"{where}.{qual}")
    return out


@lru_cache(maxsize=None)
def builtin_profiles() -> dict:
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "profiles.toml")
    with open(path, "rb") as f:
        data = _load_toml_bytes(f.read())
    return {name: _profile_from_table(name, table, f"profiles.toml [{name}]")
            for name, table in data.items()}


def _imported_names(stmt: str, where: str) -> set:
    """The names one `import` / `from ... import` statement binds; else a ConfigError."""
    import ast

    from devlint.errors import ConfigError

    try:
        body = ast.parse(stmt).body
    except SyntaxError as e:
        raise ConfigError(f"{where}: {stmt!r} does not parse ({e.msg})") from None
    if len(body) != 1 or not isinstance(body[0], (ast.Import, ast.ImportFrom)):
        raise ConfigError(f"{where}: expected one import statement "
                          f"(`import a.b` or `from a import b`), got {stmt!r}")
    node = body[0]
    if any(a.name == "*" for a in node.names):
        raise ConfigError(f"{where}: a star import binds no name devlint can check: {stmt!r}")
    if isinstance(node, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    return {a.asname or a.name for a in node.names}


def check_role(role: str, r: RoleExpr, where: str) -> None:
    """A role's expression must be one Python expression whose names are bound: by its
    `import`s, `{torch}` (the file's torch), `{x}` (accelerator-tensor-test's tensor, and only
    there) or Python's builtins. Fixes paste it into every file they touch, so an expression
    that does not parse would have every fix reverted, and a name nothing binds would raise
    NameError in the fixed code."""
    import ast
    import builtins

    from devlint.errors import ConfigError

    bound = {"torch"} if "{torch}" in r.expr else set()
    for i, stmt in enumerate(r.imports):
        bound |= _imported_names(stmt, f"{where}.import" + (f"[{i}]" if len(r.imports) > 1 else ""))
    text = r.expr.replace("{torch}", "torch")
    if role == "api":
        text = text.replace("{args}", "")  # the call's own arguments
    if role == "accelerator-tensor-test":
        if "{x}" not in text:
            raise ConfigError(f"{where}: expected an expression testing the tensor `{{x}}`, "
                              f"e.g. '{{x}}.device.type != \"cpu\"', got {r.expr!r}")
        text = text.replace("{x}", "x")
        bound.add("x")
    elif "{x}" in text:
        raise ConfigError(f"{where}: `{{x}}` stands for a tensor only in "
                          f"accelerator-tensor-test; got {r.expr!r}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ConfigError(f"{where}: {r.expr!r} is not a Python expression ({e.msg})") from None
    local = set()
    for node in ast.walk(tree):  # names bound inside the expression itself
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
        elif isinstance(node, ast.arg):
            local.add(node.arg)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                node.id not in bound | local and not hasattr(builtins, node.id):
            hint = ("use `{torch}` for torch (devlint adds `import torch` where needed)"
                    if node.id == "torch" else f"add the import that binds it "
                    f"(`import = \"from ... import {node.id}\"`)")
            raise ConfigError(f"{where}: {r.expr!r} uses {node.id!r}, which nothing binds: "
                              f"{hint}")


def validate_custom_profiles(value, path: str):
    """`[tool.devlint.profiles.NAME]` tables -> a hashable tuple kept in Settings; every
    expression checked now (check_role), so that a bad one is a configuration error naming
    the file and key rather than fixes reverted later."""
    from devlint.errors import ConfigError

    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [tool.devlint.profiles]: expected tables of roles")
    out = []
    for name, table in value.items():
        where = f"{path}: [tool.devlint.profiles.{name}]"
        if name in builtin_profiles() or name == "auto":
            base = name if name != "auto" else "torch"
            raise ConfigError(f"{where}: {name!r} is a built-in profile and cannot be redefined; "
                              f"name yours differently (`extends = \"{base}\"` keeps the roles "
                              f"you do not set) and set `profile` to that name")
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: expected a table of roles")
        base = table.get("extends", "torch")
        if not isinstance(base, str) or base not in builtin_profiles():
            raise ConfigError(f"{where} extends: expected torch or vllm, got {base!r}")
        rest = {k: v for k, v in table.items() if k != "extends"}
        prof = _profile_from_table(name, rest, where, subtables=True)
        items = [("extends", (base, ()))]
        for prefix, roles in (("", prof.roles), ("tests.", prof.test_roles),
                              ("api.", prof.api), ("tests.api.", prof.test_api)):
            for role, r in roles.items():
                kind = "api" if "api." in prefix else role
                if isinstance(r, RoleExpr):
                    check_role(kind, r, f"{where}.{prefix}{role}")
                else:
                    for i, v in enumerate(r):
                        check_role(kind, v, f"{where}.{prefix}{role}[{i}]")
                items.append((prefix + role, _hashable(r)))
        out.append((name, tuple(items)))
    return tuple(out)


def _hashable(r):
    """A role's form(s) as nested tuples, to keep in Settings (hashed by the cache key)."""
    variants = (r,) if isinstance(r, RoleExpr) else r
    return tuple((v.expr, v.imports, v.since, v.names) for v in variants), isinstance(r, RoleExpr)


def _from_hashable(value):
    variants, single = value
    forms = tuple(RoleExpr(e, i, s, n) for e, i, s, n in variants)
    return forms[0] if single else forms


def get_profile(name: str, settings=None) -> Profile:
    builtins = builtin_profiles()
    if name in builtins:
        return builtins[name]
    for cname, items in getattr(settings, "profiles", ()) or ():
        if cname == name:
            return _custom_profile(name, items)
    raise KeyError(name)


@lru_cache(maxsize=64)
def _custom_profile(name: str, items) -> Profile:
    data = dict(items)
    base = builtin_profiles()[data.pop("extends")[0]]
    roles, test_roles, api, test_api = dict(base.roles), {}, {}, {}
    for key, value in data.items():
        r = _from_hashable(value)
        if key.startswith("tests.api."):
            test_api[key[len("tests.api."):]] = r
        elif key.startswith("api."):
            api[key[len("api."):]] = r
        elif key.startswith("tests."):
            test_roles[key[len("tests."):]] = r
        else:
            roles[key] = r
    given = {k for k in data if "." not in k}
    roles.update(derived_roles({k: roles[k] for k in given}))
    test_roles.update(derived_roles(test_roles))
    return Profile(name, roles, test_roles, api, test_api)


def derived_roles(given: dict) -> dict:
    """The device roles a project did not name, written with the ones it did: its device as a
    `torch.device` (`{torch}.device(<device>)`), its device's type (`{torch}.device(<device>)
    .type`), its device type as a device. These forms need nothing from torch's version table
    (torch.device takes a device, a `torch.device` or a type string on every release), so they
    stand before the extended profile's, which may need a newer torch than the project's."""
    def one(role):
        r = given.get(role)
        return r if isinstance(r, RoleExpr) else None

    out = {}
    dev, typ, obj = one("device"), one("device-type"), one("device-object")
    if dev is None and typ is not None:
        out["device"] = typ
    if obj is None and (dev or typ) is not None:
        src = dev or typ
        out["device-object"] = RoleExpr(f"{{torch}}.device({src.expr})", src.imports)
    if typ is None and dev is not None:
        out["device-type"] = RoleExpr(f"{{torch}}.device({dev.expr}).type", dev.imports)
    return out


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
