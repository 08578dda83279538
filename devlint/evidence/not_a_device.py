"""Principle: code that never puts a value on a device is not a finding.

Evidence: a type annotation (`s: torch.cuda.Stream | None`, a dataclass field's type, a
parameter's or a return annotation: it changes nothing at run time), and code under
`if TYPE_CHECKING:` (stubs for type checkers never run). The evidence is the annotation's or
the test's line; a test function or class skipped unconditionally (`@pytest.mark.skip`), whose
values never reach a device (the decorator's line).
Limits: a rule that fixes a construction may still rewrite the annotations tied to it (the
rules that ask for annotations pass `annotations=True`); a default value is not an annotation.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason


def annotation_reason(node, path: str | None) -> Reason:
    return Reason("not-a-device", "a type annotation changes nothing at run time", path,
                  getattr(node, "lineno", None))


def type_checking_reason(test, path: str | None) -> Reason:
    return Reason("not-a-device", "under `if TYPE_CHECKING:` (never runs)", path,
                  getattr(test, "lineno", None))


_SKIPS = {"skip"}  # `@pytest.mark.skip(...)`, `@unittest.skip(...)`: unconditional


def never_runs_reason(scope, path: str | None) -> Reason | None:
    """A test function or class skipped unconditionally (`@pytest.mark.skip(reason=...)`,
    `@unittest.skip("...")`) never runs: its values never reach a device. Limits: `skipif` /
    `skipUnless` run somewhere (they are DL203's business); only a decorator of the scope
    itself counts."""
    for d in getattr(scope, "decorator_list", ()):
        func = d.func if isinstance(d, ast.Call) else d
        if isinstance(func, ast.Attribute) and func.attr in _SKIPS \
                and getattr(func.value, "attr", getattr(func.value, "id", None)) in (
                    "mark", "unittest"):
            return Reason("not-a-device", f"`{scope.name}` is always skipped (never runs)",
                          path, d.lineno)
    return None
