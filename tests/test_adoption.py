"""Adopting devlint in a repository with many findings: the --add-noqa baseline, --since REV,
and what long runs print (progress on a terminal only, ruff's summary line)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from _sample_project import HARDCODED, git

NOQA_SOURCE = (
    'import torch\n'
    'a = torch.zeros(2, device="cuda")  # noqa: E501\n'          # merged into the existing noqa
    'b = torch.zeros(2, device="cuda")  # a comment\n'
    'c = torch.zeros(\n    2, device="cuda",\n)\n'                 # on the flagged line
    'd = 1 + \\\n    torch.zeros(2, device="cuda").sum()\n'        # not after a backslash
    's = f"""\n{torch.zeros(1, device="cuda")}\n"""\n'             # after the closing quotes
    'torch.cuda.synchronize(); x = y.to("cuda")\n'                 # two codes, one comment
)
NOQA_EXPECTED = (
    'import torch\n'
    'a = torch.zeros(2, device="cuda")  # noqa: E501, DL103\n'
    'b = torch.zeros(2, device="cuda")  # a comment  # noqa: DL103\n'
    'c = torch.zeros(\n    2, device="cuda",  # noqa: DL103\n)\n'
    'd = 1 + \\\n    torch.zeros(2, device="cuda").sum()  # noqa: DL103\n'
    's = f"""\n{torch.zeros(1, device="cuda")}\n"""  # noqa: DL103\n'
    'torch.cuda.synchronize(); x = y.to("cuda")  # noqa: DL101, DL401\n'
)


def run(*args, cwd, env=None, input=None):
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e.pop("CI", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd, env=e, input=input)


def test_add_noqa_writes_the_baseline(tmp_path):
    (tmp_path / "m.py").write_text(NOQA_SOURCE)
    assert run("m.py", cwd=tmp_path).returncode == 1
    p = run("--add-noqa", "m.py", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Added 7 noqa directives in 1 file." in p.stderr
    assert (tmp_path / "m.py").read_text() == NOQA_EXPECTED
    p = run("m.py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout
    # a second run adds nothing and leaves the file alone
    mtime = os.stat(tmp_path / "m.py").st_mtime_ns
    assert "Added 0 noqa directives." in run("--add-noqa", "m.py", cwd=tmp_path).stderr
    assert os.stat(tmp_path / "m.py").st_mtime_ns == mtime


def test_add_noqa_keeps_encoding_line_endings_and_mode(tmp_path):
    src = ('# -*- coding: latin-1 -*-\r\nimport torch\r\n# caf\xe9\r\n'
           'x = torch.ones(2).cuda()\r\n').encode("latin-1")
    path = tmp_path / "l1.py"
    path.write_bytes(src)
    os.chmod(path, 0o750)
    assert run("--add-noqa", ".", cwd=tmp_path).returncode == 0
    assert path.read_bytes() == src.replace(b".cuda()\r\n", b".cuda()  # noqa: DL102\r\n")
    assert os.stat(path).st_mode & 0o777 == 0o750


def test_add_noqa_on_stdin_and_shell(tmp_path):
    p = run("--add-noqa", "--stdin-filename", "m.py", "-", cwd=tmp_path, input=HARDCODED)
    assert p.stdout == HARDCODED.replace('"cuda")\n', '"cuda")  # noqa: DL103\n').replace(
        "synchronize()\n", "synchronize()  # noqa: DL401\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n")
    assert run("--add-noqa", "run.sh", cwd=tmp_path).returncode == 0
    assert "python3 x.py  # noqa: DL302" in (tmp_path / "run.sh").read_text()
    assert run("run.sh", cwd=tmp_path).returncode == 0


def test_add_noqa_refuses_fix(tmp_path):
    (tmp_path / "m.py").write_text(HARDCODED)
    assert run("--add-noqa", "--fix", "m.py", cwd=tmp_path).returncode == 2


def test_since_reports_only_changed_lines(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "old.py").write_text(HARDCODED)
    (tmp_path / "same.py").write_text(HARDCODED)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    # a changed line in old.py, a new untracked file (all of it counts), same.py untouched
    (tmp_path / "old.py").write_text(HARDCODED + 'y = x.to("cuda")\n')
    (tmp_path / "new.py").write_text(HARDCODED)
    p = run("--since", "HEAD", "--output-format", "json", ".", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    got = sorted((d["filename"], d["location"]["row"], d["code"]) for d in json.loads(p.stdout))
    assert got == [("new.py", 3, "DL103"), ("new.py", 4, "DL401"), ("old.py", 5, "DL101")]
    # committed changes count too, against an older revision
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "more")
    assert run("--since", "HEAD", ".", cwd=tmp_path).returncode == 0
    p = run("--since", "HEAD~1", "--output-format", "json", ".", cwd=tmp_path)
    assert len(json.loads(p.stdout)) == 3


def test_since_errors(tmp_path):
    (tmp_path / "a.py").write_text(HARDCODED)
    p = run("--since", "HEAD", ".", cwd=tmp_path)
    assert p.returncode == 2 and "git repository" in p.stderr
    git(tmp_path, "init", "-q")
    p = run("--since", "no-such-rev", ".", cwd=tmp_path)
    assert p.returncode == 2 and "no-such-rev" in p.stderr
    assert run("--since", "HEAD", "--fix", ".", cwd=tmp_path).returncode == 2


def _many_files(tmp_path, n=120):
    for i in range(n):
        (tmp_path / f"m{i:03}.py").write_text("x = 1\n")
    (tmp_path / "bad.py").write_text(HARDCODED)


def _run_on_a_terminal(args, cwd, env=None):
    """stdout and stderr on a pseudo-terminal: what a person at a terminal would see."""
    import pty

    e = dict(os.environ)
    e.pop("CI", None)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e.update(env or {})
    e["TERM"] = "xterm"
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "devlint", *args], cwd=cwd, env=e,
                         stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait()
    os.close(master)
    return p.returncode, b"".join(chunks).decode("utf-8", "replace")


def test_progress_on_a_terminal_only(tmp_path):
    _many_files(tmp_path)
    rc, out = _run_on_a_terminal(["-j", "1", "."], tmp_path)
    assert rc == 1
    assert "Checking 121/121 files (100%)" in out
    assert "bad.py:3:27: DL103" in out
    # in CI, with -q, or piped: no progress line
    rc, out = _run_on_a_terminal(["-j", "1", "."], tmp_path, env={"CI": "true"})
    assert "Checking" not in out and "bad.py:3:27: DL103" in out
    rc, out = _run_on_a_terminal(["-q", "-j", "1", "."], tmp_path)
    assert "Checking" not in out and "Found" not in out
    p = run("-j", "1", ".", cwd=tmp_path)
    assert "Checking" not in p.stdout + p.stderr


def test_summary_line(tmp_path):
    (tmp_path / "m.py").write_text(HARDCODED + 'def f(q):\n    d = q.device\n'
                                   '    return torch.arange(3, device="cuda")\n'
                                   "torch.cuda.empty_cache()\n")
    p = run("--select", "DL1,DL4", "m.py", cwd=tmp_path)
    # torch.cuda.empty_cache() at target 2.6: `if torch.accelerator.is_available():
    # torch.get_device_module().empty_cache()` (safe), the `.device` inference unsafe
    assert p.stdout.splitlines()[-2:] == [
        "Found 4 errors.",
        "[*] 3 fixable with the `--fix` option "
        "(1 hidden fix can be enabled with the `--unsafe-fixes` option).",
    ]
    p = run("--select", "DL1,DL4", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert p.stdout.splitlines()[-1] == "[*] 4 fixable with the `--fix --unsafe-fixes` option."
    p = run("--select", "DL1,DL4", "--fix", "m.py", cwd=tmp_path)
    assert "Found 4 errors (3 fixed, 1 remaining)." in p.stdout
