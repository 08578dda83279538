"""Parsing a shell script with tree-sitter-bash: the parser, byte/character offsets
(`_Doc`), tree walks and the small word helpers the analysis and the fix writer share."""
from __future__ import annotations

import re
from functools import lru_cache

import tree_sitter
import tree_sitter_bash

from devlint.source import Locator


# ── parsing ─────────────────────────────────────────────────────────────────────────────────

@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _parse(data: bytes) -> tree_sitter.Tree:
    return _parser().parse(data)


def syntax_error_count(text: str) -> int:
    tree = _parse(text.encode("utf-8", "surrogatepass"))
    count = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
        if node.has_error:
            stack.extend(node.children)
    return count


class _Doc:
    """The text, its UTF-8 bytes (what tree-sitter sees) and byte -> character offsets."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        if len(self.data) == len(text):
            self._b2c = None
        else:
            b2c = []
            for i, ch in enumerate(text):
                b2c.extend([i] * len(ch.encode("utf-8", "surrogatepass")))
            b2c.append(len(text))
            self._b2c = b2c
        self.locator = Locator(text)

    def c(self, byte_offset: int) -> int:
        return byte_offset if self._b2c is None else self._b2c[byte_offset]

    def start(self, node) -> int:
        return self.c(node.start_byte)

    def end(self, node) -> int:
        return self.c(node.end_byte)

    def src(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "surrogatepass")


# ── constants ───────────────────────────────────────────────────────────────────────────────

_SHELLS = frozenset({"bash", "sh", "dash", "ash", "zsh", "ksh"})
# Builtins and keywords: `env` cannot run them, so a prefix on them gets no fix.
_BUILTINS = frozenset([".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait"])
# Parents under which a node is a statement of its own (for suppression rows).
_STATEMENT_PARENTS = frozenset({
    "program", "compound_statement", "do_group", "if_statement", "elif_clause", "else_clause",
    "case_item", "subshell", "command_substitution", "process_substitution", "function_definition",
    "while_statement", "for_statement", "c_style_for_statement",
})
_NAME_CHAR = re.compile(r"[A-Za-z0-9_]")
# Characters an unquoted word may hold and still mean the same inside double quotes, as an
# argument (no globbing, brace or tilde expansion, no escapes) or in an assignment.
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_,.:/@%+=^-]*")
_DQ_SAFE_WORD = re.compile(r"[^$`\"\\]*")


def _dialect_from_tree(root, doc: _Doc) -> str:
    """A `.sh` file without a shebang: bash if it uses bash-only syntax, else POSIX sh."""
    stack = [root]
    while stack:
        node = stack.pop()
        t = node.type
        if t in ("array", "process_substitution", "ansi_c_string", "herestring_redirect"):
            return "bash"
        if t == "test_command" and node.child_count and node.children[0].type == "[[":
            return "bash"
        if t == "declaration_command" and node.child_count and node.children[0].type in (
                "declare", "typeset"):
            return "bash"
        if t == "function_definition" and node.child_count and node.children[0].type == "function":
            return "bash"
        if t == "expansion" and any(c.type == "!" for c in node.children):
            return "bash"
        if t == "command_name" and doc.src(node) in ("source", "shopt", "mapfile", "readarray"):
            return "bash"
        stack.extend(node.children)
    return "sh"


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _ancestors(node):
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


def _command_name_text(doc: _Doc, command) -> str | None:
    name = command.child_by_field_name("name")
    return doc.src(name) if name is not None else None


def _unquote_word(s: str) -> str:
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


def doc_field(parent, child) -> str | None:
    for i, c in enumerate(parent.children):
        if c == child:
            return parent.field_name_for_child(i)
    return None


def _statement(node):
    n = node
    while n.parent is not None and n.parent.type not in _STATEMENT_PARENTS:
        n = n.parent
    return n


def _sq(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def _indent_unit(text: str) -> str:
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and stripped != line and not stripped.startswith("#"):
            ws = line[: len(line) - len(stripped)]
            return "\t" if ws.startswith("\t") else " " * min(len(ws), 8)
    return "    "
