"""Principle: code that never puts a value on a device is not a finding.

Evidence: a type annotation (`s: torch.cuda.Stream | None`, a dataclass field's type, a
parameter's or a return annotation: it changes nothing at run time), and code under
`if TYPE_CHECKING:` (stubs for type checkers never run). The evidence is the annotation's or
the test's line.
Limits: a rule that fixes a construction may still rewrite the annotations tied to it (the
rules that ask for annotations pass `annotations=True`); a default value is not an annotation.
"""
from __future__ import annotations

from devlint.evidence import Reason


def annotation_reason(node, path: str | None) -> Reason:
    return Reason("not-a-device", "a type annotation changes nothing at run time", path,
                  getattr(node, "lineno", None))


def type_checking_reason(test, path: str | None) -> Reason:
    return Reason("not-a-device", "under `if TYPE_CHECKING:` (never runs)", path,
                  getattr(test, "lineno", None))
