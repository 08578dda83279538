"""Notes after a `--fix` or `--diff` run (kept out of `cli.py`): the fixed lines longer than
the project's line length. devlint does not reformat (devlint.line_length); it names the
lines, on stderr, so that the user runs their formatter. Not a finding: the exit code is the
run's."""
from __future__ import annotations

import click

_SHOWN = 5  # rows named per file; the rest counted


def write_fix_notes(results, quiet: bool, diff: bool) -> None:
    if quiet:
        return
    for r in results:
        if not r.long_lines:
            continue
        rows = [str(row) for row, _ in r.long_lines]
        more = f" and {len(rows) - _SHOWN} more" if len(rows) > _SHOWN else ""
        n = len(rows)
        longest = max(length for _, length in r.long_lines)
        ll = r.line_length
        click.echo(f"devlint: note: {r.path}: {'the fix would make' if diff else 'fixed'} "
                   f"line{'s' if n != 1 else ''} {', '.join(rows[:_SHOWN])}{more} longer than "
                   f"{ll.limit} characters (up to {longest}; line length from {ll.source}): "
                   f"devlint does not reformat, run your formatter (ruff format, black)",
                   err=True)
