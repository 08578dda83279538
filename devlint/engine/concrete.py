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
    """None when CPython and LibCST both parse the text, else the error."""
    try:
        ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def libcst_parses(text: str) -> str | None:
    import libcst

    try:
        libcst.parse_module(text)
    except libcst.ParserSyntaxError as e:
        return f"LibCST: {e.message} at {e.raw_line}:{e.raw_column}"
    except Exception as e:  # LibCST can fail on input CPython accepts; report, don't crash
        return f"LibCST: {type(e).__name__}: {e}"
    return None
