"""Reading configuration files: `[tool.devlint]` / `devlint.toml` validated against the rule
registry, the output formats and the profiles; the project's torch floor
(`with_project_floor`); the settings of each path (`SettingsResolver`); and
`--show-settings`' description.

API layer: it sits above the rules and the reporters because validating a selector or a
format needs them; the types it builds (`Settings`) are in `devlint.settings`."""
from __future__ import annotations

import os
import re
from dataclasses import replace
from functools import lru_cache

from devlint.errors import ConfigError
from devlint.settings import (
    DEFAULT_TARGET_TORCH, PROFILE_TARGET_TORCH, PROFILES, Settings, ignored_codes_for, is_excluded,
    parse_version,
)


# key -> (field name, kind)
_KEYS = {
    "select": ("select", "codes"),
    "extend-select": ("extend_select", "codes"),
    "ignore": ("ignore", "codes"),
    "per-file-ignores": ("per_file_ignores", "per-file"),
    "extend-per-file-ignores": ("extend_per_file_ignores", "per-file"),
    "fixable": ("fixable", "codes"),
    "unfixable": ("unfixable", "codes"),
    "extension": ("extension", "extension"),
    "exclude": ("exclude", "strings"),
    "extend-exclude": ("extend_exclude", "strings"),
    "profile": ("profile", "profile"),
    "target-torch": ("target_torch", "version"),
    "unsafe-fixes": ("unsafe_fixes", "bool"),
    "output-format": ("output_format", "format"),
    "profiles": ("profiles", "profiles"),
    "shell-device-type-var": ("shell_device_type_var", "identifier"),
    "shell-visibility-var": ("shell_visibility_var", "identifier"),
    "skip-cuda-only-paths": ("skip_cuda_only_paths", "bool"),
    "line-length": ("line_length", "length"),
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


# keys devlint once documented, and why they are gone (still an error, with the reason)
_REMOVED_KEYS = {
    "target-backends": "removed: it never changed anything. Fixes are device-generic; the "
                       "accelerators an assertion accepts after DL201's fix are the profile's "
                       "`accelerator-tensor-test` role (set it in a custom profile, "
                       "[tool.devlint.profiles.NAME])",
}


def _expect(path, key, cond, what):
    if not cond:
        raise ConfigError(f"{path}: [tool.devlint] {key}: expected {what}")


def settings_from_table(table: dict, path: str, base: Settings | None = None) -> Settings:
    """Validate a `[tool.devlint]` table and lay it over `base`."""
    from devlint.rules import registry

    base = base or Settings()
    changes: dict = {}
    for key, value in table.items():
        if key in _REMOVED_KEYS:
            raise ConfigError(f"{path}: unknown key [tool.devlint] {key!r}: {_REMOVED_KEYS[key]}")
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
        elif kind == "length":
            _expect(path, key, isinstance(value, int) and not isinstance(value, bool)
                    and 0 < value <= 1000, f"a line length (1-1000), got {_toml_repr(value)}")
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
        elif kind == "extension":
            langs = ("python", "pyi", "ipynb", "shell")
            _expect(path, key, isinstance(value, dict) and all(
                isinstance(v, str) and v in langs for v in value.values()),
                f"a table of extension = language ({', '.join(langs)})")
            changes[name] = tuple(sorted((k.lstrip(".").lower(), v) for k, v in value.items()))
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


def _line_length_line(settings: Settings, path: str) -> str:
    from devlint.line_length import line_length_for

    ll = line_length_for(settings, path)
    return (f"line-length = {ll.limit}" + ("" if settings.line_length is not None
                                           else f"  # from {ll.source}"))


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
        from devlint.rules.registry import enabled_codes

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
        f"extend-per-file-ignores = "
        f"{_toml_repr({g: list(c) for g, c in settings.extend_per_file_ignores})}",
        f"fixable = {_toml_repr(list(settings.fixable))}",
        f"unfixable = {_toml_repr(list(settings.unfixable))}",
        f"extension = {_toml_repr(dict(settings.extension))}",
        f"exclude = {_toml_repr(list(settings.exclude))}",
        f"extend-exclude = {_toml_repr(list(settings.extend_exclude))}",
        f"profile = {_toml_repr(profile)}{resolved}",
        f"target-torch = {_toml_repr(target)}{target_note}",
        f"unsafe-fixes = {_toml_repr(settings.unsafe_fixes)}",
        f"output-format = {_toml_repr(settings.output_format or 'concise')}",
        f"shell-device-type-var = {_toml_repr(settings.shell_device_type_var)}",
        f"shell-visibility-var = {_toml_repr(settings.shell_visibility_var)}",
        f"skip-cuda-only-paths = {_toml_repr(settings.skip_cuda_only_paths)}"
        "  # whole files CUDA-only by folder or name are skipped (--show-exempt lists them)",
        _line_length_line(settings, path),
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

    from devlint.analysis.model import collect_imports, resolve_profile

    aliases: dict = {}
    try:
        from devlint.source import SourceFile

        with open(path, "rb") as f:
            collect_imports(ast.parse(SourceFile.from_bytes(f.read()).text).body, aliases)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError, LookupError):
        pass
    return resolve_profile("auto", path, aliases)


