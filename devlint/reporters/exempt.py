"""What devlint chose not to report (`--show-exempt`): the section the text formats print
after the findings, the JSON objects, and the summary line counting files skipped as
CUDA-only (printed with or without the flag: nothing is skipped silently)."""
from __future__ import annotations

from devlint.diagnostics import ALL_RULES
from devlint.reporters import relative_path

RULES_TEXT = {ALL_RULES: "whole file not reported"}
API_TEXT = "torch.cuda API rules (DL2xx-DL5xx) not reported in this file"


def evidence(e) -> str | None:
    """Where the evidence stands, relative to the current directory like the findings."""
    path = e.path if e.evidence_path == "" else e.evidence_path
    if path is None:
        return None
    path = path if path == e.path else relative_path(path)
    return f"{path}:{e.evidence_line}" if e.evidence_line else path


def sorted_entries(entries) -> list:
    return sorted(entries, key=lambda e: (e.path, not e.whole_file, e.location, e.code or ""))


def line(e) -> str:
    where = evidence(e)
    own = f"{e.path}:{e.location[0]}"  # the candidate's own line: no need to repeat it
    tail = f" ({where})" if where and where not in (e.path, own) and where not in e.reason \
        else ""
    if e.whole_file:
        rules = RULES_TEXT.get(e.rules, API_TEXT)
        return f"{e.path}: {rules} [{e.principle}] {e.reason}{tail}\n"
    row, col = e.location
    return f"{e.path}:{row}:{col}: {e.code} [{e.principle}] {e.reason}{tail}\n"


def write_section(out, ctx, excerpt=None) -> None:
    """The exempt section of the text formats; `excerpt(e)` adds lines under each entry."""
    if ctx.exempt is None:
        return
    entries = sorted_entries(ctx.exempt)
    out.write(f"\nNot reported ({len(entries)}: principle, then reason and evidence):\n"
              if entries else "\nNot reported: nothing.\n")
    for e in entries:
        out.write(line(e))
        if excerpt is not None and not e.whole_file:
            excerpt(e)


def skipped_counts(entries) -> tuple[int, int]:
    """(files skipped as CUDA-only, files whose torch.cuda API rules are skipped as
    CUDA-alike) among `entries`."""
    whole = {e.path for e in entries if e.whole_file and e.rules == ALL_RULES}
    alike = {e.path for e in entries if e.whole_file and e.rules != ALL_RULES} - whole
    return len(whole), len(alike)


def write_summary(out, ctx) -> None:
    """`N files skipped as CUDA-only: see --show-exempt` (and the CUDA-alike ones)."""
    if ctx.quiet:
        return
    only, alike = ctx.skipped
    where = "listed above" if ctx.exempt is not None else "see --show-exempt"
    if only:
        out.write(f"{only} file{'s' if only != 1 else ''} skipped as CUDA-only: {where}.\n")
    if alike:
        out.write(f"{alike} file{'s' if alike != 1 else ''} skipped by the torch.cuda API "
                  f"rules as CUDA-alike (ROCm): {where}.\n")
    n = sum(1 for e in ctx.exempt if not e.whole_file) if ctx.exempt is not None else 0
    if n:
        out.write(f"{n} candidate{'s' if n != 1 else ''} not reported: listed above.\n")


def exempt_dict(e) -> dict:
    """One exempt entry in JSON (`--show-exempt --output-format json`)."""
    loc = None if e.whole_file else {"row": e.location[0], "column": e.location[1]}
    end = None if e.whole_file else {"row": e.end_location[0], "column": e.end_location[1]}
    return {
        "code": e.code,
        "name": e.name or None,
        "filename": e.path,
        "location": loc,
        "end_location": end,
        "rules": None if not e.whole_file else ("ALL" if e.rules == ALL_RULES
                                                 else e.rules.split(",")),
        "principle": e.principle,
        "message": e.reason,
        "evidence": evidence(e),
    }
