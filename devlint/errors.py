"""Errors every layer may raise (the bottom layer: imports nothing from devlint)."""
from __future__ import annotations


class ConfigError(Exception):
    """A bad configuration file, key or value (exit 2)."""
