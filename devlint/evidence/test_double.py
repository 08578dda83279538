"""Principle: a test double of a CUDA-only module is CUDA-only too.

A module named as a double (`*_mock_*`, `fake_*`, `stub`, `dummy`) that another module of the
package imports in place of a CUDA-only module when that import fails (`try: from .client
import Client` / `except ImportError: from .mock_client import Client`) stands in for CUDA-only
code. Evidence: the importing module's `try` (file:line). Applied by the project stage
(`devlint.engine.project.index.Project.double_of`), which reads the package around a file.
Limits: a fallback that is not named as a double is another implementation and is linted.
"""
from __future__ import annotations

PRINCIPLE = "test-double"
