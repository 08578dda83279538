"""Jupyter notebooks (`.ipynb`), linted like ruff lints them: the code cells joined into one
Python source, cell boundaries kept, IPython's escapes made harmless, findings reported per
cell (`nb.ipynb:cell 3:2:5`), and `--fix` writing back only the sources of the cells it
changed.

The document the engine lints and fixes (`Notebook.document`) is the code cells' sources
one after another, each ended by a newline and followed by a boundary comment line. The
Python the rules read is that document with each IPython escape (`%magic`, `!cmd`, `x = !cmd`,
`obj?`, a non-Python `%%cell` magic) blanked to the same length, so every offset of the
Python is the document's: Python fixes are document edits as they are. The shell escapes
(`!cmd`, `%sx`, `%system`, `%env NAME=VALUE`, `%%bash` / `%%sh` / `%%script bash` cells) go
to the shell rule (DL302), each as its own script (IPython runs each in a new shell), through
`embedded.Region`.

Writing back keeps everything but the changed cells' `source`: outputs, metadata, ids, key
order, indentation, `ensure_ascii`, the trailing newline, and a source stored as a list of
lines or as one string. A notebook whose JSON devlint cannot reproduce byte for byte (written
by hand, unusual spacing) is not rewritten: the fix is reported as not applied.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field

from devlint.sources.embedded import Region, may_concern_shell, shell_findings

BOUNDARY = "#%% devlint cell boundary"
# cell magics whose body is Python run in this kernel, or run by Python
_PY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3"})
_SHELL_CELL_MAGICS = frozenset({"bash", "sh"})
# an escape at the start of a logical line: `!cmd`, `!!cmd`, `%magic`, `%%magic`, `?obj`,
# `??obj`, and the assignment forms `x = !cmd`, `x = %magic`
_ESCAPE = re.compile(r"(?P<indent>[ \t]*)(?P<target>[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*"
                     r"[ \t]*=[ \t]*(?=[!%]))?(?P<esc>!!|!|%%|%|\?\?|\?)")
_HELP_SUFFIX = re.compile(r"[ \t]*[A-Za-z_][\w.]*(?:\(\))?\?\??[ \t]*$")
_MAGIC_NAME = re.compile(r"[A-Za-z_]\w*")
_ENV_PAIR = re.compile(r"(?P<name>[A-Za-z_]\w*)(?:(?P<eq>=)|[ \t]+)(?P<value>\S.*)?$")


class NotebookError(ValueError):
    """The file is not a notebook devlint can read (not JSON, no cells, nbformat < 4)."""


@dataclass
class Notebook:
    """A notebook's JSON, its code cells and how to write it back like it was."""

    text: str
    data: dict
    code_cells: list  # indexes (0-based) into data["cells"] of the code cells
    sources: list  # each code cell's source text
    added_newline: list  # the document added a final newline to this cell's source
    boundary: str
    python: bool = True  # the kernel's language is Python

    @classmethod
    def parse(cls, text: str) -> "Notebook":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise NotebookError(f"not valid JSON: {e}") from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            raise NotebookError("not a Jupyter notebook (no `cells` list; nbformat 4 is read)")
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        lang = ((meta.get("language_info") or {}).get("name")
                or (meta.get("kernelspec") or {}).get("language") or "python")
        code, sources = [], []
        for i, cell in enumerate(data["cells"]):
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                src = cell.get("source", "")
                code.append(i)
                sources.append("".join(src) if isinstance(src, list) else str(src or ""))
        boundary = BOUNDARY
        while any(boundary in s for s in sources):
            boundary += "#"
        return cls(text, data, code, sources, [not s.endswith("\n") for s in sources],
                   boundary, str(lang).lower() in ("python", "python3", "ipython"))

    # -- the document -------------------------------------------------------------------------
    def document(self) -> str:
        return (self.boundary + "\n").join(
            s + "\n" if add else s for s, add in zip(self.sources, self.added_newline))

    def split(self, document: str) -> list[str] | None:
        """The code cells' sources in a (fixed) document, or None when its boundaries are not
        all there any more."""
        parts = document.split("\n" + self.boundary + "\n")
        if len(self.sources) and len(parts) != len(self.sources):
            return None
        out = []
        for k, part in enumerate(parts):
            if k < len(parts) - 1:
                part += "\n"
            if self.added_newline[k] and part.endswith("\n"):
                part = part[:-1]
            out.append(part)
        return out

    def cell_number(self, k: int) -> int:
        """1-based number of the k-th code cell among all cells (what Jupyter shows)."""
        return self.code_cells[k] + 1

    # -- writing back -------------------------------------------------------------------------
    def dumps(self, sources: list[str]) -> str | None:
        """The notebook's JSON with these code-cell sources, formatted as the file was, or
        None when the file's formatting cannot be reproduced."""
        style = _json_style(self.text, self.data)
        if style is None:
            return None
        cells = self.data["cells"]
        changed = False
        for k, new in enumerate(sources):
            if new == self.sources[k]:
                continue
            changed = True
            cell = cells[self.code_cells[k]]
            old = cell.get("source", "")
            cell["source"] = new.splitlines(True) if isinstance(old, list) else new
        if not changed:
            return self.text
        indent, ascii_only, tail = style
        return json.dumps(self.data, indent=indent, ensure_ascii=ascii_only) + tail


