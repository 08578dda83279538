"""`devlint server`: a Language Server (LSP over stdio, built on pygls) for editors.

What it does, with the same engine and settings resolution as `devlint check`:
- diagnostics for Python and shell documents on open, change and save (settings from the
  nearest `[tool.devlint]` / `devlint.toml` above the file, else the defaults; the project's
  declared torch floor as on the command line; files the configuration excludes get none);
- code actions per finding: its fix (safe ones preferred; unsafe ones labelled "(unsafe)"),
  and "Disable DLxxx for this line" (a `# noqa: DLxxx` comment, kept only if the result lints
  to fewer findings, as `--add-noqa` does);
- `source.fixAll.devlint`: every safe fix, re-linted until nothing changes (as `--fix`), as one
  whole-document edit;
- hover on a finding: the rule's documentation (`devlint rule CODE`).

The linter never runs or imports the code it lints, and never imports torch; neither does the
server. pygls is an optional dependency (`pip install 'devlint[server]'`).
"""
from __future__ import annotations

import bisect
import os
from urllib.parse import unquote, urlparse

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer

from devlint import api
from devlint._version import __version__
from devlint.diagnostics import Applicability

SOURCE = "devlint"
FIX_ALL_KIND = "source.fixAll.devlint"


class _Lines:
    """Character offsets of a text -> LSP positions in the client's position encoding."""

    def __init__(self, text: str, doc):
        self.text = text
        self.doc = doc
        self.starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)

    def position(self, offset: int) -> t.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        col = offset - self.starts[line]
        pos = t.Position(line=line, character=col)
        return self.doc.position_codec.position_to_client_units(self.doc.lines, pos) \
            if self.doc is not None else pos

    def range(self, start: int, end: int) -> t.Range:
        return t.Range(start=self.position(start), end=self.position(end))


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return parsed.path or uri


