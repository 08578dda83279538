"""Lint one source text: triage facts -> rules -> positions -> suppressions."""
from __future__ import annotations

import ast
from functools import lru_cache

from devlint.diagnostics import Diagnostic
from devlint.engine import suppression
from devlint.analysis.triage import build_facts
from devlint.rules import registry
from devlint.rules.registry import enabled_codes

SYNTAX_ERROR = ("DL999", "syntax-error")


@lru_cache(maxsize=None)
def _rule_instances(codes: frozenset) -> tuple:
    return tuple(r() for r in registry.all_rules()
                 if r.code in codes and not getattr(r, "shell", False))


def locate(diags, locator) -> None:
    for d in diags:
        d.location = locator.rowcol(d.start)
        d.end_location = locator.rowcol(d.end)
        if d.noqa_row is None:
            d.noqa_row = d.location[0]
        if d.fix is not None:
            d.edit_locations = [(locator.rowcol(e.start), locator.rowcol(e.end)) for e in d.fix.edits]


def syntax_error_diagnostic(path: str, text: str, err: SyntaxError) -> Diagnostic:
    from devlint.source import Locator

    loc = Locator(text)
    row = max(1, min(err.lineno or 1, loc.line_count))
    col = max(1, err.offset or 1)
    start = min(loc.line_start(row) + col - 1, len(text))
    d = Diagnostic(SYNTAX_ERROR[0], SYNTAX_ERROR[1], f"SyntaxError: {err.msg}", path, start,
                   start)
    d.location = loc.rowcol(start)
    d.end_location = d.location
    d.noqa_row = d.location[0]
    return d


def lint_text(path: str, text: str, settings, codes: frozenset | None = None,
              out: dict | None = None, tree=None):
    """Diagnostics for one Python source (positions filled, suppressions applied).
    A syntax error becomes one DL999 diagnostic. out: receives the parsed tree ("tree").
    tree: `ast.parse(text, filename=path)` when the caller has just made it (and nothing
    else has it): the fix loop's check that a fixed text parses."""
    if codes is None:
        codes = enabled_codes(settings, path)
    try:
        if tree is None:
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as e:
        if isinstance(e, SyntaxError):
            return [syntax_error_diagnostic(path, text, e)]
        return [syntax_error_diagnostic(path, text, SyntaxError(str(e)))]
    if out is not None:
        out["tree"] = tree
    if not codes:
        return []
    facts = build_facts(path, text, settings, tree)
    if out is not None and getattr(settings, "show_exempt", False):
        facts.exempt = []
    diags: list[Diagnostic] = []
    stmt_rows: list[int] = []
    for rule in _rule_instances(codes):
        facts.rule = rule
        try:
            for d in rule.check(facts):
                diags.append(d)
        except Exception as e:  # the runner reports it as an internal error naming the rule
            e.devlint_rule = f"{rule.code} ({rule.name})"
            raise
    if facts.exempt is not None and (facts.cuda_only or facts.cuda_alike):
        _whole_file_candidates(facts, codes)
    if out is not None:
        out["exempt"] = exempt_entries(facts, diags)
    check_unused = "DL900" in codes
    if not diags and not check_unused:
        return []
    diags = _dedupe(diags)
    locate(diags, facts.locator)
    for d in diags:
        stmt_rows.append(_statement_row(facts, d))
        d.scope = _module_function(facts, d.location[0])
    sups = suppression.parse_suppressions(text, tree=tree)
    diags = suppression.apply_suppressions(diags, sups, stmt_rows)
    if facts.guard_extent:
        extend_guards(facts, diags)
    if check_unused and sups:
        from devlint.rules.dl900_unused_suppression import unused_suppressions

        unused = unused_suppressions(sups, codes, text, path)
        locate(unused, facts.locator)
        diags.extend(unused)
    diags.sort(key=lambda d: (d.start, d.code))
    return diags


