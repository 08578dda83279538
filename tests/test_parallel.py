"""The process pool: same findings and fixes with 1 and N workers, sized to the work, serial
under pre-commit, and a dead worker does not lose files."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from devlint.engine import runner
from devlint.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
HARDCODED = 'import torch\n\nx = torch.zeros(2, device="cuda")\ntorch.cuda.synchronize()\n'
CLEAN = "import torch\n\nx = torch.zeros(2)\n"


def run(*args, cwd=None):
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e.pop("PRE_COMMIT", None)
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd, env=e)


@pytest.fixture
def tree(tmp_path):
    """The seed fixtures plus enough generated files for a pool."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures", src / "fixtures",
                    ignore=shutil.ignore_patterns("golden"))
    for i in range(30):
        (src / f"gen{i}.py").write_text(HARDCODED * (1 + i % 3) if i % 2 else CLEAN)
    return src


def test_findings_identical_with_one_and_many_jobs(tree, tmp_path):
    one = run("--output-format", "json", "--no-cache", "-j", "1", str(tree), cwd=tmp_path)
    many = run("--output-format", "json", "--no-cache", "-j", "2", str(tree), cwd=tmp_path)
    assert one.returncode == many.returncode == 1
    assert json.loads(one.stdout) == json.loads(many.stdout)
    assert len(json.loads(one.stdout)) > 30


def test_fixes_identical_with_one_and_many_jobs(tree, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(tree, a)
    shutil.copytree(tree, b)
    ra = run("--fix", "--unsafe-fixes", "--no-cache", "-j", "1", str(a), cwd=tmp_path)
    rb = run("--fix", "--unsafe-fixes", "--no-cache", "-j", "2", str(b), cwd=tmp_path)
    assert ra.returncode == rb.returncode and "internal error" not in ra.stderr + rb.stderr
    changed = 0
    for p in sorted(a.rglob("*")):
        if p.is_file():
            q = b / p.relative_to(a)
            assert p.read_bytes() == q.read_bytes(), p
            changed += p.read_bytes() != (tree / p.relative_to(a)).read_bytes()
    assert changed >= 15


def test_pool_size_follows_the_work(monkeypatch):
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    monkeypatch.setattr(runner, "default_jobs", lambda: 8)
    assert runner.pool_size(1, 10 << 20, None) == 0  # a handful of files: no pool
    assert runner.pool_size(runner.SERIAL_BELOW - 1, 100 << 20, None) == 0
    assert runner.pool_size(100, 100, None) == 0  # little source: start-up would dominate
    assert runner.pool_size(100, 3 * runner.BYTES_PER_WORKER, None) == 3
    assert runner.pool_size(1000, 1 << 30, None) == 8
    assert runner.pool_size(100, 100, 4) == 4  # an explicit -j is honoured (as a maximum)
    assert runner.pool_size(3, 100, 4) == 0
    assert runner.pool_size(100, 1 << 30, 1) == 0


def test_pre_commit_hands_devlint_all_files_and_devlint_spreads_them(monkeypatch):
    """The hook is `require_serial`: pre-commit runs one devlint with every staged file, so
    devlint keeps its own pool (and still lints a handful of files serially)."""
    import yaml

    hooks = yaml.safe_load(open(os.path.join(os.path.dirname(__file__), "..",
                                             ".pre-commit-hooks.yaml")))
    assert hooks[0]["require_serial"] is True
    monkeypatch.setenv("PRE_COMMIT", "1")
    monkeypatch.setattr(runner, "default_jobs", lambda: 2)
    assert runner.pool_size(1000, 1 << 30, None) == 2
    assert runner.pool_size(2, 1 << 30, None) == 0


def test_a_dead_worker_loses_no_file(tmp_path, monkeypatch):
    """A worker killed mid-run (out of memory, a signal): the main process lints what is left."""
    paths = []
    for i in range(12):
        p = tmp_path / f"m{i}.py"
        p.write_text(HARDCODED)
        paths.append(str(p))
    main_pid = os.getpid()
    real = runner.lint_file

    def dying(path, *args, **kwargs):
        if os.getpid() != main_pid and path.endswith("m5.py"):
            os._exit(9)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(runner, "lint_file", dying)
    if "fork" not in __import__("multiprocessing").get_all_start_methods():
        pytest.fail("this test needs fork")  # devlint's CI runs on Linux
    results = runner.run([(p, "python", Settings()) for p in paths], "check", False, jobs=2)
    assert [r.path for r in results] == paths
    assert all(len(r.diagnostics) == 2 and not r.internal_error for r in results)


def test_results_keep_task_order_and_report_progress(tmp_path):
    paths = []
    for i in range(20):
        p = tmp_path / f"f{i:02}.py"
        p.write_text(HARDCODED * (20 - i))  # the largest first in the pool, yet in task order
        paths.append(str(p))
    done = []
    results = runner.run([(p, "python", Settings()) for p in paths], "check", False, jobs=2,
                         progress=done.append)
    assert [r.path for r in results] == paths
    assert sum(done) == len(paths)


def _lint_counter(monkeypatch):
    from devlint.engine import linter

    calls = []
    real = linter.lint_text

    def counted(path, text, *a, **k):
        calls.append(path)
        return real(path, text, *a, **k)

    monkeypatch.setattr(linter, "lint_text", counted)
    return calls


def test_the_fix_pass_takes_the_check_pass_findings_of_the_same_bytes(tmp_path, monkeypatch):
    """check, then fix (what `devlint check --fix` does): the fix loop's first round is the
    check pass's answer, and its last round's is the one reported, so a file fixed in one
    round is linted twice in all (before: four times); the result is the one of a fix alone."""
    f = tmp_path / "a.py"
    f.write_text(HARDCODED)
    alone = tmp_path / "b.py"
    alone.write_text(HARDCODED)
    s = Settings()
    calls = _lint_counter(monkeypatch)
    runner.run([(str(f), "python", s)], "check", False, jobs=1)
    fixed = runner.run([(str(f), "python", s)], "fix", False, jobs=1)[0]
    assert calls == [str(f), str(f)]
    assert not runner._CHECKED
    expected = runner.run([(str(alone), "python", s)], "fix", False, jobs=1)[0]
    assert len(calls) == 4  # no check pass before it: its first round lints, then its last
    assert f.read_text() == alone.read_text() != HARDCODED
    assert [(d.code, d.location, d.message) for d in fixed.diagnostics] == \
        [(d.code, d.location, d.message) for d in expected.diagnostics]
    assert fixed.applied == expected.applied > 0


def test_the_fix_pass_lints_bytes_changed_since_the_check(tmp_path, monkeypatch):
    """A file edited between the check and the fix pass, or fixed with other settings, is
    linted again: the check pass's findings are about other bytes."""
    f = tmp_path / "a.py"
    f.write_text(HARDCODED)
    s = Settings()
    calls = _lint_counter(monkeypatch)
    runner.run([(str(f), "python", s)], "check", False, jobs=1)
    f.write_text("\n" + HARDCODED)
    runner.run([(str(f), "python", s)], "fix", False, jobs=1)
    assert len(calls) == 3
    assert f.read_text() != "\n" + HARDCODED
    g = tmp_path / "g.py"
    g.write_text(HARDCODED)
    runner.run([(str(g), "python", s)], "check", False, jobs=1)
    runner.run([(str(g), "python", Settings(select=("DL401",)))], "fix", False, jobs=1)
    assert len(calls) == 6
    assert "torch.cuda.synchronize" not in g.read_text() and 'device="cuda"' in g.read_text()