# the names in a folder that make its settings differ from its parent's: a config file
# (`find_config`), a repository root, a packaging file declaring a torch floor (`torch_floor`)
_SETTLED = frozenset({"devlint.toml", "pyproject.toml", ".git", "setup.cfg", "setup.py",
                      "requirements"})


class SettingsResolver:
    """Settings for each path: the nearest config (or --config), then command-line overrides."""

    def __init__(self, config_path, overrides: dict, extend_select=(), extend_ignore=()):
        self.config_path = config_path
        self.overrides = overrides
        self.extend_select = extend_select
        self.extend_ignore = extend_ignore
        self._cache: dict = {}
        self._by_dir: dict = {}
        self._fixed = load_settings(config_path) if config_path else None

    def __call__(self, path: str):
        # the answer depends on the path's directory only (made absolute against the current
        # directory, which a run does not change): memoized by the directory as given
        d = os.path.dirname(path)
        hit = self._by_dir.get(d)
        if hit is None:
            hit = self._by_dir[d] = self._resolve(path)
        return hit

    def inherit(self, directory: str, parent: str, names) -> None:
        """A walk's hint: `directory` (below `parent`) holds the entries `names`. With none
        that `find_config` or `torch_floor.project_floor` would stop at, its settings are
        its parent's (both look in a folder, then in its parent): no stat, no listing."""
        if directory in self._by_dir or not _SETTLED.isdisjoint(names) or (
                "requirements" in "\0".join(names) and any(
                    n.startswith("requirements") and n.endswith(".txt") for n in names)):
            return
        self._by_dir[directory] = self(os.path.join(parent, "_"))

    def _resolve(self, path: str):
        if self._fixed is not None:
            base = self._fixed
            key = "--config"
        else:
            cfg = find_config(os.path.dirname(os.path.abspath(path)) or ".")
            key = cfg
            if cfg not in self._cache:
                self._cache[cfg] = load_settings(cfg) if cfg else Settings()
            base = self._cache[cfg]
        ck = ("resolved", key)
        if ck not in self._cache:
            s = replace(base, **self.overrides)
            if self.extend_select:
                s = replace(s, extend_select=s.extend_select + self.extend_select)
            if self.extend_ignore:
                s = replace(s, ignore=s.ignore + self.extend_ignore)
            self._cache[ck] = s
        # the torch floor the project around the file declares (when target-torch is unset)
        fk = ("floor", key, os.path.dirname(os.path.abspath(path)))
        if fk not in self._cache:
            # one object per distinct answer (folders with the same floor share it): what
            # is memoized per settings object (cache keys, excluders) is computed once
            s = with_project_floor(self._cache[ck], path)
            self._cache[fk] = self._cache.setdefault(
                ("same", key, s.declared_torch, s.declared_torch_source), s)
        return self._cache[fk]

    def run_settings(self, first_path: str | None):
        """Settings for run-wide options (output format, unsafe fixes): --config, else the
        config governing the current directory, else the first path's."""
        s = self(os.path.join(os.getcwd(), "_"))
        if s.config_path is None and first_path is not None:
            s = self(first_path)
        return s
