"""Shell-script support: which files are shell scripts, DL302 (shell-cuda-visible-devices) and
DL303 (shell-device-option).

Cheap to import: the tree-sitter parser is imported only when a shell file is actually linted
(`devlint.shell._lint`), so Python-only runs pay nothing for it.

Engine entry points:
    is_shell_path(path: str, head: bytes) -> bool
    detect_dialect(text: str, path: str) -> "bash" | "sh" | None   (None: decide from the tree)
    lint_shell(text: str, path: str, options: ShellOptions | None = None) -> list[Diagnostic]
    analyze_shell(text, path, options) -> ShellResult   (also the suppressed findings and the
                                                          suppression comments, for DL900)
    syntax_error_count(text: str) -> int   (tree-sitter ERROR/MISSING nodes)
    validate_shell(text: str, path: str) -> str | None   (None: `bash -n` / `sh -n` accepts it)
    lint_shell_file(text: str, path: str, settings) -> list[Diagnostic]   (the runner's hook:
        honours select/ignore/per-file-ignores of devlint.settings.Settings for DL302, DL303)
    fix_shell(text, path, options, unsafe=False) -> str   (apply fixes until stable)
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from devlint.shell.options import (  # noqa: F401  (this package's API)
    SHELL_EXTENSIONS, ShellOptions, detect_dialect, is_shell_path, shebang_interpreter,
)

if TYPE_CHECKING:  # pragma: no cover
    from devlint.diagnostics import Diagnostic
    from devlint.shell._lint import ShellResult

__all__ = [
    "SHELL_CODES",
    "SHELL_EXTENSIONS",
    "ShellOptions",
    "analyze_shell",
    "detect_dialect",
    "fix_shell",
    "is_shell_path",
    "lint_shell",
    "lint_shell_file",
    "shebang_interpreter",
    "syntax_error_count",
    "validate_shell",
]

# the rules that read shell scripts: visibility variables, device options on command lines
SHELL_CODES = frozenset({"DL302", "DL303"})


def lint_shell(text: str, path: str, options: ShellOptions | None = None) -> list[Diagnostic]:
    """DL302 and DL303 findings of a shell script that no suppression comment covers."""
    return analyze_shell(text, path, options).diagnostics


def analyze_shell(text: str, path: str, options: ShellOptions | None = None) -> ShellResult:
    from devlint.shell._lint import analyze

    return analyze(text, path, options or ShellOptions())


def syntax_error_count(text: str) -> int:
    from devlint.shell.parse import syntax_error_count as count

    return count(text)


def fix_shell(text: str, path: str, options: ShellOptions | None = None, *,
              unsafe: bool = False, max_rounds: int = 100) -> str:
    from devlint.shell._lint import fix_text

    return fix_text(text, path, options or ShellOptions(), unsafe=unsafe, max_rounds=max_rounds)


def options_from_settings(settings) -> ShellOptions:
    """ShellOptions from devlint Settings (optional `shell_device_type_var`,
    `shell_visibility_var`, `shell_dialect` attributes; defaults otherwise)."""
    if settings is None:
        return ShellOptions()
    kwargs = {}
    for attr, key in (("shell_device_type_var", "device_type_var"),
                      ("shell_visibility_var", "visibility_var"), ("shell_dialect", "dialect")):
        value = getattr(settings, attr, None)
        if value:
            kwargs[key] = value
    return ShellOptions(**kwargs)


def lint_shell_file(text: str, path: str, settings=None) -> list[Diagnostic]:
    """The runner's entry point: the findings of the shell rules (DL302, DL303) that
    `settings` enables for `path`."""
    if settings is None:
        return lint_shell(text, path, options_from_settings(settings))
    from devlint.rules.registry import enabled_codes

    codes = enabled_codes(settings, path) & SHELL_CODES
    if not codes:
        return []
    return [d for d in lint_shell(text, path, options_from_settings(settings)) if d.code in codes]


def validate_shell(text: str, path: str = "<fixed>") -> str | None:
    """None when the shell accepts the text (`bash -n`, or `sh -n` for POSIX sh scripts), else
    its complaint. Without bash/sh on PATH, tree-sitter's error count decides."""
    import shutil
    import subprocess

    dialect = detect_dialect(text, path) or "bash"
    shell = shutil.which("bash" if dialect == "bash" else "sh") or shutil.which("bash")
    if shell is None:
        return None if syntax_error_count(text) == 0 else "tree-sitter-bash: syntax error"
    proc = subprocess.run([shell, "-n"], input=text.encode("utf-8", "surrogateescape"),
                          capture_output=True, check=False)
    if proc.returncode == 0:
        return None
    err = proc.stderr.decode("utf-8", "replace").strip().replace("\n", "; ")
    return f"{os.path.basename(shell)} -n: {err or 'syntax error'}"
