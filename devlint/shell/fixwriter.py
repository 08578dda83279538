"""The fix writer: the edits DL302's fixes are made of (the selector block, `env` prefixes,
quoting inside double-quoted and eval'd strings). A mixin of the visibility analysis, whose
state (the document, the chosen visibility variable) the edits read."""
from __future__ import annotations


from devlint.diagnostics import Edit
from devlint.shell.parse import _command_name_text, _DQ_SAFE_WORD, _indent_unit, _PLAIN_WORD
from devlint.source import newline_of


class _FixWriter:
    """The edits of DL302's fixes; mixed into `visibility._Analysis` (reads its `doc`, `opt`,
    `vis` and `table`)."""

    def selector_edit(self) -> Edit:
        doc, text = self.doc, self.doc.text
        nl = newline_of(text)
        indent = _indent_unit(text)
        dt = self.opt.device_type_var
        v = self.opt.visibility_var
        lines = [f"# The variable that selects visible devices, from {dt} (devlint DL302)."]
        lines.append(f'case "${{{dt}:-{self.table.default}}}" in')
        for dtype, env in self.table.devices:
            if dtype != self.table.default:
                lines.append(f"{indent}{dtype}) {v}={env} ;;")
        lines.append(f"{indent}*) {v}={self.table.default_env()} ;;")
        lines.append("esac")
        block = nl.join(lines)
        header_end = self._header_end()
        loc = doc.locator
        if header_end is None:
            first_blank = loc.line_count >= 1 and loc.line(1).strip() == ""
            return Edit(0, 0, block + nl + ("" if first_blank else nl))
        row = loc.rowcol(header_end)[0]
        next_blank = row + 1 <= loc.line_count and loc.line(row + 1).strip() == "" and \
            loc.line_end(row) < len(text)
        offset = loc.line_end(row)
        return Edit(offset, offset, nl + nl + block + ("" if next_blank else nl))

    def _header_end(self) -> int | None:
        """Offset inside the last line of the leading shebang / comment / `set` block after
        which the selector goes; None: at the top of the file."""
        doc, loc = self.doc, self.doc.locator
        candidates = []  # header nodes the block may follow
        first_other = None
        for i, n in enumerate(self.root.children):
            if n.type == "comment":
                txt = doc.src(n)
                row_end = n.end_point[0] + 1
                nxt_blank = row_end + 1 > loc.line_count or loc.line(row_end + 1).strip() == ""
                if (i == 0 and txt.startswith("#!")) or nxt_blank:
                    candidates.append(n)
            elif n.type == "command" and _command_name_text(doc, n) in ("set", "shopt"):
                candidates.append(n)
            else:
                first_other = n
                break
        # the block goes at the end of a line: never after a statement sharing that line
        # (`set -e; CUDA_VISIBLE_DEVICES=0 cmd`)
        while candidates and first_other is not None and \
                candidates[-1].end_point[0] >= first_other.start_point[0]:
            candidates.pop()
        last = candidates[-1] if candidates else None
        return None if last is None else doc.start(last)

    def _delete_sibling(self, node) -> Edit:
        doc = self.doc
        nxt = node.next_sibling
        if nxt is not None:
            return Edit(doc.start(node), doc.start(nxt), "")
        prv = node.prev_sibling
        return Edit(doc.end(prv) if prv is not None else doc.start(node), doc.end(node), "")

    def _arg_safe(self, assign) -> bool:
        """A prefix assignment that means the same as an argument of `env`."""
        if any(c.type == "+=" for c in assign.children):
            return False
        value = assign.child_by_field_name("value")
        return value is None or self._quoted_or_plain(value)

    def _quoted_or_plain(self, node) -> bool:
        t = node.type
        if t in ("string", "raw_string", "ansi_c_string"):
            return True
        if t in ("word", "number"):
            return bool(_PLAIN_WORD.fullmatch(self.doc.src(node)))
        if t == "concatenation":
            return all(self._quoted_or_plain(c) for c in node.children)
        return False

    def _dq_inner(self, node, assignment: bool) -> str | None:
        """Text that, inside double quotes, means what `node` means unquoted (as an assignment
        value when `assignment`, else as a command argument); None when there is none."""
        doc = self.doc
        t = node.type
        src = doc.src(node)
        if t in ("word", "number"):
            if src.startswith("~"):
                return None
            if assignment:
                return src if _DQ_SAFE_WORD.fullmatch(src) else None
            return src if _PLAIN_WORD.fullmatch(src) else None
        if t == "string":
            return src[1:-1]
        if t == "raw_string":
            inner = src[1:-1]
            return inner if _DQ_SAFE_WORD.fullmatch(inner) else None
        if t in ("simple_expansion", "expansion", "arithmetic_expansion") or (
                t == "command_substitution" and src.startswith("$(")):
            return src if assignment else None  # unquoted in an argument: split and globbed
        if t == "concatenation":
            parts = [self._dq_inner(c, assignment) for c in node.children]
            return None if any(p is None for p in parts) else "".join(parts)
        return None

    def _env_pair(self, value, assignment: bool) -> tuple[str, bool]:
        """`"$V=<value>"` and whether it is exactly equivalent."""
        if value is None:
            return f'"${self.vis_ph}="', True
        inner = self._dq_inner(value, assignment)
        if inner is not None:
            return f'"${self.vis_ph}={inner}"', True
        # keep the value's own quoting: equal unless word splitting/globbing would apply
        return f'"${self.vis_ph}="' + self.doc.src(value), not assignment