def _json_style(text: str, data) -> tuple | None:
    """(indent, ensure_ascii, trailing text) with which json.dumps reproduces `text`."""
    body = text.rstrip("\r\n")
    tail = text[len(body):]
    m = re.match(r"\{\r?\n([ \t]*)", body)
    indents = [m.group(1) if m and m.group(1) else None] if m else [None]
    if m and m.group(1) and set(m.group(1)) == {" "}:
        indents = [len(m.group(1))]
    for indent in indents:
        for ascii_only in (False, True):
            if json.dumps(data, indent=indent, ensure_ascii=ascii_only) == body:
                return indent, ascii_only, tail
    return None


# -- IPython escapes ---------------------------------------------------------------------------

@dataclass
class CellCode:
    """One code cell as the rules read it: `python` (same length as the source, escapes
    blanked) and the shell scripts in it (offsets relative to the cell's source)."""

    python: str
    shells: list = field(default_factory=list)  # [Region] with host offsets in the cell


def _blank(text: str) -> str:
    return re.sub(r"[^\r\n]", " ", text)


def read_cell(source: str) -> CellCode:
    """The Python and the shell scripts of one code cell."""
    first, _, rest = source.partition("\n")
    if first.startswith("%%"):
        return _cell_magic(source, first)
    try:
        ast.parse(source)
        return CellCode(source)  # valid Python: no escape in it (a `!` line cannot parse)
    except (SyntaxError, ValueError):
        pass
    out = []
    shells = []
    offset = 0
    open_region = None  # the escape whose last line ended in a backslash: it goes on
    prev_nl = ""
    for line in source.splitlines(True):
        body = line.rstrip("\r\n")
        nl = line[len(body):]
        m = _ESCAPE.match(body)
        if open_region is not None:
            out.append(_blank(body) + nl)
            if open_region:
                open_region.add(prev_nl + body, offset - len(prev_nl))
            open_region = (open_region if body.endswith("\\") else None)
        elif m and (m.group("esc") in ("!", "!!", "%") or not m.group("target")):
            start = m.start("esc")
            filler = "0".ljust(len(body) - start)
            if m.group("esc") == "%" and not m.group("target"):
                filler = _line_magic_python(body, start) or filler
            out.append(body[:start] + filler + nl)
            region = _shell_escape(body, m.group("esc"), m.end("esc"), offset)
            if region is not None:
                shells.append(region)
            if body.endswith("\\"):
                open_region = region if region is not None else False
        elif body.strip() and _HELP_SUFFIX.match(body):
            out.append(_blank(body) + nl)
        else:
            out.append(line)
        prev_nl = nl
        offset += len(line)
    return CellCode("".join(out), shells)


def _line_magic_python(body: str, start: int) -> str | None:
    """`%time EXPR` / `%timeit EXPR` (no options): the statement after the magic is Python;
    the magic itself becomes `0;` padded to its length."""
    m = re.match(r"%(time|timeit|prun)([ \t]+)(?=[^\s-])", body[start:])
    if not m:
        return None
    head = m.end()
    return ("0;".ljust(head)) + body[start + head:]


def _shell_escape(body: str, esc: str, at: int, offset: int) -> Region | None:
    """The shell script of a `!cmd` / `%sx cmd` / `%system cmd` / `%env NAME=VALUE` line."""
    if esc in ("!", "!!"):
        reg = Region("", where="a notebook `!` line")
        reg.add(body[at:], offset + at)
        return reg
    if esc != "%":
        return None
    m = _MAGIC_NAME.match(body, at)
    if not m:
        return None
    name = m.group(0)
    args_at = m.end()
    while args_at < len(body) and body[args_at] in " \t":
        args_at += 1
    if name in ("sx", "system"):
        reg = Region("", where=f"a notebook `%{name}` line")
        reg.add(body[args_at:], offset + args_at)
        return reg
    if name in ("env", "set_env"):
        pair = _ENV_PAIR.match(body, args_at)
        if not pair or pair.group("value") is None:
            return None
        # IPython sets the variable in the kernel's environment: `export NAME=VALUE` says so
        reg = Region("", where=f"a notebook `%{name}` line")
        reg.synthetic("export ")
        reg.add(pair.group("name"), offset + pair.start("name"))
        if pair.group("eq"):
            reg.add("=" + pair.group("value"), offset + pair.start("eq"))
        else:
            reg.synthetic("=")
            reg.add(pair.group("value"), offset + pair.start("value"))
        return reg
    return None


