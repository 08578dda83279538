"""Which files are shell scripts, which dialect they are, and that Python-only runs never
import the shell parser."""
from __future__ import annotations

import subprocess
import sys

import pytest

from devlint.shell import (
    ShellOptions,
    detect_dialect,
    is_shell_path,
    shebang_interpreter,
)


@pytest.mark.parametrize("path,head,expected", [
    ("run.sh", b"", True),
    ("RUN.SH", b"echo hi\n", True),
    ("lib.bash", b"", True),
    ("tools/launch", b"#!/bin/bash\nset -e\n", True),
    ("tools/launch", b"#!/usr/bin/env bash\n", True),
    ("tools/launch", b"#! /bin/sh -e\n", True),
    ("tools/launch", b"#!/usr/bin/env -S bash -euo pipefail\n", True),
    ("tools/launch", b"#!/bin/dash\r\n", True),
    ("tools/launch", b"\xef\xbb\xbf#!/bin/bash\n", True),
    ("tools/launch", b"#!/usr/bin/env python3\n", False),
    ("tools/launch", b"#!/bin/zsh\n", False),
    ("tools/launch", b"echo '#!/bin/bash'\n", False),
    ("notes.txt", b"", False),
])
def test_is_shell_path(path, head, expected):
    assert is_shell_path(path, head) is expected


def test_shebang_interpreter_skips_env_options_and_assignments():
    assert shebang_interpreter(b"#!/usr/bin/env -S LANG=C bash -e\n") == "bash"
    assert shebang_interpreter(b"#!/usr/bin/env\n") is None
    assert shebang_interpreter("#!/bin/sh\n") == "sh"
    assert shebang_interpreter(b"echo\n") is None


@pytest.mark.parametrize("text,path,expected", [
    ("#!/bin/bash\n", "x.sh", "bash"),
    ("#!/bin/sh\n", "x.bash", "sh"),
    ("#!/usr/bin/env dash\n", "x", "sh"),
    ("echo hi\n", "x.bash", "bash"),
    ("echo hi\n", "x.sh", None),  # decided from the file's own syntax
])
def test_detect_dialect(text, path, expected):
    assert detect_dialect(text, path) == expected


def test_dialect_of_a_sh_file_without_shebang_comes_from_its_syntax():
    from devlint.shell import analyze_shell

    assert analyze_shell('if [[ -n "$X" ]]; then echo; fi\n', "x.sh").dialect == "bash"
    assert analyze_shell('arr=(a b)\n', "x.sh").dialect == "bash"
    assert analyze_shell('if [ -n "$X" ]; then echo; fi\n', "x.sh").dialect == "sh"
    assert analyze_shell("echo\n", "x.sh", ShellOptions(dialect="bash")).dialect == "bash"


def test_options_reject_names_that_are_not_shell_variables():
    with pytest.raises(ValueError):
        ShellOptions(visibility_var="DEVICE-ENV")
    with pytest.raises(ValueError):
        ShellOptions(device_type_var="1X")
    with pytest.raises(ValueError):
        ShellOptions(dialect="zsh")


def test_importing_devlint_shell_does_not_import_the_parser():
    code = (
        "import sys, devlint.shell\n"
        "from devlint.shell import is_shell_path, ShellOptions\n"
        "is_shell_path('a.sh', b'')\n"
        "assert 'tree_sitter' not in sys.modules, 'parser imported eagerly'\n"
        "assert 'tree_sitter_bash' not in sys.modules\n"
        "devlint.shell.lint_shell('echo hi\\n', 'a.sh')\n"
        "assert 'tree_sitter_bash' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_python_only_check_does_not_import_the_parser(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import torch\nx = torch.zeros(1).to('cuda')\n")
    code = (
        "import sys\n"
        "from devlint.api import check_source\n"
        f"check_source(open({str(src)!r}).read(), {str(src)!r})\n"
        "assert 'tree_sitter' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
