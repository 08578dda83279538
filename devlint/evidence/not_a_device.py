"""Principle: code that never puts a value on a device is not a finding.

Evidence: a type annotation (`s: torch.cuda.Stream | None`, a dataclass field's type, a
parameter's or a return annotation: it changes nothing at run time), and code under
`if TYPE_CHECKING:` (stubs for type checkers never run). The evidence is the annotation's or
the test's line; a test function or class skipped unconditionally (`@pytest.mark.skip`), whose
values never reach a device (the decorator's line).
A private module-level function (`def _run_torch11(rank):`) whose every use in the file
stands inside such a skipped test (`spawn(_run_torch11, 1)` in a test decorated
`@pytest.mark.skip`) never runs either: the evidence is the skip decorator of (the first of)
those tests.
A visibility variable read only as the text of a message (`logger.warning("... %s",
os.environ.get("CUDA_VISIBLE_DEVICES"))`, `f"(CUDA_VISIBLE_DEVICES={os.environ.get(...)})"`
inside a `logger.info(...)`, a `print`, a `warnings.warn`, an exception's argument) chooses no
device: the rubric's log/error text. The evidence is the message call's line.
Limits: a rule that fixes a construction may still rewrite the annotations tied to it (the
rules that ask for annotations pass `annotations=True`); a default value is not an annotation.
A read of the variable that is stored first (`v = os.environ.get(...)`, then
`logger.info(v)`), compared, asserted or returned decides something, and stays a finding; so
does one written into a file (`f.write("export CUDA_VISIBLE_DEVICES=" + ...)`, `print(...,
file=f)`: a launcher script or an env file hands the choice on; `sys.stdout`/`sys.stderr` are
messages), and so does setting it anywhere. A public function may be run by other modules; a use anywhere else (another test, the
`__main__` block, module-level code, an `__all__` string) keeps it live.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason


def annotation_reason(node, path: str | None) -> Reason:
    return Reason("not-a-device", "a type annotation changes nothing at run time", path,
                  getattr(node, "lineno", None))


def message_text_reason(call, path: str | None) -> Reason:
    return Reason("not-a-device", "read only as the text of a message (log, print, warning or "
                  "exception): it names no device", path, getattr(call, "lineno", None))


def type_checking_reason(test, path: str | None) -> Reason:
    return Reason("not-a-device", "under `if TYPE_CHECKING:` (never runs)", path,
                  getattr(test, "lineno", None))


_SKIPS = {"skip"}  # `@pytest.mark.skip(...)`, `@unittest.skip(...)`: unconditional


def never_runs_reason(scope, path: str | None) -> Reason | None:
    """A test function or class skipped unconditionally (`@pytest.mark.skip(reason=...)`,
    `@unittest.skip("...")`) never runs: its values never reach a device. Limits: `skipif` /
    `skipUnless` run somewhere (they are DL203's business); only a decorator of the scope
    itself counts."""
    for d in getattr(scope, "decorator_list", ()):
        func = d.func if isinstance(d, ast.Call) else d
        if isinstance(func, ast.Attribute) and func.attr in _SKIPS \
                and getattr(func.value, "attr", getattr(func.value, "id", None)) in (
                    "mark", "unittest"):
            return Reason("not-a-device", f"`{scope.name}` is always skipped (never runs)",
                          path, d.lineno)
    return None


def skipped_uses(tree) -> dict:
    """{name: skip decorator line, or 0 where some use is live} for the names used in the
    module: the line of the skip over the first always-skipped test using the name, 0 as
    soon as one use stands outside every always-skipped test."""
    out: dict = {}

    def walk(node, skip):
        for child in ast.iter_child_nodes(node):
            inner = skip
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not skip:
                why = never_runs_reason(child, None)
                inner = why.line if why is not None else 0
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                out[child.id] = skip if out.get(child.id, skip) else 0
            elif isinstance(child, ast.Constant) and isinstance(child.value, str) \
                    and child.value.isidentifier():
                out[child.value] = 0  # named in a string: `__all__`, getattr, a registry
            walk(child, inner)

    walk(tree, 0)
    return out


def only_skipped_reason(scope, uses, path: str | None) -> Reason | None:
    """The private module-level function whose every use is inside an always-skipped test.
    `uses`: `skipped_uses(tree)`, or a function returning it, called only for a private
    function (the walk covers the whole module: a module of public functions needs none)."""
    name = getattr(scope, "name", "")
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or not name.startswith("_") or name.startswith("__"):
        return None
    line = (uses() if callable(uses) else uses).get(name)
    if not line:
        return None
    return Reason("not-a-device", f"`{name}` is only used by tests that are always skipped "
                  "(never runs)", path, line)
