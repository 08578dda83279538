"""A finding with its source excerpt, a caret under the hardcoding, and the fix as a diff
(ruff's `full` format)."""
from __future__ import annotations

from devlint.diagnostics import Applicability
from devlint.reporters.concise import header, write_summary

CONTEXT = 1  # lines shown above and below the flagged one


def _expand(line: str) -> str:
    return line.expandtabs(4)


def _caret_line(line: str, col: int, end_col: int) -> str:
    """Carets under line[col-1:end_col-1], measured on the tab-expanded line."""
    lead = len(_expand(line[:col - 1]))
    width = max(1, len(_expand(line[:max(end_col, col) - 1])) - lead)
    return " " * lead + "^" * width


def report(diagnostics, out, ctx) -> None:
    for d in diagnostics:
        row, col = d.location
        out.write(header(d, ctx.unsafe))
        lines = ctx.source_lines(d.path, d.cell)
        if lines and 1 <= row <= len(lines):
            first, last = max(1, row - CONTEXT), min(len(lines), row + CONTEXT)
            width = len(str(last))
            gutter = " " * width
            out.write(f"{gutter} |\n")
            for r in range(first, last + 1):
                text = _expand(lines[r - 1])
                out.write(f"{str(r).rjust(width)} |{' ' if text else ''}{text}\n")
                if r == row:
                    line = lines[r - 1]
                    end_col = d.end_location[1] if d.end_location[0] == row else len(line) + 1
                    out.write(f"{gutter} | {_caret_line(line, col, end_col)} {d.code}\n")
            out.write(f"{gutter} |\n")
        if d.fix is not None:
            out.write(f"  = help: {d.fix.message}\n")
            preview = ctx.fix_preview(d)
            if preview:
                kind = {Applicability.SAFE: "Safe fix", Applicability.UNSAFE: "Unsafe fix",
                        Applicability.DISPLAY_ONLY: "Display-only fix"}[d.fix.applicability]
                out.write(f"\n  {kind}\n")
                for line in preview.splitlines():
                    out.write(f"  {_expand(line)}\n")
        out.write("\n")
    from devlint.reporters import exempt

    def excerpt(e):
        lines = ctx.source_lines(e.path)
        row, col = e.location
        if lines and 1 <= row <= len(lines):
            text = lines[row - 1]
            end_col = e.end_location[1] if e.end_location[0] == row else len(text) + 1
            out.write(f"    | {_expand(text)}\n    | {_caret_line(text, col, end_col)}\n")

    exempt.write_section(out, ctx, excerpt)
    if ctx.exempt is not None:
        out.write("\n")
    write_summary(diagnostics, out, ctx)
    exempt.write_summary(out, ctx)
