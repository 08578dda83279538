"""The command-line contract (SPEC section 2), exercised through real subprocesses."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HARDCODED = 'import torch\n\nx = torch.zeros(2, device="cuda")\ntorch.cuda.synchronize()\n'
CLEAN = "import torch\n\nx = torch.zeros(2)\n"


def run(*args, cwd=None, env=None, input=None):
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd, env=e, input=input)


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "bad.py").write_text(HARDCODED)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


def test_check_is_the_default_command(proj):
    a = run("bad.py", cwd=proj)
    b = run("check", "bad.py", cwd=proj)
    assert a.returncode == b.returncode == 1
    assert a.stdout == b.stdout
    assert "bad.py:3:27: DL103" in a.stdout
    assert "bad.py:4:1: DL401" in a.stdout


def test_exit_codes(proj):
    assert run("good.py", cwd=proj).returncode == 0
    assert run("bad.py", cwd=proj).returncode == 1
    assert run("--exit-zero", "bad.py", cwd=proj).returncode == 0
    missing = run("nope.py", cwd=proj)
    assert missing.returncode == 2 and "nope.py" in missing.stderr
    assert run("--select", "XX1", "bad.py", cwd=proj).returncode == 2


def test_version():
    from devlint import __version__

    p = run("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"devlint {__version__}"


def test_json_schema(proj):
    p = run("--output-format", "json", "bad.py", cwd=proj)
    data = json.loads(p.stdout)
    assert [d["code"] for d in data] == ["DL103", "DL401"]
    d = data[0]
    # ruff's keys, `cell` included (a notebook's cell number, null elsewhere)
    assert set(d) == {"cell", "code", "name", "message", "filename", "location", "end_location",
                      "fix", "noqa_row", "url"}
    assert d["cell"] is None
    assert d["name"] == "device-literal-argument"
    assert d["location"] == {"row": 3, "column": 27}
    assert d["end_location"] == {"row": 3, "column": 33}
    assert d["fix"]["applicability"] == "safe"
    edit = d["fix"]["edits"][0]
    assert set(edit) == {"content", "location", "end_location"}
    assert edit["content"] == ('torch.accelerator.current_accelerator() if '
                               'torch.accelerator.is_available() else "cpu"')
    assert d["noqa_row"] == 3


def test_fix_writes_and_second_run_changes_nothing(proj):
    p = run("--fix", "bad.py", cwd=proj)
    assert p.returncode == 0, p.stdout + p.stderr
    text = (proj / "bad.py").read_text()
    assert 'device="cuda"' not in text and "torch.accelerator.synchronize()" in text
    assert "2 fixed" in p.stdout
    before = (proj / "bad.py").read_bytes()
    mtime = os.stat(proj / "bad.py").st_mtime_ns
    assert run("--fix", "bad.py", cwd=proj).returncode == 0
    assert (proj / "bad.py").read_bytes() == before
    assert os.stat(proj / "bad.py").st_mtime_ns == mtime


def test_untouched_files_are_never_rewritten(proj):
    mtime = os.stat(proj / "good.py").st_mtime_ns
    run("--fix", ".", cwd=proj)
    assert os.stat(proj / "good.py").st_mtime_ns == mtime


def test_unsafe_fixes_are_held_back_and_counted(tmp_path):
    src = 'def f(q, n):\n    d = q.device\n    return torch.arange(n, device="cuda")\n'
    (tmp_path / "m.py").write_text(src)
    p = run("--fix", "m.py", cwd=tmp_path)
    assert p.returncode == 1
    assert (tmp_path / "m.py").read_text() == src
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option" in p.stdout
    p = run("--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert p.returncode == 0
    assert "device=q.device" in (tmp_path / "m.py").read_text()


def test_diff_writes_nothing(proj):
    p = run("--diff", "bad.py", cwd=proj)
    assert p.returncode == 1
    assert "-x = torch.zeros(2, device=\"cuda\")" in p.stdout
    assert (proj / "bad.py").read_text() == HARDCODED


def test_exit_non_zero_on_fix(proj):
    assert run("--fix", "--exit-non-zero-on-fix", "bad.py", cwd=proj).returncode == 1


def test_select_ignore_by_code_prefix_and_name(proj):
    def codes(*a):
        return [d["code"] for d in json.loads(run("--output-format", "json", *a, "bad.py",
                                                  cwd=proj).stdout)]
    assert codes("--select", "DL4") == ["DL401"]
    assert codes("--select", "device-literal-argument") == ["DL103"]
    assert codes("--ignore", "DL1") == ["DL401"]
    assert codes("--select", "ALL", "--ignore", "torch-cuda-api") == ["DL103"]
    assert codes("--select", "DL1", "--extend-select", "DL401") == ["DL103", "DL401"]


def test_statistics(proj):
    p = run("--statistics", "bad.py", cwd=proj)
    assert p.returncode == 1
    assert "1\tDL103\t[*] device-literal-argument" in p.stdout


def test_target_torch_decides_the_fix(tmp_path):
    (tmp_path / "m.py").write_text("import torch\ntorch.cuda.empty_cache()\n")
    old = json.loads(run("--output-format", "json", "--target-torch", "2.5", "m.py",
                         cwd=tmp_path).stdout)
    mid = json.loads(run("--output-format", "json", "--target-torch", "2.6", "m.py",
                         cwd=tmp_path).stdout)
    new = json.loads(run("--output-format", "json", "--target-torch", "2.9", "m.py",
                         cwd=tmp_path).stdout)
    assert old[0]["fix"] is None and "needs torch >= 2.9" in old[0]["message"]
    # 2.6-2.8 (torch.accelerator's memory API is 2.9's): the device module's own function; torch.cuda.empty_cache() is a no-op without a
    # GPU, so the fix keeps it one (asks for an accelerator first)
    assert [e["content"] for e in mid[0]["fix"]["edits"]] == [
        "if torch.accelerator.is_available():\n    torch.get_device_module().empty_cache"]
    assert new[0]["fix"]["edits"][0]["content"] == ("if torch.accelerator.is_available():\n"
                                                    "    torch.accelerator.empty_cache")


def test_config_in_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devlint]\nselect = ["DL1"]\nper-file-ignores = {"platforms/*" = ["DL103"]}\n'
        'exclude = ["vendored"]\n')
    (tmp_path / "platforms").mkdir()
    (tmp_path / "platforms" / "cuda_impl.py").write_text(HARDCODED)
    (tmp_path / "vendored").mkdir()
    (tmp_path / "vendored" / "x.py").write_text(HARDCODED)
    (tmp_path / "app.py").write_text(HARDCODED)
    data = json.loads(run("--output-format", "json", ".", cwd=tmp_path).stdout)
    assert [(os.path.basename(d["filename"]), d["code"]) for d in data] == [("app.py", "DL103")]


def test_unknown_config_key_is_an_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.devlint]\nselekt = ["DL1"]\n')
    (tmp_path / "a.py").write_text(CLEAN)
    p = run("a.py", cwd=tmp_path)
    assert p.returncode == 2
    assert "pyproject.toml" in p.stderr and "selekt" in p.stderr


def test_bad_config_value_names_file_and_key(tmp_path):
    (tmp_path / "devlint.toml").write_text('target-torch = "two"\n')
    (tmp_path / "a.py").write_text(CLEAN)
    p = run("a.py", cwd=tmp_path)
    assert p.returncode == 2
    assert "devlint.toml" in p.stderr and "target-torch" in p.stderr


def test_walk_respects_gitignore_and_junk(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    for d in ("generated", ".venv", "build", "src"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "m.py").write_text(HARDCODED)
    data = json.loads(run("--output-format", "json", ".", cwd=tmp_path).stdout)
    assert {os.path.dirname(os.path.relpath(d["filename"], ".")) for d in data} == {"src"}


def test_walk_without_git(tmp_path):
    (tmp_path / ".gitignore").write_text("gen_*.py\n")
    (tmp_path / "gen_a.py").write_text(HARDCODED)
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "m.py").write_text(HARDCODED)
    (tmp_path / "keep.py").write_text(HARDCODED)
    data = json.loads(run("--output-format", "json", ".", cwd=tmp_path).stdout)
    assert {os.path.basename(d["filename"]) for d in data} == {"keep.py"}


def test_noqa_and_devlint_ignore(tmp_path):
    (tmp_path / "m.py").write_text(
        'import torch\n'
        'a = torch.zeros(2, device="cuda")  # noqa: DL103\n'
        'b = torch.zeros(2, device="cuda")  # devlint: ignore[DL1]\n'
        'c = torch.zeros(2, device="cuda")  # noqa: DL401\n'
        'd = torch.zeros(  # noqa: DL103 (first line of the statement)\n    2,\n'
        '    device="cuda",\n)\n'
        'e = torch.zeros(2, device="cuda"); s = "# noqa"\n')
    data = json.loads(run("--output-format", "json", "m.py", cwd=tmp_path).stdout)
    # row 4's `noqa: DL401` suppresses nothing: DL900 says so
    assert [(d["location"]["row"], d["code"]) for d in data] == [(4, "DL103"), (4, "DL900"),
                                                                 (9, "DL103")]


def test_file_ignore(tmp_path):
    (tmp_path / "m.py").write_text('# devlint: file-ignore[DL4]\nimport torch\n'
                                   'torch.cuda.synchronize()\nx = x.to("cuda")\n')
    data = json.loads(run("--output-format", "json", "m.py", cwd=tmp_path).stdout)
    assert [d["code"] for d in data] == ["DL101"]


def test_syntax_error_is_reported_and_the_run_goes_on(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n    x.to('cuda')\n")
    (tmp_path / "bad.py").write_text(HARDCODED)
    p = run("--output-format", "json", ".", cwd=tmp_path)
    assert p.returncode == 1
    codes = sorted(d["code"] for d in json.loads(p.stdout))
    assert codes == ["DL103", "DL401", "DL999"]


def test_encoding_bom_and_crlf_are_kept(tmp_path):
    src = '# -*- coding: latin-1 -*-\r\nimport torch\r\n# caf\xe9\r\nx = torch.ones(2).cuda()\r\n'
    (tmp_path / "l1.py").write_bytes(src.encode("latin-1"))
    bom = "\ufeffimport torch\nx = torch.ones(2).cuda()\n"
    (tmp_path / "bom.py").write_bytes(bom.encode("utf-8"))
    assert run("--fix", ".", cwd=tmp_path).returncode == 0
    out = (tmp_path / "l1.py").read_bytes()
    assert out.count(b"\r\n") == 4 and b"caf\xe9" in out and b".to(torch.accelerator" in out
    out = (tmp_path / "bom.py").read_bytes()
    assert out.startswith(b"\xef\xbb\xbfimport torch\n") and b".cuda()" not in out


def test_rule_command():
    p = run("rule", "DL101")
    assert p.returncode == 0
    assert "## Fix safety" in p.stdout and "device-literal-to" in p.stdout
    assert run("rule", "device-literal-to").stdout == p.stdout
    allj = json.loads(run("rule", "--all", "--output-format", "json").stdout)
    assert {r["code"] for r in allj} >= {"DL101", "DL102", "DL103", "DL104", "DL105", "DL201",
                                         "DL401", "DL404"}
    assert run("rule", "DL000").returncode == 2


def test_check_never_imports_torch(proj):
    code = ("import sys, runpy\n"
            "sys.argv = ['devlint', 'check', '--fix', '--unsafe-fixes', '.']\n"
            "try:\n    runpy.run_module('devlint', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'devlint check imported torch'\n"
            "assert not any(m.startswith('devlint.verify') for m in sys.modules)\n"
            "print('ok')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=proj)
    assert p.stdout.strip().endswith("ok"), p.stderr


def test_an_ignored_directory_named_explicitly_is_linted(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "m.py").write_text(HARDCODED)
    assert run(".", cwd=tmp_path).returncode == 0  # walked from the top: ignored
    p = run("gen", cwd=tmp_path)
    assert p.returncode == 1 and "DL103" in p.stdout
