"""The directory walk outside a git work tree (`discovery._walk_plain`): `.gitignore` rules
compiled once per file, links told apart by the folder listing, and the settings of a folder
taken from its parent when nothing in it could change them (`SettingsResolver.inherit`)."""
from __future__ import annotations

import os

import pytest

from devlint.config import SettingsResolver
from devlint.discovery import discover


def _tree(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _found(root, resolver=None):
    resolver = resolver or SettingsResolver(None, {})
    return [os.path.relpath(c.path, root) for c in discover([str(root)], resolver)]


def test_gitignore_rules_last_match_wins_innermost_file_first(tmp_path):
    _tree(tmp_path, {
        ".gitignore": "gen_*.py\n/logs/\nd/\n**/er/\n*.sh\nkeep_*.py\n!keep_me.py\n",
        "a/.gitignore": "!gen_y.py\nb/c\n",
        "k/.gitignore": "o.py\n!o.py\nn.py\n",
        "top.py": "", "gen_x.py": "", "a/gen_y.py": "", "a/gen_z.py": "", "a/b/c/z.py": "",
        "a/b/y.py": "", "logs/l.py": "", "sub/logs/l.py": "", "d/f.py": "", "sub/d": "",
        "s/deep/er/k.py": "", "s/er.py": "", "run.sh": "", "keep_me.py": "", "keep_no.py": "",
        "k/n.py": "", "k/o.py": "",
    })
    assert sorted(_found(tmp_path)) == sorted([
        "top.py", "a/gen_y.py", "a/b/y.py", "sub/logs/l.py", "s/er.py", "keep_me.py",
        "k/o.py"])


def test_gitignore_of_a_folder_does_not_reach_a_sibling_with_a_longer_name(tmp_path):
    # `a/.gitignore` governs `a/...` only, not `ab/...` (whose path starts with "a" too)
    _tree(tmp_path, {"a/.gitignore": "t.py\n", "a/t.py": "", "ab/t.py": "", "a/u.py": ""})
    assert sorted(_found(tmp_path)) == ["a/u.py", "ab/t.py"]


def test_links_in_a_walk(tmp_path):
    _tree(tmp_path, {"a/x.py": "", "top.py": "", "d/in_dir.py": ""})
    os.symlink(tmp_path / "a" / "x.py", tmp_path / "lx.py")  # the file itself is kept
    os.symlink(tmp_path / "nowhere.py", tmp_path / "broken.py")  # listed: DL902
    os.symlink(tmp_path / "d", tmp_path / "alias")  # a link to a folder is not entered
    os.symlink("../top.py", tmp_path / "a" / "up.py")
    outside = tmp_path.parent / (tmp_path.name + "_out.py")
    outside.write_text("")
    os.symlink(outside, tmp_path / "a" / "out1.py")  # outside the walk: the first link
    os.symlink(outside, tmp_path / "a" / "out2.py")
    found = _found(tmp_path)
    assert sorted(found) == ["a/out1.py", "a/x.py", "broken.py", "d/in_dir.py", "top.py"]


def test_walk_from_the_current_directory_gives_normalized_paths(tmp_path, monkeypatch):
    _tree(tmp_path, {"a/x.py": "", "y.py": ""})
    monkeypatch.chdir(tmp_path)
    assert sorted(c.path for c in discover(["."], SettingsResolver(None, {}))) == [
        os.path.join("a", "x.py"), "y.py"]


@pytest.mark.parametrize("git", [False, True])
def test_walk_from_the_current_directory_resolves_each_folder_once(tmp_path, monkeypatch, git):
    # the walk asks for a folder's settings spelled as the runner then asks for its files'
    # ("a/b/x.py", not "./a/b/_"): the resolver's memo answers the runner without resolving
    _tree(tmp_path, {"a/b/x.py": "", "a/y.py": "", "z.py": "", "c/d/e/w.py": ""})
    if git:
        import subprocess

        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    resolved = []

    class Counting(SettingsResolver):
        def _resolve(self, path):
            resolved.append(os.path.dirname(path))
            return super()._resolve(path)

    resolver = Counting(None, {})
    found = list(discover(["."], resolver))
    assert len(found) == 4
    walked = len(resolved)
    for c in found:
        resolver(c.path)
    assert len(resolved) == walked, resolved
    assert len(resolved) == len(set(map(os.path.abspath, resolved))) <= 2, resolved


@pytest.mark.parametrize("git", [False, True])
def test_folder_settings_inherited_only_where_nothing_could_change_them(tmp_path, git):
    _tree(tmp_path, {
        "devlint.toml": "[tool.devlint]\nprofile = \"torch\"\n",
        "pkg/a.py": "", "pkg/plain/b.py": "",
        "pkg/own/devlint.toml": "[tool.devlint]\nprofile = \"vllm\"\n", "pkg/own/c.py": "",
        "pkg/own/deeper/d.py": "",
        "pkg/floor/requirements-dev.txt": "torch>=2.8\n", "pkg/floor/e.py": "",
        "pkg/floor/f/g.py": "",
    })
    if git:  # git's list of the files (the folders' listings still decide the settings)
        import subprocess

        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    walked = SettingsResolver(None, {})
    found = _found(tmp_path, walked)
    assert len(found) == 6
    fresh = SettingsResolver(None, {})
    for rel in found:
        p = str(tmp_path / rel)
        assert walked(p) == fresh(p), rel
    assert walked(str(tmp_path / "pkg/own/deeper/d.py")).profile == "vllm"
    assert walked(str(tmp_path / "pkg/floor/f/g.py")).declared_torch == "2.8"
    assert walked(str(tmp_path / "pkg/plain/b.py")).declared_torch is None
    # folders with the same answer share one settings object (per-settings memos hit)
    assert walked(str(tmp_path / "pkg/plain/b.py")) is walked(str(tmp_path / "pkg/a.py"))


def test_git_is_asked_only_where_it_could_find_a_work_tree(tmp_path, monkeypatch):
    import subprocess

    from devlint.discovery import _may_be_in_git

    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"):
        monkeypatch.delenv(k, raising=False)
    _tree(tmp_path, {"repo/sub/a.py": "", "repo/gen.py": "", "repo/.gitignore": "gen.py\n",
                     "plain/b.py": ""})
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    os.symlink(tmp_path / "repo" / "sub", tmp_path / "into_repo")
    assert _may_be_in_git(str(tmp_path / "repo" / "sub"))
    assert _may_be_in_git(str(tmp_path / "into_repo"))  # git resolves the link
    # a work tree's ignore rules come from git (no .gitignore of its own is read above sub/)
    assert _found(tmp_path / "repo") == ["sub/a.py"]
    outside = subprocess.run(["git", "-C", str(tmp_path / "plain"), "rev-parse"],
                             capture_output=True).returncode != 0
    if outside:  # (the test's temporary folder is not inside a repository)
        assert not _may_be_in_git(str(tmp_path / "plain"))
        monkeypatch.setenv("GIT_DIR", str(tmp_path / "repo" / ".git"))
        assert _may_be_in_git(str(tmp_path / "plain"))
