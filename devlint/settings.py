"""The settings types (configuration layer: data at the bottom).

`Settings` and the pure functions over it (versions, ruff-style globs, exclusion, per-file
ignores). It imports nothing above the configuration layer: reading and validating a
`[tool.devlint]` table (which needs the rule registry and the output formats) is
`devlint.config`."""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass

from devlint.errors import ConfigError  # re-exported: the type callers catch

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


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # added to per-file-ignores (ruff's name: keeps a shared per-file-ignores table and adds)
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the rules whose fixes may be offered and applied: fixable minus unfixable (a more
    # specific selector wins, as in select/ignore); the others are reported without a fix
    fixable: tuple[str, ...] = ("ALL",)
    unfixable: tuple[str, ...] = ()
    # ruff's `extension`: (("ipy", "python"), ...) files with these extensions read as that
    # language (python, pyi, ipynb, shell)
    extension: tuple[tuple[str, str], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    profile: str = "auto"
    target_torch: str | None = None  # None: the project's declared floor, else the profile's default
    # the torch floor the project's packaging files declare (devlint.torch_floor), when
    # target-torch is not configured; the source says where it was read, for --show-settings
    declared_torch: str | None = None
    declared_torch_source: str = ""
    unsafe_fixes: bool = False
    output_format: str | None = None
    profiles: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # DL302 (shell): the variable naming the device type, and the one the fix selects into
    shell_device_type_var: str = "DEVICE_TYPE"
    shell_visibility_var: str = "DEVICE_VISIBILITY_ENV"
    # whole files CUDA-only by their path (folder, name, a profile's platform folder, a vendor
    # family) are not reported; false: only their imports and CUDA runtime use count
    skip_cuda_only_paths: bool = True
    # the line length a fixed line should keep (devlint.line_length); None: the project's
    # formatter's (ruff, black), else 88
    line_length: int | None = None
    # `--show-exempt` (command line only): also collect every candidate not reported
    show_exempt: bool = False
    # directory the relative globs of this config are anchored at
    root: str = ""
    config_path: str | None = None

    def cache_key(self) -> str:
        key = repr((self.select, self.extend_select, self.ignore, self.per_file_ignores,
                    self.profile, self.target_torch, self.declared_torch,
                    self.profiles,
                    self.shell_device_type_var, self.shell_visibility_var))
        # only when not the defaults: the cache of plain runs keeps its key
        if self.extend_per_file_ignores or self.fixable != ("ALL",) or self.unfixable:
            key += repr((self.extend_per_file_ignores, self.fixable, self.unfixable))
        # only when not the default: the cache of plain runs keeps its key
        if not self.skip_cuda_only_paths:
            key += " no-skip-cuda-only-paths"
        if self.show_exempt:
            key += " show-exempt"
        return key

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
    for glob, codes in settings.per_file_ignores + settings.extend_per_file_ignores:
        if matches_glob(settings, path, glob):
            out.extend(codes)
    return tuple(out)
