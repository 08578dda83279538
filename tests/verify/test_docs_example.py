"""docs/verification.md's worked example is real: the case file runs as shown, the pytest-plugin
test module passes, the code quoted in the page is the example's code, and the CI matrix
workflow is well-formed (each job uploads the record it writes; the compare job reads them all)."""
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
PAGE = (ROOT / "docs" / "verification.md").read_text(encoding="utf-8")


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _blocks(lang: str) -> list[str]:
    """The page's fenced code blocks of language ``lang`` ("" for none), in order."""
    blocks, current, current_lang = [], None, None
    for line in PAGE.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, current_lang = [], line[3:].strip()
            else:
                if current_lang == lang:
                    blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def test_the_case_file_runs_as_the_page_shows():
    proc = subprocess.run([sys.executable, "-m", "devlint", "verify", "my_cases.py"], cwd=EXAMPLES,
                          capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = next(b for b in _blocks("") if b.startswith("case                     cpu"))
    if torch.cuda.is_available():  # the page shows a CPU-only machine's output
        assert "my.normalize_rows" in proc.stdout
        return
    out = proc.stdout.splitlines()
    position = 0
    for line in shown.splitlines():
        if line == "...":
            continue
        assert line in out[position:], f"{line!r} not in the output (in this order):\n{proc.stdout}"
        position = out.index(line, position) + 1


def test_the_pytest_plugin_example_passes():
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "devlint.verify.pytest_plugin", "test_my_fix.py"], cwd=EXAMPLES,
                          capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = 2 + (1 if torch.cuda.is_available() else 0)
    assert f"{n} passed" in proc.stdout


def test_quoted_code_is_the_examples_code():
    sources = {name: (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
               for name in ("my_cases.py", "test_my_fix.py")}
    signature, *quoted = _blocks("python")
    assert len(quoted) == 2
    for block, name in zip(quoted, ("my_cases.py", "test_my_fix.py")):
        for line in block.splitlines():
            if line.strip():
                assert line in sources[name], f"{line!r} is quoted in the page but not in docs/examples/{name}"
    # The decorator's documented signature is the real one.
    from devlint.verify import case

    params = [p for p in inspect.signature(case).parameters.values() if p.name != "fn"]
    assert signature.strip() == "@case(" + ", ".join(f"{p.name}={p.default!r}" for p in params) + ")"


def test_ci_matrix_workflow_is_consistent():
    yaml = pytest.importorskip("yaml")
    (text,) = _blocks("yaml")
    workflow = yaml.safe_load(text)
    record, compare = workflow["jobs"]["record"], workflow["jobs"]["compare"]
    kinds = [entry["kind"] for entry in record["strategy"]["matrix"]["include"]]
    assert "cpu" in kinds and len(kinds) >= 3
    assert record["strategy"]["fail-fast"] is False
    steps = record["steps"]
    (run,) = [s["run"] for s in steps if "--record" in s.get("run", "")]
    (upload,) = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
    assert "--record records/${{ matrix.kind }}" in run and "--label ${{ matrix.kind }}" in run
    assert upload["with"]["path"] == "records/${{ matrix.kind }}" and upload["if"] == "always()"
    assert compare["needs"] == "record" and compare["if"] == "always()"
    (download,) = [s for s in compare["steps"] if s.get("uses", "").startswith("actions/download-artifact")]
    assert upload["with"]["name"].replace("${{ matrix.kind }}", "*") == download["with"]["pattern"]
    assert compare["steps"][-1]["run"] == f"devlint verify --compare {download['with']['path']}/*"
