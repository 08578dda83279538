"""`# noqa`, `# devlint: ignore[...]` and `# devlint: file-ignore[...]` comments."""
from __future__ import annotations

import bisect
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
    # other rows this comment speaks for: every row of a multi-line string that closes on
    # the comment's row (no comment can be written inside the string)
    also_rows: tuple = ()

    def covers(self, code: str) -> bool:
        if self.codes is None:
            return True
        return any(code.startswith(c) for c in self.codes)


def _codes(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    codes = tuple(c.strip().upper() for c in re.split(r"[\s,]+", text) if c.strip())
    return codes or None


_CANDIDATE_LINE = re.compile(r"(?m)^[^\n]*#[^\n]*(?:(?i:noqa)|devlint:)[^\n]*")


def comments(text: str, tree=None):
    """(row, offset, comment text, other rows it speaks for) of the comments that may
    suppress something. tree: the text's `ast` module, when the caller parsed it."""
    if '"""' in text or "'''" in text:
        # A line inside a triple-quoted string can look like code with a comment, and a
        # comment after a closing triple quote is not on a line that tokenizes alone: only
        # the whole file tells them apart (or the top-level statements holding such lines).
        if tree is not None:
            try:
                return list(_comments_by_statement(text, tree))
            except (tokenize.TokenError, IndentationError, SyntaxError):
                pass
        try:
            return list(_comments_whole_file(text))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
    return list(_comments_by_line(text))


_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)  # Python 3.12+
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


def _comments_whole_file(text: str):
    from devlint.source import Locator

    yield from _comments_tokenized(text, Locator(text))


# a suppression comment holds one of these (a superset: `_may_suppress` is case-sensitive
# for `devlint:`)
_SUPPRESSION_WORD = re.compile(r"(?i)noqa|devlint:")


def _comments_by_statement(text: str, tree):
    """What `_comments_whole_file` yields, tokenizing only the top-level statements (with
    the comments and blank lines after them) whose rows hold a suppression word: a top-level
    statement starts a logical line outside any bracket or string, where the tokenizer's
    state is the one it has at the start of a file (the dedents it owes yield no comment).
    The tokens keep the whole file's rows and offsets; a part that does not tokenize makes
    the caller tokenize the whole file."""
    from devlint.source import Locator

    loc = Locator(text)
    starts = loc._starts
    rows = sorted({bisect.bisect_right(starts, m.start())
                   for m in _SUPPRESSION_WORD.finditer(text)})
    if not rows:
        return
    bounds = [1]
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        # a line ended by a backslash joins the next one: no boundary after it
        if first > bounds[-1] and not loc.line(first - 1).endswith("\\"):
            bounds.append(first)
    i = 0
    for k, first in enumerate(bounds):
        nxt = bounds[k + 1] if k + 1 < len(bounds) else None
        while i < len(rows) and rows[i] < first:
            i += 1
        if i == len(rows):
            return
        if nxt is not None and rows[i] >= nxt:
            continue
        end = loc.line_start(nxt) if nxt is not None else len(text)
        yield from _comments_tokenized(text[loc.line_start(first):end], loc, first - 1)


def _comments_tokenized(text: str, loc, row_offset: int = 0):
    """The suppression comments of `text`: the whole file, or the part of it that starts
    after `row_offset` rows (`loc` is the whole file's Locator)."""
    open_fstrings: list = []
    closed_on: dict = {}  # row -> first row of a multi-line string closing on it
    for tok in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
        if tok.type == _FSTRING_START:
            open_fstrings.append(tok.start[0])
        elif tok.type == _FSTRING_END and open_fstrings:
            first = open_fstrings.pop()
            if first < tok.end[0]:
                closed_on[tok.end[0]] = min(first, closed_on.get(tok.end[0], first))
        elif tok.type == tokenize.STRING and tok.start[0] < tok.end[0]:
            closed_on[tok.end[0]] = min(tok.start[0], closed_on.get(tok.end[0], tok.start[0]))
        elif tok.type == tokenize.COMMENT and _may_suppress(tok.string):
            row, col = tok.start
            first = closed_on.get(row, row)
            yield (row + row_offset, loc.line_start(row + row_offset) + col, tok.string,
                   tuple(range(first + row_offset, row + row_offset)))


def _may_suppress(comment: str) -> bool:
    return "noqa" in comment.lower() or "devlint:" in comment


