"""Effective settings: defaults, `[tool.devlint]` / `devlint.toml`, then the command line."""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

PROFILES = ("auto", "torch", "vllm")
DEFAULT_TARGET_TORCH = "2.6"
# vLLM pins its torch (vllm 0.33.0: torch==2.14.0), so fixes in the vllm profile may use any
# torch.accelerator API of that release.
PROFILE_TARGET_TORCH = {"torch": DEFAULT_TARGET_TORCH, "vllm": "2.14"}
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".env", "env", ".tox", ".nox",
    "__pypackages__", "node_modules", "build", "dist", "site-packages", ".eggs",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".devlint_cache", "__pycache__",
    ".ipynb_checkpoints", "_build", "buck-out",
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
    target_torch: str | None = None  # None: the profile's default (PROFILE_TARGET_TORCH)
    target_backends: tuple[str, ...] = ("cuda", "xpu")
    unsafe_fixes: bool = False
    output_format: str | None = None
    profiles: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # directory the relative globs of this config are anchored at
    root: str = ""
    config_path: str | None = None

    def cache_key(self) -> str:
        return repr((self.select, self.extend_select, self.ignore, self.per_file_ignores,
                     self.profile, self.target_torch, self.target_backends, self.profiles))

    def target_torch_tuple(self, profile: str | None = None) -> tuple[int, int]:
        if self.target_torch:
            return parse_version(self.target_torch)
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
    "output-format": ("output_format", "string"),
    "profiles": ("profiles", "profiles"),
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
            known = ", ".join(sorted(_KEYS))
            raise ConfigError(f"{path}: unknown key [tool.devlint] {key!r} (known keys: {known})")
        name, kind = _KEYS[key]
        if kind in ("codes", "strings"):
            _expect(path, key, isinstance(value, list) and all(isinstance(v, str) for v in value),
                    "a list of strings")
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
            _expect(path, key, isinstance(value, str), "a string")
            changes[name] = value
        elif kind == "version":
            _expect(path, key, isinstance(value, str), 'a version string like "2.6"')
            try:
                parse_version(value)
            except ConfigError as e:
                raise ConfigError(f"{path}: [tool.devlint] {key}: {e}") from None
            changes[name] = value
        elif kind == "bool":
            _expect(path, key, isinstance(value, bool), "true or false")
            changes[name] = value
        elif kind == "string":
            _expect(path, key, isinstance(value, str), "a string")
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
    while True:
        for name in ("devlint.toml", "pyproject.toml"):
            candidate = os.path.join(d, name)
            if os.path.isfile(candidate):
                if name == "devlint.toml" or read_config_file(candidate) is not None:
                    return candidate
        if os.path.exists(os.path.join(d, ".git")):
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def load_settings(path: str) -> Settings:
    table = read_config_file(path)
    return settings_from_table(table or {}, path)


def matches_glob(settings: Settings, path: str, pattern: str) -> bool:
    """ruff-style glob match: a pattern without a slash matches any path component or the
    basename; patterns are anchored at the config's directory."""
    negate = pattern.startswith("!")
    if negate:
        pattern = pattern[1:]
    ap = os.path.abspath(path)
    rel = os.path.relpath(ap, settings.root) if settings.root else path
    rel = rel.replace(os.sep, "/")
    if "/" not in pattern.rstrip("/"):
        pat = pattern.rstrip("/")
        hit = any(fnmatch.fnmatchcase(part, pat) for part in rel.split("/"))
    else:
        hit = fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern.rstrip("/") + "/*")
        if not hit and "**/" in pattern:
            hit = fnmatch.fnmatchcase(rel, pattern.replace("**/", ""))
    return hit != negate


def is_excluded(settings: Settings, path: str) -> bool:
    return any(matches_glob(settings, path, p) for p in settings.exclude + settings.extend_exclude)


def ignored_codes_for(settings: Settings, path: str) -> tuple[str, ...]:
    out: list[str] = []
    for glob, codes in settings.per_file_ignores:
        if matches_glob(settings, path, glob):
            out.extend(codes)
    return tuple(out)
