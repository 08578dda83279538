"""The seed fixtures (fixtures/) hold the three real bugs devlint exists for; fixing them must
reproduce the golden files (fixtures/golden/<profile>/...) byte for byte.

Regenerate the goldens after an intended change with `DEVLINT_UPDATE_GOLDEN=1 pytest
tests/test_seed_fixtures.py`, then review the diff.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
GOLDEN = os.path.join(FIXTURES, "golden")
SEEDS = ("kv_connector", "kda", "shell")
UPDATE = os.environ.get("DEVLINT_UPDATE_GOLDEN") == "1"


def devlint(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "devlint", *args], capture_output=True,
                          text=True, cwd=cwd)


def _seed_files(root):
    for seed in SEEDS:
        d = os.path.join(root, seed)
        for dirpath, _, files in os.walk(d):
            for f in sorted(files):
                if f.endswith((".py", ".sh")):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


@pytest.fixture
def seed_copy(tmp_path):
    for seed in SEEDS:
        if os.path.isdir(os.path.join(FIXTURES, seed)):
            shutil.copytree(os.path.join(FIXTURES, seed), tmp_path / seed)
    return tmp_path


EXPECTED_FINDINGS = {
    ("kv_connector/example_connector.py", "DL101"),
    ("kda/gather_initial_states.py", "DL201"),
    ("kda/test_kda.py", "DL104"),
}


def test_check_lists_the_seed_bugs(seed_copy):
    p = devlint("check", "--output-format", "json", "--profile", "vllm", ".", cwd=seed_copy)
    assert p.returncode == 1, p.stderr
    import json

    found = {(os.path.relpath(d["filename"], ".").replace(os.sep, "/"), d["code"])
             for d in json.loads(p.stdout)}
    assert EXPECTED_FINDINGS <= found


@pytest.mark.parametrize("profile", ["vllm", "torch"])
def test_fix_reproduces_the_golden_files(seed_copy, profile):
    before = {rel: open(os.path.join(seed_copy, rel), "rb").read()
              for rel in _seed_files(seed_copy)}
    p = devlint("check", "--fix", "--unsafe-fixes", "--profile", profile, ".", cwd=seed_copy)
    assert p.returncode in (0, 1), p.stderr
    assert "devlint bug" not in p.stderr
    changed = []
    for rel, old in before.items():
        new = open(os.path.join(seed_copy, rel), "rb").read()
        golden = os.path.join(GOLDEN, profile, rel)
        if new == old:
            assert not os.path.exists(golden), f"{rel}: unchanged, but a golden file exists"
            continue
        changed.append(rel)
        if rel.endswith(".py"):
            compile(new, rel, "exec")
        if UPDATE:
            os.makedirs(os.path.dirname(golden), exist_ok=True)
            with open(golden, "wb") as f:
                f.write(new)
        assert os.path.exists(golden), f"{rel} changed; no golden file {golden}"
        assert new == open(golden, "rb").read(), f"{rel} differs from {golden}"
    assert {"kv_connector/example_connector.py", "kda/gather_initial_states.py",
            "kda/test_kda.py"} <= set(changed)
    # a second run changes no byte
    snapshot = {rel: open(os.path.join(seed_copy, rel), "rb").read() for rel in before}
    p2 = devlint("check", "--fix", "--unsafe-fixes", "--profile", profile, ".", cwd=seed_copy)
    assert p2.returncode in (0, 1), p2.stderr
    assert snapshot == {rel: open(os.path.join(seed_copy, rel), "rb").read() for rel in before}


def test_vllm_golden_holds_the_upstream_forms():
    g = os.path.join(GOLDEN, "vllm")
    kv = open(os.path.join(g, "kv_connector/example_connector.py")).read()
    assert "kv_cache = kv_cache_cpu.to(kv_cache_layer.device, non_blocking=True)" in kv
    gis = open(os.path.join(g, "kda/gather_initial_states.py")).read()
    assert "    assert state.is_cuda or state.is_xpu\n" in gis
    kda = open(os.path.join(g, "kda/test_kda.py")).read()
    assert "\nDEVICE = current_platform.device_type\n" in kda
    assert "\nfrom vllm.platforms import current_platform\n" in kda
