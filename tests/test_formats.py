"""Every output format: a snapshot of the CLI's output on one small project, plus the checks
each consumer needs (SARIF against the official 2.1.0 schema, GitLab fingerprints that survive
moved lines, GitHub's escaping, well-formed JUnit XML).

Snapshots live in tests/snapshots/<format>.txt. After an intended change, rewrite them with
    DEVLINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_formats.py
and review the diff."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SNAPSHOTS = os.path.join(HERE, "snapshots")
SARIF_SCHEMA = os.path.join(HERE, "data", "sarif-schema-2.1.0.json")

MODEL = '''\
import torch


def load(dst, src):
    dst.copy_(src.to("cuda"))


x = torch.zeros(2, device="cuda")  # état
torch.cuda.empty_cache()
'''
RUN_SH = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 serve.py\n"
# the rules the snapshots cover: new rules must not change them
SELECT = "DL101,DL103,DL302,DL401"
FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif", "gitlab", "junit")


def run(*args, cwd, env=None, input=None):
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e.pop("CI", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd, env=e, input=input)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "pkg" / "clean.py").write_text("import torch\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.sh").write_text(RUN_SH)
    (tmp_path / "broken.py").write_text("def f(:\n    return x.to(\"cuda\")\n")
    return tmp_path


def normalize(text: str, root) -> str:
    from devlint import __version__

    text = text.replace(root.as_uri(), "file:///ROOT").replace(str(root), "/ROOT")
    return text.replace(f'"{__version__}"', '"<VERSION>"')


def sarif_for_snapshot(text: str) -> str:
    """Rule descriptors carry each rule's whole documentation: keep their ids and names in
    the snapshot (the help text is checked against the rules in its own test)."""
    log = json.loads(text)
    driver = log["runs"][0]["tool"]["driver"]
    driver["rules"] = [{"id": r["id"], "name": r["name"]} for r in driver["rules"]
                       if r["id"] in SELECT.split(",") + ["DL999"]]
    for result in log["runs"][0]["results"]:
        result.pop("ruleIndex", None)
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def check_snapshot(name: str, actual: str) -> None:
    path = os.path.join(SNAPSHOTS, name)
    if os.environ.get("DEVLINT_UPDATE_SNAPSHOTS"):
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(actual)
    with open(path, encoding="utf-8") as f:
        expected = f.read()
    assert actual == expected, f"{name} changed; rerun with DEVLINT_UPDATE_SNAPSHOTS=1 to accept"


@pytest.mark.parametrize("fmt", FORMATS)
def test_snapshot(project, fmt):
    p = run("--select", SELECT, "--output-format", fmt, ".", cwd=project)
    assert p.returncode == 1, p.stderr
    out = normalize(p.stdout, project)
    if fmt == "sarif":
        out = sarif_for_snapshot(out)
    check_snapshot(f"{fmt}.txt", out)


def test_statistics_snapshot(project):
    p = run("--select", SELECT, "--statistics", ".", cwd=project)
    check_snapshot("statistics.txt", p.stdout)


def test_the_command_line_and_the_reporters_list_the_same_formats():
    from devlint import cli, reporters

    assert cli.FORMATS == reporters.FORMATS == FORMATS


def test_sarif_validates_against_the_official_schema(project):
    import jsonschema

    with open(SARIF_SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    p = run("--output-format", "sarif", ".", cwd=project)
    log = json.loads(p.stdout)
    jsonschema.Draft4Validator(schema).validate(log)
    results = log["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"DL101", "DL103", "DL302", "DL401", "DL999"}
    # an empty run is valid too
    clean = run("--output-format", "sarif", "pkg/clean.py", cwd=project)
    assert clean.returncode == 0
    jsonschema.Draft4Validator(schema).validate(json.loads(clean.stdout))


def test_sarif_rules_carry_their_documentation_and_fixes_their_edits(project):
    from devlint.reporters import documented_rules

    log = json.loads(run("--output-format", "sarif", ".", cwd=project).stdout)
    run0 = log["runs"][0]
    rules = {r["id"]: r for r in run0["tool"]["driver"]["rules"]}
    for rule in documented_rules():
        assert rules[rule.code]["help"]["markdown"] == rule.doc()
        assert rules[rule.code]["shortDescription"]["text"] == rule.summary
    dl103 = next(r for r in run0["results"] if r["ruleId"] == "DL103")
    assert run0["tool"]["driver"]["rules"][dl103["ruleIndex"]]["id"] == "DL103"
    change = dl103["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"] == {"uri": "pkg/model.py", "uriBaseId": "%SRCROOT%"}
    rep = change["replacements"][0]
    assert rep["deletedRegion"] == {"startLine": 8, "startColumn": 27, "endLine": 8,
                                    "endColumn": 33}
    assert rep["insertedContent"]["text"] == ('torch.accelerator.current_accelerator() if '
                                              'torch.accelerator.is_available() else "cpu"')
    assert dl103["properties"]["fixApplicability"] == "safe"
    assert run0["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.as_uri() + "/"


def _gitlab(project):
    return json.loads(run("--select", "DL103", "--output-format", "gitlab", "pkg",
                          cwd=project).stdout)


def test_gitlab_fingerprints_are_stable_when_lines_move(project):
    model = project / "pkg" / "model.py"
    model.write_text(MODEL + 'y = torch.zeros(2, device="cuda")\n', encoding="utf-8")
    before = _gitlab(project)
    model.write_text("# a new header line\n\n" + model.read_text(encoding="utf-8"),
                     encoding="utf-8")
    after = _gitlab(project)
    assert [i["location"]["lines"]["begin"] for i in after] == \
        [i["location"]["lines"]["begin"] + 2 for i in before]
    assert [i["fingerprint"] for i in after] == [i["fingerprint"] for i in before]
    # the same flagged text twice in a file: two distinct issues
    assert len({i["fingerprint"] for i in after}) == len(after) == 2
    assert all(i["check_name"] == "DL103" and i["severity"] and i["description"] for i in after)


def test_github_escapes_properties_and_data(tmp_path):
    (tmp_path / "a,b%.py").write_text('import torch\nx = torch.zeros(2, device="cuda")\n')
    p = run("--output-format", "github", ".", cwd=tmp_path)
    line = p.stdout.strip()
    assert line.startswith("::error title=devlint (DL103),file=a%2Cb%25.py,line=2,col=27,"
                           "endLine=2,endColumn=33::DL103 ")


def test_junit_is_well_formed(project):
    p = run("--select", SELECT, "--output-format", "junit", ".", cwd=project)
    root = ET.fromstring(p.stdout)
    assert root.tag == "testsuites" and root.get("failures") == "5"
    cases = root.findall("./testsuite/testcase")
    assert {c.get("name") for c in cases} == {"org.devlint.DL101", "org.devlint.DL103",
                                               "org.devlint.DL302", "org.devlint.DL401",
                                               "org.devlint.DL999"}
    clean = ET.fromstring(run("--output-format", "junit", "pkg/clean.py", cwd=project).stdout)
    assert clean.get("failures") == "0" and clean.find("./testsuite/testcase") is not None


def test_output_file(project):
    p = run("--output-format", "json", "-o", "report.json", ".", cwd=project)
    assert p.returncode == 1 and p.stdout == ""
    assert json.loads((project / "report.json").read_text())


def test_output_format_from_the_environment_and_the_config(project):
    env = {"DEVLINT_OUTPUT_FORMAT": "json-lines"}
    p = run("--select", "DL103", "pkg", cwd=project, env=env)
    assert [json.loads(line)["code"] for line in p.stdout.splitlines()] == ["DL103"]
    assert run(".", cwd=project, env={"DEVLINT_OUTPUT_FORMAT": "xml"}).returncode == 2
    (project / "devlint.toml").write_text('output-format = "github"\n')
    p = run("--select", "DL103", "pkg", cwd=project)
    assert p.stdout.startswith("::error title=devlint (DL103)")
    # the command line (and the environment) win over the config
    assert run("--select", "DL103", "pkg", cwd=project, env=env).stdout.startswith("{")
    p = run("--select", "DL103", "--output-format", "concise", "pkg", cwd=project, env=env)
    assert p.stdout.startswith("pkg/model.py:8:27: DL103")
    (project / "devlint.toml").write_text('output-format = "html"\n')
    p = run(".", cwd=project)
    assert p.returncode == 2 and "output-format" in p.stderr and "devlint.toml" in p.stderr


def test_reporters_are_imported_lazily(tmp_path):
    (tmp_path / "m.py").write_text("import torch\n")
    code = ("import sys\nfrom devlint.cli import main\n"
            "try:\n    main(['check', 'm.py'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('devlint.reporters.')))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path)
    loaded = eval(p.stdout.strip().splitlines()[-1])
    assert "devlint.reporters.concise" in loaded
    assert not {f"devlint.reporters.{m}" for m in ("full", "json", "json_lines", "github",
                                                    "sarif", "gitlab", "junit")} & set(loaded)
