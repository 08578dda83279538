"""A DL302 finding, and how it becomes a diagnostic (message, fix, applicability, noqa row):
a mixin of the visibility analysis."""
from __future__ import annotations

from dataclasses import dataclass

from devlint.diagnostics import Applicability, Diagnostic, Edit, Fix
from devlint.shell.parse import _ancestors, _statement
from devlint.shell.table import CODE, NAME


@dataclass
class _Finding:
    name_start: int  # offsets of the variable name (the diagnostic's range)
    name_end: int
    var: str
    context: str  # prefix | declaration | unset | assignment | read | env | eval | other
    message: str
    node: object  # the tree node the finding is in (for statement rows)
    edits: list[Edit] | None  # per-use edits; None: no fix
    exact: bool = True  # the rewrite keeps the behaviour exactly (else the fix is unsafe)
    needs_env_fork: bool = False  # rewrite runs the command through `env`
    fix_note: str = ""
    command_name: str | None = None


class _Diagnostics:
    """Findings to diagnostics; mixed into `visibility._Analysis`."""

    def build_diagnostics(self, findings: list[_Finding], path: str) -> list[Diagnostic]:
        if not findings:
            return []
        need_block = self.choose_selector(min(f.name_start for f in findings))
        block = self.selector_edit() if need_block and any(f.edits for f in findings) else None
        loc = self.doc.locator
        out = []
        for f in findings:
            fix = None
            if f.edits is not None:
                edits = [Edit(ed.start, ed.end, ed.content.replace(self.vis_ph, self.vis))
                         for ed in f.edits]
                if block is not None:
                    edits.insert(0, block)
                safe = f.exact and not (need_block and self.device_type_assigned) and not (
                    need_block and self.visibility_var_clash) and not (
                    f.needs_env_fork and self.sources_files)
                fix = Fix(Applicability.SAFE if safe else Applicability.UNSAFE,
                          self._fix_message(f), tuple(edits))
            message = f.message + self._why(f)
            d = Diagnostic(CODE, NAME, message, path, f.name_start, f.name_end, fix)
            d.location = loc.rowcol(f.name_start)
            d.end_location = loc.rowcol(f.name_end)
            d.noqa_row = self._noqa_row(f)
            if fix is not None:
                d.edit_locations = [(loc.rowcol(ed.start), loc.rowcol(ed.end)) for ed in fix.edits]
            out.append(d)
        return out

    def _why(self, f: _Finding) -> str:
        if f.var == "HIP_VISIBLE_DEVICES":
            tail = "; only AMD ROCm honours it"
        else:
            tail = "; Intel XPU, Ascend NPU and other devices ignore it"
        if f.edits is None and f.fix_note:
            tail += f" (no automatic fix: {f.fix_note})"
        return tail

    def _fix_message(self, f: _Finding) -> str:
        v = self.vis
        dt = self.opt.device_type_var
        how = {
            "prefix": f'use `env "${v}=..."`',
            "env": f'pass `"${v}=..."` to `env`',
            "declaration": f'use `"${v}=..."`',
            "unset": f'unset `"${v}"`',
            "assignment": f'assign through `eval "${v}=..."`',
            "read": f"read `${{!{v}}}`",
            "eval": f"put `${v}` into the string",
            "option": f"name `${v}` in the option",
        }.get(f.context, f"use `${v}`")
        return f"Choose the visibility variable from `${dt}` and {how}"

    def _noqa_row(self, f: _Finding) -> int:
        loc = self.doc.locator
        row = loc.rowcol(f.name_start)[0]
        stmt = _statement(f.node)
        end_row = stmt.end_point[0] + 1
        line = loc.line(row).rstrip()
        in_multiline = any(a.type in ("string", "raw_string", "heredoc_body", "heredoc_redirect")
                           and a.end_point[0] + 1 > row for a in [f.node, *_ancestors(f.node)])
        if line.endswith("\\") or in_multiline:
            return end_row
        return row
