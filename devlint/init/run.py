"""`devlint init`: detect the layer, report it, write pyproject.toml once confirmed."""
from __future__ import annotations

import os

from devlint.init.layer import choose, count_uses, find_candidates
from devlint.init.project import Project
from devlint.init.write import _sections, config_text, merged_pyproject, profile_name, report


def detect(root: str):
    from devlint.rules._api_table import device_module_names
    from devlint.torch_floor import floor_in

    dm = device_module_names()
    project = Project(root)
    cands = find_candidates(project, dm)
    count_uses(project, cands)
    return choose(cands, dm), floor_in(root)



def run(path: str, yes: bool, echo, confirm) -> int:
    """`devlint init PATH`: 0 written or already up to date, 1 not written (declined, or no
    confirmation possible), 2 bad usage."""
    from devlint.profiles import _load_toml_bytes
    from devlint.config import settings_from_table
    from devlint.errors import ConfigError

    root = os.path.abspath(path)
    if not os.path.isdir(root):
        echo(f"devlint: error: {path}: not a directory", err=True)
        return 2
    det, floor = detect(root)
    echo(report(det, floor))
    name = profile_name(root)
    tables = config_text(det, floor, name)
    if tables.strip() == "[tool.devlint]":
        echo("nothing to write")
        return 0
    target = os.path.join(root, "pyproject.toml")
    old, bom = "", b""
    if os.path.isfile(target):
        with open(target, "rb") as f:
            raw = f.read()
        bom = b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b""
        old = raw[len(bom):].decode("utf-8")
    new = merged_pyproject(old, tables, name)
    try:
        data = _load_toml_bytes(new.encode("utf-8"))
        settings_from_table(data.get("tool", {}).get("devlint", {}), target)
    except ConfigError as e:
        echo(f"devlint: error: the merged configuration is not valid: {e}", err=True)
        return 2
    except ValueError as e:
        echo(f"devlint: error: {target}: cannot merge into it ({e})", err=True)
        return 2
    rel = os.path.relpath(target)
    if new == old:
        echo(f"{rel}: [tool.devlint] is up to date; nothing to change")
        return 0
    echo(f"{rel} would get:\n\n{tables}")
    existing = any(k == "tool.devlint" or k.startswith("tool.devlint.")
                   for k, _ in _sections(old) if k)
    if not yes:
        question = (f"{rel} already has [tool.devlint]; update its profile, target-torch and "
                    f"[tool.devlint.profiles.{name}]?" if existing else f"Write it to {rel}?")
        answer = confirm(question)
        if answer is None:
            echo("not written: no terminal to confirm on; re-run with --yes", err=True)
            return 1
        if not answer:
            echo("not written")
            return 1
    from devlint.engine.atomic import write_atomic

    write_atomic(target, bom + new.encode("utf-8"), keep_mode=os.path.isfile(target))
    echo(f"wrote {rel}")
    return 0

