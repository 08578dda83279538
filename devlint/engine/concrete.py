"""Stage 3: the concrete syntax tree (LibCST), used only on files a fix has changed.

Fixes are span edits computed from the triage stage's exact positions, so the user's
formatting, comments and quotes outside the replaced span are untouched by construction. Every
fixed text is then re-parsed twice: by CPython's own parser (what will run it) and by LibCST
(what formatters and codemods built on LibCST will read), and a fix that breaks either is
reverted and reported.
"""
from __future__ import annotations

import ast


def python_parses(text: str, path: str = "<fixed>") -> str | None:
    """None when CPython parses the text, else the error."""
    return python_tree(text, path)[1]


def python_tree(text: str, path: str = "<fixed>"):
    """(CPython's tree of the text, None), or (None, the error)."""
    try:
        return ast.parse(text, filename=path), None
    except (SyntaxError, ValueError) as e:
        return None, f"{type(e).__name__}: {e}"


def libcst_parses(text: str) -> str | None:
    import libcst

    try:
        libcst.parse_module(text)
    except libcst.ParserSyntaxError as e:
        return f"LibCST: {e.message} at {e.raw_line}:{e.raw_column}"
    except Exception as e:  # LibCST can fail on input CPython accepts; report, don't crash
        return f"LibCST: {type(e).__name__}: {e}"
    return None


def changed_statements(text: str, rows, changed) -> str:
    """The top-level statements of `text` (starting at `rows`, from `top_rows`) that hold a
    changed span, with the lines up to the next statement, joined in order: a module of its
    own that parses as they do (a statement's tokens end before the next one's line; each
    piece starts a line at column 0). The text before the first statement goes with it."""
    import bisect

    from devlint.source import Locator

    loc = Locator(text)
    starts = sorted({0, *(loc.line_start(r) for r in rows)})
    bounds = starts + [len(text)]
    touched = set()
    for a, b in changed:
        first = bisect.bisect_right(starts, a) - 1
        last = bisect.bisect_right(starts, max(a, b - 1)) - 1
        if a == b and first > 0 and starts[first] == a:
            first -= 1  # text removed at a statement's start: the one before ends there too
        touched.update(range(max(first, 0), last + 1))
    return "".join(text[bounds[k]:bounds[k + 1]] for k in sorted(touched))
