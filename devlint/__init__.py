"""devlint: find and fix device-hardcoding bugs in PyTorch code.

The Python API (documented in docs/api.md) is `check_source` and `fix_source`; both are thin
re-exports of devlint.api, imported on first use so that `import devlint` stays cheap."""

from devlint._version import __version__

__all__ = ["__version__", "check_source", "fix_source"]


def check_source(text, path="<string>", settings=None, **overrides):
    """Lint one source text; returns a list of Diagnostic (with fixes). Never imports torch."""
    from devlint.api import check_source as _check_source

    return _check_source(text, path=path, settings=settings, **overrides)


def fix_source(text, path="<string>", settings=None, unsafe=False, **overrides):
    """(fixed text, remaining diagnostics, reverted fixes) for one source text."""
    from devlint.api import fix_source as _fix_source

    return _fix_source(text, path=path, settings=settings, unsafe=unsafe, **overrides)
