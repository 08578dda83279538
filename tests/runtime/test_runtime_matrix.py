"""Every fix form executed (issue 13): the runtime matrix of tests/runtime/matrix.py.

Runs on this interpreter's torch (the test extra: the CPU-only 2.13 wheel) and on every
interpreter listed in DEVLINT_RUNTIME_PYTHONS (os.pathsep-separated; CI adds a venv with the
standard torch 2.14.1 wheel, a CUDA build, on its GPU-less machine)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import matrix  # noqa: E402
from cases import SNIPPETS  # noqa: E402

PYTHONS = [sys.executable] + [p for p in os.environ.get("DEVLINT_RUNTIME_PYTHONS", "")
                              .split(os.pathsep) if p]


@pytest.fixture(scope="module")
def cases():
    return matrix.build_cases()[0]


@pytest.mark.parametrize("python", PYTHONS)
def test_every_fixed_program_runs_and_agrees(python, cases):
    info, rows = matrix.run_matrix(python, cases)
    failures = [f"{r['id']}: {r['verdict']}" for r in rows if r["verdict"].startswith("FAIL")]
    assert not failures, matrix.summary(info, rows) + "\n" + "\n".join(failures)
    verdicts = {r["verdict"] for r in rows}
    # the matrix compares something: originals that run, and originals that demand CUDA
    assert {"agree", "ran"} <= verdicts, matrix.summary(info, rows)
    # every snippet's fixed forms ran on this torch, none only "n/a"
    for sn in SNIPPETS:
        mine = [r for r in rows if r["id"].split("@")[0] == sn.name]
        assert all(r["verdict"] != "n/a" for r in mine), (sn.name, mine)


def test_every_snippet_is_fixed_except_platform_lists(cases):
    fixed = {c.id.split("@")[0] for c in cases}
    for sn in SNIPPETS:
        if sn.name.endswith("-untouched"):
            assert sn.name not in fixed
        else:
            assert sn.name in fixed, f"{sn.name}: devlint changed nothing"


def test_every_python_rule_with_a_fix_has_a_snippet():
    from devlint.rules import registry

    covered = {sn.name.split("-")[0].upper() for sn in SNIPPETS}
    for rule in registry.all_rules():
        if getattr(rule, "shell", False) or rule.code in ("DL900", "DL301", "DL202"):
            continue  # DL900 removes comments; DL301 is display-only in the torch profile
        if not any(ex.fixed is not None and ex.profile == "torch" for ex in rule.invalid):
            continue  # no fix form to run (DL902: a file that cannot be read)
        assert rule.code in covered, rule.code


def test_verdicts():
    ok = {"ok": True, "stdout": "1\n", "error": ""}
    cuda = {"ok": False, "stdout": "", "error": "RuntimeError: Found no NVIDIA driver (line 2)"}
    assert matrix.verdict(ok, ok) == "agree"
    assert matrix.verdict(ok, dict(ok, stdout="2\n")).startswith("FAIL")
    assert matrix.verdict(cuda, ok) == "ran"
    # the bug issue 13 found: a CUDA wheel's current_accelerator() without check_available
    assert matrix.verdict(cuda, cuda, "import torch\nx.to(torch.accelerator."
                          "current_accelerator())\n").startswith("FAIL")
    assert matrix.verdict(cuda, cuda, "import torch\ni = torch.accelerator."
                          "current_device_index()\n") == "needs an accelerator"
    # the device module's form: torch.get_device_module() is torch.cpu without an accelerator
    cpu = {"ok": False, "stdout": "", "error": "AttributeError: module 'torch.cpu' has no "
           "attribute 'get_rng_state' (line 2)"}
    assert matrix.verdict(cuda, cpu, "import torch\ns = torch.get_device_module()."
                          "get_rng_state()\n") == "needs an accelerator"
    # ... but not for a member the table does not mark needs_accelerator
    assert matrix.verdict(cuda, cpu, "import torch\ntorch.get_device_module()."
                          "empty_cache()\n").startswith("FAIL")
