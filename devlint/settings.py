"""Effective settings: defaults, `[tool.devlint]` / `devlint.toml`, then the command line."""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache

PROFILES = ("auto", "torch", "vllm")
DEFAULT_TARGET_TORCH = "2.6"
# vLLM pins its torch (vllm 0.33.0: torch==2.14.0), so fixes in the vllm profile may use any
# torch.accelerator API of that release.
PROFILE_TARGET_TORCH = {"torch": DEFAULT_TARGET_TORCH, "vllm": "2.14"}
# ruff's defaults (plus devlint's own cache); `exclude` replaces them, `extend-exclude` adds.
DEFAULT_EXCLUDE = (
    ".git", ".git-rewrite", ".hg", ".svn", ".bzr", ".direnv", ".venv", "venv", ".env", ".tox",
    ".nox", ".pants.d", ".pyenv", ".pytype", ".vscode", "__pypackages__", "node_modules",
    "build", "dist", "site-packages", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".devlint_cache", "__pycache__", ".ipynb_checkpoints", "_build", "buck-out",
)


class ConfigError(Exception):
    """A bad configuration file, key or value (exit 2)."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    profile: str = "auto"
    target_torch: str | None = None  # None: the project's declared floor, else the profile's default
    # the torch floor the project's packaging files declare (devlint.torch_floor), when
    # target-torch is not configured; the source says where it was read, for --show-settings
    declared_torch: str | None = None
    declared_torch_source: str = ""
    target_backends: tuple[str, ...] = ("cuda", "xpu")
    unsafe_fixes: bool = False
    output_format: str | None = None
    profiles: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # DL302 (shell): the variable naming the device type, and the one the fix selects into
    shell_device_type_var: str = "DEVICE_TYPE"
    shell_visibility_var: str = "DEVICE_VISIBILITY_ENV"
    # directory the relative globs of this config are anchored at
    root: str = ""
    config_path: str | None = None

    def cache_key(self) -> str:
        return repr((self.select, self.extend_select, self.ignore, self.per_file_ignores,
                     self.profile, self.target_torch, self.declared_torch,
                     self.target_backends, self.profiles,
                     self.shell_device_type_var, self.shell_visibility_var))

    def target_torch_tuple(self, profile: str | None = None) -> tuple[int, int]:
        if self.target_torch:
            return parse_version(self.target_torch)
        if self.declared_torch:
            return parse_version(self.declared_torch)
        return parse_version(PROFILE_TARGET_TORCH.get(profile or self.profile, DEFAULT_TARGET_TORCH))


def parse_version(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", str(text).strip())
    if not m:
        raise ConfigError(f"invalid torch version {text!r}: expected MAJOR.MINOR, e.g. 2.6")
    return int(m.group(1)), int(m.group(2))


# key -> (field name, kind)
_KEYS = {
    "select": ("select", "codes"),
    "extend-select": ("extend_select", "codes"),
    "ignore": ("ignore", "codes"),
    "per-file-ignores": ("per_file_ignores", "per-file"),
    "exclude": ("exclude", "strings"),
    "extend-exclude": ("extend_exclude", "strings"),
    "profile": ("profile", "profile"),
    "target-torch": ("target_torch", "version"),
    "target-backends": ("target_backends", "strings"),
    "unsafe-fixes": ("unsafe_fixes", "bool"),
    "output-format": ("output_format", "format"),
    "profiles": ("profiles", "profiles"),
    "shell-device-type-var": ("shell_device_type_var", "identifier"),
    "shell-visibility-var": ("shell_visibility_var", "identifier"),
}


def _load_toml(path: str) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from e
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from e


def _toml_repr(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        import json

        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_repr(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_repr(v)}" for k, v in value.items()) + " }"
    return repr(value)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_repr(key)


def _expect(path, key, cond, what):
    if not cond:
        raise ConfigError(f"{path}: [tool.devlint] {key}: expected {what}")


def settings_from_table(table: dict, path: str, base: Settings | None = None) -> Settings:
    """Validate a `[tool.devlint]` table and lay it over `base`."""
    from devlint.rules import registry

    base = base or Settings()
    changes: dict = {}
    for key, value in table.items():
        if key not in _KEYS:
            import difflib

            known = ", ".join(sorted(_KEYS))
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"{path}: unknown key [tool.devlint] {key!r} ({hint}known keys: "
                              f"{known})")
        name, kind = _KEYS[key]
        if kind in ("codes", "strings"):
            _expect(path, key, isinstance(value, list) and all(isinstance(v, str) for v in value),
                    f"a list of strings, got {_toml_repr(value)}")
            if kind == "codes":
                for v in value:
                    if not registry.selector_matches_any(v):
                        raise ConfigError(f"{path}: [tool.devlint] {key}: unknown rule selector {v!r}")
            changes[name] = tuple(value)
        elif kind == "per-file":
            _expect(path, key, isinstance(value, dict), "a table of glob = [codes]")
            items = []
            for glob, codes in value.items():
                _expect(path, f"{key}.{glob}", isinstance(codes, list)
                        and all(isinstance(c, str) for c in codes), "a list of rule codes")
                for c in codes:
                    if not registry.selector_matches_any(c):
                        raise ConfigError(f"{path}: [tool.devlint] {key}.{glob}: unknown rule selector {c!r}")
                items.append((glob, tuple(codes)))
            changes[name] = tuple(items)
        elif kind == "profile":
            _expect(path, key, isinstance(value, str), f"a string, got {_toml_repr(value)}")
            changes[name] = value
        elif kind == "version":
            _expect(path, key, isinstance(value, str),
                    f'a version string like "2.6", got {_toml_repr(value)}')
            try:
                parse_version(value)
            except ConfigError as e:
                raise ConfigError(f"{path}: [tool.devlint] {key}: {e}") from None
            changes[name] = value
        elif kind == "bool":
            _expect(path, key, isinstance(value, bool), f"true or false, got {_toml_repr(value)}")
            changes[name] = value
        elif kind == "format":
            from devlint.reporters import FORMATS

            _expect(path, key, isinstance(value, str) and value in FORMATS,
                    f"one of {', '.join(FORMATS)}, got {value!r}")
            changes[name] = value
        elif kind == "identifier":
            _expect(path, key, isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value),
                    "a shell variable name")
            changes[name] = value
        elif kind == "profiles":
            from devlint.profiles import validate_custom_profiles

            changes[name] = validate_custom_profiles(value, path)
    settings = replace(base, **changes, root=os.path.dirname(os.path.abspath(path)),
                       config_path=path)
    known_profiles = set(PROFILES) | {n for n, _ in settings.profiles}
    if settings.profile not in known_profiles:
        raise ConfigError(f"{path}: [tool.devlint] profile: expected one of "
                          f"{', '.join(sorted(known_profiles))}, got {settings.profile!r}")
    return settings


def read_config_file(path: str) -> dict | None:
    """The devlint table of a config file, or None when a pyproject.toml has none."""
    data = _load_toml(path)
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "devlint" not in tool:
            return None
        table = tool["devlint"]
    else:
        table = data.get("tool", {}).get("devlint", data) if "tool" in data else data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.devlint] must be a table")
    return table


@lru_cache(maxsize=None)
def find_config(directory: str) -> str | None:
    """Nearest devlint.toml or pyproject.toml with [tool.devlint] from directory up,
    stopping at a repository root."""
    d = os.path.abspath(directory)
    for name in ("devlint.toml", "pyproject.toml"):
        candidate = os.path.join(d, name)
        if os.path.isfile(candidate):
            if name == "devlint.toml" or read_config_file(candidate) is not None:
                return candidate
    if os.path.exists(os.path.join(d, ".git")):
        return None
    parent = os.path.dirname(d)
    # recursing on the parent lets the cache answer for every directory above too
    return None if parent == d else find_config(parent)


def with_project_floor(settings: Settings, path: str) -> Settings:
    """`settings` with the torch floor declared by the project around `path`, when
    target-torch is not configured."""
    if settings.target_torch:
        return settings
    from devlint.torch_floor import project_floor

    floor = project_floor(os.path.dirname(os.path.abspath(path)) or ".")
    if floor is None:
        return settings
    return replace(settings, declared_torch=floor.version, declared_torch_source=floor.source)


def load_settings(path: str) -> Settings:
    table = read_config_file(path)
    return settings_from_table(table or {}, path)


def _expand_braces(pattern: str) -> list[str]:
    """`{a,b}` alternatives, as in ruff's globs: `**/{tests,docs}/*`."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [p for alt in m.group(1).split(",")
            for p in _expand_braces(pattern[:m.start()] + alt + pattern[m.end():])]


