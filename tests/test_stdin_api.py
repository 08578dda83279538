"""Editors and scripts: `-` with --stdin-filename, and the Python API the CLI itself uses."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from _sample_project import HARDCODED


def run(*args, cwd, input=None, env=None, binary=False):
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=not binary, cwd=cwd, env=e, input=input)


def test_stdin_lint_reports_under_the_given_name(tmp_path):
    p = run("--stdin-filename", "pkg/m.py", "-", cwd=tmp_path, input=HARDCODED)
    assert p.returncode == 1
    assert p.stdout.splitlines()[:2] == [
        "pkg/m.py:3:27: DL103 [*] Hardcoded CUDA device in `device=\"cuda\"`",
        "pkg/m.py:4:1: DL401 [*] `torch.cuda.synchronize` is CUDA-only; use "
        "`torch.accelerator.synchronize`"]
    # `-` alone works too, named "-"
    p = run("--output-format", "json", "-", cwd=tmp_path, input=HARDCODED)
    assert {d["filename"] for d in json.loads(p.stdout)} == {"-"}
    # the source on stdin is what counts, not the file of that name
    (tmp_path / "m.py").write_text("x = 1\n")
    assert run("--stdin-filename", "m.py", "-", cwd=tmp_path, input=HARDCODED).returncode == 1


def test_stdin_fix_prints_the_fixed_source_and_reports_on_stderr(tmp_path):
    p = run("--fix", "--stdin-filename", "m.py", "-", cwd=tmp_path, input=HARDCODED)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ("import torch\n\nx = torch.zeros(2, device=torch.accelerator."
                        "current_accelerator() if torch.accelerator.is_available() else "
                        '"cpu")\nif torch.accelerator.is_available():\n'
                        "    torch.accelerator.synchronize()\n")
    assert "2 fixed" in p.stderr
    assert not (tmp_path / "m.py").exists()
    # nothing to fix: the source comes back unchanged
    p = run("--fix", "--stdin-filename", "m.py", "-", cwd=tmp_path, input="x = 1\n")
    assert p.returncode == 0 and p.stdout == "x = 1\n"


def test_stdin_fix_keeps_bytes_encoding_and_line_endings(tmp_path):
    src = ('# -*- coding: latin-1 -*-\r\nimport torch\r\n# caf\xe9\r\n'
           'x = torch.ones(2).cuda()\r\n').encode("latin-1")
    p = run("--fix", "--stdin-filename", "l1.py", "-", cwd=tmp_path, input=src, binary=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count(b"\r\n") == 4 and b"caf\xe9" in p.stdout
    assert b".cuda()" not in p.stdout


def test_stdin_diff_and_shell(tmp_path):
    p = run("--diff", "--stdin-filename", "m.py", "-", cwd=tmp_path, input=HARDCODED)
    assert p.returncode == 1 and "+    torch.accelerator.synchronize()" in p.stdout
    p = run("--stdin-filename", "run.sh", "-", cwd=tmp_path,
            input="#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n")
    assert p.returncode == 1 and "run.sh:2:1: DL302" in p.stdout


def test_stdin_filename_takes_the_files_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nselect = ["DL4"]\nper-file-ignores = { "plat/*" = ["ALL"] }\n'
        'exclude = ["gen"]\n')
    codes = lambda name, *a: [d["code"] for d in json.loads(run(  # noqa: E731
        "--output-format", "json", *a, "--stdin-filename", name, "-", cwd=tmp_path,
        input=HARDCODED).stdout)]
    assert codes("m.py") == ["DL401"]
    assert codes("plat/m.py") == []
    assert codes("gen/m.py") == ["DL401"]  # excludes apply to stdin only with --force-exclude
    assert codes("gen/m.py", "--force-exclude") == []
    p = run("--fix", "--force-exclude", "--stdin-filename", "gen/m.py", "-", cwd=tmp_path,
            input=HARDCODED)
    assert p.returncode == 0 and p.stdout == HARDCODED


def test_stdin_usage_errors(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    assert run("-", "a.py", cwd=tmp_path, input="").returncode == 2
    assert run("--stdin-filename", "m.py", "a.py", cwd=tmp_path).returncode == 2


def test_api_matches_the_command_line(tmp_path):
    import devlint
    from devlint.api import fix_source

    (tmp_path / "m.py").write_text(HARDCODED)
    cli = json.loads(run("--output-format", "json", "m.py", cwd=tmp_path).stdout)
    diags = devlint.check_source(HARDCODED, path="m.py")
    assert [(d.code, list(d.location), list(d.end_location)) for d in diags] == \
        [(c["code"], [c["location"]["row"], c["location"]["column"]],
          [c["end_location"]["row"], c["end_location"]["column"]]) for c in cli]
    assert diags[0].fix.edits[0].content == cli[0]["fix"]["edits"][0]["content"]
    fixed, remaining, failures = fix_source(HARDCODED, path="m.py")
    assert failures == [] and remaining == []
    assert fixed == run("--fix", "--stdin-filename", "m.py", "-", cwd=tmp_path,
                        input=HARDCODED).stdout


def test_api_overrides_settings_and_shell(tmp_path):
    import devlint
    from devlint.api import settings_for
    from devlint.settings import Settings

    assert [d.code for d in devlint.check_source(HARDCODED, select=["DL4"])] == ["DL401"]
    s = Settings(select=("DL103",))
    assert [d.code for d in devlint.check_source(HARDCODED, settings=s)] == ["DL103"]
    assert [d.code for d in devlint.check_source(
        "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n", path="run.sh")] == ["DL302"]
    assert [d.code for d in devlint.check_source("def f(:\n  x.to('cuda')\n")] == ["DL999"]
    (tmp_path / "devlint.toml").write_text('select = ["DL401"]\n')
    s = settings_for(str(tmp_path / "pkg" / "m.py"))
    assert s.select == ("DL401",) and s.config_path == str(tmp_path / "devlint.toml")
    assert [d.code for d in devlint.check_source(HARDCODED, "m.py", s)] == ["DL401"]