class DevlintServer(LanguageServer):
    def __init__(self):
        super().__init__("devlint", __version__,
                         text_document_sync_kind=t.TextDocumentSyncKind.Full)
        self.results: dict[str, tuple[int | None, list]] = {}  # uri -> (version, diagnostics)

    # -- linting ---------------------------------------------------------------------------
    def settings_for(self, path: str):
        return api.settings_for(path)

    def excluded(self, path: str, settings) -> bool:
        from devlint.settings import is_excluded

        return is_excluded(settings, path)  # as `--stdin-filename` with `--force-exclude`

    def lint(self, uri: str) -> None:
        doc = self.workspace.get_text_document(uri)
        path = _path_of(uri)
        kind = api.kind_of_path(path)
        try:
            settings = self.settings_for(path)
        except Exception as e:  # a configuration error: say it once, publish nothing
            self.window_show_message(t.ShowMessageParams(
                type=t.MessageType.Error, message=f"devlint: {e}"))
            self.results[uri] = (doc.version, [])
            self._publish(uri, doc.version, [])
            return
        if self.excluded(path, settings):
            found = []
        else:
            res = api.process(api._to_bytes(doc.source), path, settings, kind=kind)
            found = [] if res.error else list(res.diagnostics)
        self.results[uri] = (doc.version, found)
        lines = _Lines(doc.source, doc)
        self._publish(uri, doc.version, [self._lsp_diagnostic(d, lines) for d in found])

    def _publish(self, uri, version, diagnostics) -> None:
        self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=diagnostics))

    @staticmethod
    def _lsp_diagnostic(d, lines: _Lines) -> t.Diagnostic:
        from devlint.rules.registry import lookup

        rule = lookup(d.code)
        href = rule.url() if rule is not None else None
        fix = "" if d.fix is None else (
            " (fix available)" if d.fix.applicability == Applicability.SAFE
            else " (unsafe fix available)")
        return t.Diagnostic(
            range=lines.range(d.start, d.end), message=d.message + fix,
            severity=t.DiagnosticSeverity.Error if d.code in ("DL999", "DL902")
            else t.DiagnosticSeverity.Warning,
            code=d.code, source=SOURCE,
            code_description=t.CodeDescription(href=href) if href else None,
            data={"name": d.name})

    # -- actions ---------------------------------------------------------------------------
    def code_actions(self, params: t.CodeActionParams) -> list[t.CodeAction]:
        uri = params.text_document.uri
        doc = self.workspace.get_text_document(uri)
        _, found = self.results.get(uri, (None, []))
        lines = _Lines(doc.source, doc)
        wanted = params.context.only
        actions: list[t.CodeAction] = []
        want_quickfix = not wanted or any(k.startswith("quickfix") for k in wanted)
        want_fix_all = not wanted or any(FIX_ALL_KIND.startswith(k) or k.startswith("source.fixAll")
                                         for k in wanted)
        if want_quickfix:
            for d in found:
                r = lines.range(d.start, d.end)
                if not _overlaps(r, params.range):
                    continue
                lsp_d = self._lsp_diagnostic(d, lines)
                if d.fix is not None:
                    safe = d.fix.applicability == Applicability.SAFE
                    edits = [t.TextEdit(range=lines.range(e.start, e.end), new_text=e.content)
                             for e in d.fix.edits]
                    actions.append(t.CodeAction(
                        title=f"{d.code}: {d.fix.message}" + ("" if safe else " (unsafe)"),
                        kind=t.CodeActionKind.QuickFix, diagnostics=[lsp_d],
                        is_preferred=safe,
                        edit=t.WorkspaceEdit(document_changes=[t.TextDocumentEdit(
                            text_document=t.OptionalVersionedTextDocumentIdentifier(
                                uri=uri, version=doc.version), edits=edits)])))
                noqa = self._noqa_edit(doc, d)
                if noqa is not None:
                    actions.append(t.CodeAction(
                        title=f"Disable {d.code} for this line", kind=t.CodeActionKind.QuickFix,
                        diagnostics=[lsp_d], edit=noqa))
        if want_fix_all and any(d.fix is not None and d.fix.applicability == Applicability.SAFE
                                for d in found):
            edit = self._fix_all_edit(uri)
            if edit is not None:
                actions.append(t.CodeAction(title="devlint: fix all safe fixes",
                                            kind=FIX_ALL_KIND, edit=edit))
        return actions

    def _whole_document(self, uri, doc, new_text) -> t.WorkspaceEdit:
        lines = _Lines(doc.source, doc)
        return t.WorkspaceEdit(document_changes=[t.TextDocumentEdit(
            text_document=t.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            edits=[t.TextEdit(range=lines.range(0, len(doc.source)), new_text=new_text)])])

    def _fix_all_edit(self, uri) -> t.WorkspaceEdit | None:
        doc = self.workspace.get_text_document(uri)
        path = _path_of(uri)
        fixed, _, _ = api.fix_source(doc.source, path, self.settings_for(path))
        if fixed == doc.source:
            return None
        return self._whole_document(uri, doc, fixed)

    def _noqa_edit(self, doc, d) -> t.WorkspaceEdit | None:
        path = _path_of(doc.uri)
        new_text, added = api.noqa_source(doc.source, [d], path, self.settings_for(path),
                                            every=False)
        if not added:
            return None
        return self._whole_document(doc.uri, doc, new_text)

    def hover(self, params: t.HoverParams) -> t.Hover | None:
        from devlint.reporters import rule_text
        from devlint.rules.registry import lookup

        uri = params.text_document.uri
        doc = self.workspace.get_text_document(uri)
        _, found = self.results.get(uri, (None, []))
        lines = _Lines(doc.source, doc)
        for d in found:
            r = lines.range(d.start, d.end)
            if _contains(r, params.position):
                rule = lookup(d.code)
                if rule is None:
                    return None
                return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown,
                                                        value=rule_text(rule)), range=r)
        return None


def _before(a: t.Position, b: t.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def _overlaps(a: t.Range, b: t.Range) -> bool:
    return not (_before(a.end, b.start) or _before(b.end, a.start))


def _contains(r: t.Range, p: t.Position) -> bool:
    return not _before(p, r.start) and not _before(r.end, p)


def build() -> DevlintServer:
    server = DevlintServer()

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DevlintServer, params: t.DidOpenTextDocumentParams):
        ls.lint(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DevlintServer, params: t.DidChangeTextDocumentParams):
        ls.lint(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DevlintServer, params: t.DidSaveTextDocumentParams):
        ls.lint(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DevlintServer, params: t.DidCloseTextDocumentParams):
        ls.results.pop(params.text_document.uri, None)
        ls._publish(params.text_document.uri, None, [])

    @server.feature(t.TEXT_DOCUMENT_CODE_ACTION, t.CodeActionOptions(
        code_action_kinds=[t.CodeActionKind.QuickFix, FIX_ALL_KIND]))
    def code_action(ls: DevlintServer, params: t.CodeActionParams):
        return ls.code_actions(params)

    @server.feature(t.TEXT_DOCUMENT_HOVER)
    def hover(ls: DevlintServer, params: t.HoverParams):
        return ls.hover(params)

    return server


def serve() -> None:
    os.environ.setdefault("DEVLINT_NO_PROGRESS", "1")
    build().start_io()
