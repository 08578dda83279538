"""The fix pass over one file (devlint.engine.runner calls it in fix and diff modes): the fix
loop over its text, linting each text once, the re-parse of what the fixes changed, and the
findings of the text it ends with."""
from __future__ import annotations

from devlint.analysis.walk import top_rows

# LibCST's second opinion on a fixed file costs ~1 GB of memory per MB of source: above this
# size only CPython's parser checks the fix (a 10 MB generated module took 10 GB and 3 minutes)
LIBCST_MAX_CHARS = 2_000_000


def _validator(kind: str, path: str, parsed: list):
    """validate(text) -> None or the error; a Python text's tree goes to `parsed` ([text,
    tree]), which the lint of that text takes instead of parsing it again."""
    if kind == "shell":
        from devlint.shell import validate_shell

        return lambda text: validate_shell(text, path)
    from devlint.engine.concrete import python_tree

    def validate(text):
        tree, err = python_tree(text, path)
        if tree is not None:
            parsed[:] = [text, tree]
        return err

    return validate


def fix_one(res, src, kind: str, path: str, settings, unsafe: bool, lint, exempt, prior):
    """Fix `src` (a SourceFile), filling `res` (a runner.FileResult): failures, changed,
    applied, diagnostics and exempt entries of the final text, its bytes and long lines;
    returns the final text. lint(text[, out]): the file's linter. exempt, prior: as
    runner.process_source takes them."""
    from devlint.engine.fixer import fix_text

    parsed: list = []  # [text, its tree]: the last text `validate` parsed
    validate = _validator(kind, path, parsed)
    # the text linted last, its diagnostics and exempt entries: the fix loop's last round
    # lints the text it ends with, which is the text reported (unless LibCST reverts it)
    # (and the first rows of its top-level statements, where it parsed)
    # (and, for a very long statement, the spans of its pieces: `concrete.statement_pieces`)
    last = [src.text, *prior, None, None] if prior is not None else [None] * 5

    def lint_once(text):
        if last[0] is not text and last[0] != text:
            out: dict = {}
            if kind == "python":
                tree = parsed[1] if parsed and parsed[0] is text else None
                parsed.clear()  # a tree is linted once (a rule may annotate its nodes)
                last[1] = lint(text, out, tree)
            else:
                last[1] = lint(text)
            last[0], last[2] = text, out.get("exempt", [])
            tree = out.get("tree")
            last[3] = top_rows(tree) if tree is not None else None
            if tree is not None and kind == "python":
                from devlint.engine.concrete import statement_pieces

                last[4] = statement_pieces(text, tree)
            else:
                last[4] = None
        return last[1]

    fix_lint = lint_once
    if exempt:
        from devlint.engine.project.stage import fix_filter

        fix_lint = fix_filter(lint_once, exempt)  # exempt findings followed through the rounds
    outcome = fix_text(src.text, fix_lint, validate, unsafe)
    new_text = outcome.text
    res.failures = [(d.code, f"{d.message}: fix reverted ({err})") for d, err in outcome.failures]
    region, pieces = new_text, []
    if new_text != src.text and kind == "python" and last[0] == new_text and last[3]:
        # LibCST reads the top-level statements the fixes changed; the others are the
        # input's, character for character (LibCST's memory and time follow what it reads);
        # of a very long statement, the expressions holding the changes
        from devlint.engine.concrete import changed_pieces

        region, pieces = changed_pieces(new_text, last[3], outcome.changed, last[4])
    if new_text != src.text and kind == "python" and len(region) <= LIBCST_MAX_CHARS:
        from devlint.engine.concrete import libcst_expression_parses, libcst_parses

        err = libcst_parses(region) if region or not pieces else None
        err = err or next((e for e in map(libcst_expression_parses, pieces) if e), None)
        if err is not None and libcst_parses(src.text) is None:
            res.failures.append(("DL000", f"fixed file does not re-parse, all fixes reverted ({err})"))
            new_text = src.text
    res.changed = new_text != src.text
    res.applied = outcome.applied if res.changed else 0
    final = new_text if res.changed else src.text
    res.diagnostics = lint_once(final)
    if res.changed and hasattr(fix_lint, "drop"):  # the exempt findings, moved by the fixes
        res.diagnostics = fix_lint.drop(res.diagnostics, final)
    res.exempt = last[2]
    if res.changed:
        res.new_bytes = src.to_bytes(new_text)
        if kind == "python":
            from devlint.line_length import line_length_for, long_fixed_lines

            res.line_length = line_length_for(settings, path)
            res.long_lines = long_fixed_lines(src.text, new_text, res.line_length.limit)
    return new_text