def _cell_magic(source: str, first: str) -> CellCode:
    words = first[2:].split()
    name = words[0] if words else ""
    body_at = len(first) + 1 if len(source) > len(first) else len(first)
    head_blank = _blank(source[:body_at])
    body = source[body_at:]
    script = (name in _SHELL_CELL_MAGICS
              or name == "script" and len(words) > 1 and words[1].rsplit("/", 1)[-1] in (
                  "bash", "sh")
              or name == "writefile" and words[-1].endswith((".sh", ".bash")))
    if script:
        reg = Region("", indent="", where=f"a `%%{name}` cell")
        reg.add(body, body_at)
        return CellCode(_blank(source), [reg])
    python = name in _PY_CELL_MAGICS or name == "writefile" and words[-1].endswith(".py")
    if python:
        return CellCode(head_blank + body)
    return CellCode(_blank(source))


# -- linting -------------------------------------------------------------------------------------

def lint_document(nb: Notebook, document: str, path: str, settings, codes=None):
    """Diagnostics of a notebook document (offsets into it; rows and columns relative to each
    cell, `Diagnostic.cell` its number)."""
    from devlint.engine.linter import lint_text, syntax_error_diagnostic
    from devlint.source import Locator

    cells = nb.split(document)
    if cells is None:
        return []
    starts, pos = [], 0
    for k, src in enumerate(cells):
        starts.append(pos)
        pos += len(src) + (1 if nb.added_newline[k] else 0) + len(nb.boundary) + 1
    read = [read_cell(src) for src in cells]
    python = (nb.boundary + "\n").join(
        c.python + "\n" if add else c.python for c, add in zip(read, nb.added_newline))
    diags = []
    if nb.python:
        # a cell that does not parse is reported and left out, so the others are still linted
        broken: list = []
        for _ in range(len(cells) + 1):
            try:
                ast.parse(python)
                break
            except (SyntaxError, ValueError) as e:
                err = e if isinstance(e, SyntaxError) else SyntaxError(str(e))
                row = err.lineno or 1
                offset = Locator(python).line_start(row)
                k = max(0, next((i for i in range(len(starts)) if starts[i] > offset),
                                len(starts)) - 1)
                if k in broken:
                    break
                broken.append(k)
                diags.append(syntax_error_diagnostic(path, python, err))
                end = starts[k] + len(read[k].python)
                python = python[:starts[k]] + _blank(python[starts[k]:end]) + python[end:]
        diags += lint_text(path, python, settings, codes)
    if "DL302" in (codes or ()) or codes is None:
        for k, c in enumerate(read):
            for reg in c.shells:
                if may_concern_shell(reg.text):
                    _shift(reg, starts[k])
                    diags += shell_findings(reg, path, settings)
    locate_in_cells(nb, document, diags, starts)
    diags.sort(key=lambda d: (d.start, d.code))
    from devlint.rules.registry import drop_unfixable

    return drop_unfixable(diags, settings)


def _shift(reg: Region, by: int) -> None:
    reg.pieces = [(s, e, h + by) for s, e, h in reg.pieces]


def locate_in_cells(nb: Notebook, document: str, diags, starts) -> None:
    """Rows and columns relative to each diagnostic's cell; `cell` its number."""
    import bisect

    from devlint.source import Locator

    loc = Locator(document)
    first_rows = [loc.rowcol(s)[0] for s in starts]

    def where(offset):
        row, col = loc.rowcol(offset)
        k = max(0, bisect.bisect_right(first_rows, row) - 1)
        return k, (row - first_rows[k] + 1, col)

    for d in diags:
        k, d.location = where(d.start)
        d.cell = nb.cell_number(k)
        ek, d.end_location = where(d.end)
        if ek != k:
            d.end_location = d.location
        if d.noqa_row is not None and d.code != "DL999":
            d.noqa_row = d.noqa_row - first_rows[k] + 1 if d.noqa_row >= first_rows[k] \
                else d.location[0]
        else:
            d.noqa_row = d.location[0]
        if d.fix is not None:
            d.edit_locations = [(where(e.start)[1], where(e.end)[1]) for e in d.fix.edits]


def validate_document(nb: Notebook, document: str, path: str, broken_before: int) -> str | None:
    """None when a fixed document still splits into the notebook's cells, its Python parses
    (cells that did not parse before aside) and its shell scripts are accepted by the shell."""
    cells = nb.split(document)
    if cells is None:
        return "a fix crossed a cell boundary"
    read = [read_cell(src) for src in cells]
    bad = 0
    for c in read:
        try:
            ast.parse(c.python)
        except (SyntaxError, ValueError):
            bad += 1
    if nb.python and bad > broken_before:
        return "a fixed cell does not parse"
    from devlint.shell import validate_shell

    for c in read:
        for reg in c.shells:
            if reg.indent is not None:  # a script cell; one-line escapes are never edited
                err = validate_shell(reg.text, path)
                if err:
                    return err
    return None


def broken_cells(nb: Notebook) -> int:
    n = 0
    for src in nb.sources:
        try:
            ast.parse(read_cell(src).python)
        except (SyntaxError, ValueError):
            n += 1
    return n
