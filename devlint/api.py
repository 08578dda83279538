"""The Python API: `devlint.check_source(text, path=..., settings=...)` and `fix_source`."""
from __future__ import annotations

from dataclasses import replace

from devlint.settings import Settings


def _settings(settings, **overrides) -> Settings:
    s = settings or Settings()
    return replace(s, **overrides) if overrides else s


def check_source(text: str, path: str = "<string>", settings: Settings | None = None,
                 **overrides):
    """Diagnostics (with fixes) for one Python source. Never imports torch or runs the code."""
    from devlint.engine.linter import lint_text

    return lint_text(path, text, _settings(settings, **overrides))


def fix_source(text: str, path: str = "<string>", settings: Settings | None = None,
               unsafe: bool = False, **overrides):
    """(fixed text, remaining diagnostics, reverted fixes)."""
    from devlint.engine.concrete import python_parses
    from devlint.engine.fixer import fix_text
    from devlint.engine.linter import enabled_codes, lint_text

    s = _settings(settings, **overrides)
    codes = enabled_codes(s, path)
    outcome = fix_text(text, lambda t: lint_text(path, t, s, codes),
                       lambda t: python_parses(t, path), unsafe)
    return outcome.text, lint_text(path, outcome.text, s, codes), outcome.failures
