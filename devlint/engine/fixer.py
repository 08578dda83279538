"""Fix application: non-overlapping edits, re-lint until stable, re-parse, revert what breaks."""
from __future__ import annotations

import bisect
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
    # spans of `text` that hold every change from the input (a superset; an empty span where
    # text was only removed)
    changed: list = field(default_factory=list)


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


def changed_spans(edits, spans=()) -> list:
    """After `apply_edits(text, edits)`: the spans of the new text the edits wrote, and
    `spans` (of the old text) carried over the edits (widened to the edit's new span where
    one ends inside an edit)."""
    edits = sorted(edits, key=lambda e: (e.start, e.end))
    ends, moved, out, delta = [], [], [], 0
    for e in edits:
        out.append((e.start + delta, e.start + delta + len(e.content)))
        delta += len(e.content) - (e.end - e.start)
        ends.append(e.end)
        moved.append(delta)

    def new_pos(pos: int, right: bool) -> int:
        i = bisect.bisect_right(ends, pos)  # edits ending at or before pos
        p = pos + (moved[i - 1] if i else 0)
        if i < len(edits) and edits[i].start < pos:  # inside edit i: its new span's side
            p = out[i][1] if right else out[i][0]
        return p

    out += [(new_pos(a, False), new_pos(b, True)) for a, b in spans]
    return out


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


class _Taken:
    """The spans of the edits taken so far, sorted, for `_overlaps` against the few that can
    touch a new edit (bisecting, not scanning them all: a large generated file has tens of
    thousands). Taken spans never overlap, so sorted by start their ends do not decrease
    either; should one diagnostic's own edits break that, every later test scans them all."""

    def __init__(self):
        self.spans: list = []
        self.ordered = True

    def overlaps(self, edit) -> bool:
        spans = self.spans
        if not self.ordered:
            return _overlaps(edit, spans)
        a, b = edit.start, edit.end
        i = bisect.bisect_left(spans, (a, a))
        j = i - 1  # before i every start is < a: those ending at or after a, a run just before i
        while j >= 0 and spans[j][1] >= a:
            if _overlaps(edit, (spans[j],)):
                return True
            j -= 1
        k = i  # from i every start is >= a: those starting at or before b, a run from i
        while k < len(spans) and spans[k][0] <= b:
            if _overlaps(edit, (spans[k],)):
                return True
            k += 1
        return False

    def add(self, start: int, end: int) -> None:
        spans = self.spans
        i = bisect.bisect_right(spans, (start, end))
        spans.insert(i, (start, end))
        if (i and spans[i - 1][1] > end) or (i + 1 < len(spans) and spans[i + 1][1] < end):
            self.ordered = False


def _select(diags, unsafe: bool):
    """Groups of edits (one per diagnostic) that do not overlap; identical edits are shared."""
    groups = []
    taken = _Taken()
    seen = set()
    for d in sorted((d for d in diags if applicable(d, unsafe)), key=lambda d: d.start):
        new = [e for e in d.fix.edits if e not in seen]
        if any(taken.overlaps(e) for e in new):
            continue
        groups.append((d, new))
        for e in new:
            seen.add(e)
            taken.add(e.start, e.end)
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
        edits = [e for _, g in groups for e in g]
        candidate = apply_edits(out.text, edits)
        if validate(candidate) is None:
            out.text = candidate
            out.applied += len(groups)
            out.changed = changed_spans(edits, out.changed)
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
            edits = [e for _, g in kept for e in g]
            out.text = apply_edits(out.text, edits)
            out.applied += len(kept)
            out.changed = changed_spans(edits, out.changed)
    out.converged = False
    return out
