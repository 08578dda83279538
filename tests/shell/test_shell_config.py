"""DL302's variable names come from `[tool.devlint]`."""
from __future__ import annotations

import subprocess
import sys


def test_device_type_variable_is_configurable(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nshell-device-type-var = "ACCEL"\nshell-visibility-var = "VIS"\n')
    (tmp_path / "run.sh").write_text("#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python x.py\n")
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "--fix", "run.sh"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    out = (tmp_path / "run.sh").read_text()
    assert 'case "${ACCEL:-cuda}" in' in out
    assert 'env "$VIS=0" python x.py' in out


def test_bad_variable_name_is_a_config_error(tmp_path):
    (tmp_path / "devlint.toml").write_text('shell-device-type-var = "1BAD"\n')
    (tmp_path / "run.sh").write_text("#!/bin/bash\necho hi\n")
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "run.sh"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert p.returncode == 2 and "shell-device-type-var" in p.stderr
