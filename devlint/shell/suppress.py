"""Suppression comments in shell scripts (`# noqa: DL302`, `# devlint: ignore[DL303]`,
`# devlint: file-ignore[...]`) and how they apply to the findings."""
from __future__ import annotations

import re
from dataclasses import dataclass

from devlint.shell.parse import _Doc, _statement, _walk
from devlint.shell.table import CODE, NAME


_SUPPRESS = re.compile(
    r"#\s*(?:noqa(?P<noqa>\s*:\s*(?P<noqa_codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*))?"
    r"|devlint\s*:\s*(?P<kind>ignore|file-ignore)\s*\[(?P<codes>[^\]]*)\])",
    re.IGNORECASE,
)


def _matches(token: str, code: str = CODE, name: str = NAME) -> bool:
    token = token.strip()
    if not token:
        return False
    return token.upper() == "ALL" or code.startswith(token.upper()) or token.lower() == name


@dataclass
class Suppression:
    row: int  # 1-based row of the comment
    start: int  # offsets of the comment
    end: int
    kind: str  # the ruff-style marker ("noqa" kind), "ignore" or "file-ignore"
    codes: tuple[str, ...]  # empty: a bare marker without codes (suppresses everything)
    used: bool = False


# ── suppressions ─────────────────────────────────────────────────────────────────────────────

def _suppressions(doc: _Doc, root) -> list[Suppression]:
    out = []
    for node in _walk(root):
        if node.type != "comment":
            continue
        txt = doc.src(node)
        for m in _SUPPRESS.finditer(txt):
            if m.group("kind"):
                kind = m.group("kind").lower()
                codes = tuple(c.strip() for c in m.group("codes").split(",") if c.strip())
            else:
                kind = "noqa"
                codes = tuple(c.strip() for c in (m.group("noqa_codes") or "").split(",")
                              if c.strip())
            out.append(Suppression(node.start_point[0] + 1, doc.start(node), doc.end(node),
                                   kind, codes))
    return out


def _apply_suppressions(diagnostics, findings, suppressions, doc):
    kept, suppressed = [], []
    for d, f in zip(diagnostics, findings):
        file_level = [s for s in suppressions if s.kind == "file-ignore"
                      and any(_matches(c, d.code, d.name) for c in s.codes)]
        if file_level:
            for s in file_level:
                s.used = True
            suppressed.append(d)
            continue
        stmt = _statement(f.node)
        rows = set(range(stmt.start_point[0] + 1, stmt.end_point[0] + 2))
        rows.add(d.location[0])
        rows.add(d.noqa_row)
        hit = None
        for s in suppressions:
            if s.kind == "file-ignore" or s.row not in rows:
                continue
            if (s.kind == "noqa" and not s.codes) or any(_matches(c, d.code, d.name)
                                                         for c in s.codes):
                hit = s
                break
        if hit is not None:
            hit.used = True
            suppressed.append(d)
        else:
            kept.append(d)
    return kept, suppressed
