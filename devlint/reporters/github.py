"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request."""
from __future__ import annotations

from devlint.reporters import file_position, place_note, relative_path


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def report(diagnostics, out, ctx) -> None:
    for d in diagnostics:
        (row, col), (end_row, end_col) = file_position(d)
        out.write(f"::error title={_prop(f'devlint ({d.code})')},file={_prop(relative_path(d.path))},"
                  f"line={row},col={col},endLine={end_row},endColumn={end_col}::"
                  f"{_data(f'{place_note(d)}{d.code} {d.message}')}\n")
