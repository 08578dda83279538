"""SARIF 2.1.0 (GitHub code scanning and other SARIF viewers): every rule with its
documentation as help text, each finding with its region and, where it has one, its fix.

Each result carries `partialFingerprints["devlint/v1"]`: a hash of the path (and notebook
cell), the code, the flagged text and which occurrence of that text it is in the file, never
a line number, so code scanning keeps matching an alert when lines above it move (GitHub's
upload action adds its own `primaryLocationLineHash` beside it)."""
from __future__ import annotations

import json
import os

from devlint.reporters import (
    documented_rules, file_position, flagged_text, place_note, relative_path,
)

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "devlint/v1"
# findings the engine itself reports (no rule class)
ENGINE_CODES = (
    ("DL999", "syntax-error", "The file does not parse; devlint could not check it"),
    ("DL000", "fix-error", "A fix broke the file and was reverted (a devlint bug)"),
)


def _rule_descriptor(rule) -> dict:
    doc = rule.doc()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _section(doc, "What it does") or rule.summary},
        "help": {"text": doc, "markdown": doc},
        "helpUri": rule.url(),
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["portability", "device-hardcoding"]},
    }


def _section(doc: str, title: str) -> str:
    import re

    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", doc, flags=re.M | re.S)
    return m.group(1).strip() if m else ""


def _artifact(path: str) -> dict:
    rel = relative_path(path)
    if os.path.isabs(rel):
        from pathlib import Path

        return {"uri": Path(rel).as_uri()}
    from urllib.parse import quote

    return {"uri": quote(rel), "uriBaseId": SRCROOT}


def _region(start, end) -> dict:
    return {"startLine": start[0], "startColumn": start[1], "endLine": end[0],
            "endColumn": end[1]}


def _fix(d, artifact) -> dict:
    return {
        "description": {"text": f"{d.fix.message} ({d.fix.applicability.value} fix)"},
        "artifactChanges": [{
            "artifactLocation": artifact,
            "replacements": [
                {"deletedRegion": _region(loc, end), "insertedContent": {"text": e.content}}
                for e, (loc, end) in zip(d.fix.edits, d.edit_locations)
            ],
        }],
    }


def fingerprints(diagnostics, ctx) -> list:
    """The stable fingerprint of each finding (see the module's docstring)."""
    from devlint.reporters.gitlab import fingerprint

    seen: dict = {}
    out = []
    for d in diagnostics:
        path = relative_path(d.path) + (f":cell {d.cell}" if d.cell else "")
        text = flagged_text(d, ctx) if ctx is not None else ""
        key = (path, d.code, text)
        occurrence = seen[key] = seen.get(key, -1) + 1
        out.append(fingerprint(path, d.code, text, occurrence))
    return out


def sarif_log(diagnostics, ctx=None) -> dict:
    from devlint._version import __version__
    from devlint.diagnostics import docs_url

    rules = [_rule_descriptor(r) for r in documented_rules()]
    codes = {d.code for d in diagnostics}
    rules += [{"id": code, "name": name, "shortDescription": {"text": text},
               "defaultConfiguration": {"level": "error"}}
              for code, name, text in ENGINE_CODES if code in codes]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for d, print_ in zip(diagnostics, fingerprints(diagnostics, ctx)):
        artifact = _artifact(d.path)
        result = {
            "ruleId": d.code,
            "level": "error",
            "message": {"text": place_note(d) + d.message},
            "locations": [{"physicalLocation": {"artifactLocation": artifact,
                                                "region": _region(*file_position(d))}}],
            "partialFingerprints": {FINGERPRINT_KEY: print_},
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.fix is not None and d.fix.edits and d.edit_locations and not d.cell:
            result["fixes"] = [_fix(d, artifact)]
            result["properties"] = {"fixApplicability": d.fix.applicability.value}
        if d.cell:
            result.setdefault("properties", {})["cell"] = d.cell
        results.append(result)
    from pathlib import Path

    root = Path(os.getcwd()).as_uri().rstrip("/") + "/"
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "devlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": docs_url(),
                "rules": rules,
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": root}},
            # columns count characters (code points), as in every other devlint format
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def report(diagnostics, out, ctx) -> None:
    json.dump(sarif_log(diagnostics, ctx), out, indent=2, ensure_ascii=False)
    out.write("\n")
