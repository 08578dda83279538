"""The shell rules' driver: parse a shell script, run the visibility analysis (DL302) and the
device-option check (DL303), apply suppressions; and the fix loop (`fix_text`).

Imported lazily by devlint.shell (it imports tree_sitter, through `parse`, at module level).
Modules: `parse`, `visibility` (the analysis) with `fixwriter` (its edits), `device_option`,
`suppress`, `table`."""
from __future__ import annotations

from dataclasses import dataclass, field

from devlint.diagnostics import Applicability, Diagnostic, Edit, Fix
from devlint.shell.device_option import device_options, diagnostics as option_diagnostics
from devlint.shell.options import detect_dialect, ShellOptions
from devlint.shell.parse import _dialect_from_tree, _Doc, _parse
from devlint.shell.suppress import _apply_suppressions, Suppression, _suppressions
from devlint.shell.table import visibility_table
from devlint.shell.visibility import _Analysis


@dataclass
class ShellResult:
    diagnostics: list[Diagnostic]
    suppressed: list[Diagnostic] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    dialect: str = "bash"


# ── analysis ────────────────────────────────────────────────────────────────────────────────

def analyze(text: str, path: str, options: ShellOptions) -> ShellResult:
    doc = _Doc(text)
    tree = _parse(doc.data)
    dialect = options.dialect if options.dialect != "auto" else (
        detect_dialect(text, path) or _dialect_from_tree(tree.root_node, doc))
    table = visibility_table()
    analysis = _Analysis(doc, tree.root_node, options, dialect, table)
    findings = analysis.run()
    diagnostics = analysis.build_diagnostics(findings, path)
    options_found = device_options(doc, tree.root_node)  # DL303
    pairs = sorted(zip([*diagnostics, *option_diagnostics(doc, options_found, path)],
                       [*findings, *options_found]), key=lambda p: (p[0].start, p[0].code))
    diagnostics = [d for d, _ in pairs]
    findings = [f for _, f in pairs]
    suppressions = _suppressions(doc, tree.root_node)
    kept, suppressed = _apply_suppressions(diagnostics, findings, suppressions, doc)
    return ShellResult(kept, suppressed, suppressions, dialect)


# ── applying fixes (the engine does this for real; used by tests and golden generation) ──────

def apply_edits(text: str, fixes: list[Fix]) -> str:
    """Apply fixes whose edits do not overlap those already taken (identical edits shared)."""
    taken: list[Edit] = []
    seen: set[Edit] = set()
    for fix in sorted(fixes, key=lambda fx: min((e.start, e.end) for e in fx.edits)):
        new = [e for e in fix.edits if e not in seen]
        if any(e.start < t.end and t.start < e.end or (e.start == e.end == t.start == t.end)
               for e in new for t in taken):
            continue
        taken.extend(new)
        seen.update(new)
    out = text
    for e in sorted(taken, key=lambda e: (e.start, e.end), reverse=True):
        out = out[:e.start] + e.content + out[e.end:]
    return out


def fix_text(text: str, path: str, options: ShellOptions, *, unsafe: bool = False,
             max_rounds: int = 100) -> str:
    for _ in range(max_rounds):
        diags = analyze(text, path, options).diagnostics
        fixes = [d.fix for d in diags if d.fix is not None and (
            d.fix.applicability is Applicability.SAFE
            or (unsafe and d.fix.applicability is Applicability.UNSAFE))]
        if not fixes:
            return text
        new = apply_edits(text, fixes)
        if new == text:
            return text
        text = new
    return text
