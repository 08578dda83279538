"""The package version (base layer: every layer may read it)."""

__version__ = "0.1.0"
