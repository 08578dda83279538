"""`# noqa`, `# devlint: ignore[...]` and `# devlint: file-ignore[...]` comments."""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?",
                   re.I)
_IGNORE = re.compile(r"#\s*devlint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
_FILE_IGNORE = re.compile(r"#\s*devlint:\s*file-ignore(?:\[(?P<codes>[^\]]*)\])?")


@dataclass
class Suppression:
    row: int
    start: int  # offsets of the comment part that names the codes
    end: int
    codes: tuple[str, ...] | None  # None: every code
    kind: str  # "noqa" | "ignore" | "file-ignore"
    used: set = field(default_factory=set)

    def covers(self, code: str) -> bool:
        if self.codes is None:
            return True
        return any(code.startswith(c) for c in self.codes)


def _codes(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    codes = tuple(c.strip().upper() for c in re.split(r"[\s,]+", text) if c.strip())
    return codes or None


_CANDIDATE_LINE = re.compile(r"(?m)^[^\n]*#[^\n]*(?:noqa|NOQA|devlint:)[^\n]*")


def comments(text: str):
    """(row, offset, comment text) of the comments that may suppress something.

    Only lines holding `#` and a suppression word are tokenized, one line at a time, so a
    `#` inside a string on such a line is told apart from a comment without tokenizing the
    whole file."""
    row, pos = 1, 0
    for m in _CANDIDATE_LINE.finditer(text):
        row += text.count("\n", pos, m.start())
        pos = m.start()
        line = m.group(0)
        try:
            for tok in tokenize.generate_tokens(io.StringIO(line).readline):
                if tok.type == tokenize.COMMENT:
                    yield row, m.start() + tok.start[1], tok.string
        except (tokenize.TokenError, IndentationError, SyntaxError):
            continue


def parse_suppressions(text: str) -> list[Suppression]:
    if "noqa" not in text and "NOQA" not in text and "devlint:" not in text:
        return []
    out = []
    for row, off, comment in comments(text):
        for m in _NOQA.finditer(comment):
            out.append(Suppression(row, off + m.start(), off + m.end(), _codes(m.group("codes")),
                                   "noqa"))
        for m in _IGNORE.finditer(comment):
            out.append(Suppression(row, off + m.start(), off + m.end(), _codes(m.group("codes")),
                                   "ignore"))
        for m in _FILE_IGNORE.finditer(comment):
            out.append(Suppression(row, off + m.start(), off + m.end(), _codes(m.group("codes")),
                                   "file-ignore"))
    return out


def apply_suppressions(diagnostics, suppressions, statement_rows):
    """Drop suppressed diagnostics; marks the suppressions that were used.

    `statement_rows[i]` is the first row of the statement holding diagnostics[i] (a comment
    there covers a multi-line statement)."""
    if not suppressions:
        return diagnostics
    by_row: dict = {}
    file_wide = []
    for s in suppressions:
        if s.kind == "file-ignore":
            file_wide.append(s)
        else:
            by_row.setdefault(s.row, []).append(s)
    kept = []
    for d, stmt_row in zip(diagnostics, statement_rows):
        hit = None
        for s in file_wide:
            if s.covers(d.code):
                hit = s
                break
        if hit is None:
            for row in dict.fromkeys((d.location[0], stmt_row, d.end_location[0])):
                for s in by_row.get(row, ()):
                    if s.covers(d.code):
                        hit = s
                        break
                if hit:
                    break
        if hit is None:
            kept.append(d)
        else:
            hit.used.add(d.code)
    return kept