def _glob_hits(rel: str, pattern: str) -> bool:
    if pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/") or pattern
    if "/" not in pattern:
        # a bare name matches the file's name or any directory on its way
        return any(fnmatch.fnmatchcase(part, pattern) for part in rel.split("/"))
    # like ruff's globset, `*` crosses `/`; a pattern naming a directory covers what it holds
    if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*"):
        return True
    return pattern.startswith("**/") and _glob_hits(rel, pattern[3:])


def matches_glob(settings: Settings, path: str, pattern: str) -> bool:
    """ruff-style glob match: a pattern without a slash matches the basename or any path
    component; other patterns are anchored at the config's directory (or absolute);
    `{a,b}` alternatives; a leading `!` negates."""
    negate = pattern.startswith("!")
    if negate:
        pattern = pattern[1:]
    ap = os.path.abspath(path)
    rel = os.path.relpath(ap, settings.root) if settings.root else os.path.relpath(ap)
    rel = rel.replace(os.sep, "/")
    hit = False
    for pat in _expand_braces(pattern):
        if os.path.isabs(pat):
            hit = _glob_hits(ap.replace(os.sep, "/"), pat)
        else:
            hit = _glob_hits(rel, pat)
        if hit:
            break
    return hit != negate


def is_excluded(settings: Settings, path: str) -> bool:
    return any(matches_glob(settings, path, p) for p in settings.exclude + settings.extend_exclude)


