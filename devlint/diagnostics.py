"""Plain data passed between the stages: a rule returns diagnostics with edits,
the engine applies edits, reporters format diagnostics."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Applicability(str, Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] (character offsets into the decoded source) by content."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass
class Diagnostic:
    code: str
    name: str
    message: str
    path: str
    start: int  # character offset where the hardcoding starts
    end: int  # character offset where it ends
    fix: Fix | None = None
    # 1-based (row, column); filled in by the engine from the offsets
    location: tuple[int, int] = (0, 0)
    end_location: tuple[int, int] = (0, 0)
    noqa_row: int | None = None
    # edits' positions, filled in by the engine: [(loc, end_loc), ...]
    edit_locations: list = field(default_factory=list)
    # the module-level function holding the finding, filled in by the engine (the project
    # stage exempts functions by name)
    scope: str | None = None
    # a use of a table API (`torch.cuda.X` with a same-call generic form): reported under CUDA
    # guards too, where the literal rules are not
    table_api: bool = False

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability is not Applicability.DISPLAY_ONLY

    def sort_key(self):
        return (self.path, self.location, self.code)
