"""GitLab Code Quality (a Code Climate subset). Fingerprints are stable across edits that
move a finding: they hash the path, the code, the flagged source text and which occurrence of
that text it is, never line numbers."""
from __future__ import annotations

import hashlib
import json

from devlint.reporters import flagged_text, relative_path


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
        key = (path, d.code, text)
        occurrence = seen[key] = seen.get(key, -1) + 1
        issues.append({
            "type": "issue",
            "check_name": d.code,
            "description": f"{d.code} {d.message}",
            "categories": ["Compatibility"],
            "severity": "major",
            "fingerprint": fingerprint(path, d.code, text, occurrence),
            "location": {
                "path": path,
                "lines": {"begin": d.location[0], "end": d.end_location[0]},
                "positions": {
                    "begin": {"line": d.location[0], "column": d.location[1]},
                    "end": {"line": d.end_location[0], "column": d.end_location[1]},
                },
            },
        })
    json.dump(issues, out, indent=2, ensure_ascii=False)
    out.write("\n")
