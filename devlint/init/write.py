"""`devlint init`: the report (what was found, with evidence) and the `[tool.devlint]` tables,
merged into pyproject.toml without touching anything else."""
from __future__ import annotations

import os
import re

from devlint.init.layer import Candidate, Detected, _expr
from devlint.init.project import MIN_USES


# -- report and config ---------------------------------------------------------------------
def _evidence(c: Candidate, limit: int = 3) -> str:
    uses = sorted(set(c.uses))
    files = sorted({p for p, _ in uses})
    shown = ", ".join(f"{p}:{ln}" for p, ln in uses[:limit])
    more = f", ... ({len(uses)} uses in {len(files)} files)" if len(uses) > limit else ""
    return shown + more


_KIND_TEXT = {"module": "returns a device module", "type": "returns a device-type string",
              "device": "returns a device", "api": "wraps torch.cuda.{api}",
              "idiom": "the project's getattr(torch, <device type>)"}


def report(det: Detected, floor) -> str:
    lines = []
    if floor is not None and floor.version:
        lines.append(f"torch floor: {floor.version} ({floor.source})")
    elif floor is not None:
        lines.append(f"torch floor: none ({floor.source})")
    else:
        lines.append("torch floor: not declared (target-torch stays at the default)")
    if not det.main and not det.tests and not det.api and not det.test_api:
        lines.append("device layer: none found (no function, object or constant that "
                     f"dispatches over two or more device backends is used {MIN_USES}+ times)")
        return "\n".join(lines) + "\n"
    lines.append("device layer:")
    for scope, roles, apis in (("", det.main, det.api), ("tests: ", det.tests, det.test_api)):
        for role in ("device-module", "device", "device-type"):
            c = roles.get(role)
            if c is None:
                continue
            what = _KIND_TEXT["idiom" if c.idiom else c.kind]
            lines.append(f"  {scope}{role} = {_expr(c).replace('{torch}', 'torch')}  "
                         f"({c.where}, {what}"
                         f" over {', '.join(c.backends)}; {len(c.uses)} uses)")
            lines.append(f"      {_evidence(c)}")
        for qual, (c, (expr, _)) in sorted(apis.items()):
            lines.append(f"  {scope}{qual} -> {expr}  ({c.where}; {len(c.uses)} uses)")
            lines.append(f"      {_evidence(c)}")
    return "\n".join(lines) + "\n"


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _role_toml(expr: str, imports, names=()) -> str:
    imps = list(dict.fromkeys(imports))
    imp = _toml_str(imps[0]) if len(imps) == 1 else "[" + ", ".join(map(_toml_str, imps)) + "]"
    out = f"{{ expr = {_toml_str(expr)}, import = {imp}"
    if names:
        out += ", names = [" + ", ".join(map(_toml_str, names)) + "]"
    return out + " }"


def profile_name(root: str) -> str:
    """The project's `[project] name`, else its directory's name (lowercase, TOML-bare)."""
    base = os.path.basename(os.path.abspath(root)).lower()
    try:
        from devlint.profiles import _load_toml_bytes

        with open(os.path.join(root, "pyproject.toml"), "rb") as f:
            declared = _load_toml_bytes(f.read()).get("project", {}).get("name")
        if isinstance(declared, str) and declared.strip():
            base = declared.strip().lower()
    except (OSError, ValueError):
        pass
    name = re.sub(r"[^a-z0-9_-]+", "-", base).strip("-") or "project"
    if name in ("auto", "torch", "vllm"):
        name += "-project"
    return name


def config_text(det: Detected, floor, name: str) -> str:
    """The `[tool.devlint]` tables, as text (deterministic)."""
    lines = ["[tool.devlint]"]
    has_layer = bool(det.main or det.tests or det.api or det.test_api)
    if has_layer:
        lines.append(f"profile = {_toml_str(name)}")
    if floor is not None and floor.version:
        lines.append(f"target-torch = {_toml_str(floor.version)}")
    if has_layer:
        lines += ["", f"[tool.devlint.profiles.{name}]", 'extends = "torch"']
        for role in ("device", "device-type", "device-module"):
            c = det.main.get(role)
            if c is not None:
                lines.append(f"{role} = {_role_toml(_expr(c), (c.import_stmt,), c.names)}")
        if det.api:
            lines += ["", f"[tool.devlint.profiles.{name}.api]"]
            for qual, (c, (expr, imps)) in sorted(det.api.items()):
                lines.append(f"{_toml_str(qual)} = {_role_toml(expr, (c.import_stmt,) + imps)}")
        if det.tests:
            lines += ["", f"[tool.devlint.profiles.{name}.tests]"]
            for role in ("device", "device-type", "device-module"):
                c = det.tests.get(role)
                if c is not None:
                    lines.append(f"{role} = {_role_toml(_expr(c), (c.import_stmt,), c.names)}")
        if det.test_api:
            lines += ["", f"[tool.devlint.profiles.{name}.tests.api]"]
            for qual, (c, (expr, imps)) in sorted(det.test_api.items()):
                lines.append(f"{_toml_str(qual)} = {_role_toml(expr, (c.import_stmt,) + imps)}")
    return "\n".join(lines) + "\n"



# -- writing pyproject.toml ------------------------------------------------------------------
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+|\"[^\"]*\")\s*=")
# the keys of [tool.devlint] that init writes; every other key a user set is kept
_OWN_KEYS = ("profile", "target-torch")


def _sections(text: str) -> list:
    """[(header key or None for the preamble, [lines])]."""
    out = [(None, [])]
    for line in text.splitlines(keepends=True):
        m = _HEADER.match(line)
        if m:
            out.append((m.group(1).replace('"', "").replace("'", "").replace(" ", ""), [line]))
        else:
            out[-1][1].append(line)
    return out


def merged_pyproject(old: str, tables: str, name: str) -> str:
    """`old` with init's tables: [tool.devlint]'s `profile` / `target-torch` set (its other keys
    kept), the `[tool.devlint.profiles.NAME*]` tables replaced, every other line untouched."""
    nl = "\r\n" if "\r\n" in old else "\n"
    new = _sections(tables.replace("\n", nl))[1:]
    top_new = [ln for ln in new[0][1][1:] if ln.strip()]
    own = f"tool.devlint.profiles.{name}"
    out: list = []
    placed = False
    old_secs = _sections(old)
    has_top = any(k == "tool.devlint" for k, _ in old_secs)
    last_devlint = max((i for i, (k, _) in enumerate(old_secs)
                        if k and (k == "tool.devlint" or k.startswith("tool.devlint."))),
                       default=None)
    for i, (key, lines) in enumerate(old_secs):
        if key == own or (key or "").startswith(own + "."):
            lines = []
        elif key == "tool.devlint":
            kept = [ln for ln in lines[1:] if not (_KEY.match(ln) and _KEY.match(ln).group(1)
                                                    in _OWN_KEYS)]
            while kept and not kept[0].strip():
                kept.pop(0)
            lines = [lines[0]] + top_new + kept
        out.extend(lines)
        if i == last_devlint:
            _append_tables(out, new[1:] if has_top else new, nl)
            placed = True
    if not placed:
        _append_tables(out, new, nl)
    text = "".join(out)
    return text


def _append_tables(out: list, sections, nl: str) -> None:
    if not sections:
        return
    while out and not out[-1].strip():
        out.pop()
    if out and not out[-1].endswith(("\n", "\r")):
        out.append(nl)
    for _, lines in sections:
        if out:
            out.append(nl)
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        out.extend(lines)


