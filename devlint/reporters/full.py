"""A finding with its source excerpt, a caret under the hardcoding, and the fix as a diff."""
from __future__ import annotations

from devlint.reporters.concise import marker, write_summary


def report(diagnostics, out, ctx) -> None:
    for d in diagnostics:
        row, col = d.location
        out.write(f"{d.path}:{row}:{col}: {d.code} {marker(d, ctx.unsafe)}{d.message}\n")
        lines = ctx.source_lines(d.path)
        if lines:
            width = len(str(min(row + 1, len(lines))))
            for r in range(max(1, row - 1), min(len(lines), row + 1) + 1):
                out.write(f"  {str(r).rjust(width)} | {lines[r - 1]}\n")
                if r == row:
                    end_col = d.end_location[1] if d.end_location[0] == row else len(lines[r - 1]) + 1
                    span = max(1, end_col - col)
                    out.write(f"  {' ' * width} | {' ' * (col - 1)}{'^' * span} {d.code}\n")
        if d.fix is not None:
            out.write(f"  = help: {d.fix.message} ({d.fix.applicability.value} fix)\n")
            preview = ctx.fix_preview(d)
            if preview:
                for line in preview.splitlines():
                    out.write(f"    {line}\n")
        out.write("\n")
    write_summary(diagnostics, out, ctx)
