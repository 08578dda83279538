"""How the stage runs `xcallers` (the `only-called-on-cuda` principle across modules): the
findings the other passes left, answered per package from the stored answers
(`xgates.per_package`; `xspaces` for the modules of namespace packages) and walked by
`xcallers` only where none holds. `xcallers` imports the walker and the file analysis
(`analysis.descent` ...): a warm run, every answer stored, imports neither."""
from __future__ import annotations

import os

from devlint.engine.project.package import package_of
from devlint.engine.project.xgates import per_package
from devlint.engine.project.xspaces import NamespaceAnswers

_NEVER = frozenset({"DL900", "DL902", "DL999", "DL000"})


def caller_findings(project, results, kept, key_of=None) -> dict:
    """{absolute path: {(start, code): Reason}} of the findings, still `kept(diag, path)` by
    the other passes, in functions (or private methods) every call of which in the package
    runs on CUDA only. With the stage's `key_of`, the answer of a package is stored beside the
    other passes' (`xgates.per_package`, keyed by the package key and the places of the
    findings left), so a warm run walks no caller; the answer for a module of a namespace
    package (no `__init__.py` above it) is stored per file (`xspaces`)."""
    def answer(state, project, path, res, deps):
        from devlint.engine.project.xcallers import _file_callers

        return _file_callers(state, project, path, res.diagnostics)

    return stored_answers(project, results, kept, key_of, "xcallers", "called", answer)


def stored_answers(project, results, kept, key_of, name: str, field: str, file_answer,
                   skip=None, suffix: str | None = None) -> dict:
    """The driver `caller_findings` and `xreach.reach_findings` share: the findings of each
    file still `kept(diag, path)` (and not `skip(path)`), answered by `file_answer(state,
    project, path, left, deps)` with one `xcallers._State` made for the run when an answer is
    computed (and `deps`, path -> stat, to fill with what else the answer read); stored per
    package under `name`/`field` (`xgates.per_package`) and, for a
    namespace package's modules, per file (`xspaces`, its store named by `suffix`)."""
    left = []
    for res in results:
        if not res.diagnostics or not res.path.endswith(".py") or (skip and skip(res.path)):
            continue
        path = os.path.abspath(res.path)
        diags = [d for d in res.diagnostics if d.code not in _NEVER and kept(d, path)]
        if diags:
            left.append(_Left(res.path, diags))
    state: list = []  # the run's walks (`xcallers._State`), made when an answer is computed

    def walks():
        if not state:
            from devlint.engine.project.xcallers import _State

            state.append(_State(project))
        return state[0]

    def answer(project, path, res, deps):
        return file_answer(walks(), project, path, res, deps)

    stored, each_run = [], []
    for r in left:
        (stored if key_of is not None and package_of(r.path) is not None else each_run).append(r)
    out = per_package(project, stored, key_of, _NEVER, name, field, answer) \
        if stored else {}
    extra = {"suffix": suffix} if suffix else {}
    spaces = NamespaceAnswers(project, key_of, lambda path: walks().module(path),
                              lambda path, r: answer(project, path, r, {}), **extra)
    for r in each_run:
        path = os.path.abspath(r.path)
        found = spaces.answer(path, r)
        if found:
            out[path] = found
    spaces.save()
    return out

class _Left:
    """A file's findings the other passes left (what `per_package` keys and answers)."""
    __slots__ = ("path", "diagnostics")

    def __init__(self, path, diagnostics):
        self.path, self.diagnostics = path, diagnostics
