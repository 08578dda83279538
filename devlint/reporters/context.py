"""What a reporter may ask about a run besides the diagnostics: the source lines they point
into, the fix previews, and the options that shape the summary."""
from __future__ import annotations


PREVIEW_CONTEXT = 1  # unchanged lines shown around a fix


class ReportContext:
    def __init__(self, unsafe: bool = False, quiet: bool = False, fixed: int = 0,
                 diff_mode: bool = False, texts: dict | None = None, failed: bool = False,
                 exempt: list | None = None, skipped: tuple = (0, 0)):
        # --show-exempt: what was not reported (devlint.diagnostics.Exempt), else None
        self.exempt = exempt
        # (files skipped as CUDA-only, files skipped as CUDA-alike by the API rules)
        self.skipped = skipped
        self.unsafe = unsafe
        self.quiet = quiet
        self.fixed = fixed  # fixes applied in this run
        self.diff_mode = diff_mode
        self.failed = failed  # the run failed (exit 2): nothing "passed"
        self._texts = texts or {}  # path -> text for sources that are not files (stdin)
        self._lines: dict = {}

    def source_text(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            from devlint.source import SourceFile

            try:
                with open(path, "rb") as f:
                    # lenient: a line around a finding is shown whatever the file's bytes
                    text = SourceFile.from_bytes(f.read(), lenient=True).text
            except (OSError, UnicodeDecodeError, LookupError, ValueError):
                text = ""
            self._texts[path] = text
        return text

    def cell_text(self, path: str, cell: int) -> str:
        """The source of a notebook's cell (1-based among all cells), or ""."""
        from devlint.sources.notebook import Notebook, NotebookError

        try:
            nb = Notebook.parse(self.source_text(path))
        except NotebookError:
            return ""
        for k, i in enumerate(nb.code_cells):
            if i + 1 == cell:
                return nb.sources[k]
        return ""

    def source_lines(self, path: str, cell: int | None = None) -> list[str]:
        key = path if cell is None else (path, cell)
        if key not in self._lines:
            from devlint.source import Locator

            text = self.source_text(path) if cell is None else self.cell_text(path, cell)
            loc = Locator(text)
            lines = [loc.line(r) for r in range(1, loc.line_count + 1)]
            if len(lines) > 1 and lines[-1] == "":
                lines.pop()  # the "line" after the final newline
            self._lines[key] = lines
        return self._lines[key]

    def fix_preview(self, d) -> str:
        """The fix of `d` alone as unified-diff hunks (no file headers), or ""."""
        if not d.fix or not d.fix.edits or getattr(d, "cell", None):
            return ""  # (a notebook's edits count in its document, not in the file)
        text = self.source_text(d.path)
        if not text:
            return ""
        import difflib

        from devlint.engine.fixer import apply_edits

        try:
            new = apply_edits(text, d.fix.edits)
        except Exception:  # an edit that does not fit the text: show no preview
            return ""
        diff = difflib.unified_diff(text.splitlines(), new.splitlines(), lineterm="",
                                    n=PREVIEW_CONTEXT)
        return "\n".join(list(diff)[2:])
