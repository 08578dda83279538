"""Building blocks rules use to write fixes: profile expressions and the imports they need."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

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


# Stands in an expression where the profile has no form for the target torch (a torch.accelerator
# form below 2.6): it survives any string building a rule does, and `make_fix` offers no fix
# whose edits contain it.
NO_FORM = "\x00devlint:no-form-for-target\x00"


def target_torch(facts) -> tuple[int, int]:
    return facts.settings.target_torch_tuple(facts.profile)


def role_expr(facts, role: str, x: str | None = None) -> Expr | None:
    """The profile's expression for a role, with `{torch}` bound to the file's torch name.

    The form is the one the profile gives for the file's target torch; where the role has
    forms but none the target has (target-torch below torch.accelerator's first release), the
    expression is `NO_FORM` and a fix built on it is not offered. None: the profile has no
    form for the role at all."""
    prof = get_profile(facts.profile, facts.settings)
    test = in_test_module(facts)
    if prof.role(role, None, test) is None:
        return None
    r = prof.role(role, target_torch(facts), test)
    if r is None:
        oldest = prof.oldest(role)
        since = ".".join(map(str, oldest)) if oldest else "?"
        return Expr(NO_FORM, (), f"the {prof.name} profile has no {role} form before torch "
                    f"{since}", False)
    return bind_expr(facts, r, f"the {prof.name} profile's {role}", x)


def in_test_module(facts) -> bool:
    """A test module (its profile's `tests` roles apply there)."""
    from devlint.evidence.vocabulary import is_test_path

    return is_test_path(facts.path.replace("\\", "/").split("/"))


def bind_expr(facts, r, evidence: str, x: str | None = None) -> Expr:
    """A profile expression (RoleExpr) with `{torch}` and `{x}` bound for this file."""
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
            if local != "torch" and local in facts.memo("module_bound", lambda: _module_bound(
                    facts.tree.body)):
                # the module already binds the project's name (a relative import, a
                # re-export, the defining module itself): use that binding
                continue
        edits.append(stmt)
    if not edits:
        return ()
    loc = facts.locator
    nl = newline_of(facts.text)
    row = facts.import_end_row or facts.future_end_row or facts.docstring_end_row
    body = "".join(s + nl for s in edits)
    if row == 0:
        # after the shebang, the encoding cookie and the leading comments (a license header)
        at = leading_comments_end(facts.text)
        if at == len(facts.text) and facts.text and not facts.text.endswith(("\n", "\r")):
            body = nl + body
        return (Edit(at, at, body),)
    if row >= loc.line_count:
        end = len(facts.text)
        prefix = "" if facts.text.endswith(("\n", "\r")) else nl
        return (Edit(end, end, prefix + body),)
    at = loc.line_start(row + 1)
    return (Edit(at, at, body),)


_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")


def leading_comments_end(text: str) -> int:
    """Offset of the first line that is neither blank nor a comment (len(text) if none)."""
    pos = 0
    if text.startswith("\ufeff"):
        pos = 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end + 1
        line = text[pos:end].strip()
        if line and not line.startswith("#"):
            return pos
        pos = end
    return len(text)


@lru_cache(maxsize=4)  # asked once per fix, of the same text (str hashes are cached)
def protected_header_end(text: str) -> int:
    """Offset after the lines no fix may touch or insert before: a shebang on line 1 and an
    encoding cookie on line 1 or 2 (PEP 263: it counts only there)."""
    end = 0
    # the first two lines, split off a prefix (splitting the whole file is linear in its size,
    # and every candidate's fix asks): three lines in the prefix mean the first two are whole
    lines = text[:4096].splitlines(keepends=True)
    lines = (lines if len(lines) > 2 or len(text) <= 4096
             else text.splitlines(keepends=True))[:2]
    for i, line in enumerate(lines):
        if (i == 0 and line.lstrip("\ufeff").startswith("#!")) or _COOKIE.match(line):
            end = sum(len(x) for x in lines[:i + 1])
    return end


def _module_bound(body, out=None) -> frozenset:
    """Names a module binds at its top level: imports (relative ones too), definitions,
    assignments (also inside top-level `if`/`try`)."""
    import ast

    out = set() if out is None else out
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.If, ast.Try)):
            _module_bound(stmt.body, out)
            for h in getattr(stmt, "handlers", ()):
                _module_bound(h.body, out)
            _module_bound(stmt.orelse, out)
    return frozenset(out)


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


_OPEN_BEFORE = ("(", ",", "[")
_CLOSE_AFTER = (")", ",", "]", ";", "#", "\n", "\r")


def _outer_parens(text: str) -> bool:
    """`(...)` whose first parenthesis closes at the last character (strings skipped)."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth, quote, i = 0, None, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return False
        i += 1
    return depth == 0


def bare(text: str) -> str:
    """`text` without redundant outer parentheses, for a place that needs none (a call
    argument the rule writes itself)."""
    return text[1:-1] if _outer_parens(text) and "\n" not in text else text


def _unparenthesized(facts, edit: Edit) -> Edit:
    """A parenthesized form written where parentheses are redundant (a call argument, a list
    element, the value of `=` or of a keyword) loses them."""
    text = edit.content
    if not _outer_parens(text) or "\n" in text:
        return edit
    if parens_redundant(facts, edit.start, edit.end):
        return Edit(edit.start, edit.end, text[1:-1])
    return edit


def parens_redundant(facts, start: int, end: int) -> bool:
    """Whether an expression written over `start:end` needs no parentheses of its own there:
    it stands alone as a call argument, a list element, or the value of `=` / a keyword."""
    # the text up to the last non-blank before `start` and from the first after `end`, read
    # in a window around them (copying the file's head and tail is linear per candidate)
    text = facts.text
    i, j = start, end
    while i and text[i - 1] in " \t":
        i -= 1
    while j < len(text) and text[j] in " \t":
        j += 1
    before = text[max(0, i - 2):i]
    after = text[j:j + 2]
    if before.endswith("\\") or after.startswith("\\"):
        return False
    opens = before.endswith(_OPEN_BEFORE) or (
        before.endswith("=") and i > 1 and (before[-2].isalnum()
                                                       or before[-2] in " _)]"))
    return opens and (not after or after.startswith(_CLOSE_AFTER))


def make_fix(facts, message: str, edits, expr_or_exprs=(), safe: bool = True) -> Fix | None:
    """The fix made of `edits` (and the imports its expressions need); None when an edit
    holds an expression the target torch has no form for (`NO_FORM`)."""
    if any(NO_FORM in e.content for e in edits):
        return None
    header = protected_header_end(facts.text)
    if header and any(e.start < header for e in edits):
        return None  # it would move the shebang or the encoding cookie: refused
    exprs = expr_or_exprs if isinstance(expr_or_exprs, (list, tuple)) else (expr_or_exprs,)
    imports: list[str] = []
    for e in exprs:
        if e is not None:
            imports.extend(i for i in e.imports if i not in imports)
            safe = safe and e.safe
    all_edits = tuple(_requoted(facts, _unparenthesized(facts, e)) for e in edits) \
        + import_edits(facts, imports)
    return Fix(Applicability.SAFE if safe else Applicability.UNSAFE, message, all_edits)
