"""devlint: find and fix device-hardcoding bugs in PyTorch code."""

__version__ = "0.1.0"

__all__ = ["__version__", "check_source"]


def check_source(text, path="<string>", settings=None):
    """Lint one source text; returns a list of Diagnostic (with fixes). Never imports torch."""
    from devlint.api import check_source as _check_source

    return _check_source(text, path=path, settings=settings)
