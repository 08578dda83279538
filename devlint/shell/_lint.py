"""DL302 implementation: parse a shell script with tree-sitter-bash, find hardcoded
CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES uses, build their fixes, apply suppressions.

Imported lazily by devlint.shell (it imports tree_sitter at module level)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

import tree_sitter
import tree_sitter_bash

from devlint.diagnostics import Applicability, Diagnostic, Edit, Fix
from devlint.shell.options import ShellOptions, detect_dialect
from devlint.source import Locator, newline_of

CODE = "DL302"
NAME = "shell-cuda-visible-devices"

_DATA = Path(__file__).resolve().parent.parent / "data" / "visibility_env.toml"


# ── data ────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class VisibilityTable:
    default: str
    devices: tuple[tuple[str, str], ...]  # (device type, env var), in table order
    flagged: tuple[str, ...]

    @property
    def env_names(self) -> frozenset[str]:
        return frozenset(env for _, env in self.devices)

    def default_env(self) -> str:
        return dict(self.devices)[self.default]


@cache
def visibility_table() -> VisibilityTable:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    with open(_DATA, "rb") as f:
        data = tomllib.load(f)
    devices = tuple((d["type"], d["env"]) for d in data["device"])
    table = VisibilityTable(data["default"], devices, tuple(data["flagged"]))
    if table.default not in dict(devices):
        raise ValueError(f"{_DATA}: default {table.default!r} is not a device type")
    return table


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
_SUPPRESS = re.compile(
    r"#\s*(?:noqa(?P<noqa>\s*:\s*(?P<noqa_codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*))?"
    r"|devlint\s*:\s*(?P<kind>ignore|file-ignore)\s*\[(?P<codes>[^\]]*)\])",
    re.IGNORECASE,
)


def _matches(token: str) -> bool:
    token = token.strip()
    if not token:
        return False
    return token.upper() == "ALL" or CODE.startswith(token.upper()) or token.lower() == NAME


# ── results ─────────────────────────────────────────────────────────────────────────────────

@dataclass
class Suppression:
    row: int  # 1-based row of the comment
    start: int  # offsets of the comment
    end: int
    kind: str  # the ruff-style marker ("noqa" kind), "ignore" or "file-ignore"
    codes: tuple[str, ...]  # empty: a bare marker without codes (suppresses everything)
    used: bool = False


@dataclass
class ShellResult:
    diagnostics: list[Diagnostic]
    suppressed: list[Diagnostic] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    dialect: str = "bash"


@dataclass
class _Finding:
    name_start: int  # offsets of the variable name (the diagnostic's range)
    name_end: int
    var: str
    context: str  # prefix | declaration | unset | assignment | read | env | eval | other
    message: str
    node: object  # the tree node the finding is in (for statement rows)
    edits: list[Edit] | None  # per-use edits; None: no fix
    exact: bool = True  # the rewrite keeps the behaviour exactly (else the fix is unsafe)
    needs_env_fork: bool = False  # rewrite runs the command through `env`
    fix_note: str = ""
    command_name: str | None = None


# ── analysis ────────────────────────────────────────────────────────────────────────────────

def analyze(text: str, path: str, options: ShellOptions) -> ShellResult:
    doc = _Doc(text)
    tree = _parse(doc.data)
    dialect = options.dialect if options.dialect != "auto" else (
        detect_dialect(text, path) or _dialect_from_tree(tree.root_node, doc))
    table = visibility_table()
    analysis = _Analysis(doc, tree.root_node, options, dialect, table)
    findings = analysis.run()
    diagnostics = analysis.build_diagnostics(findings, path)
    suppressions = _suppressions(doc, tree.root_node)
    kept, suppressed = _apply_suppressions(diagnostics, findings, suppressions, doc)
    return ShellResult(kept, suppressed, suppressions, dialect)


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


class _Analysis:
    def __init__(self, doc: _Doc, root, options: ShellOptions, dialect: str,
                 table: VisibilityTable):
        self.doc = doc
        self.root = root
        self.opt = options
        self.dialect = dialect
        self.table = table
        self.flagged = frozenset(table.flagged)
        self.env_names = table.env_names
        self.functions: set[str] = set()
        self.sources_files = False
        self.assignments: list = []  # variable_assignment nodes
        self.selectors: dict[str, list] = {}  # var -> [(offset, top_level, env name)]
        self.selector_nodes: set[int] = set()  # ids (start_byte) of selector assignments
        self.sinks: list[tuple[object, str]] = []  # (node run as code, how)
        self.device_type_assigned = False
        self.visibility_var_clash = False
        self.vis = options.visibility_var  # the variable the fixes use (may become another)

    # -- facts ---------------------------------------------------------------------------------
    def collect(self):
        doc = self.doc
        for node in _walk(self.root):
            t = node.type
            if t == "function_definition":
                name = node.child_by_field_name("name")
                if name is not None:
                    self.functions.add(doc.src(name))
            elif t == "command":
                self._collect_command(node)
            elif t == "redirected_statement":
                self._collect_redirects(node)
            elif t == "variable_assignment":
                self.assignments.append(node)
                name = node.child_by_field_name("name")
                value = node.child_by_field_name("value")
                var = doc.src(name) if name is not None else ""
                env = self._selector_value(value)
                if env is not None:
                    top = not any(a.type == "function_definition" for a in _ancestors(node))
                    self.selectors.setdefault(var, []).append((doc.start(node), top, env))
                    self.selector_nodes.add(node.start_byte)
                elif var == self.opt.visibility_var:
                    self.visibility_var_clash = True
                if var == self.opt.device_type_var:
                    self.device_type_assigned = True

    def _selector_value(self, value) -> str | None:
        """The env name when an assignment's value is exactly a known visibility variable name
        (`DEVICE_VISIBILITY_ENV=ZE_AFFINITY_MASK`, `X="CUDA_VISIBLE_DEVICES"`)."""
        if value is None or value.type not in ("word", "string", "raw_string"):
            return None
        if value.type == "string" and any(c.type not in ('"', "string_content")
                                          for c in value.children):
            return None
        s = _unquote_word(self.doc.src(value))
        return s if s in self.env_names else None

    def _collect_command(self, node):
        doc = self.doc
        cname = _command_name_text(doc, node)
        if cname in ("source", "."):
            self.sources_files = True
        args = [c for c in node.children if doc_field(node, c) == "argument"]
        if cname == "eval":
            for a in args:
                self.sinks.append((a, "eval"))
            return
        # `bash -c SCRIPT`, `timeout 9 sh -lc SCRIPT`, `nohup bash -e -c SCRIPT ...`
        name = node.child_by_field_name("name")
        if name is not None and name.named_child_count == 1:
            name = name.named_children[0]
        words = ([name] if name is not None else []) + args
        for i, w in enumerate(words):
            if w is None or w.type != "word" or os.path.basename(doc.src(w)) not in _SHELLS:
                continue
            has_c = False
            j = i + 1
            while j < len(words) and words[j].type == "word" and re.match(
                    r"[-+][A-Za-z]", doc.src(words[j])):
                opt = doc.src(words[j])
                if opt.startswith("-") and not opt.startswith("--") and "c" in opt[1:]:
                    has_c = True
                j += 1 + (doc.src(words[j]) in ("-o", "+o", "-O", "+O"))
            if has_c and j < len(words):
                self.sinks.append((words[j], "bash -c"))
            break

    def _collect_redirects(self, node):
        """`bash <<EOF ... EOF`, `sh -s <<'EOF'`, `bash <<< "..."`: the body is a script."""
        body = node.child_by_field_name("body")
        if body is None or body.type != "command":
            return
        doc = self.doc
        cname = _command_name_text(doc, body)
        if cname is None or os.path.basename(cname) not in _SHELLS:
            return
        if any(doc.src(a).startswith("-") and "c" in doc.src(a)[1:] and not doc.src(a).startswith("--")
               for a in body.children if doc_field(body, a) == "argument"):
            return  # with -c the script is the argument, not stdin
        for r in node.children:
            if r.type == "heredoc_redirect":
                start = next((c for c in r.children if c.type == "heredoc_start"), None)
                hbody = next((c for c in r.children if c.type == "heredoc_body"), None)
                if hbody is not None:
                    quoted = start is not None and any(q in doc.src(start) for q in "'\"\\")
                    self.sinks.append((hbody, "heredoc-quoted" if quoted else "heredoc"))
            elif r.type == "herestring_redirect":
                for c in r.children:
                    if c.type not in ("<<<",):
                        self.sinks.append((c, "bash -c"))

    # -- the selector ----------------------------------------------------------------------------
    def choose_selector(self, first_use: int) -> bool:
        """Pick the variable fixes use; True when the selector block must be inserted."""
        def usable(entries):
            first = min(entries)
            return first[1] and first[0] < first_use

        own = self.selectors.get(self.opt.visibility_var)
        if own and usable(own):
            self.vis = self.opt.visibility_var
            return False
        for var, entries in sorted(self.selectors.items(), key=lambda kv: min(kv[1])[0]):
            if len({e[2] for e in entries}) >= 2 and usable(entries):
                self.vis = var
                return False
        self.vis = self.opt.visibility_var
        return True

    def selector_edit(self) -> Edit:
        doc, text = self.doc, self.doc.text
        nl = newline_of(text)
        indent = _indent_unit(text)
        dt = self.opt.device_type_var
        v = self.opt.visibility_var
        lines = [f"# The variable that selects visible devices, from {dt} (devlint DL302)."]
        lines.append(f'case "${{{dt}:-{self.table.default}}}" in')
        for dtype, env in self.table.devices:
            if dtype != self.table.default:
                lines.append(f"{indent}{dtype}) {v}={env} ;;")
        lines.append(f"{indent}*) {v}={self.table.default_env()} ;;")
        lines.append("esac")
        block = nl.join(lines)
        header_end = self._header_end()
        loc = doc.locator
        if header_end is None:
            first_blank = loc.line_count >= 1 and loc.line(1).strip() == ""
            return Edit(0, 0, block + nl + ("" if first_blank else nl))
        row = loc.rowcol(header_end)[0]
        next_blank = row + 1 <= loc.line_count and loc.line(row + 1).strip() == "" and \
            loc.line_end(row) < len(text)
        offset = loc.line_end(row)
        return Edit(offset, offset, nl + nl + block + ("" if next_blank else nl))

    def _header_end(self) -> int | None:
        """Offset inside the last line of the leading shebang / comment / `set` block after
        which the selector goes; None: at the top of the file."""
        doc, loc = self.doc, self.doc.locator
        candidates = []  # header nodes the block may follow
        first_other = None
        for i, n in enumerate(self.root.children):
            if n.type == "comment":
                txt = doc.src(n)
                row_end = n.end_point[0] + 1
                nxt_blank = row_end + 1 > loc.line_count or loc.line(row_end + 1).strip() == ""
                if (i == 0 and txt.startswith("#!")) or nxt_blank:
                    candidates.append(n)
            elif n.type == "command" and _command_name_text(doc, n) in ("set", "shopt"):
                candidates.append(n)
            else:
                first_other = n
                break
        # the block goes at the end of a line: never after a statement sharing that line
        # (`set -e; CUDA_VISIBLE_DEVICES=0 cmd`)
        while candidates and first_other is not None and \
                candidates[-1].end_point[0] >= first_other.start_point[0]:
            candidates.pop()
        last = candidates[-1] if candidates else None
        return None if last is None else doc.start(last)

    # -- findings ----------------------------------------------------------------------------------
    def run(self) -> list[_Finding]:
        self.collect()
        findings: dict[int, _Finding] = {}
        for node in _walk(self.root):
            if node.type == "variable_name" and self.doc.src(node) in self.flagged:
                f = self._from_variable_name(node)
            elif node.type == "command" and _command_name_text(self.doc, node) is not None and \
                    os.path.basename(_command_name_text(self.doc, node)) == "env":
                for f in self._from_env_command(node):
                    findings.setdefault(f.name_start, f)
                continue
            else:
                continue
            if f is not None:
                findings.setdefault(f.name_start, f)
        for f in self._from_sinks():
            findings.setdefault(f.name_start, f)
        return sorted(findings.values(), key=lambda f: f.name_start)

    def _in_error(self, node) -> bool:
        return any(a.type == "ERROR" for a in _ancestors(node)) or node.is_missing

    def _from_variable_name(self, name) -> _Finding | None:
        doc = self.doc
        var = doc.src(name)
        parent = name.parent
        s, e = doc.start(name), doc.end(name)
        if parent is None:
            return None
        pt = parent.type
        if pt == "variable_assignment" and parent.child_by_field_name("name") == name:
            return self._from_assignment(parent, name, var)
        if pt == "simple_expansion":
            return self._read(parent, name, var, simple=True)
        if pt == "expansion":
            return self._read(parent, name, var, simple=False)
        if pt == "subscript":
            return _Finding(s, e, var, "other", f"Hardcoded `{var}` (array subscript)", name, None,
                            fix_note="no rewrite for subscripts")
        if pt == "declaration_command":
            kw = doc.src(parent.children[0])
            return _Finding(s, e, var, "declaration", f"Hardcoded `{var}` in `{kw}`", name,
                            [Edit(s, e, f'"${self.vis_ph}"')])
        if pt == "unset_command":
            if any(c.type == "word" and doc.src(c) in ("-f",) for c in parent.children):
                return None  # `unset -f NAME` removes a function
            return _Finding(s, e, var, "unset", f"Hardcoded `{var}` in `unset`", name,
                            [Edit(s, e, f'"${self.vis_ph}"')])
        if pt == "for_statement":
            return _Finding(s, e, var, "other", f"Hardcoded `{var}` as a loop variable", name, None)
        # arithmetic, `read`-like and other uses: flag without a rewrite
        return _Finding(s, e, var, "read", f"Hardcoded use of `{var}`", name, None)

    # placeholder replaced by the chosen selector variable once it is known
    vis_ph = "\x00VIS\x00"

    def _from_assignment(self, assign, name, var) -> _Finding | None:
        doc = self.doc
        s, e = doc.start(name), doc.end(name)
        parent = assign.parent
        op = next((c.type for c in assign.children if c.type in ("=", "+=")), "=")
        value = assign.child_by_field_name("value")
        group = [c for c in parent.children if c.type == "variable_assignment"] if parent else []
        group_vars = {doc.src(c.child_by_field_name("name")): c for c in group
                      if c.child_by_field_name("name") is not None}
        companion = None
        if var == "HIP_VISIBLE_DEVICES" and "CUDA_VISIBLE_DEVICES" in group_vars and \
                parent.type in ("command", "declaration_command", "variable_assignments"):
            return None  # set together with CUDA_VISIBLE_DEVICES: reported (and fixed) there
        if var == "CUDA_VISIBLE_DEVICES" and "HIP_VISIBLE_DEVICES" in group_vars and \
                parent.type in ("command", "declaration_command", "variable_assignments"):
            companion = group_vars["HIP_VISIBLE_DEVICES"]
            cv = companion.child_by_field_name("value")
            if (doc.src(cv) if cv is not None else "") != (doc.src(value) if value is not None
                                                            else ""):
                return _Finding(s, e, var, "prefix" if parent.type == "command" else "assignment",
                                f"Hardcoded `{var}` (with `HIP_VISIBLE_DEVICES` set to another "
                                "value)", assign, None)
        if self._in_error(assign):
            return _Finding(s, e, var, "other", f"Hardcoded `{var}`", assign, None)
        if parent is not None and parent.type == "command":
            return self._prefix(assign, parent, name, var, value, op, companion)
        if parent is not None and parent.type == "declaration_command":
            kw = doc.src(parent.children[0])
            msg = f"Hardcoded `{var}` in `{kw}`"
            if op != "=" or (value is not None and value.type == "array"):
                return _Finding(s, e, var, "declaration", msg, assign, None)
            pair, exact = self._env_pair(value, assignment=True)
            edits = [Edit(doc.start(assign), doc.end(assign), pair)]
            if companion is not None:
                edits.append(self._delete_sibling(companion))
            return _Finding(s, e, var, "declaration", msg, assign, edits, exact=exact)
        msg = f"Hardcoded `{var}` assignment"
        if value is not None and value.type == "array":
            return _Finding(s, e, var, "assignment", msg, assign, None)
        # plain assignment: `eval` the same assignment with the chosen name (exact in sh and bash)
        vtext = doc.src(value) if value is not None else ""
        if _PLAIN_WORD.fullmatch(vtext):
            repl = f'eval "${self.vis_ph}{op}{vtext}"'
        else:
            repl = f'eval "${self.vis_ph}{op}"' + _sq(vtext)
        if parent is not None and parent.type == "variable_assignments":
            if group and group[0] != assign:
                repl = "; " + repl
            if group and group[-1] != assign:
                repl = repl + ";"
        edits = [Edit(doc.start(assign), doc.end(assign), repl)]
        if companion is not None:
            edits.append(self._delete_sibling(companion))
        return _Finding(s, e, var, "assignment", msg, assign, edits)

    def _delete_sibling(self, node) -> Edit:
        doc = self.doc
        nxt = node.next_sibling
        if nxt is not None:
            return Edit(doc.start(node), doc.start(nxt), "")
        prv = node.prev_sibling
        return Edit(doc.end(prv) if prv is not None else doc.start(node), doc.end(node), "")

    def _prefix(self, assign, command, name, var, value, op, companion) -> _Finding:
        doc = self.doc
        s, e = doc.start(name), doc.end(name)
        msg = f"Hardcoded `{var}` command prefix"
        cmd_name = command.child_by_field_name("name")
        if cmd_name is None:
            return _Finding(s, e, var, "prefix", msg, assign, None)
        cname = doc.src(cmd_name)
        if op != "=" or (value is not None and value.type == "array"):
            return _Finding(s, e, var, "prefix", msg, assign, None, command_name=cname)
        insert_at = doc.start(cmd_name)
        if cname == "exec":
            args = [c for c in command.children if doc_field(command, c) == "argument"]
            if not args or doc.src(args[0]).startswith("-"):
                return _Finding(s, e, var, "prefix", msg, assign, None, command_name=cname)
            insert_at = doc.start(args[0])  # `exec env "...=0" cmd`
        elif cname in _BUILTINS or cname in self.functions:
            kind = "function" if cname in self.functions else "shell builtin"
            return _Finding(s, e, var, "prefix", msg + f" on {kind} `{cname}`", assign, None,
                            command_name=cname,
                            fix_note=f"`env` cannot run the {kind} `{cname}`")
        pair, exact = self._env_pair(value, assignment=True)
        following = [c for c in command.children
                     if c.type == "variable_assignment" and c.start_byte > assign.start_byte
                     and c.start_byte < cmd_name.start_byte and c != companion]
        edits: list[Edit] = []
        if cname != "exec" and all(self._arg_safe(c) for c in following):
            # in place: `A=1 env "$V=0" B=2 cmd` (env takes B=2 as an assignment too)
            edits.append(Edit(doc.start(assign), doc.end(assign), f"env {pair}"))
        else:
            # moved next to the command: `A=1 B=$x env "$V=0" cmd`, `exec env "$V=0" cmd`
            edits.append(Edit(doc.start(assign), doc.start(assign.next_sibling), ""))
            edits.append(Edit(insert_at, insert_at, f"env {pair} "))
        if companion is not None:
            edits.append(self._delete_sibling(companion))
        edits.sort(key=lambda ed: (ed.start, ed.end))
        return _Finding(s, e, var, "prefix", msg, assign, edits, exact=exact, needs_env_fork=True,
                        command_name=cname)

    def _arg_safe(self, assign) -> bool:
        """A prefix assignment that means the same as an argument of `env`."""
        if any(c.type == "+=" for c in assign.children):
            return False
        value = assign.child_by_field_name("value")
        return value is None or self._quoted_or_plain(value)

    def _quoted_or_plain(self, node) -> bool:
        t = node.type
        if t in ("string", "raw_string", "ansi_c_string"):
            return True
        if t in ("word", "number"):
            return bool(_PLAIN_WORD.fullmatch(self.doc.src(node)))
        if t == "concatenation":
            return all(self._quoted_or_plain(c) for c in node.children)
        return False

    def _dq_inner(self, node, assignment: bool) -> str | None:
        """Text that, inside double quotes, means what `node` means unquoted (as an assignment
        value when `assignment`, else as a command argument); None when there is none."""
        doc = self.doc
        t = node.type
        src = doc.src(node)
        if t in ("word", "number"):
            if src.startswith("~"):
                return None
            if assignment:
                return src if _DQ_SAFE_WORD.fullmatch(src) else None
            return src if _PLAIN_WORD.fullmatch(src) else None
        if t == "string":
            return src[1:-1]
        if t == "raw_string":
            inner = src[1:-1]
            return inner if _DQ_SAFE_WORD.fullmatch(inner) else None
        if t in ("simple_expansion", "expansion", "arithmetic_expansion") or (
                t == "command_substitution" and src.startswith("$(")):
            return src if assignment else None  # unquoted in an argument: split and globbed
        if t == "concatenation":
            parts = [self._dq_inner(c, assignment) for c in node.children]
            return None if any(p is None for p in parts) else "".join(parts)
        return None

    def _env_pair(self, value, assignment: bool) -> tuple[str, bool]:
        """`"$V=<value>"` and whether it is exactly equivalent."""
        if value is None:
            return f'"${self.vis_ph}="', True
        inner = self._dq_inner(value, assignment)
        if inner is not None:
            return f'"${self.vis_ph}={inner}"', True
        # keep the value's own quoting: equal unless word splitting/globbing would apply
        return f'"${self.vis_ph}="' + self.doc.src(value), not assignment

    def _read(self, exp, name, var, simple: bool) -> _Finding:
        doc = self.doc
        s, e = doc.start(name), doc.end(name)
        msg = f"Hardcoded read of `${var}`"
        if self.dialect != "bash":
            return _Finding(s, e, var, "read", msg, exp, None,
                            fix_note="POSIX sh has no safe indirect read")
        if self._in_error(exp):
            return _Finding(s, e, var, "read", msg, exp, None)
        if simple:
            return _Finding(s, e, var, "read", msg, exp,
                            [Edit(doc.start(exp), doc.end(exp), f"${{!{self.vis_ph}}}")])
        kids = exp.children
        if len(kids) >= 2 and kids[0].type == "${" and kids[1] == name:
            return _Finding(s, e, var, "read", msg, exp, [Edit(s, e, f"!{self.vis_ph}")])
        return _Finding(s, e, var, "read", msg, exp, None,
                        fix_note="no indirect form of this expansion")

    def _from_env_command(self, command):
        """`env CUDA_VISIBLE_DEVICES=0 cmd`, `env -u CUDA_VISIBLE_DEVICES cmd`."""
        doc = self.doc
        args = [c for c in command.children if doc_field(command, c) == "argument"]
        prev = None
        for a in args:
            src = doc.src(a)
            if prev in ("-u", "--unset") and src in self.flagged:
                s = doc.start(a)
                yield _Finding(s, s + len(src), src, "env", f"Hardcoded `{src}` passed to `env -u`",
                               a, [Edit(s, doc.end(a), f'"${self.vis_ph}"')])
            prev = src
            m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", src)
            if not m or m.group(1) not in self.flagged or a.type not in ("word", "concatenation"):
                continue
            if not src.startswith(m.group(0)) or (a.type == "concatenation"
                                                  and a.children[0].type != "word"):
                continue
            var = m.group(1)
            s = doc.start(a)
            ne = s + len(var)
            msg = f"Hardcoded `{var}` passed to `env`"
            first = a if a.type == "word" else a.children[0]
            rest_first = doc.src(first)[len(var) + 1:]
            parts = [rest_first if _PLAIN_WORD.fullmatch(rest_first) else None]
            if a.type == "concatenation":
                parts += [self._dq_inner(c, assignment=False) for c in a.children[1:]]
            if all(p is not None for p in parts):
                edit = Edit(s, doc.end(a), f'"${self.vis_ph}=' + "".join(parts) + '"')
            else:
                edit = Edit(s, ne + 1, f'"${self.vis_ph}="')
            yield _Finding(s, ne, var, "env", msg, a, [edit])

    def _from_sinks(self):
        """Literal occurrences inside text that is later run as shell code."""
        doc = self.doc
        tainted: set[str] = set()
        for node, _how in self.sinks:
            tainted |= self._expanded_names(node)
        assigned: dict[str, list] = {}
        for a in self.assignments:
            n = a.child_by_field_name("name")
            if n is not None and a.start_byte not in self.selector_nodes:
                assigned.setdefault(doc.src(n), []).append(a)
        work = list(tainted)
        while work:
            var = work.pop()
            for a in assigned.get(var, ()):
                v = a.child_by_field_name("value")
                if v is None:
                    continue
                for n in self._expanded_names(v) - tainted:
                    tainted.add(n)
                    work.append(n)
        carriers: list[tuple[object, str]] = list(self.sinks)
        for var in tainted:
            for a in assigned.get(var, ()):
                v = a.child_by_field_name("value")
                if v is not None:
                    carriers.append((v, "a string later run by `eval`"))
        for node, how in carriers:
            yield from self._scan_carrier(node, how)

    def _expanded_names(self, node) -> set[str]:
        names = set()
        for n in _walk(node):
            if n.type in ("simple_expansion", "expansion"):
                for c in n.children:
                    if c.type == "variable_name":
                        names.add(self.doc.src(c))
                        break
                    if c.type == "subscript":
                        nm = c.child_by_field_name("name")
                        if nm is not None:
                            names.add(self.doc.src(nm))
                        break
        return names

    def _scan_carrier(self, node, how: str):
        t = node.type
        label = {"eval": "a string run by `eval`", "bash -c": "a script run by `bash -c`",
                 "heredoc": "a here-document run by a shell",
                 "heredoc-quoted": "a quoted here-document run by a shell"}.get(how, how)
        if t in ("word", "number"):
            yield from self._literal(node.start_byte, node.end_byte, "word", label, node)
        elif t == "raw_string":
            yield from self._literal(node.start_byte + 1, node.end_byte - 1, "sq", label, node,
                                     quote_bounds=(node.start_byte, node.end_byte))
        elif t == "ansi_c_string":
            yield from self._literal(node.start_byte + 2, node.end_byte - 1, None, label, node)
        elif t in ("string", "heredoc_body"):
            lo = node.start_byte + (1 if t == "string" else 0)
            hi = node.end_byte - (1 if t == "string" else 0)
            mode = "dq" if how != "heredoc-quoted" else None
            if how == "heredoc-quoted":
                yield from self._literal(lo, hi, None, label, node)
                return
            pos = lo
            for c in node.children:
                if c.type in ("string_content", "heredoc_content", '"'):
                    continue
                if c.start_byte > pos:
                    yield from self._literal(pos, c.start_byte, mode, label, node)
                pos = max(pos, c.end_byte)
            if hi > pos:
                yield from self._literal(pos, hi, mode, label, node)
        elif t in ("concatenation", "array"):
            for c in node.children:
                yield from self._scan_carrier(c, how)

    def _literal(self, lo: int, hi: int, mode: str | None, label: str, node,
                 quote_bounds=None):
        doc = self.doc
        chunk = doc.data[lo:hi].decode("utf-8", "surrogatepass")
        base = doc.c(lo)
        for var in self.flagged:
            for m in re.finditer(r"(?<![A-Za-z0-9_])" + var + r"(?![A-Za-z0-9_])", chunk):
                s = base + m.start()
                e = s + len(var)
                msg = f"Hardcoded `{var}` in {label}"
                if mode is None:
                    yield _Finding(s, e, var, "eval", msg, node, None,
                                   fix_note="the text is not expanded, so no name can be put in")
                    continue
                nxt = doc.text[e:e + 1]
                ref = f"${{{self.vis_ph}}}" if _NAME_CHAR.match(nxt) else f"${self.vis_ph}"
                if mode == "dq":
                    edit = Edit(s, e, ref)
                elif mode == "word":
                    edit = Edit(s, e, f'"{ref}"')
                else:  # inside '...': close, expand, reopen (no empty '' at either end)
                    qs, qe = doc.c(quote_bounds[0]), doc.c(quote_bounds[1])
                    if s == qs + 1 and e == qe - 1:
                        edit = Edit(qs, qe, f'"{ref}"')
                    elif s == qs + 1:
                        edit = Edit(qs, e + 0, f'"{ref}"\'')
                    elif e == qe - 1:
                        edit = Edit(s, qe, f'\'"{ref}"')
                    else:
                        edit = Edit(s, e, f'\'"{ref}"\'')
                yield _Finding(s, e, var, "eval", msg, node, [edit])

    # -- diagnostics ---------------------------------------------------------------------------------
    def build_diagnostics(self, findings: list[_Finding], path: str) -> list[Diagnostic]:
        if not findings:
            return []
        need_block = self.choose_selector(min(f.name_start for f in findings))
        block = self.selector_edit() if need_block and any(f.edits for f in findings) else None
        loc = self.doc.locator
        out = []
        for f in findings:
            fix = None
            if f.edits is not None:
                edits = [Edit(ed.start, ed.end, ed.content.replace(self.vis_ph, self.vis))
                         for ed in f.edits]
                if block is not None:
                    edits.insert(0, block)
                safe = f.exact and not (need_block and self.device_type_assigned) and not (
                    need_block and self.visibility_var_clash) and not (
                    f.needs_env_fork and self.sources_files)
                fix = Fix(Applicability.SAFE if safe else Applicability.UNSAFE,
                          self._fix_message(f), tuple(edits))
            message = f.message + self._why(f)
            d = Diagnostic(CODE, NAME, message, path, f.name_start, f.name_end, fix)
            d.location = loc.rowcol(f.name_start)
            d.end_location = loc.rowcol(f.name_end)
            d.noqa_row = self._noqa_row(f)
            if fix is not None:
                d.edit_locations = [(loc.rowcol(ed.start), loc.rowcol(ed.end)) for ed in fix.edits]
            out.append(d)
        return out

    def _why(self, f: _Finding) -> str:
        if f.var == "HIP_VISIBLE_DEVICES":
            tail = "; only AMD ROCm honours it"
        else:
            tail = "; Intel XPU, Ascend NPU and other devices ignore it"
        if f.edits is None and f.fix_note:
            tail += f" (no automatic fix: {f.fix_note})"
        return tail

    def _fix_message(self, f: _Finding) -> str:
        v = self.vis
        dt = self.opt.device_type_var
        how = {
            "prefix": f'use `env "${v}=..."`',
            "env": f'pass `"${v}=..."` to `env`',
            "declaration": f'use `"${v}=..."`',
            "unset": f'unset `"${v}"`',
            "assignment": f'assign through `eval "${v}=..."`',
            "read": f"read `${{!{v}}}`",
            "eval": f"put `${v}` into the string",
        }.get(f.context, f"use `${v}`")
        return f"Choose the visibility variable from `${dt}` and {how}"

    def _noqa_row(self, f: _Finding) -> int:
        loc = self.doc.locator
        row = loc.rowcol(f.name_start)[0]
        stmt = _statement(f.node)
        end_row = stmt.end_point[0] + 1
        line = loc.line(row).rstrip()
        in_multiline = any(a.type in ("string", "raw_string", "heredoc_body", "heredoc_redirect")
                           and a.end_point[0] + 1 > row for a in [f.node, *_ancestors(f.node)])
        if line.endswith("\\") or in_multiline:
            return end_row
        return row


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


# ── suppressions ─────────────────────────────────────────────────────────────────────────────

def _suppressions(doc: _Doc, root) -> list[Suppression]:
    out = []
    for node in _walk(root):
        if node.type != "comment":
            continue
        txt = doc.src(node)
        for m in _SUPPRESS.finditer(txt):
            if m.group("kind"):
                kind = m.group("kind").lower()
                codes = tuple(c.strip() for c in m.group("codes").split(",") if c.strip())
            else:
                kind = "noqa"
                codes = tuple(c.strip() for c in (m.group("noqa_codes") or "").split(",")
                              if c.strip())
            out.append(Suppression(node.start_point[0] + 1, doc.start(node), doc.end(node),
                                   kind, codes))
    return out


def _apply_suppressions(diagnostics, findings, suppressions, doc):
    kept, suppressed = [], []
    file_level = [s for s in suppressions if s.kind == "file-ignore" and any(map(_matches, s.codes))]
    for d, f in zip(diagnostics, findings):
        if file_level:
            for s in file_level:
                s.used = True
            suppressed.append(d)
            continue
        stmt = _statement(f.node)
        rows = set(range(stmt.start_point[0] + 1, stmt.end_point[0] + 2))
        rows.add(d.location[0])
        rows.add(d.noqa_row)
        hit = None
        for s in suppressions:
            if s.kind == "file-ignore" or s.row not in rows:
                continue
            if (s.kind == "noqa" and not s.codes) or any(map(_matches, s.codes)):
                hit = s
                break
        if hit is not None:
            hit.used = True
            suppressed.append(d)
        else:
            kept.append(d)
    return kept, suppressed


# ── applying fixes (the engine does this for real; used by tests and golden generation) ──────

def apply_edits(text: str, fixes: list[Fix]) -> str:
    """Apply fixes whose edits do not overlap those already taken (identical edits shared)."""
    taken: list[Edit] = []
    seen: set[Edit] = set()
    for fix in sorted(fixes, key=lambda fx: min((e.start, e.end) for e in fx.edits)):
        new = [e for e in fix.edits if e not in seen]
        if any(e.start < t.end and t.start < e.end or (e.start == e.end == t.start == t.end)
               for e in new for t in taken):
            continue
        taken.extend(new)
        seen.update(new)
    out = text
    for e in sorted(taken, key=lambda e: (e.start, e.end), reverse=True):
        out = out[:e.start] + e.content + out[e.end:]
    return out


def fix_text(text: str, path: str, options: ShellOptions, *, unsafe: bool = False,
             max_rounds: int = 100) -> str:
    for _ in range(max_rounds):
        diags = analyze(text, path, options).diagnostics
        fixes = [d.fix for d in diags if d.fix is not None and (
            d.fix.applicability is Applicability.SAFE
            or (unsafe and d.fix.applicability is Applicability.UNSAFE))]
        if not fixes:
            return text
        new = apply_edits(text, fixes)
        if new == text:
            return text
        text = new
    return text
