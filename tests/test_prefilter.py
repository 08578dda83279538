"""The prefilter (stage 1) may only drop files that cannot hold a finding.

The rules run without the prefilter (`lint_text` directly) over the fixtures, every rule's
examples and, where it exists, the real-world corpus (`/tmp/devlint-corpus`, or the directory
in DEVLINT_CORPUS; CI has none and checks the rest), and every file the prefilter drops must
have no finding there. No timing is asserted.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from devlint.engine.linter import lint_text
from devlint.analysis.prefilter import TRIGGER, may_have_findings
from devlint.engine.runner import process_source
from devlint.rules import registry
from devlint.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("DEVLINT_CORPUS", "/tmp/devlint-corpus"))
SYNTAX_ERROR = "DL999"


def _python_files(root: Path):
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def _sources():
    """(label, path, bytes, settings)."""
    out = []
    for p in _python_files(ROOT / "fixtures"):
        out.append((str(p.relative_to(ROOT)), str(p), p.read_bytes(), Settings()))
    for rule in registry.all_rules():
        for kind in ("valid", "invalid"):
            for i, ex in enumerate(getattr(rule, kind)):
                s = replace(Settings(), profile=ex.profile)
                out.append((f"{rule.code}.{kind}[{i}]", ex.path, ex.source.encode(), s))
    for p in _python_files(CORPUS):
        out.append((f"corpus/{p.relative_to(CORPUS)}", str(p), p.read_bytes(), Settings()))
    return out


SOURCES = _sources()


def _findings(path, data, settings):
    """The rules' findings, or None for bytes that do not decode (the runner reports those
    as DL902 whether or not the prefilter passes them)."""
    from devlint.source import SourceFile

    try:
        text = SourceFile.from_bytes(data).text
    except (UnicodeDecodeError, LookupError):
        return None
    return [d for d in lint_text(path, text, settings) if d.code != SYNTAX_ERROR]


def test_the_sources_are_there():
    labels = [s[0] for s in SOURCES]
    assert any(label.startswith("fixtures/") for label in labels)
    assert sum(".invalid[" in label for label in labels) >= len(registry.all_rules())


def test_no_file_with_a_finding_is_dropped():
    dropped_with_findings = []
    for label, path, data, settings in SOURCES:
        if may_have_findings(data):
            continue
        found = _findings(path, data, settings)
        if found:  # (None: does not decode, reported all the same)
            dropped_with_findings.append(f"{label}: {[(d.code, d.location) for d in found]}")
    assert dropped_with_findings == []


def test_prefiltered_run_reports_what_the_rules_report():
    """The runner's check mode (prefilter on) and the bare rules agree file by file."""
    mismatches = []
    for label, path, data, settings in SOURCES:
        found = _findings(path, data, settings)
        res = process_source(path, "python", data, settings, "check", False)
        if found is None:
            assert [d.code for d in res.diagnostics] == ["DL902"], label
            continue
        expected = [(d.code, d.location, d.end_location) for d in found]
        got = [(d.code, d.location, d.end_location) for d in res.diagnostics
               if d.code != SYNTAX_ERROR]
        if got != expected:
            mismatches.append((label, expected, got))
    assert mismatches == []


def test_every_invalid_example_passes_the_prefilter():
    for rule in registry.all_rules():
        if getattr(rule, "shell", False):
            continue  # shell scripts are never prefiltered (engine/runner.py: Python only)
        for ex in rule.invalid:
            assert may_have_findings(ex.source.encode()), (rule.code, ex.source)


@pytest.mark.parametrize("text", [
    "x.cuda()", "import torch.cuda as tc", "from torch import cuda", "d = 'cuda:0'",
    'f"cuda:{i}"', "assert t.is_cuda", "os.environ['CUDA_VISIBLE_DEVICES']",
    "HIP_VISIBLE_DEVICES=1", "dist.init_process_group('nccl')", '"gloo"', "'xccl'", '"hccl"',
    "x = 1  # noqa: DL101", "x = 1  # NOQA:DL1", "# devlint: file-ignore[DL4]",
    "@requires_cuda\ndef f(): pass", "@pytest.mark.GPU\ndef f(): pass",
    "nothing here", "cudas = 1", "# cuda in a comment", "x = 'CUDA'", "\r\nx.cuda()\r\n",
    "a\rb.cuda()", "import os\n" * 50 + "x = y.cuda\n",
    "if current_platform.is_cuda():", "x.is_cuda ()", "is_cuda_alike()", "f(t.is_cuda\n())",
    "if t.is_cuda:", "ok = t.is_cuda and u.is_cuda",
])
def test_fast_scan_agrees_with_the_trigger_regex(text):
    data = text.encode()
    assert may_have_findings(data) == (TRIGGER.search(data) is not None)


def test_fast_scan_agrees_with_the_trigger_regex_on_every_source():
    for label, _, data, _ in SOURCES:
        assert may_have_findings(data) == (TRIGGER.search(data) is not None), label
