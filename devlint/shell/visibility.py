"""The visibility analysis: where a shell script hardcodes CUDA_VISIBLE_DEVICES /
HIP_VISIBLE_DEVICES (prefixes, exports, reads, env commands, strings later eval'd), each
as a finding with its edits (`fixwriter`) and its diagnostic (`findings`)."""
from __future__ import annotations

import os
import re

from devlint.diagnostics import Edit
from devlint.shell.findings import _Diagnostics, _Finding
from devlint.shell.fixwriter import _FixWriter
from devlint.shell.launchers import _Launchers
from devlint.shell.options import ShellOptions
from devlint.shell.parse import (
    _ancestors, _BUILTINS, _command_name_text, _Doc, doc_field, _NAME_CHAR, _PLAIN_WORD,
    _SHELLS, _sq, _unquote_word, _walk,
)
from devlint.shell.table import VisibilityTable


class _Analysis(_FixWriter, _Diagnostics, _Launchers):
    """One script's DL302 findings: collects its facts (assignments, selectors, sinks),
    chooses the visibility selector, and turns each hardcoded use into a finding."""

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
            elif node.type == "command":
                for f in self.launcher_findings(node):  # srun --export=, docker run -e
                    findings.setdefault(f.name_start, f)
                continue
            else:
                continue
            if f is not None:
                findings.setdefault(f.name_start, f)
        for f in self._from_sinks():
            findings.setdefault(f.name_start, f)
        nvidia = self._nvidia_functions()
        return sorted((f for f in findings.values()
                       if not any(lo <= f.name_start < hi for lo, hi in nvidia)),
                      key=lambda f: f.name_start)

    def _nvidia_functions(self) -> list[tuple[int, int]]:
        """The spans of the functions built on `nvidia-smi` (`devlint.evidence.nvidia_tool`):
        the visibility variable they set, read or print names the GPUs it numbered."""
        from devlint.evidence.nvidia_tool import shell_function_tool

        doc = self.doc
        spans = []
        for fn in _walk(self.root):
            if fn.type != "function_definition":
                continue
            names = [_command_name_text(doc, c) for c in _walk(fn) if c.type == "command"]
            if shell_function_tool(names):
                spans.append((doc.start(fn), doc.end(fn)))
        return spans

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
