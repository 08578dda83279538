"""Shell scripts in CI workflow YAML: GitHub Actions steps' `run:` (workflows and composite
actions; not under a `shell:` other than bash/sh), GitLab CI jobs' `script:`,
`before_script:` and `after_script:`, Buildkite steps' `command:` / `commands:`.

ruamel.yaml (a round-trip parser) reads the file and gives each scalar's exact place; the
script the shell runs is the scalar's value. Where the file holds that value verbatim, line by
line (a literal block `|`, a one-line plain or quoted scalar without escapes), offsets map
both ways (`embedded.Region`): findings land on the right row and column of the YAML file,
and a fix is an edit of the file itself, so comments, anchors, quoting and every other line
stay as they are. A fix that adds lines is applied only inside a literal block, each new line
indented like the block; in a one-line `run:` it is shown (display-only), not applied. Other
scalars (folded `>`, escapes) are linted and reported at the scalar's start, without a fix.
Every fixed file is parsed again and its changed scripts checked with `bash -n` before it is
written.

A YAML comment on the line of a one-line script suppresses like a shell comment would:
`run: CUDA_VISIBLE_DEVICES=0 pytest  # noqa: DL302`; `# devlint: file-ignore[DL302]`
anywhere in the file turns the rule off for it.
"""
from __future__ import annotations

import re

from devlint.sources.embedded import (Outcome, Region, fix_outcome, may_concern_shell,
                                      shell_findings)

_GITLAB_SCRIPT_KEYS = ("before_script", "script", "after_script")
_GITLAB_NOT_JOBS = frozenset({"stages", "variables", "include", "workflow", "image", "services",
                              "cache", "before_script", "after_script", "types", "pages"})
_POSIX_SHELLS = frozenset({"bash", "sh"})


class YamlError(ValueError):
    """The file is not YAML ruamel.yaml can read."""


def _compose(text: str):
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="rt").compose(text)
    except YAMLError as e:
        raise YamlError(str(e).strip().splitlines()[0] if str(e).strip() else "invalid YAML",
                        getattr(getattr(e, "problem_mark", None), "index", 0)) from None


def _kind(node) -> str:
    return type(node).__name__  # MappingNode, SequenceNode, ScalarNode


def _get(mapping, key: str):
    if mapping is None or _kind(mapping) != "MappingNode":
        return None
    for k, v in mapping.value:
        if _kind(k) == "ScalarNode" and k.value == key:
            return v
    return None


def _scalar(node) -> str | None:
    return node.value if node is not None and _kind(node) == "ScalarNode" else None


def _local_tag(node) -> bool:
    """A tag of the application's own (GitLab's `!reference [.job, script]`): not a script."""
    tag = getattr(node, "tag", None)
    tag = str(getattr(tag, "value", tag) or "")
    return tag.startswith("!") and not tag.startswith("!!")


def _scalars(node):
    """A scalar, or every scalar of a (nested) sequence of them."""
    if node is None or _local_tag(node):
        return
    if _kind(node) == "ScalarNode":
        yield node
    elif _kind(node) == "SequenceNode":
        for item in node.value:
            yield from _scalars(item)


def _posix(shell: str | None) -> bool:
    """A `shell:` GitHub runs the script with that DL302 can read (bash, sh, or their
    `bash -e {0}` forms), or none (bash on Linux and macOS runners)."""
    if not shell:
        return True
    first = shell.split()[0].rsplit("/", 1)[-1]
    return first in _POSIX_SHELLS


def sniff(root) -> str:
    """The CI system a YAML file is for, from its top-level keys (a file named explicitly)."""
    if _kind(root) == "MappingNode":
        if _get(root, "jobs") is not None or _get(root, "runs") is not None:
            return "github"
        if _get(root, "steps") is not None:
            return "buildkite"
        return "gitlab"
    return "buildkite" if root is not None and _kind(root) == "SequenceNode" else "gitlab"


