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
    # a notebook's finding: the cell's number (1-based, among all cells); `location` and
    # `end_location` are then relative to the cell, as ruff reports them
    cell: int | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability is not Applicability.DISPLAY_ONLY

    def sort_key(self):
        return (self.path, self.cell or 0, self.location, self.code)


# `Exempt.rules` of a whole-file entry: every rule, or the torch.cuda-API rules only (a
# CUDA-alike ROCm file, where `torch.cuda`, `is_cuda`, NCCL and CUDA_VISIBLE_DEVICES are right)
ALL_RULES = "ALL"
API_RULES = "DL2,DL3,DL4,DL5"


@dataclass
class Exempt:
    """A candidate devlint did not report (`--show-exempt`), or a whole file it skipped
    (`code` None, `rules` saying which rules skip it), with the principle that exempted it and
    where its evidence stands. Plain data (the cache stores it as JSON): `evidence_path` ""
    means the file itself (so a cached entry follows the file's name), None no place at all."""

    code: str | None
    name: str
    path: str
    start: int
    end: int
    principle: str
    reason: str
    evidence_path: str | None = ""
    evidence_line: int | None = None
    rules: str | None = None  # whole-file entries: ALL_RULES or API_RULES
    location: tuple[int, int] = (0, 0)
    end_location: tuple[int, int] = (0, 0)

    @property
    def whole_file(self) -> bool:
        return self.code is None

    @property
    def evidence(self) -> str | None:
        """`path:line` of the evidence (the path alone when the evidence is the path)."""
        path = self.path if self.evidence_path == "" else self.evidence_path
        if path is None:
            return None
        return f"{path}:{self.evidence_line}" if self.evidence_line else path


def exempt_from_reason(reason, code: str | None, name: str, path: str, start: int = 0,
                       end: int = 0, rules: str | None = None) -> Exempt:
    """An `Exempt` for a `devlint.evidence.Reason` (any object with principle, path and line;
    a plain str is a reason without a principle or place)."""
    rpath = getattr(reason, "path", None)
    return Exempt(code, name, path, start, end, getattr(reason, "principle", None) or "exempt",
                  str.__str__(reason), "" if rpath == path else rpath,
                  getattr(reason, "line", None), rules)


# The documentation site built from docs/ (mkdocs.yml); a rule's page is `rules/<CODE>/`.
DEFAULT_DOCS_URL = "https://devlint.readthedocs.io/en/latest/"


def docs_url() -> str:
    """The documentation's root URL, ending in `/`: $DEVLINT_DOCS_URL (a mirror, a docs site of
    one's own), else the `Documentation` project URL of the installed distribution
    (`[project.urls]` in pyproject.toml), else DEFAULT_DOCS_URL."""
    import os

    url = os.environ.get("DEVLINT_DOCS_URL") or _metadata_docs_url() or DEFAULT_DOCS_URL
    return url if url.endswith("/") else url + "/"


_metadata_url: list = []


def _metadata_docs_url() -> str | None:
    if not _metadata_url:
        found = None
        try:
            from importlib.metadata import PackageNotFoundError, metadata

            for entry in metadata("devlint").get_all("Project-URL") or ():
                label, _, url = entry.partition(",")
                if label.strip().lower() in ("documentation", "docs"):
                    found = url.strip()
        except (ImportError, PackageNotFoundError):
            pass
        _metadata_url.append(found)
    return _metadata_url[0]


def rule_url(code: str) -> str:
    """The page of a rule in the documentation (docs/rules/<CODE>.md, built by mkdocs)."""
    return f"{docs_url()}rules/{code}/"
