"""The GitHub Action (action.yml): its steps' commands run here as the runner would run them
(bash, the step's `env:` with the `${{ ... }}` expressions the runner substitutes, the
`GITHUB_*` files), and the SARIF they produce is valid, with fingerprints that survive line
moves (docs/ci.md)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
ACTION = YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = {s["name"]: s for s in ACTION["runs"]["steps"]}
DEVLINT_BIN = str(Path(sys.executable).parent)


def _expand(value: str, inputs: dict, context: dict) -> str:
    """The runner's substitution of `${{ inputs.X }}` and `${{ steps.S.outputs.O }}`."""
    def one(m):
        expr = m.group(1).strip()
        if expr.startswith("inputs."):
            return str(inputs[expr[len("inputs."):]])
        return str(context[expr])
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def _inputs(**given) -> dict:
    out = {k: v.get("default", "") for k, v in ACTION["inputs"].items()}
    out.update(given)
    return out


def _run_step(step: dict, inputs: dict, cwd: Path, tmp: Path, context=None, path=None):
    assert step["shell"] == "bash"
    github_output = tmp / "github_output"
    github_path = tmp / "github_path"
    env = {**os.environ, "GITHUB_OUTPUT": str(github_output), "GITHUB_PATH": str(github_path),
           "GITHUB_ACTION_PATH": str(ROOT), "RUNNER_TEMP": str(tmp),
           "PATH": (path or DEVLINT_BIN) + os.pathsep + os.environ["PATH"]}
    for k, v in (step.get("env") or {}).items():
        env[k] = _expand(v, inputs, context or {})
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=env,
                          capture_output=True, text=True)
    outputs = {}
    if github_output.exists():
        for line in github_output.read_text().splitlines():
            k, _, v = line.partition("=")
            outputs[k] = v
    return proc, outputs


@pytest.fixture
def project(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "train.py").write_text(
        'import torch\n\nx = torch.ones(2).to("cuda")\ntorch.cuda.synchronize()\n')
    (repo / "src" / "clean.py").write_text("import torch\n\nx = torch.ones(2)\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def test_the_action_is_a_composite_with_the_documented_inputs():
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) >= {"args", "version", "fail-on-findings"}
    upload = STEPS["Upload to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert STEPS["Set up Python"]["uses"].startswith("actions/setup-python@")


@pytest.mark.parametrize("version, expected", [
    ("", f'install --quiet {ROOT}'), ("0.1.0", "install --quiet devlint==0.1.0")])
def test_install_step(tmp_path, version, expected):
    """The install step, with a stand-in Python that records what pip is asked to install
    (a real install would replace this environment's devlint)."""
    shim = tmp_path / "python"
    shim.write_text(textwrap_shim(tmp_path / "log"))
    shim.chmod(0o755)
    proc, _ = _run_step(STEPS["Install devlint"], _inputs(version=version), tmp_path, tmp_path,
                        {"steps.python.outputs.python-path": str(shim)})
    assert proc.returncode == 0, proc.stderr
    log = (tmp_path / "log").read_text().splitlines()
    assert log[0] == f"-m venv {tmp_path / 'devlint-venv'}"
    assert log[1] == f"-m pip {expected}"
    assert (tmp_path / "github_path").read_text().strip() == str(tmp_path / "devlint-venv" / "bin")


def textwrap_shim(log: Path) -> str:
    """A `python` that logs its arguments; `-m venv DIR` makes DIR/bin/python, itself."""
    return ("#!/bin/bash\n"
            f'echo "$*" >> {log}\n'
            'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; fi\n')


def test_check_step_writes_sarif_and_the_exit_code(project, tmp_path):
    inputs = _inputs(args="src/ --select DL1,DL4")
    proc, outputs = _run_step(STEPS["Run devlint"], inputs, project, tmp_path)
    assert proc.returncode == 0, proc.stderr  # findings are not a failure of this step
    assert outputs == {"exit-code": "1"}
    log = json.loads((project / "devlint.sarif").read_text())
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    import jsonschema

    jsonschema.validate(log, schema)
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
            for r in results] == [("DL101", "src/train.py"), ("DL401", "src/train.py")]
    assert all(set(r["partialFingerprints"]) == {"devlint/v1"} for r in results)
    # then the last step fails the job, as fail-on-findings asks
    fail = STEPS["Fail on findings"]
    assert "steps.check.outputs.exit-code == '1'" in fail["if"]
    proc, _ = _run_step(fail, inputs, project, tmp_path)
    assert proc.returncode == 1 and "findings remain" in proc.stdout


def test_check_step_fails_on_a_usage_error(project, tmp_path):
    proc, outputs = _run_step(STEPS["Run devlint"], _inputs(args="src/ --select NOPE"),
                              project, tmp_path)
    assert proc.returncode == 2 and outputs == {"exit-code": "2"}


def test_clean_repository(project, tmp_path):
    (project / "src" / "train.py").unlink()
    proc, outputs = _run_step(STEPS["Run devlint"], _inputs(), project, tmp_path)
    assert proc.returncode == 0 and outputs == {"exit-code": "0"}
    assert json.loads((project / "devlint.sarif").read_text())["runs"][0]["results"] == []


def test_fingerprints_are_stable_across_line_moves(project, tmp_path):
    def prints():
        _run_step(STEPS["Run devlint"], _inputs(), project, tmp_path)
        results = json.loads((project / "devlint.sarif").read_text())["runs"][0]["results"]
        return [(r["ruleId"], r["partialFingerprints"]["devlint/v1"],
                 r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results]

    before = prints()
    source = project / "src" / "train.py"
    source.write_text("# a new header\n\n" + source.read_text())
    after = prints()
    assert [p[:2] for p in before] == [p[:2] for p in after]
    assert [p[2] + 2 for p in before] == [p[2] for p in after]
    # a second identical finding in the same file gets its own fingerprint
    source.write_text(source.read_text() + 'y = torch.ones(2).to("cuda")\n')
    third = prints()
    assert len({p[1] for p in third}) == 3


def test_the_action_lints_itself_cleanly():
    """The action's own steps are shell devlint reads (a GitHub `action.yml`): nothing to say."""
    proc = subprocess.run([sys.executable, "-m", "devlint", "check", "--no-cache", "action.yml"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_run_step_is_valid_bash():
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert subprocess.run(["bash", "-n"], input=step["run"], text=True).returncode == 0