def script_nodes(root, flavor: str):
    """(scalar node, what it is) of every shell script in the file."""
    if root is None:
        return
    if flavor == "github":
        default = _scalar(_get(_get(_get(root, "defaults"), "run"), "shell"))
        jobs = _get(root, "jobs")
        groups = []
        if jobs is not None and _kind(jobs) == "MappingNode":
            for _, job in jobs.value:
                shell = _scalar(_get(_get(_get(job, "defaults"), "run"), "shell")) or default
                groups.append((_get(job, "steps"), shell))
        groups.append((_get(_get(root, "runs"), "steps"), None))  # a composite action
        for steps, shell in groups:
            if steps is None or _kind(steps) != "SequenceNode":
                continue
            for step in steps.value:
                run = _get(step, "run")
                if _scalar(run) is not None and _posix(_scalar(_get(step, "shell")) or shell):
                    yield run, "a one-line `run:`"
    elif flavor == "gitlab":
        if _kind(root) != "MappingNode":
            return
        for key, job in root.value:
            if _kind(job) != "MappingNode" and not (
                    key.value in ("before_script", "after_script")):
                continue
            if key.value in ("before_script", "after_script"):
                for s in _scalars(job):
                    yield s, f"a one-line `{key.value}:` item"
                continue
            if key.value in _GITLAB_NOT_JOBS:
                continue
            for name in _GITLAB_SCRIPT_KEYS:
                for s in _scalars(_get(job, name)):
                    yield s, f"a one-line `{name}:` item"
    else:  # buildkite
        yield from _buildkite(root)


def _buildkite(node):
    if node is None:
        return
    if _kind(node) == "SequenceNode":
        for item in node.value:
            yield from _buildkite(item)
    elif _kind(node) == "MappingNode":
        for key, value in node.value:
            if _kind(key) == "ScalarNode" and key.value in ("command", "commands"):
                for s in _scalars(value):
                    yield s, f"a one-line `{key.value}:`"
            elif _kind(key) == "ScalarNode" and key.value in ("steps", "group"):
                yield from _buildkite(value)
            elif _kind(value) in ("SequenceNode", "MappingNode") and key.value != "env":
                yield from _buildkite(value)


def region_of(text: str, node, where: str) -> Region:
    """The scalar's script, mapped onto the file where the file holds it verbatim."""
    start, end = node.start_mark.index, node.end_mark.index
    value = node.value.replace("\a", "")
    style = node.style
    raw = text[start:end]
    if style == "|":
        reg = _literal_block(text, start, end, value, where)
        if reg is not None:
            return reg
    elif "\n" not in raw and "\r" not in raw:
        inner, quote = raw, ""
        if style in ("'", '"') and len(raw) >= 2:
            inner, quote = raw[1:-1], style
            start += 1
        if inner == value and not (quote == '"' and "\\" in inner):
            reg = Region("", where=where)
            reg.add(value, start)
            reg.quote = quote or "plain"
            return reg
    reg = Region(value, where="a YAML scalar devlint cannot edit in place (folded or escaped)")
    reg.anchor = node.start_mark.index
    return reg


def _literal_block(text: str, start: int, end: int, value: str, where: str) -> Region | None:
    header_end = text.find("\n", start)
    if header_end == -1:
        return None
    header = text[start:header_end].split("#", 1)[0].strip()
    if re.fullmatch(r"\|[+-]?", header) is None:
        return None  # an explicit indentation indicator: rare, left unmapped
    pos = header_end + 1
    lines = []
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl == -1 else nl + 1
        lines.append((pos, text[pos:stop]))
        pos = stop
    indent = None
    for _, line in lines:
        if line.strip():
            indent = len(line) - len(line.lstrip(" "))
            break
    if not indent:
        return None
    reg = Region("", indent=" " * indent, where="a literal block")
    for at, line in lines:
        body = line.rstrip("\r\n")
        if body.strip() == "" and len(body) <= indent:
            reg.add(line[len(body):], at + len(body))
        else:
            reg.add(line[indent:], at + indent)
    if reg.text.rstrip("\n") != value.rstrip("\n"):
        return None
    return reg


# GitHub's expressions, substituted into the script before the shell reads it
_GITHUB_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")


