"""The Python API, for editors and scripts. The command line goes through the same function
(`devlint.engine.runner.process_source`) for every file and for stdin, so what the API returns is
what `devlint check` reports.

    import devlint

    for d in devlint.check_source(text, path="pkg/model.py"):
        print(d.location, d.code, d.message, d.fix)

    fixed, remaining, failures = devlint.fix_source(text, path="pkg/model.py", unsafe=True)

`settings` is a `devlint.settings.Settings` (the defaults when omitted; `settings_for(path)`
gives what the command line would use for that file: the nearest `[tool.devlint]` /
`devlint.toml`); keyword overrides take the `Settings` field names, e.g.
`check_source(text, select=("DL1",), profile="vllm")`. Never imports torch or runs the code.
"""
from __future__ import annotations

from dataclasses import replace

from devlint.settings import Settings

__all__ = ["check_source", "fix_source", "noqa_source", "settings_for", "Settings"]


def _settings(settings, **overrides) -> Settings:
    s = settings or Settings()
    if overrides:
        for key in ("select", "extend_select", "ignore"):
            if isinstance(overrides.get(key), str):
                overrides[key] = (overrides[key],)
            elif isinstance(overrides.get(key), list):
                overrides[key] = tuple(overrides[key])
        s = replace(s, **overrides)
    return s


def settings_for(path: str, config: str | None = None) -> Settings:
    """The settings the command line uses for `path`: `config` if given, else the nearest
    `devlint.toml` / `pyproject.toml` with `[tool.devlint]` up from it (stopping at a
    repository root), else the defaults; with no `target-torch`, the torch floor the project
    declares (devlint.torch_floor). Raises `devlint.settings.ConfigError`."""
    import os

    from devlint.config import find_config, load_settings, with_project_floor

    if config:
        return with_project_floor(load_settings(config), path)
    found = find_config(os.path.dirname(os.path.abspath(path)) or ".")
    return with_project_floor(load_settings(found) if found else Settings(), path)


def kind_of_path(path: str) -> str:
    from devlint.discovery import SHELL_SUFFIXES
    from devlint.sources import kind_of_name

    if path.lower().endswith(SHELL_SUFFIXES):
        return "shell"
    return kind_of_name(path) or "python"


def _to_bytes(text: str) -> bytes:
    """The bytes a file holding `text` would have (its coding cookie honoured), so that the
    engine decodes them back to exactly `text`."""
    import io
    import tokenize

    data = text.encode("utf-8", "surrogatepass")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return data
    if encoding in ("utf-8", "utf-8-sig"):
        return data
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return data


def process(data: bytes, path: str, settings: Settings, mode: str = "check",
            unsafe: bool = False, kind: str | None = None):
    """One source's bytes through the engine, as the command line runs each file:
    mode "check", "fix" or "diff"; returns a `devlint.engine.runner.FileResult`."""
    from devlint.engine.runner import process_source

    return process_source(path, kind or kind_of_path(path), data, settings, mode, unsafe)


def check_source(text: str, path: str = "<string>", settings: Settings | None = None,
                 **overrides):
    """Diagnostics (each with its fix, if it has one) for one source: Python, or a shell
    script when `path` ends in .sh / .bash. A syntax error is one DL999 diagnostic; a source
    whose coding cookie names an unknown encoding is one DL902 diagnostic (ValueError where
    DL902 is not selected)."""
    res = process(_to_bytes(text), path, _settings(settings, **overrides))
    if res.error:
        raise ValueError(f"{path}: {res.error}")
    return res.diagnostics


def fix_source(text: str, path: str = "<string>", settings: Settings | None = None,
               unsafe: bool = False, **overrides):
    """(fixed text, remaining diagnostics, reverted fixes as (code, message)). Safe fixes
    only unless `unsafe`; fixes are re-linted until nothing changes and a fix that breaks
    parsing is reverted."""
    from devlint.source import SourceFile

    data = _to_bytes(text)
    res = process(data, path, _settings(settings, **overrides), "fix", unsafe)
    if res.error:
        raise ValueError(f"{path}: {res.error}")
    fixed = SourceFile.from_bytes(res.new_bytes).text if res.new_bytes is not None else text
    return fixed, res.diagnostics, res.failures


def noqa_source(text: str, diagnostics, path: str = "<string>", settings: Settings | None = None,
                kind: str | None = None, every: bool = True):
    """(text with `# noqa: CODE` comments for `diagnostics`, number added). Kept only if the
    result no longer reports them and reports nothing new (a comment must never change what
    the code does); otherwise (text, 0). `every`: `diagnostics` are all the source's findings
    (`--add-noqa`); else a subset (the language server's per-finding action), and the source
    is linted once more to know the rest. """
    from devlint.engine.suppression import NOT_NOQA_ABLE, add_noqa

    kind = kind or kind_of_path(path)
    settings = settings or Settings()
    if kind not in ("python", "shell"):
        return text, 0  # a notebook, CI workflow or Dockerfile: not written into yet
    eligible = [d for d in diagnostics if d.code not in NOT_NOQA_ABLE]
    new_text, added = add_noqa(text, eligible, python=kind == "python")
    if not added:
        return text, 0
    before = eligible if every else [
        d for d in process(_to_bytes(text), path, settings, kind=kind).diagnostics
        if d.code not in NOT_NOQA_ABLE]
    after = process(_to_bytes(new_text), path, settings, kind=kind).diagnostics
    left = {(d.code, d.location[0]) for d in after if d.code not in NOT_NOQA_ABLE}
    targets = {(d.code, d.location[0]) for d in eligible}
    if any(d.code in ("DL999", "DL000") for d in after) or left & targets or \
            not left <= {(d.code, d.location[0]) for d in before}:
        return text, 0
    return new_text, added