def _comments_by_line(text: str):
    """Only lines holding `#` and a suppression word are tokenized, one line at a time, so a
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
                    yield row, m.start() + tok.start[1], tok.string, ()
        except (tokenize.TokenError, IndentationError, SyntaxError):
            continue


# a comment that can concern devlint: a bare `# noqa`, a `# noqa:` naming a DL code, or a
# `# devlint:` directive (`# noqa: E501` never can, and vLLM has thousands of those)
_RELEVANT = re.compile(r"(?i)#\s*noqa(?!\s*:)|noqa\s*:[^\n]*\bDL\d|devlint:")


_RELEVANT_CODES = re.compile(r"(?i)noqa\s*:[^\n]*\bDL\d")  # _RELEVANT's second alternative


def _has_relevant(text: str) -> bool:
    """`_RELEVANT.search(text) is not None`. Every match holds `noqa` or `devlint:` (in any
    case): only those places are looked at (the case-insensitive search of the whole text cost
    more than the rest of the suppression scan). Outside ASCII only U+0130 and U+0131 match
    one of their letters under re.IGNORECASE (`i`), and only U+0130 lowers to more than one
    character: without them, the lowered text has the same offsets and the same matches."""
    if "\u0130" in text or "\u0131" in text:
        return _RELEVANT.search(text) is not None
    low = text.lower()
    if "devlint:" in low:
        return True
    i = low.find("noqa")
    while i != -1:
        if _RELEVANT_CODES.match(text, i):
            return True
        # `#\s*noqa(?!\s*:)`: a `#` and only whitespace before, no colon after
        j = i - 1
        while j >= 0 and text[j].isspace():
            j -= 1
        if j >= 0 and text[j] == "#":
            k = i + 4
            while k < len(text) and text[k].isspace():
                k += 1
            if k == len(text) or text[k] != ":":
                return True
        i = low.find("noqa", i + 1)
    return False


def parse_suppressions(text: str, every_noqa: bool = False, tree=None) -> list[Suppression]:
    """The suppression comments of a file; only those that can concern devlint unless
    `every_noqa` (`--add-noqa` merges its codes into any existing `# noqa: X`). tree: the
    text's `ast` module, when the caller parsed it (fewer lines to tokenize)."""
    if not every_noqa and not _has_relevant(text):
        return []
    if every_noqa and "devlint:" not in text and not re.search(r"(?i)noqa", text):
        return []
    out = []
    for row, off, comment, also in comments(text, tree):
        for m in _NOQA.finditer(comment):
            out.append(Suppression(row, off + m.start(), off + m.end(), _codes(m.group("codes")),
                                   "noqa", also_rows=also))
        for m in _IGNORE.finditer(comment):
            out.append(Suppression(row, off + m.start(), off + m.end(), _codes(m.group("codes")),
                                   "ignore", also_rows=also))
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
            for row in (s.row, *s.also_rows):
                by_row.setdefault(row, []).append(s)
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


# --- `--add-noqa`: the adoption baseline -------------------------------------------------

# syntax errors, unreadable files and devlint bugs cannot be baselined; an unused suppression
# is removed, not suppressed
NOT_NOQA_ABLE = ("DL999", "DL000", "DL900", "DL902")


def _statement_rows(tree) -> list[tuple[int, int]]:
    import ast

    return sorted((n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
                  if isinstance(n, ast.stmt))


def _first_statement_row(spans, row: int) -> int:
    """First row of the innermost statement spanning `row` (the row a suppression on a
    multi-line statement is read from), else `row`."""
    best = row
    for start, end in spans:
        if start > row:
            break
        if end >= row:
            best = start
    return best


def _uncommentable_rows(text: str) -> tuple[set, dict]:
    """Rows whose end lies inside a string (a comment there would change the string) or that
    continue with a backslash; and for each row inside a multi-line string, the row where
    the string closes (a comment there covers it)."""
    from devlint.source import Locator

    blocked: set = set()
    loc = Locator(text)
    has_comment: set = set()
    closing: dict = {}
    open_fstrings: list = []
    for tok in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
        if tok.type == _FSTRING_START:
            open_fstrings.append(tok.start[0])
        elif tok.type == _FSTRING_END and open_fstrings:
            first = open_fstrings.pop()
            for row in range(first, tok.end[0]):
                closing.setdefault(row, tok.end[0])
        elif tok.type == tokenize.STRING and tok.start[0] < tok.end[0]:
            for row in range(tok.start[0], tok.end[0]):
                closing.setdefault(row, tok.end[0])
        if tok.start[0] < tok.end[0] and tok.type not in (tokenize.NEWLINE, tokenize.NL):
            blocked.update(range(tok.start[0], tok.end[0]))
        elif tok.type == tokenize.COMMENT:
            has_comment.add(tok.start[0])
    for row in range(1, loc.line_count + 1):
        if row not in has_comment and loc.line(row).rstrip().endswith("\\"):
            blocked.add(row)
    return blocked, closing


def add_noqa(text: str, diagnostics, python: bool = True) -> tuple[str, int]:
    """`text` with `# noqa: CODE` added where each diagnostic's suppression is read: its own
    row, else the first row of its statement, else its last row (whichever can hold a
    comment). An existing `# noqa: ...` on that row is extended. Returns (new text, number
    of codes added)."""
    from devlint.source import Locator

    wanted: dict = {}
    if python:
        import ast

        try:
            spans = _statement_rows(ast.parse(text))
            blocked, closing = _uncommentable_rows(text)
        except (SyntaxError, ValueError, tokenize.TokenError, IndentationError):
            return text, 0
    else:
        spans, blocked, closing = [], set(), {}
    for d in diagnostics:
        if d.code in NOT_NOQA_ABLE:
            continue
        row = d.noqa_row or d.location[0]
        options = (row, d.location[0], _first_statement_row(spans, d.location[0]),
                   d.end_location[0], closing.get(d.location[0], 0))
        target = next((r for r in options if r not in blocked), None)
        if target is not None:
            wanted.setdefault(target, set()).add(d.code)
    if not wanted:
        return text, 0
    loc = Locator(text)
    existing: dict = {}
    for s in parse_suppressions(text, every_noqa=True):
        if s.kind == "noqa" and s.codes is not None and s.row in wanted:
            existing[s.row] = s
    edits = []  # (start, end, content), applied from the end
    added = 0
    for row, codes in wanted.items():
        sup = existing.get(row)
        if sup is not None:
            new = sorted(c for c in codes if c not in sup.codes)
            if not new:
                continue
            edits.append((sup.end, sup.end, ", " + ", ".join(new)))
        else:
            new = sorted(codes)
            end = loc.line_end(row)
            start = end
            while start > loc.line_start(row) and text[start - 1] in " \t":
                start -= 1
            edits.append((start, end, f"  # noqa: {', '.join(new)}"))
        added += len(new)
    for start, end, content in sorted(edits, reverse=True):
        text = text[:start] + content + text[end:]
    return text, added
