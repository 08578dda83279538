"""Which files are discovered (SPEC: `.py`, `.pyi` and shell scripts), and that a file named on
the command line is never skipped silently (issue 13)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from devlint import discovery
from devlint.settings import Settings

HARDCODED = 'import torch\n\nx = torch.zeros(2, device="cuda")\n'


def run(*args, cwd=None):
    e = dict(os.environ, DEVLINT_NO_CACHE="1")
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    return subprocess.run([sys.executable, "-m", "devlint", "check", *args],
                          capture_output=True, text=True, cwd=cwd, env=e)


def test_stub_files_are_discovered_in_a_walk_and_by_name(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "api.pyi").write_text(
        'import torch\n\ndef make(device: str = "cuda") -> torch.Tensor: ...\n')
    (tmp_path / "pkg" / "api.py").write_text(HARDCODED)
    (tmp_path / "notes.txt").write_text(HARDCODED)  # not a Python file: not discovered
    kinds = {os.path.basename(c.path): c.kind
             for c in discovery.discover([str(tmp_path)], lambda p: Settings())}
    assert kinds == {"api.pyi": "python", "api.py": "python"}
    for args in (["."], ["pkg/api.pyi"]):
        p = run("--output-format", "json", *args, cwd=tmp_path)
        assert p.returncode == 1, p.stderr
        found = {(os.path.basename(d["filename"]), d["code"]) for d in json.loads(p.stdout)}
        assert ("api.pyi", "DL103") in found, found


def test_a_named_script_without_a_parser_is_reported_not_skipped_silently(tmp_path):
    (tmp_path / "run.zsh").write_text("CUDA_VISIBLE_DEVICES=0 python train.py\n")
    (tmp_path / "ok.py").write_text(HARDCODED)
    warned = []
    got = list(discovery.discover([str(tmp_path / "run.zsh"), str(tmp_path / "ok.py")],
                                  lambda p: Settings(), warn=warned.append))
    assert [os.path.basename(c.path) for c in got] == ["ok.py"]
    assert len(warned) == 1 and "run.zsh: not linted" in warned[0] and ".zsh" in warned[0]
    # on the command line: a warning naming the file on stderr; the JSON on stdout stays valid
    p = run("--output-format", "json", "run.zsh", "ok.py", cwd=tmp_path)
    assert p.returncode == 1
    assert "devlint: warning: run.zsh: not linted" in p.stderr
    assert {os.path.basename(d["filename"]) for d in json.loads(p.stdout)} == {"ok.py"}
    # alone: exit 0 (nothing linted has a finding; the pre-commit hook's `shell` type passes
    # such files), still with the warning
    p = run("run.zsh", cwd=tmp_path)
    assert p.returncode == 0 and "run.zsh: not linted" in p.stderr


def test_a_script_is_linted_by_its_interpreter_the_same_way_everywhere(tmp_path):
    """Discovery and the shell linter agree on which interpreters devlint parses: a `#!/bin/zsh`
    script without an extension is not linted as bash (in a walk: not a candidate; named: a
    warning), a `#!/bin/sh` one is."""
    from devlint.shell import options

    assert discovery.SHELL_INTERPRETERS == set(options._INTERPRETERS)
    assert not discovery.SHELL_INTERPRETERS & discovery.OTHER_INTERPRETERS
    (tmp_path / "launch_zsh").write_text("#!/usr/bin/env zsh\nCUDA_VISIBLE_DEVICES=0 python t.py\n")
    (tmp_path / "launch_sh").write_text("#!/bin/sh\nCUDA_VISIBLE_DEVICES=0 python t.py\n")
    kinds = {os.path.basename(c.path): c.kind
             for c in discovery.discover([str(tmp_path)], lambda p: Settings())}
    assert kinds == {"launch_sh": "shell"}
    warned = []
    named = [c.path for c in discovery.discover(
        [str(tmp_path / "launch_zsh"), str(tmp_path / "launch_sh")], lambda p: Settings(),
        warn=warned.append)]
    assert named == [str(tmp_path / "launch_sh")] and "launch_zsh: not linted" in warned[0]
