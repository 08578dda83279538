"""GitLab Code Quality (a Code Climate subset). Fingerprints are stable across edits that
move a finding: they hash the path, the code, the flagged source text and which occurrence of
that text it is, never line numbers."""
from __future__ import annotations

import hashlib
import json

from devlint.reporters import file_position, flagged_text, place_note, relative_path


def fingerprint(path: str, code: str, text: str, occurrence: int) -> str:
    h = hashlib.sha256()
    for part in (path, code, text, str(occurrence)):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]


def report(diagnostics, out, ctx) -> None:
    seen: dict = {}
    issues = []
    for d in diagnostics:
        path = relative_path(d.path)
        text = flagged_text(d, ctx)
        key = (path, d.cell, d.code, text)
        occurrence = seen[key] = seen.get(key, -1) + 1
        (row, col), (end_row, end_col) = file_position(d)
        issues.append({
            "type": "issue",
            "check_name": d.code,
            "description": f"{place_note(d)}{d.code} {d.message}",
            "categories": ["Compatibility"],
            "severity": "major",
            "fingerprint": fingerprint(path + (f":cell {d.cell}" if d.cell else ""), d.code,
                                       text, occurrence),
            "location": {
                "path": path,
                "lines": {"begin": row, "end": end_row},
                "positions": {
                    "begin": {"line": row, "column": col},
                    "end": {"line": end_row, "column": end_col},
                },
            },
        })
    json.dump(issues, out, indent=2, ensure_ascii=False)
    out.write("\n")
