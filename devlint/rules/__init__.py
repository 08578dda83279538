"""The rule catalog: one module per rule; this package only lists them."""
from __future__ import annotations

from devlint.rules import registry  # noqa: F401

__all__ = ["registry"]
