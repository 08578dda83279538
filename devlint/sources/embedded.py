"""Shell code embedded in another file (a notebook's `!` line, a workflow's `run:`, a
Dockerfile's `RUN`): a `Region` is the script as the shell sees it plus the map from its
offsets to the host file's, so that DL302 runs on the script unchanged and its findings and
edits land on the host file.

An edit is moved onto the host only where the result stays what the shell would read: both
ends in mapped text, and a new line only where the host holds the script line by line (a
YAML block scalar, whose lines all carry its indentation; a notebook's `%%bash` cell). Any
other fix is shown, display-only, with the reason (a one-line `run:` cannot hold DL302's
selector block)."""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace

from devlint.diagnostics import Applicability, Diagnostic, Edit, Fix


@dataclass
class Outcome:
    diagnostics: list = field(default_factory=list)
    new_text: str | None = None  # the fixed file, when a fix changed it
    applied: int = 0
    failures: list = field(default_factory=list)  # (code, message) of fixes not applied
    diff: str | None = None


def fix_outcome(text: str, lint, validate, unsafe: bool) -> Outcome:
    """--fix over a host file's embedded scripts: fixes applied and re-linted until nothing
    changes, each result checked by `validate(new_text)` (an error string reverts it)."""
    from devlint.engine.fixer import fix_text

    fixed = fix_text(text, lint, validate, unsafe)
    out = Outcome(failures=[(d.code, f"{d.message}: fix reverted ({err})")
                            for d, err in fixed.failures])
    if fixed.text != text:
        out.new_text, out.applied = fixed.text, fixed.applied
    out.diagnostics = lint(fixed.text)
    return out


@dataclass
class Region:
    """text: the shell script. pieces: (start, end, host_start) runs where
    text[start:end] == host[host_start:host_start + end - start], in order. indent: None when
    an edit may not add a line here, else what every new line starts with in the host.
    where: the place, for the message of a fix that is not applied ("a one-line `run:`")."""

    text: str
    pieces: list = field(default_factory=list)
    indent: str | None = None
    where: str = "this place"
    # the script is a one-line YAML scalar: "plain", "'" or '"' (what an edit may not write)
    quote: str | None = None
    # the host does not hold the script verbatim: every finding points here, nothing is edited
    anchor: int | None = None
    # {placeholder: original} of the host's own expressions the shell never sees as written
    # (`${{ matrix.gpu }}`: GitHub replaces it before the shell runs)
    masked: dict = field(default_factory=dict)
    # what to do instead, for a fix that is not applied here
    advice: str = "write the command as a script or a block"

    def add(self, piece_text: str, host_start: int) -> None:
        start = len(self.text)
        self.text += piece_text
        self.pieces.append((start, len(self.text), host_start))

    def synthetic(self, text: str) -> None:
        """Text the shell reads that the host does not hold (`export ` before `%env`'s pair)."""
        self.text += text

    def mask(self, pattern) -> None:
        """Replace each match of `pattern` (a compiled regex) in the script by a plain word of
        the same length, so the shell parser reads it as the value it will be; edits get the
        original text back."""
        def word(m):
            original = m.group(0)
            tag = f"__DLX{len(self.masked)}"
            if len(tag) + 1 > len(original):
                return original
            placeholder = tag.ljust(len(original), "_")
            self.masked[placeholder] = original
            return placeholder

        self.text = pattern.sub(word, self.text)

    def _piece(self, v: int, prefer_next: bool = True):
        starts = [p[0] for p in self.pieces]
        i = bisect.bisect_right(starts, v) - 1
        if i < 0:
            return None
        if prefer_next is False and i > 0 and self.pieces[i][0] == v \
                and self.pieces[i - 1][1] == v:
            i -= 1
        s, e, _ = self.pieces[i]
        if s <= v <= e:
            return i
        return None

    def host(self, v: int) -> int | None:
        if self.anchor is not None:
            return self.anchor
        i = self._piece(v)
        if i is None:
            return None
        s, _, h = self.pieces[i]
        return h + v - s

    def host_edit(self, edit: Edit) -> Edit | None:
        """The edit on the host's text, or None where it cannot be made there."""
        if self.anchor is not None or not self._quoting_allows(edit):
            return None
        i, j = self._piece(edit.start), self._piece(edit.end)
        if i is None or j is None:
            return None
        if i != j:
            if self.indent is None:
                return None
            # consecutive lines of one block: the host text between them is indentation only
            if any(self.pieces[k][1] != self.pieces[k + 1][0] for k in range(i, j)):
                return None
        content = edit.content
        for placeholder, original in self.masked.items():
            content = content.replace(placeholder, original)
        if "\n" in content or "\r" in content:
            if self.indent is None:
                return None
            at_end = edit.end == self.pieces[-1][1]
            lines = content.split("\n")
            out = [lines[0]]
            for k, line in enumerate(lines[1:], 1):
                last = k == len(lines) - 1
                blank = line == "" and not last
                pad = "" if blank or (last and line == "" and at_end) else self.indent
                out.append(pad + line)
            content = "\n".join(out)
        return Edit(self.host(edit.start), self.host(edit.end), content)


    def _quoting_allows(self, edit: Edit) -> bool:
        """Whether a one-line YAML scalar still reads as the same kind of scalar, with the
        edit's text as its value, after the edit."""
        c = edit.content
        if self.quote is None:
            return True
        if "\n" in c or "\r" in c:
            return False
        if self.quote == "'":
            return "'" not in c
        if self.quote == '"':
            return '"' not in c and "\\" not in c
        first = self.pieces[0][0] if self.pieces else 0
        last = self.pieces[-1][1] if self.pieces else 0
        new = self.text[:edit.start] + c + self.text[edit.end:]
        return not (": " in c or " #" in c or c.endswith(":") or new[:1] in _PLAIN_START
                    or new != new.strip() or edit.start < first or edit.end > last)


_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`")


def shell_findings(region: Region, path: str, settings) -> list:
    """DL302's diagnostics of one region, on the host's offsets (rows and columns are set by
    the caller, from the host's text). A fix whose edits cannot all be made on the host
    becomes display-only, saying why."""
    from devlint.shell import lint_shell, options_from_settings

    out = []
    for d in lint_shell(region.text, path, options_from_settings(settings)):
        if d.code != "DL302":
            # DL303 reads shell script files only: a CI job or image's command line runs
            # on the machine the file itself chooses (often a CUDA runner on purpose)
            continue
        start, end = region.host(d.start), region.host(d.end)
        if start is None or end is None:
            continue  # the finding is in text the host does not hold (cannot happen for DL302)
        fix = d.fix
        if fix is not None:
            edits = [region.host_edit(e) for e in fix.edits]
            if any(e is None for e in edits):
                fix = Fix(Applicability.DISPLAY_ONLY,
                          f"{fix.message} (not applied in {region.where}: the fix needs lines "
                          f"of its own there; {region.advice})", ())
            else:
                fix = replace(fix, edits=tuple(edits))
        out.append(Diagnostic(d.code, d.name, d.message, path, start, end, fix))
    return out


def may_concern_shell(text: str) -> bool:
    """Cheap: can DL302 find anything in this text (a visibility variable is named)?"""
    from devlint.shell.table import visibility_table

    return any(name in text for name in visibility_table().flagged) or "VISIBLE" in text
