"""ruff's JSON schema: a list of objects, one per finding."""
from __future__ import annotations

import json


def diagnostic_dict(d) -> dict:
    fix = None
    if d.fix is not None:
        fix = {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": [
                {"content": e.content,
                 "location": {"row": loc[0], "column": loc[1]},
                 "end_location": {"row": end[0], "column": end[1]}}
                for e, (loc, end) in zip(d.fix.edits, d.edit_locations)
            ],
        }
    url = None
    if d.code not in ("DL999", "DL000"):
        from devlint.diagnostics import rule_url

        url = rule_url(d.code)
    return {
        "cell": d.cell,
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": d.path,
        "location": {"row": d.location[0], "column": d.location[1]},
        "end_location": {"row": d.end_location[0], "column": d.end_location[1]},
        "fix": fix,
        "noqa_row": d.noqa_row,
        "url": url,
    }


def report(diagnostics, out, ctx) -> None:
    """ruff's list of findings; with --show-exempt an object: {"findings": that list,
    "exempt": what was not reported (devlint.reporters.exempt.exempt_dict)}."""
    data = [diagnostic_dict(d) for d in diagnostics]
    if getattr(ctx, "exempt", None) is not None:
        from devlint.reporters.exempt import exempt_dict, sorted_entries

        data = {"findings": data, "exempt": [exempt_dict(e) for e in sorted_entries(ctx.exempt)]}
    json.dump(data, out, indent=2, ensure_ascii=False)
    out.write("\n")
