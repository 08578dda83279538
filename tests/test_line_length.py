"""Fixed lines and the project's line length (issue 13: "fixed lines run past any line
length"). devlint does not reformat: a fixed line longer than the project's line length is
named in a note on stderr, so the user runs their formatter; the exit code is the run's."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from devlint.config import ConfigError, settings_from_table
from devlint.line_length import DEFAULT, line_length_for, long_fixed_lines, project_line_length
from devlint.settings import Settings

SEED = ("import torch\n\n\ndef seed_everything(seed_value_for_this_run):\n"
        "    torch.cuda.manual_seed_all(seed_value_for_this_run)\n")


def run(*args, cwd):
    e = dict(os.environ, DEVLINT_NO_CACHE="1")
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    return subprocess.run([sys.executable, "-m", "devlint", "check", *args],
                          capture_output=True, text=True, cwd=cwd, env=e)


def test_only_lines_the_fix_wrote_count():
    old = "a = 1\n" + "b" * 100 + "\nc = 2\n"
    new = "a = 1\n" + "b" * 100 + "\nif x:\n    c = " + "2" * 90 + "\n"
    assert long_fixed_lines(old, new, 88) == [(4, 98)]
    assert long_fixed_lines(old, old, 88) == []
    assert long_fixed_lines(old, new, 100) == []


def test_the_formatters_own_configuration_and_its_precedence(tmp_path):
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "pkg" / "sub"
    sub.mkdir(parents=True)
    project_line_length.cache_clear()
    assert project_line_length(str(sub)).limit == DEFAULT
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    project_line_length.cache_clear()
    ll = project_line_length(str(sub))
    assert ll.limit == 100 and "[tool.black] line-length" in ll.source
    (tmp_path / "pyproject.toml").write_text(
        "[tool.black]\nline-length = 100\n[tool.ruff]\nline-length = 79\n")
    project_line_length.cache_clear()
    assert project_line_length(str(sub)).limit == 79  # ruff's table first, like ruff
    (tmp_path / "pkg" / "ruff.toml").write_text("line-length = 120\n")
    project_line_length.cache_clear()
    assert project_line_length(str(sub)).limit == 120  # the nearest file wins
    (tmp_path / "pkg" / "ruff.toml").write_text("line-length = [\n")  # broken: not ours
    project_line_length.cache_clear()
    assert project_line_length(str(sub)).limit == 79
    # configured in [tool.devlint]: that one
    s = settings_from_table({"line-length": 99}, str(tmp_path / "pyproject.toml"))
    assert line_length_for(s, str(sub / "m.py")).limit == 99
    assert line_length_for(Settings(), str(sub / "m.py")).limit == 79
    project_line_length.cache_clear()


@pytest.mark.parametrize("value", [0, -1, "88", True, 1.5])
def test_a_bad_line_length_is_a_config_error(value):
    with pytest.raises(ConfigError, match="line-length"):
        settings_from_table({"line-length": value}, "pyproject.toml")


def test_the_fix_names_the_long_lines_and_keeps_the_exit_code(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 79\n")
    (tmp_path / "a.py").write_text(SEED)
    p = run("--diff", "a.py", cwd=tmp_path)
    assert p.returncode == 1
    assert "devlint: note: a.py: the fix would make line 6 longer than 79" in p.stderr
    assert "[tool.ruff] line-length" in p.stderr and "run your formatter" in p.stderr
    p = run("--fix", "a.py", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "devlint: note: a.py: fixed line 6 longer than 79" in p.stderr
    assert "note" not in run("--fix", "a.py", cwd=tmp_path).stderr  # nothing fixed this time
    # a long line enough: no note; -q: none either
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 200\n")
    (tmp_path / "a.py").write_text(SEED)
    assert "note" not in run("--fix", "a.py", cwd=tmp_path).stderr
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 79\n")
    (tmp_path / "a.py").write_text(SEED)
    assert "note" not in run("--fix", "-q", "a.py", cwd=tmp_path).stderr


def test_show_settings_says_which_line_length_and_where_from(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    (tmp_path / "a.py").write_text(SEED)
    p = run("--show-settings", "a.py", cwd=tmp_path)
    assert "line-length = 100  # from " in p.stdout and "[tool.black] line-length" in p.stdout


def test_a_long_repetitive_file_is_measured_in_linear_time():
    """No diff: a 10 MB file of near-identical lines made difflib quadratic."""
    old = "x = 1\n" * 200_000
    new = old.replace("x = 1\n", "y = " + "2" * 100 + "\n", 1) + "z = " + "3" * 100 + "\n"
    assert long_fixed_lines(old, new, 88) == [(1, 104), (200_001, 104)]
