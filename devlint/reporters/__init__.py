"""Reporters format diagnostics; they know nothing of parsing or rules' internals."""
from __future__ import annotations

FORMATS = ("concise", "full", "json")


def get_reporter(name: str):
    if name == "json":
        from devlint.reporters.json import report
    elif name == "full":
        from devlint.reporters.full import report
    else:
        from devlint.reporters.concise import report
    return report