def ignored_codes_for(settings: Settings, path: str) -> tuple[str, ...]:
    out: list[str] = []
    for glob, codes in settings.per_file_ignores:
        if matches_glob(settings, path, glob):
            out.extend(codes)
    return tuple(out)


def describe(settings: Settings, path: str) -> str:
    """The effective settings for `path`, as a `[tool.devlint]` table one can paste back
    (`devlint check --show-settings PATH`)."""
    from devlint.rules import registry

    source = settings.config_path or "none (defaults)"
    profile = settings.profile
    resolved = ""
    if profile == "auto" and os.path.isfile(path):
        resolved = f"  # for this file: {_auto_profile(path)}"
    if settings.target_torch:
        target, target_note = settings.target_torch, ""
    elif settings.declared_torch:
        target = settings.declared_torch
        target_note = f"  # the project's torch floor, from {settings.declared_torch_source}"
    else:
        target = PROFILE_TARGET_TORCH.get(profile, DEFAULT_TARGET_TORCH)
        why = (f"{settings.declared_torch_source}" if settings.declared_torch_source
               else "no torch requirement declared")
        target_note = f"  # the default ({why})"
    matched = ignored_codes_for(settings, path)
    enabled = sorted(registry.select_codes(settings.select, settings.extend_select,
                                           settings.ignore))
    if matched:
        from devlint.engine.linter import enabled_codes

        enabled = sorted(enabled_codes(settings, path))
    lines = [
        f"# Settings for: {path}",
        f"# Config file: {source}",
        f"# Globs anchored at: {settings.root or os.getcwd()}",
        "[tool.devlint]",
        f"select = {_toml_repr(list(settings.select))}",
        f"extend-select = {_toml_repr(list(settings.extend_select))}",
        f"ignore = {_toml_repr(list(settings.ignore))}",
        f"per-file-ignores = {_toml_repr({g: list(c) for g, c in settings.per_file_ignores})}",
        f"exclude = {_toml_repr(list(settings.exclude))}",
        f"extend-exclude = {_toml_repr(list(settings.extend_exclude))}",
        f"profile = {_toml_repr(profile)}{resolved}",
        f"target-torch = {_toml_repr(target)}{target_note}",
        f"target-backends = {_toml_repr(list(settings.target_backends))}",
        f"unsafe-fixes = {_toml_repr(settings.unsafe_fixes)}",
        f"output-format = {_toml_repr(settings.output_format or 'concise')}",
        f"shell-device-type-var = {_toml_repr(settings.shell_device_type_var)}",
        f"shell-visibility-var = {_toml_repr(settings.shell_visibility_var)}",
    ]
    for name, items in settings.profiles:
        lines.append(f"\n[tool.devlint.profiles.{_toml_key(name)}]")
        for role, (expr, imports) in items:
            if role == "extends":
                lines.append(f"extends = {_toml_repr(expr)}")
            else:
                lines.append(f"{_toml_key(role)} = {_toml_repr({'expr': expr, 'import': list(imports)})}")
    lines += [
        "",
        f"# This file: excluded = {_toml_repr(is_excluded(settings, path))} "
        f"(applies to explicit paths only with --force-exclude)",
        f"# Matched per-file-ignores: {_toml_repr(list(matched))}",
        f"# Enabled rules: {_toml_repr(enabled)}",
    ]
    return "\n".join(lines) + "\n"


def _auto_profile(path: str) -> str:
    import ast

    from devlint.engine.facts import collect_imports, resolve_profile

    aliases: dict = {}
    try:
        from devlint.source import SourceFile

        with open(path, "rb") as f:
            collect_imports(ast.parse(SourceFile.from_bytes(f.read()).text).body, aliases)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError, LookupError):
        pass
    return resolve_profile("auto", path, aliases)
