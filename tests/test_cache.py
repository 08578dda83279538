"""The result cache: same findings with and without it, invalidated by content and settings,
safe to share between concurrent runs, and a corrupt entry is ignored and rewritten."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from devlint.diagnostics import Applicability, Diagnostic, Edit, Fix
from devlint.engine import cache as cache_mod
from devlint.engine import runner
from devlint.settings import Settings

HARDCODED = 'import torch\n\nx = torch.zeros(2, device="cuda")\ntorch.cuda.synchronize()\n'
CLEAN = "import torch\n\nx = torch.zeros(2)\n"


def run(*args, cwd=None, env=None):
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    e.pop("DEVLINT_NO_CACHE", None)
    e.pop("DEVLINT_CACHE_DIR", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd, env=e)


def findings(p):
    return [(d["filename"], d["code"], d["location"]["row"], d["location"]["column"], d["fix"])
            for d in json.loads(p.stdout)]


def shards(cache_dir: Path):
    """The result cache's shards (not the project stage's own files under `project/`)."""
    return sorted(p for p in cache_dir.rglob("*.json")
                  if "project" not in p.relative_to(cache_dir).parts)


def make_tree(root: Path, n: int = 12) -> Path:
    src = root / "src"
    (src / "pkg").mkdir(parents=True)
    for i in range(n):
        (src / "pkg" / f"m{i}.py").write_text(HARDCODED if i % 3 == 0 else CLEAN)
    (src / "pkg" / "broken.py").write_text('x = "cuda"\ndef f(:\n')
    (src / "run.sh").write_text("CUDA_VISIBLE_DEVICES=0 python x.py\n")
    return src


def test_diagnostic_round_trips_through_the_cache_format():
    fix = Fix(Applicability.UNSAFE, "Use the tensor's device",
              (Edit(3, 9, "t.device"), Edit(0, 0, "import x\n")))
    d = Diagnostic("DL101", "device-literal-to", 'Hardcoded "cuda"', "a.py", 3, 9, fix,
                   (1, 4), (1, 10), 1, [((1, 4), (1, 10)), ((1, 1), (1, 1))])
    classes = cache_mod._classes()
    back = cache_mod.decode(json.loads(json.dumps(cache_mod.encode(d))), "a.py", classes)
    assert back == d
    bare = Diagnostic("DL999", "syntax-error", "SyntaxError: x", "b.py", 0, 0)
    assert cache_mod.decode(cache_mod.encode(bare), "b.py", classes) == bare


def test_same_findings_with_and_without_the_cache(tmp_path):
    src = make_tree(tmp_path)
    cache_dir = tmp_path / "cache"
    fresh = run("--output-format", "json", "--no-cache", str(src), cwd=tmp_path)
    assert not (tmp_path / ".devlint_cache").exists()  # --no-cache writes nothing
    cold = run("--output-format", "json", "--cache-dir", str(cache_dir), str(src), cwd=tmp_path)
    assert shards(cache_dir), "the first run fills the cache"
    warm = run("--output-format", "json", "--cache-dir", str(cache_dir), str(src), cwd=tmp_path)
    assert fresh.returncode == cold.returncode == warm.returncode == 1
    assert findings(fresh) == findings(cold) == findings(warm)
    assert any(f[1] == "DL999" for f in findings(warm))
    assert (cache_dir / "CACHEDIR.TAG").is_file() and (cache_dir / ".gitignore").is_file()


def test_default_cache_dir_is_in_the_current_directory(tmp_path):
    src = make_tree(tmp_path, 2)
    run(str(src), cwd=tmp_path)
    assert shards(tmp_path / ".devlint_cache")
    run(str(src), cwd=tmp_path, env={"DEVLINT_CACHE_DIR": str(tmp_path / "elsewhere")})
    assert shards(tmp_path / "elsewhere")


def test_an_edited_file_is_linted_again(tmp_path):
    src = make_tree(tmp_path, 3)
    cache_dir = str(tmp_path / "cache")
    first = run("--output-format", "json", "--cache-dir", cache_dir, str(src), cwd=tmp_path)
    target = src / "pkg" / "m1.py"
    assert not any(f[0].endswith("m1.py") for f in findings(first))
    # same size as before, written at once: only the content (digest) tells the difference
    new = "import torch\n\nx = y.cuda()\n"
    new += "#" * (len(CLEAN) - len(new) - 1) + "\n"
    assert len(new) == len(CLEAN)
    target.write_text(new)
    second = run("--output-format", "json", "--cache-dir", cache_dir, str(src), cwd=tmp_path)
    fresh = run("--output-format", "json", "--no-cache", str(src), cwd=tmp_path)
    assert findings(second) == findings(fresh)
    assert any(f[0].endswith("m1.py") and f[1] == "DL102" for f in findings(second))
    target.write_text(HARDCODED)
    third = run("--output-format", "json", "--cache-dir", cache_dir, str(src), cwd=tmp_path)
    assert any(f[0].endswith("m1.py") and f[1] == "DL103" for f in findings(third))


def test_settings_are_part_of_the_key(tmp_path):
    src = make_tree(tmp_path, 3)
    cache_dir = str(tmp_path / "cache")
    everything = run("--output-format", "json", "--cache-dir", cache_dir, str(src), cwd=tmp_path)
    only_401 = run("--output-format", "json", "--cache-dir", cache_dir, "--select", "DL401",
                   str(src), cwd=tmp_path)
    codes = {f[1] for f in findings(only_401)}
    assert codes <= {"DL401", "DL999"} and "DL401" in codes
    assert {f[1] for f in findings(everything)} > codes
    (src / "devlint.toml").write_text('ignore = ["DL103"]\n')
    configured = run("--output-format", "json", "--cache-dir", cache_dir, str(src), cwd=tmp_path)
    assert "DL103" not in {f[1] for f in findings(configured)}


def test_corrupt_cache_files_are_ignored_and_rewritten(tmp_path):
    src = make_tree(tmp_path, 6)
    cache_dir = tmp_path / "cache"
    good = run("--output-format", "json", "--cache-dir", str(cache_dir), str(src), cwd=tmp_path)
    files = shards(cache_dir)
    assert files
    garbage = [b"", b"\x00\xff garbage", b'{"m0.py\\u0000python": [1, 2]}', b"[1, 2, 3]",
               b'{"m0.py\\u0000python": [0, 0, 0, "x", 0, {"@": "Nope"}]}']
    for i, f in enumerate(files):
        f.write_bytes(garbage[i % len(garbage)])
    again = run("--output-format", "json", "--cache-dir", str(cache_dir), str(src), cwd=tmp_path)
    assert again.returncode == good.returncode and findings(again) == findings(good)
    for f in shards(cache_dir):
        data = json.loads(f.read_bytes())  # every shard is valid again
        assert isinstance(data, dict) and all(len(e) == 7 for e in data.values())
    third = run("--output-format", "json", "--cache-dir", str(cache_dir), str(src), cwd=tmp_path)
    assert findings(third) == findings(good)


def test_concurrent_runs_share_one_cache_dir(tmp_path):
    src = make_tree(tmp_path, 40)
    cache_dir = str(tmp_path / "cache")
    expected = run("--output-format", "json", "--no-cache", str(src), cwd=tmp_path)
    e = dict(os.environ)
    e.pop("DEVLINT_OUTPUT_FORMAT", None)
    procs = [subprocess.Popen([sys.executable, "-m", "devlint", "--output-format", "json",
                               "--cache-dir", cache_dir, *(["-j", "2"] if i % 2 else []),
                               str(src)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path, env=e) for i in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 1, err
        assert [(d["filename"], d["code"], d["location"]) for d in json.loads(out)] == \
               [(d["filename"], d["code"], d["location"]) for d in json.loads(expected.stdout)]
    for f in shards(Path(cache_dir)):
        json.loads(f.read_bytes())
    assert not list(Path(cache_dir).rglob(".tmp-*"))
    after = run("--output-format", "json", "--cache-dir", cache_dir, str(src), cwd=tmp_path)
    assert findings(after) == findings(expected)


def test_fix_uses_the_cache_only_where_nothing_is_fixable(tmp_path):
    src = make_tree(tmp_path, 6)
    cache_dir = str(tmp_path / "cache")
    run("--cache-dir", cache_dir, str(src), cwd=tmp_path)  # fills the cache with check results
    clean = src / "pkg" / "m1.py"
    before = clean.stat()
    fixed = run("--fix", "--unsafe-fixes", "--cache-dir", cache_dir, str(src), cwd=tmp_path)
    assert fixed.returncode in (0, 1), fixed.stderr
    assert "device=\"cuda\"" not in (src / "pkg" / "m0.py").read_text()
    assert clean.stat().st_mtime_ns == before.st_mtime_ns  # untouched files are never rewritten
    after = run("--output-format", "json", "--cache-dir", cache_dir, str(src), cwd=tmp_path)
    fresh = run("--output-format", "json", "--no-cache", str(src), cwd=tmp_path)
    assert findings(after) == findings(fresh)


def test_a_racy_entry_is_confirmed_by_content(tmp_path):
    """A file modified just before it was cached is not trusted by its stat alone."""
    p = tmp_path / "a.py"
    p.write_text(HARDCODED)
    s = Settings()
    c = cache_mod.Cache(str(tmp_path / "cache"))
    [res] = runner.run([(str(p), "python", s)], "check", False, 1, cache=c)
    assert res.diagnostics and not res.cached
    c2 = cache_mod.Cache(str(tmp_path / "cache"))
    diags, expect = c2.lookup(str(p), "python", s, os.stat(p))
    assert diags is None and expect == cache_mod.digest(p.read_bytes())
    [again] = runner.run([(str(p), "python", s)], "check", False, 1, cache=c2)
    assert again.cached and [d.code for d in again.diagnostics] == [d.code for d in res.diagnostics]
    # an old file is trusted by its stat: no read at all
    old = os.stat(p).st_mtime - 3600
    os.utime(p, (old, old))
    c3 = cache_mod.Cache(str(tmp_path / "cache"))
    runner.run([(str(p), "python", s)], "check", False, 1, cache=c3)
    c4 = cache_mod.Cache(str(tmp_path / "cache"))
    diags, _ = c4.lookup(str(p), "python", s, os.stat(p))
    assert diags is not None and [d.code for d in diags] == [d.code for d in res.diagnostics]
    assert all(d.path == str(p) for d in diags)


def test_engine_key_changes_with_the_code(tmp_path, monkeypatch):
    key = cache_mod.engine_key()
    assert key.startswith(__import__("devlint").__version__)
    monkeypatch.setattr(cache_mod, "_engine_key", None)
    assert cache_mod.engine_key() == key  # stable while nothing changes


def test_unwritable_cache_dir_only_costs_speed(tmp_path):
    src = make_tree(tmp_path, 3)
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    p = run("--output-format", "json", "--cache-dir", str(blocker / "cache"), str(src),
            cwd=tmp_path)
    fresh = run("--output-format", "json", "--no-cache", str(src), cwd=tmp_path)
    assert p.returncode == 1 and findings(p) == findings(fresh)


def test_stats_are_built_once_for_two_spellings_of_a_file(tmp_path, monkeypatch):
    # "a.py" and its absolute path make one entry: the map is not rebuilt on every call
    (tmp_path / "a.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    c = cache_mod.Cache(str(tmp_path / "cache"))
    st = os.stat("a.py")
    c.lookup("a.py", "python", Settings(), st)
    c.lookup(str(tmp_path / "a.py"), "python", Settings(), st)
    first = c.stats()
    assert first == {str(tmp_path / "a.py"): st}
    assert c.stats() is first
    (tmp_path / "b.py").write_text(CLEAN)
    c.lookup("b.py", "python", Settings(), os.stat("b.py"))
    assert set(c.stats()) == {str(tmp_path / "a.py"), str(tmp_path / "b.py")}
