"""Every rule URL devlint prints (JSON `url`, SARIF `helpUri`, `devlint rule --output-format
json`) leads to the rule's page of the documentation built from docs/ (mkdocs.yml)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import urlparse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_rule_url_is_a_page_of_the_built_docs(tmp_path):
    from devlint.diagnostics import docs_url
    from devlint.reporters import documented_rules

    site = tmp_path / "site"
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                        str(site), "--config-file", os.path.join(ROOT, "mkdocs.yml")],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    root = docs_url()
    for rule in documented_rules():
        url = rule.url()
        assert url.startswith(root)
        page = site / url[len(root):] / "index.html"
        assert page.is_file(), url
        assert rule.code in page.read_text(encoding="utf-8")


def test_the_docs_url_can_point_elsewhere(tmp_path):
    """A docs site of one's own (or the `Documentation` URL of the installed distribution):
    every format takes its URLs from the same place."""
    (tmp_path / "a.py").write_text('import torch\nx = torch.ones(1).to("cuda")\n')
    env = dict(os.environ, DEVLINT_DOCS_URL="https://docs.example.org/devlint")
    out = {}
    for fmt in ("json", "sarif"):
        p = subprocess.run([sys.executable, "-m", "devlint", "check", "--no-cache",
                            "--output-format", fmt, "a.py"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
        out[fmt] = json.loads(p.stdout)
    assert out["json"][0]["url"] == "https://docs.example.org/devlint/rules/DL101/"
    driver = out["sarif"]["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://docs.example.org/devlint/"
    assert {urlparse(r["helpUri"]).netloc for r in driver["rules"]} == {"docs.example.org"}