def regions(text: str, flavor: str | None) -> list:
    root = _compose(text)
    flavor = flavor or sniff(root)
    out = [region_of(text, node, where) for node, where in script_nodes(root, flavor)]
    if flavor == "github":
        for reg in out:
            if "${{" in reg.text:
                reg.mask(_GITHUB_EXPRESSION)
    return out


# -- suppression by YAML comments ----------------------------------------------------------------

def _suppressed(text: str, diags: list, reg_ends: dict) -> list:
    from devlint.engine.suppression import _FILE_IGNORE, _IGNORE, _NOQA, _codes

    def covers(m, code):
        codes = _codes(m.group("codes"))
        return codes is None or any(code.startswith(c) for c in codes)

    for m in _FILE_IGNORE.finditer(text):
        if covers(m, "DL302") and _is_yaml_comment(text, m.start()):
            return []
    out = []
    for d in diags:
        end = reg_ends.get(id(d))
        if end is not None:
            line_end = text.find("\n", end)
            tail = text[end:len(text) if line_end == -1 else line_end]
            hit = [m for rx in (_NOQA, _IGNORE) for m in rx.finditer(tail)
                   if covers(m, d.code)]
            if hit and "#" in tail.split(hit[0].group(0))[0] + "#":
                continue
        out.append(d)
    return out


def _is_yaml_comment(text: str, at: int) -> bool:
    line_start = text.rfind("\n", 0, at) + 1
    before = text[line_start:at]
    return before.strip() == "" or before.endswith((" ", "\t"))


# -- the driver ---------------------------------------------------------------------------------

def run_ci_yaml(path: str, text: str, settings, mode: str, unsafe: bool) -> Outcome:
    from devlint.rules.registry import enabled_codes
    from devlint.sources.names import ci_yaml_name

    if "DL302" not in enabled_codes(settings, path) or not may_concern_shell(text):
        return Outcome()
    flavor = ci_yaml_name(path)

    def lint(t):
        try:
            found = regions(t, flavor)
        except YamlError as e:
            return [_syntax_error(path, t, e)]
        diags, ends = [], {}
        for reg in found:
            if not may_concern_shell(reg.text):
                continue
            for d in shell_findings(reg, path, settings):
                if reg.anchor is None and reg.quote is not None:
                    ends[id(d)] = reg.pieces[-1][2] + reg.pieces[-1][1] - reg.pieces[-1][0] + (
                        1 if reg.quote in ("'", '"') else 0)
                diags.append(d)
        diags = _suppressed(t, diags, ends)
        from devlint.engine.linter import locate
        from devlint.source import Locator

        locate(diags, Locator(t))
        diags.sort(key=lambda d: (d.start, d.code))
        from devlint.rules.registry import drop_unfixable

        return drop_unfixable(diags, settings)

    if mode == "check":
        return Outcome(lint(text))
    before = {r.text for r in regions(text, flavor)} if _parses(text) else set()
    return fix_outcome(text, lint, lambda t: validate(t, flavor, before, path), unsafe)


def _parses(text: str) -> bool:
    try:
        _compose(text)
        return True
    except YamlError:
        return False


def validate(text: str, flavor, before: set, path: str) -> str | None:
    """None when the fixed file is YAML whose scripts are all still mapped as before and
    every changed script passes `bash -n`."""
    from devlint.shell import validate_shell

    try:
        found = regions(text, flavor)
    except YamlError as e:
        return f"the fixed file is not valid YAML: {e}"
    for reg in found:
        if reg.text in before:
            continue
        if reg.anchor is not None:
            return "a fixed script is no longer held verbatim by the file"
        err = validate_shell(reg.text, path)
        if err:
            return err
    return None


def _syntax_error(path: str, text: str, err: YamlError):
    from devlint.diagnostics import Diagnostic
    from devlint.source import Locator

    at = err.args[1] if len(err.args) > 1 and isinstance(err.args[1], int) else 0
    at = max(0, min(at, len(text)))
    d = Diagnostic("DL999", "syntax-error", f"YAML: {err.args[0]}", path, at, at)
    loc = Locator(text)
    d.location = d.end_location = loc.rowcol(at)
    d.noqa_row = d.location[0]
    return d