def extend_guards(facts, diags) -> None:
    """A finding on the row of a CUDA guard (`if torch.cuda.is_available():`, a skip gate,
    `if t.is_cuda:`) is the guard's: the code it guards is CUDA-only because of it, and is
    not reported on its own (the cuda-guard principle), so the guard's finding extends over
    that code, up to the last candidate it exempts. Its location stays the guard's own, and
    so do its suppressions (applied before: a `# noqa` in the guarded code is not the
    guard's)."""
    for d in diags:
        end = facts.guard_extent.get(d.location[0])
        if end is not None and end > d.end:
            d.end = end
            d.end_location = facts.locator.rowcol(end)


def _whole_file_candidates(facts, codes) -> None:
    """`--show-exempt` in a CUDA-only (or CUDA-alike) file: what each rule the file's reason
    turns off would report without it, recorded with that reason. Several rules do not look
    at such a file at all, so they run once more with the file-level reasons cleared (the
    other principles still apply; what they exempt is listed under the file's reason too)."""
    from devlint.diagnostics import API_RULES

    whole = facts.cuda_only or facts.cuda_alike
    api = tuple(API_RULES.split(","))
    saved = (facts.cuda_only, facts.cuda_alike, facts.exempt, facts.rule)
    found: list = []
    facts.cuda_only = facts.cuda_alike = None
    try:
        for rule in _rule_instances(codes):
            if rule.code == "DL900" or not (saved[0] or rule.code.startswith(api)):
                continue
            facts.rule, facts.exempt = rule, []
            found += [(rule, (d.start, d.end), whole) for d in rule.check(facts)]
            found += [(rule, node, whole) for _, node, _ in facts.exempt]
    finally:
        facts.cuda_only, facts.cuda_alike, facts.exempt, facts.rule = saved
    facts.exempt.extend(found)


def exempt_entries(facts, diags) -> list:
    """What `--show-exempt` lists of one file: a whole-file entry when the file is CUDA-only
    (every rule) or CUDA-alike (the torch.cuda API rules), and, when collected, each candidate
    a rule did not report, once per place (the first rule's principle), leaving out a place
    some rule reported after all."""
    from devlint.diagnostics import ALL_RULES, API_RULES, exempt_from_reason

    out = []
    whole = facts.cuda_only or facts.cuda_alike
    if whole:
        out.append(exempt_from_reason(whole, None, "", facts.path,
                                      rules=ALL_RULES if facts.cuda_only else API_RULES))
    if facts.exempt:
        taken = {(d.start, d.end) for d in diags}
        for rule, node, reason in facts.exempt:
            start, end = node if isinstance(node, tuple) else facts.span(node)
            if (start, end) in taken:
                continue
            taken.add((start, end))
            e = exempt_from_reason(reason, rule.code, rule.name, facts.path, start, end)
            e.location = facts.locator.rowcol(start)
            e.end_location = facts.locator.rowcol(end)
            out.append(e)
    return out


def _dedupe(diags):
    seen = set()
    out = []
    for d in diags:
        key = (d.code, d.start, d.end)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _statement_row(facts, d) -> int:
    """First row of the innermost statement spanning the diagnostic (bisecting the module
    body, then descending: linear in the depth, not in the file's size)."""
    import bisect

    row = d.location[0]
    body = facts.tree.body if facts.tree else []
    starts = facts.memo("body_starts", lambda: [s.lineno for s in body])
    i = bisect.bisect_right(starts, row) - 1
    if i < 0:
        return row
    return _descend_row(body[i], row, row)


def _module_function(facts, row: int) -> str | None:
    """The module-level function whose body holds `row` (its decorators, defaults and
    annotations run at import, not with the function)."""
    import bisect

    body = facts.tree.body
    firsts = facts.memo("body_firsts", lambda: [
        min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", ())]) for s in body])
    i = bisect.bisect_right(firsts, row) - 1
    if i < 0 or row > (body[i].end_lineno or body[i].lineno):
        return None
    stmt = body[i]
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or not stmt.body:
        return None
    return stmt.name if row >= stmt.body[0].lineno else None


def _descend_row(stmt, row, best):
    if not (stmt.lineno <= row <= (stmt.end_lineno or stmt.lineno)):
        return best
    best = stmt.lineno
    for name in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(stmt, name, ()) or ():
            if isinstance(child, ast.AST) and hasattr(child, "lineno"):
                if child.lineno <= row <= (child.end_lineno or child.lineno):
                    return _descend_row(child, row, best)
    return best
