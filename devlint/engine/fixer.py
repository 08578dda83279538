"""Fix application: non-overlapping edits, re-lint until stable, re-parse, revert what breaks."""
from __future__ import annotations

from dataclasses import dataclass, field

from devlint.diagnostics import Applicability

MAX_ROUNDS = 100


@dataclass
class FixOutcome:
    text: str
    applied: int = 0
    rounds: int = 0
    failures: list = field(default_factory=list)  # (diagnostic, reason) of reverted fixes
    converged: bool = True


def applicable(d, unsafe: bool) -> bool:
    if d.fix is None:
        return False
    a = d.fix.applicability
    return a is Applicability.SAFE or (unsafe and a is Applicability.UNSAFE)


def apply_edits(text: str, edits) -> str:
    out = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        out.append(text[pos:e.start])
        out.append(e.content)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)


def _overlaps(edit, taken) -> bool:
    for s, e in taken:
        if edit.start == edit.end == s == e:
            return True  # two different insertions at one point: order would be arbitrary
        if edit.start < e and s < edit.end:
            return True
        if edit.start == edit.end and s < edit.start < e:
            return True
        if s == e and edit.start < s < edit.end:
            return True
    return False


def _select(diags, unsafe: bool):
    """Groups of edits (one per diagnostic) that do not overlap; identical edits are shared."""
    groups = []
    taken: list = []
    seen = set()
    for d in sorted((d for d in diags if applicable(d, unsafe)), key=lambda d: d.start):
        new = [e for e in d.fix.edits if e not in seen]
        if any(_overlaps(e, taken) for e in new):
            continue
        groups.append((d, new))
        for e in new:
            seen.add(e)
            taken.append((e.start, e.end))
    return groups


def _key(text, d):
    return (d.code, text[d.start:d.end], tuple(e.content for e in d.fix.edits) if d.fix else ())


def fix_text(text: str, lint, validate, unsafe: bool) -> FixOutcome:
    """`lint(text)` -> diagnostics; `validate(text)` -> None or an error string."""
    out = FixOutcome(text)
    failed = set()
    for _ in range(MAX_ROUNDS):
        diags = [d for d in lint(out.text) if _key(out.text, d) not in failed]
        groups = _select(diags, unsafe)
        if not groups:
            return out
        out.rounds += 1
        candidate = apply_edits(out.text, [e for _, g in groups for e in g])
        if validate(candidate) is None:
            out.text = candidate
            out.applied += len(groups)
            continue
        # some fix breaks the code: keep the groups that leave valid code, revert the others
        kept = []
        for d, g in groups:
            err = validate(apply_edits(out.text, [e for _, gg in kept for e in gg] + g))
            if err is None:
                kept.append((d, g))
            else:
                out.failures.append((d, err))
                failed.add(_key(out.text, d))
        if kept:
            out.text = apply_edits(out.text, [e for _, g in kept for e in g])
            out.applied += len(kept)
    out.converged = False
    return out
