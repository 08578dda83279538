"""Shell in Dockerfiles and Containerfiles: the shell form of `RUN`, `CMD` and `ENTRYPOINT`
(what Docker hands to `/bin/sh -c`), `RUN` heredocs fed to the shell (`RUN <<EOF`,
`RUN bash <<EOF`), and `ENV` (read as the `export` it is).

The file is parsed with tree-sitter-dockerfile (the grammar the tree-sitter project lists for
Dockerfiles; the same tree-sitter runtime as the shell rule): each instruction's shell
fragments, line continuations, comments and heredoc lines come with exact byte positions, so
the script DL302 reads is the file's own text (`embedded.Region`), comments inside a continued
`RUN` left out as Docker leaves them out, and findings land on the file's rows and columns.

A fix is applied in a heredoc, where the script has lines of its own (the selector block goes
there). In a one-line or continued `RUN`, `CMD`, `ENTRYPOINT` or in `ENV` it is shown
(display-only) with the reason, not applied. The exec form (`RUN ["python", "x.py"]`) runs no
shell and is not read. A file with an `# escape=` directive other than the backslash is not
read (its continuations are not the shell's).
"""
from __future__ import annotations

import re
from functools import lru_cache

from devlint.sources.embedded import (Outcome, Region, fix_outcome, may_concern_shell,
                                      shell_findings)

_SHELL_FORM = ("run_instruction", "cmd_instruction", "entrypoint_instruction")
_HEREDOC_SHELL = re.compile(r"(?:(?:/(?:usr/)?bin/)?(?:ba)?sh(?:\s+-\w+)*\s+)?<<-?\s*[\"']?(\w+)[\"']?\s*")
_ESCAPE_DIRECTIVE = re.compile(r"(?im)\A(?:#[^\n]*\n)*?#\s*escape\s*=\s*(\S)")


@lru_cache(maxsize=1)
def _parser():
    import warnings

    import tree_sitter
    import tree_sitter_dockerfile

    with warnings.catch_warnings():
        # tree-sitter-dockerfile 0.2 hands the grammar over as an int pointer, which
        # tree-sitter 0.25 still takes, with a DeprecationWarning
        warnings.simplefilter("ignore", DeprecationWarning)
        language = tree_sitter.Language(tree_sitter_dockerfile.language())
    return tree_sitter.Parser(language)


class _Doc:
    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8", "surrogateescape")
        self._b2c = None
        if len(self.data) != len(text):
            b2c = []
            for i, ch in enumerate(text):
                b2c.extend([i] * len(ch.encode("utf-8", "surrogateescape")))
            b2c.append(len(text))
            self._b2c = b2c

    def c(self, b: int) -> int:
        return b if self._b2c is None else self._b2c[b]

    def src(self, node) -> str:
        return self.text[self.c(node.start_byte):self.c(node.end_byte)]


def parse(text: str):
    doc = _Doc(text)
    return doc, _parser().parse(doc.data)


def error_count(tree) -> int:
    n, stack = 0, [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            n += 1
        if node.has_error:
            stack.extend(node.children)
    return n


def regions(text: str) -> list:
    m = _ESCAPE_DIRECTIVE.match(text)
    if m and m.group(1) != "\\":
        return []
    doc, tree = parse(text)
    out = []
    for ins in tree.root_node.children:
        if ins.type in _SHELL_FORM:
            out += _shell_form(doc, ins)
        elif ins.type == "env_instruction":
            out += _env(doc, ins)
    return out


def _shell_form(doc: _Doc, ins) -> list:
    keyword = ins.children[0].type.upper() if ins.children else "RUN"
    command = next((c for c in ins.children if c.type == "shell_command"), None)
    if command is None:
        return []  # the exec form: no shell
    heredoc = next((c for c in ins.children if c.type == "heredoc_block"), None)
    if heredoc is not None:
        m = _HEREDOC_SHELL.fullmatch(doc.src(command).strip())
        if not m or keyword != "RUN":
            return []  # a heredoc fed to another program (`RUN python3 <<EOF`)
        return [_heredoc(doc, heredoc)]
    reg = Region("", where=f"a Dockerfile `{keyword}`")
    for part in command.children:
        if part.type in ("shell_fragment", "line_continuation"):
            reg.add(doc.src(part), doc.c(part.start_byte))
        # (a comment inside a continued instruction: Docker drops it before the shell runs)
    return [reg] if reg.pieces else []


def _heredoc(doc: _Doc, block) -> Region:
    reg = Region("", indent="", where="a Dockerfile heredoc")
    lines = [c for c in block.children if c.type == "heredoc_line"]
    end = next((c for c in block.children if c.type == "heredoc_end"), None)
    if lines:
        start = doc.c(lines[0].start_byte)
        stop = doc.c(end.start_byte) if end is not None else doc.c(lines[-1].end_byte)
        reg.add(doc.text[start:stop], start)
    return reg


def _env(doc: _Doc, ins) -> list:
    out = []
    for pair in (c for c in ins.children if c.type == "env_pair"):
        parts = [c for c in pair.children if c.is_named]
        if not parts:
            continue
        reg = Region("", where="a Dockerfile `ENV`")
        reg.advice = "choose the devices when the container runs (`docker run -e ...`)"
        reg.synthetic("export ")
        name = parts[0]
        reg.add(doc.src(name), doc.c(name.start_byte))
        eq = next((c for c in pair.children if c.type == "="), None)
        if eq is not None:
            reg.add(doc.text[doc.c(eq.start_byte):doc.c(pair.end_byte)], doc.c(eq.start_byte))
        elif len(parts) > 1:
            reg.synthetic("=")
            reg.add(doc.text[doc.c(parts[1].start_byte):doc.c(pair.end_byte)],
                    doc.c(parts[1].start_byte))
        out.append(reg)
    return out


def run_dockerfile(path: str, text: str, settings, mode: str, unsafe: bool) -> Outcome:
    from devlint.rules.registry import enabled_codes

    if "DL302" not in enabled_codes(settings, path) or not may_concern_shell(text):
        return Outcome()

    def lint(t):
        from devlint.engine.linter import locate
        from devlint.source import Locator

        diags = []
        for reg in regions(t):
            if may_concern_shell(reg.text):
                diags += shell_findings(reg, path, settings)
        locate(diags, Locator(t))
        diags.sort(key=lambda d: (d.start, d.code))
        from devlint.rules.registry import drop_unfixable

        return drop_unfixable(diags, settings)

    if mode == "check":
        return Outcome(lint(text))
    errors = error_count(parse(text)[1])
    before = {r.text for r in regions(text)}
    return fix_outcome(text, lint, lambda t: validate(t, errors, before, path), unsafe)


def validate(text: str, errors_before: int, before: set, path: str) -> str | None:
    """None when the fixed Dockerfile parses as well as before and each changed script
    passes `bash -n`."""
    from devlint.shell import validate_shell

    if error_count(parse(text)[1]) > errors_before:
        return "the fixed Dockerfile does not parse"
    for reg in regions(text):
        if reg.text not in before:
            err = validate_shell(reg.text, path)
            if err:
                return err
    return None
