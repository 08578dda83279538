"""A test module's worker entry launched only under a CUDA guard
(`devlint.evidence.launched_worker`): the findings in the worker functions its `__main__`
block runs under a worker flag, where every launch of the module (`__file__`) by its own tests
stands under a guard that established CUDA (the in-file guard predicate: the triage descent
over the launch rows). Read only for test modules whose text has `__main__` and `__file__`;
the answer is a fact of the file (stored by its stat)."""
from __future__ import annotations

import ast
import os
import re

from devlint.evidence import Reason
from devlint.evidence.launched_worker import worker_reason

_NEVER = frozenset({"DL203", "DL900", "DL902", "DL999", "DL000"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TEST_FILE = re.compile(r"^(?:test_\w*|\w+_test)\.py$")
# calls that launch their `__file__` argument as a process
_LAUNCHERS = frozenset({"Popen", "run", "call", "check_call", "check_output", "execv",
                        "execvp", "execl", "execlp", "spawnv", "spawnl"})
_GUARDS = frozenset({"cuda-guard", "cuda-value"})


def worker_findings(project, results) -> dict:
    """{absolute path: {(start, code): Reason}}."""
    out = {}
    for res in results:
        if not (res.diagnostics and _TEST_FILE.match(os.path.basename(res.path))):
            continue
        path = os.path.abspath(res.path)
        text = project.text(path)
        if not text or "__main__" not in text or "__file__" not in text:
            continue
        spans = project.fact(path, "workers", lambda: _workers(project, path, text))
        if not spans:
            continue
        found = {}
        for d in res.diagnostics:
            if d.code in _NEVER:
                continue
            for first, last, why in spans:
                if first <= d.location[0] <= last:
                    found[(d.start, d.code)] = Reason.from_dict(why)
                    break
        if found:
            out[path] = found
    return out


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_main(test) -> bool:
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
        test.ops[0], ast.Eq) and {getattr(x, "id", getattr(x, "value", None))
                                  for x in (test.left, test.comparators[0])} == {
        "__name__", "__main__"}


def _launches(tree, mains) -> list | None:
    """The calls that launch `__file__` outside the `__main__` blocks; None where `__file__`
    goes into a call of another kind that might launch it."""
    skip = {id(n) for m in mains for n in ast.walk(m)}
    out = []
    for n in ast.walk(tree):
        if id(n) in skip or not isinstance(n, ast.Call):
            continue
        argv = [a for a in n.args if isinstance(a, (ast.List, ast.Tuple))]
        in_argv = any(isinstance(e, ast.Name) and e.id == "__file__"
                      for a in argv for e in a.elts)
        direct = any(isinstance(a, ast.Name) and a.id == "__file__" for a in n.args)
        if in_argv or (direct and _name(n.func) in _LAUNCHERS):
            out.append(n)
    return out


def _workers(project, path: str, text: str) -> list:
    """[[first row, last row, Reason dict]] of the worker functions' bodies."""
    tree = project.tree(path)
    if tree is None:
        return []
    mains = [st for st in tree.body if isinstance(st, ast.If) and _is_main(st.test)]
    defs = {st.name: st for st in tree.body if isinstance(st, _FUNCS)}
    workers = set()
    for block in mains:
        for st in block.body:
            if isinstance(st, ast.If):  # `if "--worker" in sys.argv: sys.exit(_worker())`
                workers.update(n.func.id for n in ast.walk(st) if isinstance(n, ast.Call)
                               and isinstance(n.func, ast.Name) and n.func.id in defs)
    if not workers:
        return []
    launches = _launches(tree, mains)
    if not launches:
        return []
    guard = _launch_guard(path, text, tree, launches)
    if guard is None:
        return []
    out = []
    for name in sorted(workers):
        fn = defs[name]
        out.append([fn.body[0].lineno, fn.end_lineno or fn.lineno,
                    worker_reason(name, guard).to_dict()])
    return out


def _launch_guard(path: str, text: str, tree, launches):
    """The guard every launch stands under (the first one's), or None."""
    from devlint.analysis.descent import Descent
    from devlint.analysis.model import FileFacts, collect_imports
    from devlint.settings import Settings

    aliases: dict = {}
    collect_imports(tree.body, aliases)
    facts = FileFacts(path, text, "torch", Settings(), None, tree, aliases)
    Descent(facts, sorted({c.lineno for c in launches})).run()
    first = None
    for call in launches:
        w = facts.where_of(call)
        why = w and w.guarded
        if not why or getattr(why, "principle", None) not in _GUARDS:
            return None
        first = first or why
    return first
