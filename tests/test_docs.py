"""The documentation builds, and the rule pages match the code.

docs/rules/*.md are generated from the rule classes' docstrings. After adding or changing a
rule, regenerate them and commit the result:

    python docs/gen_rules.py

(`python docs/gen_rules.py --check` is what the first test runs.)"""
from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_rule_pages_match_the_rule_classes():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "gen_rules.py"), "--check"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr


def test_every_rule_has_a_page():
    from devlint.reporters import documented_rules

    pages = set(os.listdir(os.path.join(ROOT, "docs", "rules")))
    assert {f"{r.code}.md" for r in documented_rules()} | {"index.md"} == pages


def test_mkdocs_build_strict(tmp_path):
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                        str(tmp_path / "site"), "--config-file",
                        os.path.join(ROOT, "mkdocs.yml")],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "site" / "rules" / "DL101" / "index.html").is_file()
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()


def test_every_check_option_and_format_is_documented():
    from devlint.cli import FORMATS, check

    with open(os.path.join(ROOT, "docs", "index.md"), encoding="utf-8") as f:
        index = f.read()
    with open(os.path.join(ROOT, "docs", "output-formats.md"), encoding="utf-8") as f:
        formats = f.read()
    for param in check.params:
        longs = [o for o in param.opts if o.startswith("--")]
        if longs:
            assert any(o in index for o in longs), f"{longs[0]} is not in docs/index.md"
    for fmt in FORMATS:
        assert f"`{fmt}`" in formats


def test_configuration_reference_lists_every_key():
    from devlint.config import _KEYS

    with open(os.path.join(ROOT, "docs", "configuration.md"), encoding="utf-8") as f:
        text = f.read()
    for key in _KEYS:
        assert re.search(rf"\| `{re.escape(key)}(\.NAME)?` \|", text), key


def test_rule_command_explains_the_rule_and_its_fix_safety():
    p = subprocess.run([sys.executable, "-m", "devlint", "rule", "DL101"], capture_output=True,
                       text=True, cwd=ROOT)
    assert p.returncode == 0
    assert p.stdout.startswith("# device-literal-to (DL101)")
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix",
                    "## Fix safety", "## Profiles"):
        assert section in p.stdout
    assert "unsafe fix" in p.stdout and "safe fix" in p.stdout
