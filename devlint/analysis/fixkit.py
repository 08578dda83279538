"""Building blocks rules use to write fixes: profile expressions and the imports they need."""
from __future__ import annotations

from dataclasses import dataclass

from devlint.diagnostics import Applicability, Edit, Fix
from devlint.profiles import get_profile, import_binding
from devlint.source import newline_of


@dataclass(frozen=True)
class Expr:
    """An expression to write, the import statements it needs, and why it was chosen."""

    text: str
    imports: tuple[str, ...] = ()
    evidence: str = ""
    safe: bool = True


def role_expr(facts, role: str, x: str | None = None) -> Expr | None:
    """The profile's expression for a role, with `{torch}` bound to the file's torch name."""
    prof = get_profile(facts.profile, facts.settings)
    r = prof.role(role)
    if r is None:
        return None
    imports = list(r.imports)
    text = r.expr
    if "{torch}" in text:
        local = facts.torch_name()
        if local is None:
            local = "torch"
            imports.append("import torch")
        text = text.replace("{torch}", local)
    if x is not None:
        text = text.replace("{x}", x)
    evidence = f"the {prof.name} profile's {role}"
    return Expr(text, tuple(imports), evidence, True)


def single_quoted(expr: str) -> str:
    """The same expression with double-quoted strings turned single-quoted, for use inside an
    f-string delimited by double quotes (Python < 3.12 forbids reusing the quote)."""
    return expr.replace('"', "'")


def import_edits(facts, imports) -> tuple[Edit, ...]:
    """Edits inserting the import statements the file does not bind yet, once, after the
    leading import block (or the docstring / `from __future__` imports)."""
    edits = []
    for stmt in imports:
        binding = import_binding(stmt)
        if binding is not None:
            local, qual = binding
            if facts.aliases.get(local) == qual:
                continue
        edits.append(stmt)
    if not edits:
        return ()
    loc = facts.locator
    nl = newline_of(facts.text)
    row = facts.import_end_row or facts.future_end_row or facts.docstring_end_row
    body = "".join(s + nl for s in edits)
    if row == 0:
        return (Edit(0, 0, body),)
    if row >= loc.line_count:
        end = len(facts.text)
        prefix = "" if facts.text.endswith(("\n", "\r")) else nl
        return (Edit(end, end, prefix + body),)
    at = loc.line_start(row + 1)
    return (Edit(at, at, body),)


def _requoted(facts, edit: Edit) -> Edit:
    """An edit inside an f-string must not reuse the f-string's quote (Python < 3.12)."""
    for node in getattr(facts, "joined", ()):
        s, e = facts.span(node)
        if s < edit.start and edit.end < e:
            src = facts.text[s:e]
            i = 0
            while i < len(src) and src[i] in "rRbBuUfF":
                i += 1
            quote = src[i] if i < len(src) else '"'
            other = "'" if quote == '"' else '"'
            if quote in edit.content:
                return Edit(edit.start, edit.end, edit.content.replace(quote, other))
    return edit


def make_fix(facts, message: str, edits, expr_or_exprs=(), safe: bool = True) -> Fix:
    exprs = expr_or_exprs if isinstance(expr_or_exprs, (list, tuple)) else (expr_or_exprs,)
    imports: list[str] = []
    for e in exprs:
        if e is not None:
            imports.extend(i for i in e.imports if i not in imports)
            safe = safe and e.safe
    all_edits = tuple(_requoted(facts, e) for e in edits) + import_edits(facts, imports)
    return Fix(Applicability.SAFE if safe else Applicability.UNSAFE, message, all_edits)
