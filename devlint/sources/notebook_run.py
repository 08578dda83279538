"""Linting and fixing one notebook file: the engine's fix loop over the notebook's document
(`notebook.Notebook.document`), then the changed cells written back into its JSON."""
from __future__ import annotations

from devlint.sources.embedded import Outcome
from devlint.sources.notebook import (
    Notebook, NotebookError, broken_cells, lint_document, validate_document,
)


def run_notebook(path: str, text: str, settings, mode: str, unsafe: bool) -> Outcome:
    from devlint.rules.registry import enabled_codes

    try:
        nb = Notebook.parse(text)
    except NotebookError as e:
        return Outcome([_unreadable(path, str(e))])
    codes = enabled_codes(settings, path)
    document = nb.document()

    def lint(doc):
        return lint_document(nb, doc, path, settings, codes)

    if mode == "check":
        return Outcome(lint(document))
    from devlint.engine.fixer import fix_text

    broken = broken_cells(nb)
    fixed = fix_text(document, lint, lambda doc: validate_document(nb, doc, path, broken),
                     unsafe)
    out = Outcome()
    out.failures = [(d.code, f"{d.message}: fix reverted ({err})") for d, err in fixed.failures]
    final = document
    if fixed.text != document:
        sources = nb.split(fixed.text)
        new_json = nb.dumps(sources) if sources is not None else None
        if new_json is None:
            out.failures.append(("DL000", "the notebook's JSON formatting cannot be reproduced "
                                          "exactly; fixes not written"))
        else:
            final = fixed.text
            out.new_text = new_json
            out.applied = fixed.applied
            if mode == "diff":
                out.diff = cell_diff(path, nb, sources)
    out.diagnostics = lint(final)
    return out


def cell_diff(path: str, nb: Notebook, sources: list) -> str:
    """A unified diff per changed cell (`a/nb.ipynb:cell 3`), as ruff prints for notebooks."""
    import difflib

    out = []
    for k, (old, new) in enumerate(zip(nb.sources, sources)):
        if old != new:
            name = f"{path}:cell {nb.cell_number(k)}"
            out += (line + "\n" for line in difflib.unified_diff(
                old.splitlines(), new.splitlines(), fromfile=f"a/{name}", tofile=f"b/{name}",
                lineterm=""))
    return "".join(out)


def _unreadable(path: str, reason: str):
    from devlint.diagnostics import Diagnostic

    d = Diagnostic("DL999", "syntax-error", f"Not a readable notebook: {reason}", path, 0, 0)
    d.location = d.end_location = (1, 1)
    d.noqa_row = 1
    return d
