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


# a top-level statement longer than this (characters) is read by LibCST piece by piece: the
# expressions holding the changes, not the statement (torch's `op_db = [...]`, 918k
# characters, took LibCST 5 CPU s and 466 MB for a fix of one element)
PIECES_ABOVE = 100_000
# a piece: an expression of at most this many characters, the largest around a change
PIECE_CHARS = 20_000
# expressions that do not parse alone inside parentheses (a slice, a starred item, an
# f-string's replacement field)
_NOT_ALONE = (ast.Slice, ast.Starred, ast.FormattedValue)


def _holds_a_slice(node) -> bool:
    """A subscript's tuple with a slice in it (`a[0:1, i]`): `(0:1, i)` does not parse."""
    return isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts)


def statement_pieces(text: str, tree) -> list:
    """Sorted (start, end) offsets of the pieces of the module's very long top-level
    statements: the largest expressions of at most PIECE_CHARS characters, descending from
    each such statement through what is longer (an f-string is one piece or none). Empty for
    a module without such a statement."""
    body = getattr(tree, "body", ())
    if len(text) <= PIECES_ABOVE or not body:
        return []
    from devlint.source import Locator

    loc = Locator(text)

    def span(node):
        return (loc.offset(node.lineno, node.col_offset),
                loc.offset(node.end_lineno, node.end_col_offset))

    out = []
    for st in body:
        s, e = span(st)
        if e - s <= PIECES_ABOVE:
            continue
        todo = [st]
        while todo:
            node = todo.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr) and not isinstance(child, _NOT_ALONE) \
                        and not _holds_a_slice(child):
                    a, b = span(child)
                    if b - a <= PIECE_CHARS:
                        out.append((a, b))
                        continue
                    if isinstance(child, ast.JoinedStr):
                        continue
                todo.append(child)
    out.sort()
    return out


def changed_pieces(text: str, rows, changed, pieces) -> tuple[str, list]:
    """What LibCST reads of a fixed text: (the touched top-level statements as
    `changed_statements` joins them, the expression pieces). A touched statement longer than
    PIECES_ABOVE whose every change lies inside one of `pieces` (`statement_pieces` of the
    same text) is read as those pieces instead; any other stays whole."""
    import bisect

    from devlint.source import Locator

    if not pieces:
        return changed_statements(text, rows, changed), []
    loc = Locator(text)
    starts = sorted({0, *(loc.line_start(r) for r in rows)})
    bounds = starts + [len(text)]
    by_statement: dict = {}
    for a, b in changed:
        first = bisect.bisect_right(starts, a) - 1
        last = bisect.bisect_right(starts, max(a, b - 1)) - 1
        if a == b and first > 0 and starts[first] == a:
            first -= 1
        for k in range(max(first, 0), last + 1):
            by_statement.setdefault(k, []).append((a, b))
    kept, read = [], []
    for k in sorted(by_statement):
        found = set() if bounds[k + 1] - bounds[k] > PIECES_ABOVE else None
        for a, b in by_statement[k] if found is not None else ():
            piece = _piece_around(pieces, a, b)
            if piece is None:
                found = None
                break
            found.add(piece)
        if found:
            read.extend(text[s:e] for s, e in sorted(found))
        else:
            kept.append((bounds[k], bounds[k + 1]))
    return "".join(text[s:e] for s, e in kept), read


def _piece_around(pieces: list, a: int, b: int):
    """The piece holding the changed span a:b (a removal, a == b, strictly inside), or None."""
    import bisect

    i = bisect.bisect_right(pieces, (a, float("inf"))) - 1
    if i < 0:
        return None
    s, e = pieces[i]
    if (s <= a and b <= e) if a < b else (s < a < e):
        return s, e
    return None


def libcst_expression_parses(piece: str) -> str | None:
    """None when LibCST parses the expression `piece` (in parentheses: it may span lines),
    else the error."""
    import libcst

    try:
        libcst.parse_expression("(" + piece + "\n)")
    except libcst.ParserSyntaxError as e:
        return f"LibCST: {e.message} at {e.raw_line}:{e.raw_column}"
    except Exception as e:  # LibCST can fail on input CPython accepts; report, don't crash
        return f"LibCST: {type(e).__name__}: {e}"
    return None
