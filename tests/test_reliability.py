"""Bad input never crashes the run, interrupted fixes never leave a partial file, and a bug in
one rule on one file is reported (naming both) while the other files are still linted."""
from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint.engine import runner
from devlint.settings import Settings

HARDCODED = 'import torch\n\nx = torch.zeros(2, device="cuda")\ntorch.cuda.synchronize()\n'
CLEAN = "import torch\n\nx = torch.zeros(2)\n"


def run(*args, cwd=None, env=None):
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e["DEVLINT_NO_CACHE"] = "1"
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          cwd=cwd, env=e)


def as_json(p):
    return json.loads(p.stdout.decode())


def codes_at(p):
    return [(Path(d["filename"]).name, d["code"], d["location"]["row"], d["location"]["column"])
            for d in as_json(p)]


def invoke(args, monkeypatch=None):
    """The CLI in this process (so a test can patch the engine), without the cache."""
    from devlint.cli import cli

    result = CliRunner().invoke(cli, ["check", "--no-cache", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, getattr(result, "stderr", "")


def assert_positions_inside(diags, text: str):
    """Every start and end (JSON findings or Diagnostics) lies inside the text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for d in diags:
        if isinstance(d, dict):
            spots = [(d[k]["row"], d[k]["column"]) for k in ("location", "end_location")]
        else:
            spots = [d.location, d.end_location]
        for row, col in spots:
            assert 1 <= row <= len(lines), d
            assert 1 <= col <= len(lines[row - 1]) + 1, d


# --- syntax errors ------------------------------------------------------------------------

def test_syntax_error_is_a_finding_and_the_run_goes_on(tmp_path):
    (tmp_path / "broken.py").write_text('DEVICE = "cuda"\ndef f(:\n    pass\n')
    (tmp_path / "bad.py").write_text(HARDCODED)
    p = run("--output-format", "json", ".", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    found = codes_at(p)
    assert ("broken.py", "DL999", 2, 7) in found
    assert ("bad.py", "DL103", 3, 27) in found
    [d] = [d for d in as_json(p) if d["code"] == "DL999"]
    assert d["name"] == "syntax-error" and d["fix"] is None
    fixed = run("--fix", ".", cwd=tmp_path)
    assert fixed.returncode == 1 and b"internal error" not in fixed.stderr
    assert (tmp_path / "broken.py").read_text() == 'DEVICE = "cuda"\ndef f(:\n    pass\n'
    assert 'device="cuda"' not in (tmp_path / "bad.py").read_text()


def test_null_bytes_and_undecodable_bytes(tmp_path):
    (tmp_path / "nul.py").write_bytes(b'x = "cuda"\x00\n')
    (tmp_path / "notutf8.py").write_bytes(b'x = "cuda\xff"\n')
    # no trigger token: the prefilter would skip it, the decoding still is checked
    (tmp_path / "latin.py").write_bytes(b'# a comment\nname = "caf\xe9"\n')
    (tmp_path / "cookie.py").write_bytes(b"# -*- coding: no-such-codec -*-\nx = 1\n")
    (tmp_path / "bad.py").write_text(HARDCODED)
    p = run("--output-format", "json", ".", cwd=tmp_path)
    assert p.returncode == 1
    found = codes_at(p)
    assert ("nul.py", "DL999", 1, 1) in found
    # like ruff's E902: a finding at the first byte that does not decode, or at the cookie
    assert ("notutf8.py", "DL902", 1, 10) in found
    assert ("latin.py", "DL902", 2, 12) in found
    assert ("cookie.py", "DL902", 1, 1) in found
    assert ("bad.py", "DL103", 3, 27) in found
    [d] = [d for d in as_json(p) if d["filename"] == "notutf8.py"]
    assert d["name"] == "io-error" and d["fix"] is None and "0xff" in d["message"]
    assert p.stderr == b""
    # --fix leaves them alone; --ignore DL902 turns the findings back into warnings
    assert run("--fix", ".", cwd=tmp_path).returncode == 1
    assert (tmp_path / "latin.py").read_bytes() == b'# a comment\nname = "caf\xe9"\n'
    p = run("--output-format", "json", "--ignore", "DL902", ".", cwd=tmp_path)
    assert "DL902" not in {c[1] for c in codes_at(p)}
    assert b"notutf8.py: cannot decode" in p.stderr and b"cookie.py: cannot decode" in p.stderr


def test_a_shell_script_that_is_not_utf8_is_linted_and_fixed_byte_for_byte(tmp_path):
    """bash runs any bytes: a latin-1 comment is no reason to skip a script, or to fail."""
    script = b"#!/bin/bash\n# caf\xe9\nCUDA_VISIBLE_DEVICES=0 python train.py  # \xff\n"
    (tmp_path / "run.sh").write_bytes(script)
    for args in (("run.sh",), (".",)):
        p = run("--output-format", "full", *args, cwd=tmp_path)
        assert p.returncode == 1, p.stderr
        assert b"run.sh:3:1: DL302" in p.stdout and b"CUDA_VISIBLE_DEVICES=0" in p.stdout
        assert p.stderr == b""
    assert run("--fix", "run.sh", cwd=tmp_path).returncode == 0
    out = (tmp_path / "run.sh").read_bytes()
    assert b"# caf\xe9\n" in out and b"  # \xff\n" in out and b"CUDA_VISIBLE_DEVICES=0" not in out
    assert subprocess.run(["bash", "-n", str(tmp_path / "run.sh")]).returncode == 0


@pytest.mark.parametrize("content", [b'x = "cuda\xff"\n', b'name = "caf\xe9"\n',
                                     b"# coding: no-such-codec\nx = 1\n"])
def test_an_explicit_file_that_does_not_decode_exits_2(tmp_path, content):
    (tmp_path / "bad.py").write_bytes(content)
    (tmp_path / "ok.py").write_text(HARDCODED)
    p = run("ok.py", "bad.py", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(b"devlint: error: bad.py:") and b"decode" in p.stderr
    assert b"DL902" not in p.stdout and b"All checks passed" not in p.stdout
    assert b"ok.py:3:27: DL103" in p.stdout  # the other files are still reported
    alone = run("bad.py", cwd=tmp_path)
    assert alone.returncode == 2 and alone.stdout == b""
    # with the result cache: the second run answers from it, and still exits 2
    e = {k: v for k, v in os.environ.items() if k != "DEVLINT_NO_CACHE"}
    for _ in range(2):
        cached = subprocess.run([sys.executable, "-m", "devlint", "check", "--cache-dir",
                                 str(tmp_path / "cache"), "bad.py"], capture_output=True,
                                cwd=tmp_path, env=e)
        assert cached.returncode == 2 and b"bad.py:" in cached.stderr, cached
    # the same bytes on stdin
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "-", "--stdin-filename",
                        "bad.py"], input=content, capture_output=True, cwd=tmp_path)
    assert p.returncode == 2 and b"bad.py" in p.stderr and b"decode" in p.stderr


# --- encodings and line endings ------------------------------------------------------------

def test_latin1_with_a_coding_cookie(tmp_path):
    src = b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9t\xe9'\nx = torch.zeros(2, device=\"cuda\")\n"
    (tmp_path / "latin.py").write_bytes(src)
    p = run("--output-format", "json", "latin.py", cwd=tmp_path)
    assert codes_at(p) == [("latin.py", "DL103", 4, 27)]
    assert run("--fix", "latin.py", cwd=tmp_path).returncode == 0
    out = (tmp_path / "latin.py").read_bytes()
    assert out.startswith(b"# -*- coding: latin-1 -*-\n") and b"'\xe9t\xe9'" in out
    assert b'"cuda"' not in out
    compile(out, "latin.py", "exec")


def test_utf8_bom_is_kept(tmp_path):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + HARDCODED.encode())
    p = run("--output-format", "json", "bom.py", cwd=tmp_path)
    assert codes_at(p) == [("bom.py", "DL103", 3, 27), ("bom.py", "DL401", 4, 1)]
    run("--fix", "bom.py", cwd=tmp_path)
    out = (tmp_path / "bom.py").read_bytes()
    assert out.startswith(b"\xef\xbb\xbf") and out.count(b"\xef\xbb\xbf") == 1
    assert b'"cuda"' not in out
    compile(out, "bom.py", "exec")


@pytest.mark.parametrize("profile", ["torch", "vllm"])
def test_crlf_is_kept(tmp_path, profile):
    src = "import os\r\nimport torch\r\n\r\ndef f(t):\r\n    assert t.is_cuda\r\n" \
          "    return t.to(\"cuda\"), torch.zeros(2, device=\"cuda\")\r\n" \
          "DEVICE = \"cuda\"\r\n"
    (tmp_path / "crlf.py").write_bytes(src.encode())
    p = run("--output-format", "json", "--profile", profile, "crlf.py", cwd=tmp_path)
    assert {c[1] for c in codes_at(p)} >= {"DL201", "DL101", "DL103"}
    assert_positions_inside(as_json(p), src)
    run("--fix", "--unsafe-fixes", "--profile", profile, "crlf.py", cwd=tmp_path)
    out = (tmp_path / "crlf.py").read_bytes()
    assert out != src.encode()
    assert b"\n" not in out.replace(b"\r\n", b""), "a fix introduced a bare \\n line end"
    compile(out, "crlf.py", "exec")


MIXED = "import torch\r\nx = 1\ry = t.cuda()\nz = torch.zeros(2, device='cuda')\r\n"


def test_mixed_line_endings_never_crash(tmp_path):
    (tmp_path / "mixed.py").write_bytes(MIXED.encode())
    p = run("--output-format", "json", "mixed.py", cwd=tmp_path)
    assert p.returncode == 1 and not p.stderr
    assert ("mixed.py", "DL102", 3, 7) in codes_at(p)
    assert_positions_inside(as_json(p), MIXED)
    run("--fix", "--unsafe-fixes", "mixed.py", cwd=tmp_path)
    out = (tmp_path / "mixed.py").read_bytes()
    compile(out, "mixed.py", "exec")
    assert b"t.cuda()" not in out
    assert run("--fix", "--unsafe-fixes", "mixed.py", cwd=tmp_path).returncode in (0, 1)
    assert (tmp_path / "mixed.py").read_bytes() == out  # a second fix changes nothing


def test_mixed_line_endings_find_what_normalised_endings_find(tmp_path):
    (tmp_path / "mixed.py").write_bytes(MIXED.encode())
    unix = MIXED.replace("\r\n", "\n").replace("\r", "\n")
    (tmp_path / "unix.py").write_bytes(unix.encode())
    (tmp_path / "cr.py").write_bytes(unix.replace("\n", "\r").encode())  # old Mac line ends
    p = run("--output-format", "json", ".", cwd=tmp_path)
    found = codes_at(p)
    by_file = {name: [c[1:] for c in found if c[0] == name] for name in ("mixed.py", "unix.py",
                                                                         "cr.py")}
    assert by_file["unix.py"] and by_file["mixed.py"] == by_file["unix.py"] == by_file["cr.py"]


def test_tabs_and_form_feeds(tmp_path):
    src = "import torch\n\x0c\nif True:\n\tx = t.cuda()\n\tif x:\n\t\ty = torch.zeros(2, device='cuda')\n" \
          "\x0cdef f():\n    return torch.zeros(1, device='cuda')\n"
    (tmp_path / "odd.py").write_bytes(src.encode())
    p = run("--output-format", "json", "odd.py", cwd=tmp_path)
    assert codes_at(p) == [("odd.py", "DL102", 4, 8), ("odd.py", "DL103", 6, 29),
                           ("odd.py", "DL103", 8, 34)]
    assert_positions_inside(as_json(p), src)
    run("--fix", "odd.py", cwd=tmp_path)
    out = (tmp_path / "odd.py").read_bytes()
    assert out.count(b"\x0c") == 2 and b"\t\ty = " in out
    compile(out, "odd.py", "exec")


@pytest.mark.parametrize("content", [b"", b"\n", b"   \n\n", b"\xef\xbb\xbf", b"# cuda\n",
                                     b"\r\n\r\n"])
def test_empty_and_blank_files(tmp_path, content):
    (tmp_path / "empty.py").write_bytes(content)
    p = run("empty.py", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert run("--fix", "empty.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "empty.py").read_bytes() == content


def test_ten_megabyte_generated_files(tmp_path):
    """Bounded time and memory by construction; no timing is asserted."""
    head = 'import torch\nx = t.cuda()\n'
    filler = "# generated line: padding padding padding padding padding padding\n" \
             "def f_%d(a, b):\n    return a + b\n\n"
    body, i, size = [head], 0, len(head)
    while size < 10 * 1024 * 1024:
        chunk = filler % i
        body.append(chunk)
        size += len(chunk)
        i += 1
    body.append('DEVICE = "cuda"\n')
    (tmp_path / "big.py").write_text("".join(body))
    (tmp_path / "plain.py").write_text("# nothing to see\n" * (10 * 1024 * 1024 // 17))
    p = run("--output-format", "json", ".", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    found = codes_at(p)
    assert ("big.py", "DL102", 2, 7) in found
    assert any(c[0] == "big.py" and c[1] == "DL104" for c in found)
    assert not any(c[0] == "plain.py" for c in found)
    fixed = run("--fix", "--unsafe-fixes", "big.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    out = (tmp_path / "big.py").read_bytes()
    assert b"t.cuda()" not in out and len(out) > 10 * 1024 * 1024
    compile(out, "big.py", "exec")


# --- unreadable, vanishing and oddly named files -------------------------------------------

def test_explicit_paths_that_cannot_be_read_exit_2(tmp_path):
    (tmp_path / "ok.py").write_text(HARDCODED)
    os.symlink(tmp_path / "nowhere.py", tmp_path / "broken.py")
    os.symlink(tmp_path / "loop_b.py", tmp_path / "loop_a.py")
    os.symlink(tmp_path / "loop_a.py", tmp_path / "loop_b.py")
    os.mkfifo(tmp_path / "fifo.py")
    for name, message in (("missing.py", b"No such file"), ("broken.py", b"cannot read"),
                          ("loop_a.py", b"cannot read"), ("fifo.py", b"not a regular file")):
        p = run("ok.py", name, cwd=tmp_path)
        assert p.returncode == 2, (name, p.stderr)
        assert name.encode() in p.stderr and message in p.stderr, p.stderr


def test_explicit_file_without_permission_exits_2(tmp_path, monkeypatch):
    """Tests run as root, where chmod 000 does not stop a read: the open itself is made to fail."""
    import builtins

    from devlint import discovery

    target = tmp_path / "secret.py"
    target.write_text(HARDCODED)
    real_open = builtins.open

    def no_permission(path, *a, **k):
        if str(path) == str(target):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", no_permission)
    with pytest.raises(discovery.PathError, match="secret.py: cannot read: Permission denied"):
        list(discovery.discover([str(target)], lambda p: Settings()))


def test_discovered_unreadable_files_are_reported_and_skipped(tmp_path):
    (tmp_path / "ok.py").write_text(HARDCODED)
    os.symlink(tmp_path / "nowhere.py", tmp_path / "broken.py")
    os.symlink(tmp_path / "loop_b.py", tmp_path / "loop_a.py")
    os.symlink(tmp_path / "loop_a.py", tmp_path / "loop_b.py")
    (tmp_path / "adir.py").mkdir()  # a directory with a Python name: walked, not read
    (tmp_path / "adir.py" / "inner.py").write_text(HARDCODED)
    for git in (False, True):  # walked by os.walk, or listed by git
        if git:
            subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        p = run("--output-format", "json", ".", cwd=tmp_path)
        assert p.returncode == 1, p.stderr
        found = {(c[0], c[1]) for c in codes_at(p)}
        assert {f for f, _ in found} == {"ok.py", "inner.py", "broken.py", "loop_a.py",
                                          "loop_b.py"}
        for name in ("broken.py", "loop_a.py", "loop_b.py"):
            assert (name, "DL902") in found
        [broken] = [d for d in as_json(p) if d["filename"] == "broken.py"]
        assert broken["message"] == "Cannot read the file: a symbolic link to nothing"
        assert b"internal error" not in p.stderr and b"Traceback" not in p.stderr


@pytest.mark.parametrize("jobs", [1, 2])
def test_unreadable_and_vanished_files_in_the_runner(tmp_path, monkeypatch, jobs):
    paths = []
    for i in range(8):
        p = tmp_path / f"m{i}.py"
        p.write_text(HARDCODED)
        paths.append(str(p))
    os.unlink(paths[2])  # vanished after discovery
    real_read = runner._read

    def failing_read(path):
        if path.endswith("m5.py"):
            raise PermissionError(13, "Permission denied", path)
        return real_read(path)

    monkeypatch.setattr(runner, "_read", failing_read)
    results = runner.run([(p, "python", Settings()) for p in paths], "fix", True, jobs=jobs)
    assert [r.path for r in results] == paths
    assert results[2].error == "No such file or directory"  # vanished: a warning
    assert results[5].error is None  # a file that cannot be read: a DL902 finding
    assert [(d.code, d.message) for d in results[5].diagnostics] == [
        ("DL902", "Cannot read the file: Permission denied")]
    for i in (0, 1, 3, 4, 6, 7):
        assert results[i].error is None and results[i].changed, results[i]
        assert 'device="cuda"' not in Path(paths[i]).read_text()


def test_a_file_vanishing_mid_run(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(HARDCODED)
    (tmp_path / "b.py").write_text(HARDCODED)
    real_run = runner.run

    def run_after_a_delete(tasks, *a, **k):
        os.unlink(tmp_path / "a.py")
        return real_run(tasks, *a, **k)

    monkeypatch.setattr(runner, "run", run_after_a_delete)
    code, out, err = invoke(["-j", "1", str(tmp_path)])
    assert code == 1
    assert "a.py: No such file or directory" in err
    assert "b.py:3:27: DL103" in out


@pytest.mark.parametrize("git", [False, True])
def test_symlinks_are_linted_once_and_fixed_through(tmp_path, git):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text(HARDCODED)
    os.symlink("a.py", tree / "0link.py")  # sorts before its target
    os.symlink("a.py", tree / "b_link.py")
    outside = tmp_path / "outside.py"
    outside.write_text(HARDCODED)
    os.symlink(outside, tree / "o_link.py")
    if git:
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
    p = run("--output-format", "json", "tree", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    # each real file once: a.py under its own name, outside.py under the link into the tree
    assert sorted({(c[0], c[1]) for c in codes_at(p)}) == [
        ("a.py", "DL103"), ("a.py", "DL401"), ("o_link.py", "DL103"), ("o_link.py", "DL401")]
    assert len(codes_at(p)) == 4
    # a file named twice, by a link and by its own name, is linted once too
    p = run("--output-format", "json", "tree/0link.py", "tree/a.py", cwd=tmp_path)
    assert {c[0] for c in codes_at(p)} == {"0link.py"} and len(codes_at(p)) == 2
    # --fix writes through a link: the file it leads to changes, the link stays a link
    assert run("--fix", "tree/0link.py", cwd=tmp_path).returncode == 0
    assert os.path.islink(tree / "0link.py") and os.readlink(tree / "0link.py") == "a.py"
    assert 'device="cuda"' not in (tree / "a.py").read_text()
    assert run("--fix", "tree", cwd=tmp_path).returncode == 0
    assert os.path.islink(tree / "o_link.py") and os.path.islink(tree / "b_link.py")
    assert 'device="cuda"' not in outside.read_text()
    assert not list(tree.glob(".devlint-*")) and not list(tmp_path.glob(".devlint-*"))


def test_read_only_files_are_reported_not_rewritten_unless_asked(tmp_path):
    ro, rw = tmp_path / "ro.py", tmp_path / "rw.py"
    ro.write_text(HARDCODED)
    rw.write_text(HARDCODED)
    ro.chmod(0o444)
    p = run("--fix", "--output-format", "json", ".", cwd=tmp_path)
    assert p.returncode == 1
    assert ro.read_text() == HARDCODED and 'device="cuda"' not in rw.read_text()
    assert b"ro.py: read-only; not fixed (--fix-read-only" in p.stderr
    assert {c[0] for c in codes_at(p)} == {"ro.py"} and len(codes_at(p)) == 2
    noqa = run("--add-noqa", ".", cwd=tmp_path)
    assert noqa.returncode == 0 and b"ro.py: read-only; no noqa added" in noqa.stderr
    assert ro.read_text() == HARDCODED
    assert run("--fix", "--fix-read-only", ".", cwd=tmp_path).returncode == 0
    assert 'device="cuda"' not in ro.read_text()
    assert ro.stat().st_mode & 0o777 == 0o444  # still read-only
    assert not list(tmp_path.glob(".devlint-*"))


def test_a_fix_keeps_the_owner_group_and_mode(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(HARDCODED)
    f.chmod(0o640)
    if os.geteuid() == 0:  # CI runs as root: root fixing someone's file gives it back
        os.chown(f, 1234, 2345)
    before = f.stat()
    assert run("--fix", "m.py", cwd=tmp_path).returncode == 0
    after = f.stat()
    assert 'device="cuda"' not in f.read_text() and after.st_ino != before.st_ino
    assert (after.st_uid, after.st_gid, after.st_mode) == (
        before.st_uid, before.st_gid, before.st_mode)


def test_an_owner_that_cannot_be_kept_leaves_the_old_file(tmp_path, monkeypatch):
    from devlint.engine import atomic

    f = tmp_path / "m.py"
    f.write_text(HARDCODED)
    real_fstat = os.fstat

    def other_owner(fd):  # the new file does not belong to the old one's owner
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid + 1,
                               st.st_gid, st.st_size, st.st_atime, st.st_mtime, st.st_ctime))

    def refuse(fd, uid, gid):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(atomic.os, "fstat", other_owner)
    monkeypatch.setattr(atomic.os, "fchown", refuse)
    with pytest.raises(PermissionError, match="cannot keep its owner and group"):
        atomic.write_atomic(str(f), b"x = 1\n")
    assert f.read_text() == HARDCODED and not list(tmp_path.glob(".devlint-*"))


def test_paths_with_spaces_and_non_ascii_names(tmp_path):
    d = tmp_path / "my project" / "données"
    d.mkdir(parents=True)
    f = d / "modèle à tester.py"
    f.write_text(HARDCODED)
    p = run("--output-format", "json", "my project", cwd=tmp_path)
    assert p.returncode == 1
    names = {dd["filename"] for dd in as_json(p)}
    assert names == {os.path.join("my project", "données", "modèle à tester.py")}
    concise = run("my project/données/modèle à tester.py", cwd=tmp_path)
    assert "modèle à tester.py:3:27: DL103".encode() in concise.stdout
    assert run("--fix", "my project", cwd=tmp_path).returncode == 0
    assert 'device="cuda"' not in f.read_text()


# --- internal errors -------------------------------------------------------------------------

def test_a_rule_crash_names_the_rule_and_the_file_and_the_rest_is_linted(tmp_path, monkeypatch):
    from devlint.rules import registry

    (tmp_path / "boom.py").write_text(HARDCODED)
    (tmp_path / "fine.py").write_text(HARDCODED)
    rule = next(r for r in registry.all_rules() if r.code == "DL401")
    real_check = rule.check

    def check(self, facts):
        if facts.path.endswith("boom.py"):
            raise ZeroDivisionError("injected")
        return real_check(self, facts)

    monkeypatch.setattr(rule, "check", check)
    code, out, err = invoke(["-j", "1", str(tmp_path)])
    assert code == 2
    assert "boom.py" in err and "DL401" in err and "ZeroDivisionError: injected" in err
    assert "fine.py:4:1: DL401" in out and "fine.py:3:27: DL103" in out


# --- interrupted runs ----------------------------------------------------------------------

FIXABLE = "import torch\n\n" + "".join(
    f'def f{i}(t):\n    x = torch.zeros({i}, device="cuda")\n    torch.cuda.synchronize()\n'
    f"    return t.cuda() + x\n\n" for i in range(40))


@pytest.mark.parametrize("sig,jobs", [(signal.SIGTERM, "1"), (signal.SIGINT, "1"),
                                      (signal.SIGTERM, "2")])
def test_interrupted_fix_leaves_every_file_old_or_new(tmp_path, sig, jobs):
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "x.py").write_text(FIXABLE)
    assert run("--fix", "--unsafe-fixes", str(ref)).returncode == 0
    new = (ref / "x.py").read_bytes()
    old = FIXABLE.encode()
    assert new != old
    tree = tmp_path / "tree"
    tree.mkdir()
    files = [tree / f"m{i:03}.py" for i in range(300)]
    for f in files:
        f.write_bytes(old)
    e = dict(os.environ, DEVLINT_NO_CACHE="1")
    proc = subprocess.Popen([sys.executable, "-m", "devlint", "--fix", "--unsafe-fixes", "-q",
                             "-j", jobs, str(tree)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=e)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if any(f.stat().st_size != len(old) for f in files[::7]):
            break
        time.sleep(0.005)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    states = [f.read_bytes() for f in files]
    assert all(s in (old, new) for s in states), "a file was left partly written"
    assert not list(tree.glob(".devlint-*")), "a temp file was left behind"
    if proc.returncode == 128 + sig:  # interrupted mid-run, as intended
        assert b"interrupted" in err
        assert b"Traceback" not in err
    else:  # the run was faster than the signal
        assert proc.returncode == 0 and all(s == new for s in states)


# a project stage that takes long (the real stage, over and over, for up to a minute: pure
# Python work, like the stage on a large package), announcing itself with a marker file
SLOW_PROJECT_STAGE = r"""
import sys, time
from devlint.engine import project

real = project.exemptions

def slow(results, cache=None, project_=None):
    open(sys.argv[1], "w").close()
    end = time.monotonic() + 60
    while time.monotonic() < end:
        real(results, cache)
    return {}

project.exemptions = slow
from devlint.cli import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("mode", [(), ("--fix",)])
def test_an_interrupt_during_the_project_stage_exits_promptly_with_128_plus_signal(
        tmp_path, sig, mode):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text(HARDCODED)
    driver = tmp_path / "driver.py"
    driver.write_text(SLOW_PROJECT_STAGE)
    marker = tmp_path / "in-project-stage"
    proc = subprocess.Popen([sys.executable, str(driver), str(marker), "check", "--no-cache",
                             *mode, str(pkg)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists(), proc.communicate(timeout=10)[1]
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=10)  # a generous bound: the stage is 60 s long
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err
    assert b"devlint: interrupted" in err and b"Aborted" not in err and b"Traceback" not in err
    assert (pkg / "m.py").read_text() == HARDCODED  # the fix pass comes after the stage
    assert not list(pkg.glob(".devlint-*"))


# --- the linter never runs the code ----------------------------------------------------------

def test_linting_never_imports_or_runs_the_checked_code(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "evil.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n"
        "import torch\nx = t.cuda()\n")
    probe = ("import sys, runpy\n"
             "sys.argv = ['devlint', 'check', '--no-cache', '--fix', '--unsafe-fixes', %r]\n"
             "try:\n    runpy.run_module('devlint', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "assert 'torch' not in sys.modules, 'the linter imported torch'\n"
             % str(tmp_path))
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert not marker.exists()
    assert "t.cuda()" not in (tmp_path / "evil.py").read_text()
    ast.parse((tmp_path / "evil.py").read_text())


# --- fix safety on real code (a bounded subset of bench/fix_safety.py's corpus run) ----------

def _fix_safety_module():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "bench" / "fix_safety.py"
    spec = importlib.util.spec_from_file_location("devlint_bench_fix_safety", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _bounded_real_tree(dst: Path, hot: int = 150, cold: int = 50) -> int:
    """Real code to fix: torch's own package (a test dependency, so CI has it) -- its files
    that mention CUDA first, then some that do not (they must stay byte-identical) -- and the
    seed fixtures."""
    import importlib.util

    from devlint.analysis.prefilter import may_have_findings

    root = Path(__file__).resolve().parent.parent
    _fix_safety_module().copy_sources(root / "fixtures", dst / "fixtures")
    spec = importlib.util.find_spec("torch")  # located, never imported
    assert spec is not None and spec.submodule_search_locations, "torch (a test dependency)"
    torch_dir = Path(list(spec.submodule_search_locations)[0])
    picked = {True: [], False: []}
    for p in sorted(torch_dir.rglob("*.py")):
        if "__pycache__" in p.parts or p.is_symlink():
            continue
        data = p.read_bytes()
        kind = may_have_findings(data)
        if len(picked[kind]) < (hot if kind else cold) and len(data) < 200_000:
            picked[kind].append(p)
        if len(picked[True]) >= hot and len(picked[False]) >= cold:
            break
    for p in picked[True] + picked[False]:
        d = dst / "torch" / p.relative_to(torch_dir)
        d.parent.mkdir(parents=True, exist_ok=True)
        d.write_bytes(p.read_bytes())
    return len(picked[True]) + len(picked[False])


@pytest.mark.slow
def test_fix_safety_on_a_bounded_real_subset(tmp_path):
    """Every changed file compiles, a second run changes nothing, files without findings are
    byte-identical, only unfixable findings are left, no internal error (~30 s on 2 cores)."""
    fs = _fix_safety_module()
    original = tmp_path / "orig"
    assert _bounded_real_tree(original) >= 150
    work = tmp_path / "work"
    fs.copy_sources(original, work)
    result = fs.check_tree(original, work)
    assert result["problems"] == []
    assert result["findings"] > 20 and result["fixed"] > 10 and result["changed_files"] > 5
